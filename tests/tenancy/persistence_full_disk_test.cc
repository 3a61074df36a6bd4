// The real resident-server on a data dir that fills up or turns read-only
// (a small tmpfs mounted by the test; skipped where mounting is not
// allowed): a keep that does not fit is RESOURCE_EXHAUSTED naming the data
// dir and ENOSPC, a read-only one UNAVAILABLE naming EROFS; the server keeps
// serving, the name does not exist, no partial file is left, an rm under a
// full disk fails cleanly or succeeds and never loses other names, and after
// a restart exactly the acknowledged arrays load, byte for byte. The errnos
// no test can provoke here (EIO, EDQUOT) are checked on the code mapping.
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/session/array_store.h"
#include "tests/support/dir_listing.h"
#include "tests/tenancy/server_process.h"

namespace resident::tenancy {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kTmpfsOptions[] = "size=8m";

// A tmpfs of 8 MiB at DIR/mnt, unmounted (lazily, so even while busy) when
// the test ends, however it ends.
class SmallTmpfs {
 public:
  explicit SmallTmpfs(const ScratchDir& dir) : path_(dir.path() + "/mnt") {
    mkdir(path_.c_str(), 0755);
    if (mount("tmpfs", path_.c_str(), "tmpfs", 0, kTmpfsOptions) == 0) {
      mounted_ = true;
    } else {
      error_ = std::strerror(errno);
    }
  }
  ~SmallTmpfs() {
    if (mounted_) umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }
  bool Remount(bool read_only) {
    return mount("tmpfs", path_.c_str(), "tmpfs", MS_REMOUNT | (read_only ? MS_RDONLY : 0),
                 kTmpfsOptions) == 0;
  }

 private:
  std::string path_;
  bool mounted_ = false;
  std::string error_;
};

using testing_support::DirEntries;

// Every file of the data dir and its arrays/ folder.
std::multiset<std::string> Contents(const std::string& data) {
  std::multiset<std::string> out;
  for (const std::string& f : DirEntries(data)) out.insert(f);
  for (const std::string& f : DirEntries(data + "/arrays")) out.insert("arrays/" + f);
  return out;
}

int NpyFiles(const std::string& data) {
  int n = 0;
  for (const std::string& f : DirEntries(data + "/arrays")) n += absl::EndsWith(f, ".npy");
  return n;
}

// Fills the file system holding `path` to the last byte; returns whether it
// got to ENOSPC.
bool FillUp(const std::string& path) {
  int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) return false;
  const std::string chunk(1 << 16, 'x');
  bool full = false;
  for (;;) {
    ssize_t n = write(fd, chunk.data(), chunk.size());
    if (n < 0) {
      full = errno == ENOSPC;
      break;
    }
  }
  close(fd);
  return full;
}

// The names List shows (once each: every attached handle shows its name).
std::set<std::string> Names(client::Client& c) {
  std::set<std::string> out;
  auto ls = c.List();
  EXPECT_TRUE(ls.ok()) << ls.status();
  if (ls.ok()) {
    for (const auto& a : *ls) {
      if (!a.name.empty()) out.insert(a.name);
    }
  }
  return out;
}

void ExpectArray(client::Client& c, const std::string& name, const Shape& shape,
                 const std::string& bytes) {
  auto a = c.Attach(name);
  ASSERT_TRUE(a.ok()) << name << ": " << a.status();
  auto d = a->Download();
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->shape, shape);
  EXPECT_TRUE(d->bytes == bytes) << name << ": bytes differ";
}

absl::Status KeepBytes(client::Client& c, const std::string& bytes, const std::string& name) {
  auto a = c.Upload(DType::kFloat64, {static_cast<int64_t>(bytes.size() / 8)}, bytes);
  if (!a.ok()) return a.status();
  return c.Keep(*a, name);
}

#define SKIP_UNLESS_MOUNTED(fs)                                                       \
  if (!(fs).mounted()) {                                                              \
    GTEST_SKIP() << "cannot mount a tmpfs at " << (fs).path() << " (" << (fs).error() \
                 << "; mounting needs CAP_SYS_ADMIN), so no small disk to fill";      \
  }

