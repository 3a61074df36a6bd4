#include "server/session/array_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/handle_id.h"
#include "core/log.h"
#include "core/status_macros.h"

namespace resident {

uint64_t Fnv1a64(absl::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

namespace {

constexpr char kManifest[] = "MANIFEST";
constexpr char kManifestHeader[] = "resident-manifest 1";
constexpr char kArraysDir[] = "arrays";
constexpr char kLock[] = "LOCK";

absl::Status ErrnoStatus(int err, absl::string_view what, const std::string& path) {
  const absl::StatusCode code = DataDirErrorCode(err);
  const char* name = ::strerrorname_np(err);  // "ENOSPC": what operators grep for
  return absl::Status(
      code, absl::StrCat("data dir: cannot ", what, " ", path, ": ", std::strerror(err), " (",
                         name != nullptr ? name : absl::StrCat("errno ", err), ")",
                         code == absl::StatusCode::kResourceExhausted
                             ? "; free space there or delete named arrays"
                             : ""));
}

// Test-only fault injection: RESIDENT_FAULT_INJECT=FILE:STAGE (read once)
// makes the process SIGKILL itself at that point of a durable write, e.g.
// "keep-data:renamed", so tests can crash inside exact windows. Unset, as
// everywhere outside tests, this does nothing.
const char* FaultInjectPoint() {
  static const char* const point = std::getenv("RESIDENT_FAULT_INJECT");
  return point;
}
void MaybeCrashAt(absl::string_view file, absl::string_view stage) {
  const char* point = FaultInjectPoint();
  if (point != nullptr && absl::StrCat(file, ":", stage) == point) ::raise(SIGKILL);
}

absl::Status FsyncPath(const std::string& path, bool directory) {
  int fd = ::open(path.c_str(), (directory ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus(err, "fsync", path);
  return absl::OkStatus();
}

// Writes `path` atomically and durably: PATH.tmp, fsync, rename, fsync dir.
// On failure PATH.tmp is gone; *replaced says whether PATH was already
// replaced by the new contents (only the directory fsync failed then), so
// the caller can undo it. `fault` names the file for MaybeCrashAt.
absl::Status WriteDurably(const std::string& dir, const std::string& name,
                          absl::string_view contents, absl::string_view fault, bool* replaced) {
  *replaced = false;
  const std::string path = absl::StrCat(dir, "/", name);
  const std::string tmp = absl::StrCat(path, ".tmp");
  int fd = ::open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "create", tmp);
  auto fail = [&](int err, absl::string_view what) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    return ErrnoStatus(err, what, tmp);
  };
  size_t off = 0;
  while (off < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + off, contents.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errno, "write");
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return fail(errno, "fsync");
  const int closed = ::close(fd);  // some file systems report write errors only here
  fd = -1;
  if (closed != 0) return fail(errno, "close");
  MaybeCrashAt(fault, "written");
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail(errno, "rename");
  *replaced = true;
  MaybeCrashAt(fault, "renamed");
  return FsyncPath(dir, /*directory=*/true);
}

absl::StatusOr<std::string> ReadWhole(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return absl::NotFoundError("does not exist");
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus(err, "read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

absl::Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, "create directory", path);
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("data dir: ", path, " exists and is not a directory"));
  }
  return absl::OkStatus();
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(std::move(n));
  }
  ::closedir(d);
  return out;
}

// Tenants may hold any characters: bytes outside [A-Za-z0-9._-] become %XX.
std::string Escape(absl::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&out, "%", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return out.empty() ? "%" : out;  // "%" alone: the empty tenant
}

bool Unescape(absl::string_view s, std::string* out) {
  out->clear();
  if (s == "%") return true;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out->push_back(s[i]);
      continue;
    }
    int v = 0;
    if (i + 2 >= s.size()) return false;
    if (!absl::SimpleHexAtoi(s.substr(i + 1, 2), &v)) return false;
    out->push_back(static_cast<char>(v));
    i += 2;
  }
  return true;
}

}  // namespace

// Codes by what the client can do about it (Abseil's guidance in status.h):
// a full disk or quota is RESOURCE_EXHAUSTED (free space or delete named
// arrays, then retry); any other failure of the data dir (EIO, a read-only
// remount, permissions, a directory removed under the server) means the
// server's storage is unhealthy: UNAVAILABLE, and as a failed write leaves
// nothing behind, retrying later is safe. Never NOT_FOUND or
// PERMISSION_DENIED: those would blame the client's handle or rights.
absl::StatusCode DataDirErrorCode(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
      return absl::StatusCode::kResourceExhausted;
    default:
      return absl::StatusCode::kUnavailable;
  }
}

