// SIGKILL of the real resident-server in the middle of a keep (or an rm) of
// a large array, then a restart on the same --data-dir: the array is there
// with identical bytes or it is absent (NOT_FOUND), never loaded damaged; an
// acknowledged keep is always there; other names are never lost; the server
// starts every time, the name can be kept again, and no temporary or orphan
// file outlives a restart.
//
// The exact windows (data file written / renamed, manifest written /
// renamed) are hit with the test-only RESIDENT_FAULT_INJECT hook of
// ArrayStore; kills at spread fractions of a measured keep cover the rest
// (the copy and checksum before any write, a data file half written).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <future>
#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/dir_listing.h"
#include "tests/tenancy/server_process.h"

namespace resident::tenancy {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// Large enough that a keep (copy, checksum, write, fsync) takes tens of
// milliseconds, so timed kills land inside it.
constexpr int64_t kBigElems = int64_t{8} << 20;  // float64: 64 MiB
constexpr int64_t kBigBytes = kBigElems * 8;

using testing_support::DirEntries;

int64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

// What a kill left on disk, in words (reported, so a run shows which
// windows its timed kills hit).
std::string DescribeLeftovers(const std::string& data, const std::string& name) {
  const std::string manifest = ReadFile(data + "/MANIFEST");
  if (manifest.find(" " + name + " ") != std::string::npos) return "in the manifest";
  for (const std::string& f : DirEntries(data)) {
    if (f == "MANIFEST.tmp") return "manifest .tmp written, not renamed";
  }
  std::string out = "nothing on disk yet";
  for (const std::string& f : DirEntries(data + "/arrays")) {
    const int64_t size = FileSize(absl::StrCat(data, "/arrays/", f));
    if (absl::EndsWith(f, ".npy.tmp")) {
      out = absl::StrCat("data .tmp of ", size, " of ", kBigBytes + 128, " bytes");
    } else if (absl::EndsWith(f, ".npy") && manifest.find(f) == std::string::npos) {
      out = "data file renamed, not in the manifest";
    }
  }
  return out;
}

// After a restart: no temporary, orphan or damaged file in the data dir.
void ExpectTidy(const std::string& data) {
  const std::string manifest = ReadFile(data + "/MANIFEST");
  for (const std::string& f : DirEntries(data)) {
    EXPECT_FALSE(absl::EndsWith(f, ".tmp")) << f << " outlived a restart";
  }
  for (const std::string& f : DirEntries(data + "/arrays")) {
    EXPECT_TRUE(absl::EndsWith(f, ".npy")) << f << " in arrays/ after a restart";
    EXPECT_THAT(manifest, HasSubstr(f)) << f << " is named by no manifest entry";
  }
}

// "keep-data:written" -> "big-keep-data.written": a valid array name.
std::string NameFor(absl::string_view fault) {
  std::string n = absl::StrCat("big-", fault);
  std::replace(n.begin(), n.end(), ':', '.');
  return n;
}

void ExpectArray(client::Client& c, const std::string& name, const Shape& shape,
                 const std::string& bytes) {
  auto a = c.Attach(name);
  ASSERT_TRUE(a.ok()) << name << ": " << a.status();
  auto d = a->Download();
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->dtype, DType::kFloat64);
  EXPECT_EQ(d->shape, shape);
  EXPECT_TRUE(d->bytes == bytes) << name << ": bytes differ after the restart";
}

class KillDuringKeepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = dir_.path() + "/data";
    big_ = RandomBytes(kBigBytes, 7);
    witness_ = RandomBytes(4096 * 8, 8);
    Restart({});
    ASSERT_GT(server_->port(), 0) << server_->log();
    auto w = client_->Upload(DType::kFloat64, {4096}, witness_);
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_TRUE(client_->Keep(*w, "witness").ok());
  }

  void Restart(const std::map<std::string, std::string>& env) {
    client_.reset();
    server_.reset();
    server_ =
        std::make_unique<ServerProcess>(data_, absl::StrCat(dir_.path(), "/log", ++starts_), env);
    if (server_->port() > 0) client_ = server_->Connect();
  }

  absl::StatusOr<client::Array> UploadBig() {
    return client_->Upload(DType::kFloat64, {kBigElems}, big_);
  }

  // Restarts after a kill and checks `name`: present with identical bytes
  // or absent; returns whether it was present. The witness and the small
  // arrays kept by earlier rounds must all be there; then `name` is freed
  // and kept again (a small array, checked by the next restart).
  bool RestartAndCheck(const std::string& name) {
    Restart({});
    EXPECT_GT(server_->port(), 0) << "the server did not start after a kill:\n" << server_->log();
    if (client_ == nullptr) return false;
    ExpectTidy(data_);
    EXPECT_THAT(server_->log(), ::testing::Not(HasSubstr(".corrupt")))
        << "a kill left a damaged entry in the manifest";
    ExpectArray(*client_, "witness", {4096}, witness_);
    for (const std::string& n : rekept_) ExpectArray(*client_, n, {3}, Small());
    bool present = false;
    auto a = client_->Attach(name);
    if (a.ok()) {
      present = true;
      ExpectArray(*client_, name, {kBigElems}, big_);
      EXPECT_TRUE(client_->Delete(name).ok());
    } else {
      EXPECT_EQ(a.status().code(), absl::StatusCode::kNotFound) << a.status();
    }
    auto small = client_->Upload(DType::kFloat64, {3}, Small());
    EXPECT_TRUE(small.ok());
    if (small.ok()) {
      absl::Status kept = client_->Keep(*small, name);
      EXPECT_TRUE(kept.ok()) << "keeping '" << name << "' again: " << kept;
      if (kept.ok()) rekept_.push_back(name);
    }
    return present;
  }

  static std::string Small() { return RandomBytes(3 * 8, 9); }

  ScratchDir dir_;
  std::string data_;
  std::string big_;
  std::string witness_;
  int starts_ = 0;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
  std::vector<std::string> rekept_;
};