TEST(FullDiskTest, KeepThatDoesNotFitFailsCleanlyAndRmNeverLosesNames) {
  ScratchDir dir;
  SmallTmpfs fs(dir);
  SKIP_UNLESS_MOUNTED(fs);
  const std::string data = fs.path() + "/data";
  const std::string fits = RandomBytes(3 << 20, 1);  // 3 MiB of an 8 MiB disk
  const std::string other = RandomBytes(4096, 2);
  const std::string too_big = RandomBytes(6 << 20, 3);
  const std::string after = RandomBytes(8 * 1000, 4);
  {
    ServerProcess server(data, dir.path() + "/log1");
    ASSERT_GT(server.port(), 0) << server.log();
    auto c = server.Connect();
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(KeepBytes(*c, fits, "fits").ok());
    ASSERT_TRUE(KeepBytes(*c, other, "other").ok());
    const std::string manifest = ReadFile(data + "/MANIFEST");
    const auto files = Contents(data);

    // Larger than the free space: refused, and nothing of it stays.
    absl::Status s = KeepBytes(*c, too_big, "too-big");
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(data));
    EXPECT_THAT(std::string(s.message()), HasSubstr("ENOSPC"));
    EXPECT_THAT(std::string(s.message()), HasSubstr("keeping 'too-big'"));
    EXPECT_EQ(c->Attach("too-big").status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(Names(*c), ::testing::UnorderedElementsAre("fits", "other"));
    EXPECT_EQ(Contents(data), files) << "a failed keep left a file behind";
    EXPECT_EQ(ReadFile(data + "/MANIFEST"), manifest);
    ExpectArray(*c, "fits", {3 << 17}, fits);  // still serving

    // Not one byte free: a small keep fails too, an rm fails cleanly or works.
    ASSERT_TRUE(FillUp(fs.path() + "/filler"));
    s = KeepBytes(*c, after, "after");
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_EQ(Contents(data), files);
    absl::Status rm = c->Delete("fits");
    std::printf("rm on a full disk: %s\n", rm.ToString().c_str());
    if (rm.ok()) {
      EXPECT_EQ(c->Attach("fits").status().code(), absl::StatusCode::kNotFound);
    } else {
      EXPECT_EQ(rm.code(), absl::StatusCode::kResourceExhausted) << rm;
      EXPECT_THAT(std::string(rm.message()), HasSubstr("ENOSPC"));
      EXPECT_EQ(ReadFile(data + "/MANIFEST"), manifest);
      EXPECT_EQ(Contents(data), files);
      ExpectArray(*c, "fits", {3 << 17}, fits);
    }
    ExpectArray(*c, "other", {512}, other);

    // Space again: the rm and a keep that fits work.
    ASSERT_EQ(unlink((fs.path() + "/filler").c_str()), 0);
    if (!rm.ok()) {
      EXPECT_TRUE(c->Delete("fits").ok());
    }
    ASSERT_TRUE(KeepBytes(*c, after, "after").ok());
    EXPECT_THAT(Names(*c), ::testing::UnorderedElementsAre("other", "after"));
    server.Kill();
  }
  ServerProcess server(data, dir.path() + "/log2");
  ASSERT_GT(server.port(), 0) << server.log();
  auto c = server.Connect();
  ASSERT_NE(c, nullptr);
  EXPECT_THAT(server.log(), HasSubstr("2 named arrays loaded"));
  EXPECT_THAT(server.log(), Not(HasSubstr("ignored")));
  EXPECT_THAT(Names(*c), ::testing::UnorderedElementsAre("other", "after"));
  ExpectArray(*c, "other", {512}, other);
  ExpectArray(*c, "after", {1000}, after);
  EXPECT_EQ(NpyFiles(data), 2);
  for (const std::string& f : Contents(data)) EXPECT_FALSE(absl::EndsWith(f, ".tmp")) << f;
}