ArrayStore::~ArrayStore() { ::close(lock_fd_); }

absl::StatusOr<std::unique_ptr<ArrayStore>> ArrayStore::Open(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("data dir: empty path");
  RETURN_IF_ERROR(MakeDir(dir));
  RETURN_IF_ERROR(MakeDir(absl::StrCat(dir, "/", kArraysDir)));
  // One server per data dir: a second one's Load would delete the first's
  // in-flight files and both would rewrite the manifest from their own view.
  // The kernel drops the lock when the holder dies, even by SIGKILL. Read-only,
  // so an open LOCK never blocks remounting the data dir read-only.
  const std::string lock_path = absl::StrCat(dir, "/", kLock);
  const int lock_fd = ::open(lock_path.c_str(), O_CREAT | O_RDONLY | O_CLOEXEC, 0644);
  if (lock_fd < 0) return ErrnoStatus(errno, "create", lock_path);
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(lock_fd);
    if (err == EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          absl::StrCat("data dir: ", dir, " is in use by another process (it holds ", lock_path,
                       "); two servers must not share a data dir"));
    }
    return ErrnoStatus(err, "lock", lock_path);
  }
  if (const char* point = FaultInjectPoint(); point != nullptr) {
    RESIDENT_LOG(kWarning, "RESIDENT_FAULT_INJECT=", point,
                 ": test-only, this process kills itself at that point");
  }
  return std::unique_ptr<ArrayStore>(new ArrayStore(dir, lock_fd));
}

std::vector<ArrayStore::Stored> ArrayStore::Load() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Stored> out;
  entries_.clear();
  const std::string arrays_dir = absl::StrCat(dir_, "/", kArraysDir);
  // Temporary files are what a crash mid-write leaves: never data.
  for (const std::string& d : {dir_, arrays_dir}) {
    for (const std::string& f : ListDir(d)) {
      if (absl::EndsWith(f, ".tmp")) {
        RESIDENT_LOG(kWarning, "data dir: ignoring and deleting ", d, "/", f,
                     ", a temporary file left by an interrupted write");
        ::unlink(absl::StrCat(d, "/", f).c_str());
      }
    }
  }
  const std::string manifest_path = absl::StrCat(dir_, "/", kManifest);
  absl::StatusOr<std::string> manifest = ReadWhole(manifest_path);
  std::set<std::string> referenced;
  bool dropped = false;
  if (!manifest.ok()) {
    if (manifest.status().code() != absl::StatusCode::kNotFound) {
      RESIDENT_LOG(kError, manifest.status().message(), "; starting with no named arrays");
    }
  } else {
    int line_no = 0;
    for (absl::string_view line : absl::StrSplit(*manifest, '\n', absl::SkipEmpty())) {
      ++line_no;
      if (line_no == 1) {
        if (line != kManifestHeader) {
          RESIDENT_LOG(kError, "data dir: ", manifest_path, " does not start with '",
                       kManifestHeader, "'; starting with no named arrays");
          break;
        }
        continue;
      }
      std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
      std::string tenant;
      int64_t size = 0;
      uint64_t checksum = 0;
      if (f.size() != 5 || !Unescape(f[0], &tenant) || !absl::SimpleAtoi(f[3], &size) ||
          !absl::SimpleHexAtoi(f[4], &checksum) || f[2].find('/') != absl::string_view::npos) {
        RESIDENT_LOG(kError, "data dir: ", manifest_path, " line ", line_no,
                     " is malformed; ignored");
        dropped = true;
        continue;
      }
      const std::string name(f[1]);
      const std::string file(f[2]);
      referenced.insert(file);
      const std::string path = absl::StrCat(arrays_dir, "/", file);
      auto skip = [&](absl::string_view why) {
        RESIDENT_LOG(kError, "data dir: named array '", name, "' of tenant '", tenant, "': ", path,
                     " ", why, "; ignored, not loaded (renamed to ", file, ".corrupt)");
        ::rename(path.c_str(), absl::StrCat(path, ".corrupt").c_str());
        dropped = true;
      };
      absl::StatusOr<std::string> contents = ReadWhole(path);
      if (!contents.ok()) {
        skip(contents.status().message());
        continue;
      }
      if (static_cast<int64_t>(contents->size()) != size) {
        skip(absl::StrCat("has ", contents->size(), " bytes, the manifest says ", size,
                          " (truncated by a crash?)"));
        continue;
      }
      if (Fnv1a64(*contents) != checksum) {
        skip("fails its checksum");
        continue;
      }
      absl::StatusOr<HostArray> parsed = ParseNpy(*contents);
      if (!parsed.ok()) {
        skip(absl::StrCat("is not a valid .npy file: ", parsed.status().message()));
        continue;
      }
      if (entries_.contains({tenant, name})) {
        RESIDENT_LOG(kError, "data dir: ", manifest_path, " line ", line_no, " names '", name,
                     "' of tenant '", tenant, "' again; ignored");
        dropped = true;
        continue;
      }
      entries_[{tenant, name}] = Entry{file, size, checksum};
      out.push_back(Stored{tenant, name, *std::move(parsed)});
    }
  }
  // Data files no entry names were written by a keep that never finished
  // (the manifest was not updated): never acknowledged, so removed.
  for (const std::string& f : ListDir(arrays_dir)) {
    if (absl::EndsWith(f, ".npy") && !referenced.contains(f)) {
      RESIDENT_LOG(kWarning, "data dir: deleting ", arrays_dir, "/", f,
                   ", which no manifest entry names (an unfinished keep)");
      ::unlink(absl::StrCat(arrays_dir, "/", f).c_str());
    }
  }
  if (dropped) {
    absl::Status s = WriteManifest("load-manifest");
    if (!s.ok()) RESIDENT_LOG(kError, s.message());
  }
  RESIDENT_LOG(kInfo, "data dir ", dir_, ": ", out.size(), " named arrays loaded");
  return out;
}