// Each named window of a keep, crashed into exactly: the outcome is known.
TEST_F(KillDuringKeepTest, AtEachStepOfTheWrite) {
  struct Point {
    const char* fault;
    bool present;  // after the restart
  };
  const Point points[] = {
      {"keep-data:written", false},      // data .tmp complete, not renamed
      {"keep-data:renamed", false},      // data file in place, no manifest entry
      {"keep-manifest:written", false},  // new manifest .tmp, not renamed
      {"keep-manifest:renamed", true},   // new manifest in place, not acknowledged
  };
  for (const Point& p : points) {
    SCOPED_TRACE(p.fault);
    Restart({{"RESIDENT_FAULT_INJECT", p.fault}});
    ASSERT_GT(server_->port(), 0) << server_->log();
    auto big = UploadBig();
    ASSERT_TRUE(big.ok()) << big.status();
    const std::string name = NameFor(p.fault);
    absl::Status kept = client_->Keep(*big, name);
    EXPECT_FALSE(kept.ok()) << "the keep was acknowledged: the fault point was not reached";
    ASSERT_TRUE(server_->WaitForExit(std::chrono::seconds(10)));
    EXPECT_TRUE(server_->KilledBySigkill()) << server_->log();
    const std::string left = DescribeLeftovers(data_, name);
    EXPECT_EQ(RestartAndCheck(name), p.present) << "left on disk: " << left;
    if (p.fault == std::string("keep-data:renamed")) {
      EXPECT_THAT(server_->log(), HasSubstr("which no manifest entry names"));
    }
  }
  // The last restart checks every name kept again above.
  Restart({});
  ASSERT_GT(server_->port(), 0) << server_->log();
  ExpectTidy(data_);
  for (const std::string& n : rekept_) ExpectArray(*client_, n, {3}, Small());
  EXPECT_THAT(server_->log(), HasSubstr(absl::StrCat(rekept_.size() + 1, " named arrays loaded")));
}

// An rm crashed into before and after its manifest rename: the name is
// wholly there or wholly gone, and the other names are untouched.
TEST_F(KillDuringKeepTest, DuringAnRm) {
  const struct {
    const char* fault;
    bool present;
  } points[] = {{"rm-manifest:written", true}, {"rm-manifest:renamed", false}};
  for (const auto& p : points) {
    SCOPED_TRACE(p.fault);
    Restart({{"RESIDENT_FAULT_INJECT", p.fault}});
    ASSERT_GT(server_->port(), 0) << server_->log();
    const std::string name = NameFor(p.fault);
    {
      auto big = UploadBig();
      ASSERT_TRUE(big.ok()) << big.status();
      ASSERT_TRUE(client_->Keep(*big, name).ok());
    }
    EXPECT_FALSE(client_->Delete(name).ok());
    ASSERT_TRUE(server_->WaitForExit(std::chrono::seconds(10)));
    EXPECT_TRUE(server_->KilledBySigkill()) << server_->log();
    EXPECT_EQ(RestartAndCheck(name), p.present);
  }
}

// Kills at spread fractions of a measured keep: whatever window each lands
// in, the outcome is all or nothing, and all if the keep was acknowledged.
// About the first half of a keep is the copy and checksum (nothing on disk
// yet), then the data file grows; past 1.0 most keeps have finished.
constexpr double kKillFractions[] = {0.05, 0.3, 0.5, 0.65, 0.8, 0.9, 1.0, 1.1, 1.4};

TEST_F(KillDuringKeepTest, AtSpreadTimes) {
  // A first, complete keep measures how long one takes here.
  double keep_s = 0;
  {
    auto big = UploadBig();
    ASSERT_TRUE(big.ok()) << big.status();
    const auto t0 = Clock::now();
    ASSERT_TRUE(client_->Keep(*big, "calibration").ok());
    keep_s = std::chrono::duration<double>(Clock::now() - t0).count();
    ASSERT_TRUE(client_->Delete("calibration").ok());
  }
  std::printf("a keep of %lld MiB takes %.3f s here\n", static_cast<long long>(kBigBytes >> 20),
              keep_s);
  int present = 0;
  for (double f : kKillFractions) {
    const std::string name = absl::StrCat("big-at-", static_cast<int>(f * 100));
    SCOPED_TRACE(name);
    Restart({});
    ASSERT_GT(server_->port(), 0) << server_->log();
    auto big = UploadBig();
    ASSERT_TRUE(big.ok()) << big.status();
    auto keep = std::async(std::launch::async, [&] { return client_->Keep(*big, name); });
    std::this_thread::sleep_for(std::chrono::duration<double>(f * keep_s));
    server_->Kill();
    const absl::Status kept = keep.get();
    const std::string left = DescribeLeftovers(data_, name);
    const bool was_present = RestartAndCheck(name);
    std::printf("killed at %.0f%% (%.3f s): keep %s; left: %s; after the restart: %s\n", f * 100,
                f * keep_s, kept.ok() ? "acknowledged" : "failed", left.c_str(),
                was_present ? "present, identical" : "absent");
    if (kept.ok()) {
      EXPECT_TRUE(was_present) << "an acknowledged keep was lost";
    }
    present += was_present;
  }
  std::printf("%d of %zu timed kills left the array present\n", present, std::size(kKillFractions));
}

}  // namespace
}  // namespace resident::tenancy