// A restart while the disk is full: nothing half-written loads, the
// acknowledged arrays do.
TEST(FullDiskTest, RestartOnAFullDiskLoadsOnlyWholeArrays) {
  ScratchDir dir;
  SmallTmpfs fs(dir);
  SKIP_UNLESS_MOUNTED(fs);
  const std::string data = fs.path() + "/data";
  const std::string kept = RandomBytes(1 << 20, 5);
  {
    ServerProcess server(data, dir.path() + "/log1");
    ASSERT_GT(server.port(), 0) << server.log();
    auto c = server.Connect();
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(KeepBytes(*c, kept, "kept").ok());
    EXPECT_EQ(KeepBytes(*c, RandomBytes(7 << 20, 6), "partial").code(),
              absl::StatusCode::kResourceExhausted);
    ASSERT_TRUE(FillUp(fs.path() + "/filler"));
    server.Kill();
  }
  ServerProcess server(data, dir.path() + "/log2");
  ASSERT_GT(server.port(), 0) << server.log();
  auto c = server.Connect();
  ASSERT_NE(c, nullptr);
  EXPECT_THAT(server.log(), HasSubstr("1 named arrays loaded"));
  EXPECT_THAT(Names(*c), ::testing::ElementsAre("kept"));
  ExpectArray(*c, "kept", {1 << 17}, kept);
  EXPECT_EQ(c->Attach("partial").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(KeepBytes(*c, RandomBytes(4096, 7), "more").code(),
            absl::StatusCode::kResourceExhausted);
}

// A data dir remounted read-only (what ext4 does after an I/O error): keeps
// and rms are UNAVAILABLE naming EROFS, nothing changes, and both work once
// it is writable again.
TEST(FullDiskTest, ReadOnlyDataDirIsUnavailable) {
  ScratchDir dir;
  SmallTmpfs fs(dir);
  SKIP_UNLESS_MOUNTED(fs);
  const std::string data = fs.path() + "/data";
  ServerProcess server(data, dir.path() + "/log1");
  ASSERT_GT(server.port(), 0) << server.log();
  auto c = server.Connect();
  ASSERT_NE(c, nullptr);
  const std::string a = RandomBytes(4096, 8);
  ASSERT_TRUE(KeepBytes(*c, a, "a").ok());
  ASSERT_TRUE(fs.Remount(/*read_only=*/true)) << std::strerror(errno);
  absl::Status s = KeepBytes(*c, a, "b");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("EROFS"));
  EXPECT_THAT(std::string(s.message()), HasSubstr(data));
  s = c->Delete("a");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(Names(*c), ::testing::ElementsAre("a"));
  ExpectArray(*c, "a", {512}, a);
  ASSERT_TRUE(fs.Remount(/*read_only=*/false)) << std::strerror(errno);
  EXPECT_TRUE(KeepBytes(*c, a, "b").ok());
  EXPECT_TRUE(c->Delete("a").ok());
  EXPECT_THAT(Names(*c), ::testing::ElementsAre("b"));
}

// The errors no test here can provoke (a failing disk, a quota) map as the
// ones it can: full is RESOURCE_EXHAUSTED, anything else UNAVAILABLE, never
// a code that blames the client (NOT_FOUND, PERMISSION_DENIED) or a bug.
TEST(DataDirErrorCodeTest, FullIsExhaustedTheRestUnavailable) {
  for (int err : {ENOSPC, EDQUOT, EFBIG, EMFILE, ENFILE, ENOMEM}) {
    EXPECT_EQ(DataDirErrorCode(err), absl::StatusCode::kResourceExhausted) << strerrorname_np(err);
  }
  for (int err : {EIO, EROFS, EACCES, EPERM, ENOENT, ENOTDIR, ESTALE, EBADF}) {
    EXPECT_EQ(DataDirErrorCode(err), absl::StatusCode::kUnavailable) << strerrorname_np(err);
  }
}

}  // namespace
}  // namespace resident::tenancy