absl::Status ArrayStore::WriteManifest(absl::string_view fault) {
  std::string text = absl::StrCat(kManifestHeader, "\n");
  for (const auto& [key, e] : entries_) {
    absl::StrAppend(&text, Escape(key.first), " ", key.second, " ", e.file, " ", e.size, " ",
                    absl::Hex(e.checksum), "\n");
  }
  bool replaced = false;
  absl::Status s = WriteDurably(dir_, kManifest, text, fault, &replaced);
  manifest_unknown_ = !s.ok() && replaced;
  return s;
}

void ArrayStore::RestoreManifest() {
  if (!manifest_unknown_) return;
  // The rename went through but not the directory fsync: put back the
  // manifest of entries_ (the caller has undone its change there).
  if (absl::Status s = WriteManifest("restore-manifest"); !s.ok()) {
    RESIDENT_LOG(kError, s.message(), "; the manifest on disk may not match the server");
  }
}

absl::Status ArrayStore::Put(const std::string& tenant, const std::string& name, DType dtype,
                             const Shape& shape, absl::string_view bytes) {
  const std::string file = absl::StrCat(HandleId::Random().ToHex().substr(0, 16), ".npy");
  const std::string arrays_dir = absl::StrCat(dir_, "/", kArraysDir);
  const std::string path = absl::StrCat(arrays_dir, "/", file);
  std::string contents = SerializeNpy(dtype, shape, std::string_view(bytes.data(), bytes.size()));
  const Entry entry{file, static_cast<int64_t>(contents.size()), Fnv1a64(contents)};
  bool replaced = false;
  if (absl::Status s = WriteDurably(arrays_dir, file, contents, "keep-data", &replaced); !s.ok()) {
    if (replaced) ::unlink(path.c_str());
    return s;
  }
  contents.clear();
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = entries_.insert({{tenant, name}, entry});
  if (!inserted) {
    ::unlink(path.c_str());
    return absl::AlreadyExistsError(absl::StrCat("name '", name, "' is already stored"));
  }
  absl::Status s = WriteManifest("keep-manifest");
  if (!s.ok()) {
    entries_.erase(it);
    RestoreManifest();
    ::unlink(path.c_str());
  }
  return s;
}

absl::Status ArrayStore::Remove(const std::string& tenant, const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::pair<std::string, std::string>, Entry>> removed;
  for (const std::string& n : names) {
    auto it = entries_.find({tenant, n});
    if (it == entries_.end()) continue;
    removed.emplace_back(it->first, it->second);
    entries_.erase(it);
  }
  if (removed.empty()) return absl::OkStatus();
  if (absl::Status s = WriteManifest("rm-manifest"); !s.ok()) {
    for (auto& [k, e] : removed) entries_[k] = e;
    RestoreManifest();
    return s;
  }
  // The names are gone durably; the data files are only garbage now (Load
  // deletes any that survive a crash), so failing to delete them is no error.
  const std::string arrays_dir = absl::StrCat(dir_, "/", kArraysDir);
  for (auto& [k, e] : removed) ::unlink(absl::StrCat(arrays_dir, "/", e.file).c_str());
  if (absl::Status s = FsyncPath(arrays_dir, /*directory=*/true); !s.ok()) {
    RESIDENT_LOG(kWarning, s.message());
  }
  return absl::OkStatus();
}

}  // namespace resident
