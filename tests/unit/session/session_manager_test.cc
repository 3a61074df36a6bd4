// SessionManager, the facade, driven directly (no server): that its parts
// stay consistent with each other across a call: quota holds given back,
// a buffer held by a handle and a name counted once, limits refusing
// before anything changes, a busy session never reaped, a close stopping
// the program running in it, the tables' host memory coming back.
#include "server/session/session_manager.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu/cpu_backend.h"

namespace resident {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const Program> Ones(int64_t n) {
  auto p = std::make_shared<Program>();
  Instruction ones;
  ones.op = OpKind::kOnes;
  ones.shape = {n};
  ones.dtype = DType::kFloat64;
  p->instructions.push_back(ones);
  return p;
}

std::vector<OutputSpec> Kept() { return {OutputSpec{0, /*keep=*/true, false}}; }

class SessionManagerTest : public ::testing::Test {
 protected:
  void Start(SessionOptions o) {
    o.reap_interval = absl::Hours(1);  // the tests reap by hand
    sessions_ = std::make_unique<SessionManager>(device_, std::move(o));
    baseline_ = device_.budget().used();
  }
  HandleId Open(const std::string& tenant = "alice") {
    absl::StatusOr<HandleId> s = sessions_->Open(tenant);
    EXPECT_TRUE(s.ok()) << s.status();
    return *s;
  }
  HandleId RunOnes(const HandleId& s, int64_t n, const std::string& tenant = "alice") {
    auto r = sessions_->Run(tenant, s, Ones(n), Kept(), {});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? (*r)[0].array.handle : HandleId();
  }

  Device device_{NewCpuBackend(1), 0};
  std::unique_ptr<SessionManager> sessions_;
  int64_t baseline_ = 0;
};

TEST_F(SessionManagerTest, AHandleAndANameOnOneBufferCountOnce) {
  Start({});
  const HandleId s = Open();
  const HandleId h = RunOnes(s, 10);
  ASSERT_TRUE(sessions_->Keep("alice", s, h, "w").ok());
  TenantUsage u = sessions_->Usage("alice");
  EXPECT_EQ(u.bytes, 80);
  EXPECT_EQ(u.arrays, 2);
  EXPECT_EQ(u.names, 1);
  EXPECT_EQ(u.reserved_bytes, 0) << "the program's hold is given back";
  // Attached again: a third reference, still one buffer.
  auto a = sessions_->Attach("alice", s, "w");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(sessions_->Usage("alice").bytes, 80);
  EXPECT_EQ(sessions_->Usage("alice").arrays, 3);
  auto listed = sessions_->List("alice", s);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u) << "both handles show the name; the name is not listed again";
  for (const ArrayDescription& d : *listed) EXPECT_EQ(d.name, "w");
  // The session goes; the name stays and holds the buffer.
  ASSERT_TRUE(sessions_->Close("alice", s).ok());
  EXPECT_EQ(sessions_->Usage("alice").arrays, 1);
  EXPECT_EQ(sessions_->Usage("alice").bytes, 80);
  const HandleId s2 = Open();
  ASSERT_TRUE(sessions_->Release("alice", s2, {}, {"w"}).ok());
  EXPECT_EQ(sessions_->Usage("alice").arrays, 0);
  EXPECT_EQ(sessions_->Usage("alice").bytes, 0);
  EXPECT_EQ(device_.budget().used(), baseline_);
}

TEST_F(SessionManagerTest, QuotaRefusalsChangeNothing) {
  SessionOptions o;
  o.quotas.tenants["alice"] = Quota{100, 2};
  Start(o);
  const HandleId s = Open();
  const HandleId h = RunOnes(s, 10);  // 80 bytes, 1 array
  auto big = sessions_->Run("alice", s, Ones(3), Kept(), {});
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(big.status().message()), HasSubstr("quota of 100 device bytes"));
  auto up = sessions_->BeginUpload("alice", s, DType::kFloat64, {3});
  EXPECT_EQ(up.status().code(), absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE(sessions_->Keep("alice", s, h, "w").ok());  // the second array
  auto third = sessions_->Attach("alice", s, "w");
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(third.status().message()), HasSubstr("quota of 2 arrays"));
  EXPECT_EQ(sessions_->Keep("alice", s, h, "v").status().code(),
            absl::StatusCode::kResourceExhausted);
  const TenantUsage u = sessions_->Usage("alice");
  EXPECT_EQ(u.arrays, 2);
  EXPECT_EQ(u.names, 1);
  EXPECT_EQ(u.reserved_bytes, 0);
}

TEST_F(SessionManagerTest, HandleLimitsRefuseBeforeRunning) {
  SessionOptions o;
  o.table_limits.max_handles_per_session = 2;
  Start(o);
  const HandleId s = Open();
  RunOnes(s, 1);
  RunOnes(s, 1);
  const int64_t used = device_.budget().used();
  auto r = sessions_->Run("alice", s, Ones(1), Kept(), {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("--max-handles-per-session"));
  EXPECT_EQ(device_.budget().used(), used);
  EXPECT_EQ(sessions_->Stats().handles, 2);
  EXPECT_EQ(sessions_->BeginUpload("alice", s, DType::kFloat64, {1}).status().code(),
            absl::StatusCode::kResourceExhausted);
  // A program keeping nothing still runs.
  EXPECT_TRUE(sessions_->Run("alice", s, Ones(1), {OutputSpec{0, false, true}}, {}).ok());
}

TEST_F(SessionManagerTest, ABusySessionIsNotReapedAndAClosedOneStopsItsProgram) {
  SessionOptions o;
  o.idle_timeout = absl::Seconds(1);
  Start(o);
  const HandleId busy = Open();
  const HandleId idle = Open("bob");
  std::atomic<bool> running{false}, release{false};
  absl::StatusOr<std::vector<ProgramResult>> result;
  std::thread program([&] {
    ExecOptions exec;
    exec.check_continue = [&]() -> absl::Status {
      running = true;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return absl::OkStatus();
    };
    result = sessions_->Run("alice", busy, Ones(4), Kept(), exec);
  });
  while (!running) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Long past the timeout: only the session without a program goes.
  EXPECT_EQ(sessions_->ReapIdle(absl::Now() + absl::Hours(1)), 1);
  EXPECT_EQ(sessions_->Renew("bob", idle).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(sessions_->Renew("alice", busy).ok());
  // An administrator closes it: the program stops at its next op.
  ASSERT_TRUE(sessions_->AdminClose(busy).ok());
  release = true;
  program.join();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(sessions_->Stats().handles, 0);
  EXPECT_EQ(sessions_->Usage("alice").reserved_bytes, 0);
  EXPECT_EQ(device_.budget().used(), baseline_);
}

TEST_F(SessionManagerTest, UploadsRegisterIntoTheSessionAndSnapshotsCountThem) {
  Start({});
  const HandleId s = Open();
  auto up = sessions_->BeginUpload("alice", s, DType::kFloat64, {2});
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_EQ(sessions_->Usage("alice").reserved_bytes, 16);
  ASSERT_TRUE((*up)->Append(std::string(16, '\0')).ok());
  auto d = (*up)->Finish();
  ASSERT_TRUE(d.ok()) << d.status();
  up->reset();
  EXPECT_EQ(sessions_->Usage("alice").reserved_bytes, 0);
  EXPECT_EQ(sessions_->ArrayBytes("alice", d->handle), 16);
  EXPECT_EQ(sessions_->ArrayBytes("bob", d->handle), std::nullopt);
  RunOnes(s, 3);
  std::vector<SessionSnapshot> snap = sessions_->Snapshot();
  ASSERT_EQ(snap.size(), 1u);
  EXPECT_EQ(snap[0].id, s);
  EXPECT_EQ(snap[0].arrays, 2);
  EXPECT_EQ(snap[0].bytes, 40);
}

TEST_F(SessionManagerTest, KeepsAndDeletesThatTheDataDirRefusesLeaveNothing) {
  char tmpl[] = "/tmp/session_manager_test_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  Start({});
  ASSERT_TRUE(sessions_->EnableDataDir(dir).ok());
  const HandleId s = Open();
  const HandleId h = RunOnes(s, 2);
  ASSERT_TRUE(sessions_->Keep("alice", s, h, "kept").ok());
  // The data dir goes read-only under the server: writes fail.
  ASSERT_EQ(chmod(dir.c_str(), 0500), 0);
  if (geteuid() == 0) {
    // root writes anyway: take the directory away instead.
    ASSERT_EQ(chmod(dir.c_str(), 0700), 0);
    std::filesystem::remove_all(dir);
  }
  auto refused = sessions_->Keep("alice", s, h, "new");
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("keeping 'new'"));
  TenantUsage u = sessions_->Usage("alice");
  EXPECT_EQ(u.names, 1) << "the refused name is not kept";
  EXPECT_EQ(u.arrays, 2);
  EXPECT_EQ(sessions_->Attach("alice", s, "new").status().code(), absl::StatusCode::kNotFound);
  // A delete the data dir refuses keeps the name, usable.
  EXPECT_FALSE(sessions_->Release("alice", s, {}, {"kept"}).ok());
  EXPECT_TRUE(sessions_->Attach("alice", s, "kept").ok());
  EXPECT_EQ(sessions_->Usage("alice").arrays, 3);
  chmod(dir.c_str(), 0700);
  std::filesystem::remove_all(dir);
}

TEST_F(SessionManagerTest, TheTablesHostMemoryGrowsAndComesBack) {
  Start({});
  const TableStats empty = sessions_->Stats();
  std::vector<HandleId> open;
  for (int i = 0; i < 20; ++i) {
    open.push_back(Open(std::string(40, 'a' + i % 3)));
    for (int j = 0; j < 20; ++j) RunOnes(open.back(), 1, std::string(40, 'a' + i % 3));
  }
  const TableStats full = sessions_->Stats();
  EXPECT_EQ(full.sessions, 20);
  EXPECT_EQ(full.handles, 400);
  EXPECT_GT(full.host_bytes, empty.host_bytes + 400 * 100);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(sessions_->Close(std::string(40, 'a' + i % 3), open[i]).ok());
  }
  const TableStats after = sessions_->Stats();
  EXPECT_EQ(after.handles, 0);
  // The tables keep their slots, but what the entries held goes.
  EXPECT_LT(after.host_bytes, full.host_bytes - 400 * 40);
  EXPECT_EQ(device_.budget().used(), baseline_);
}

TEST_F(SessionManagerTest, ManyThreadsAtOnceLeaveConsistentTables) {
  Start({});
  std::vector<std::thread> threads;
  threads.reserve(6);
  std::atomic<int> failures{0}, cycles{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      const std::string tenant = t % 2 ? "alice" : "bob";
      for (int i = 0; i < 500; ++i) {
        absl::StatusOr<HandleId> s = sessions_->Open(tenant);
        if (!s.ok()) {
          ++failures;
          continue;
        }
        auto r = sessions_->Run(tenant, *s, Ones(2), Kept(), {});
        if (!r.ok()) {
          ++failures;
          continue;
        }
        const HandleId h = (*r)[0].array.handle;
        const std::string name = absl::StrCat("n", t, "-", i);
        if (!sessions_->Keep(tenant, *s, h, name).ok()) ++failures;
        if (!sessions_->Attach(tenant, *s, name).ok()) ++failures;
        sessions_->Stats();
        sessions_->Snapshot();
        sessions_->AllUsage();
        if (!sessions_->Release(tenant, *s, {h}, {name}).ok()) ++failures;
        if (i % 2 == 0) {
          if (!sessions_->Close(tenant, *s).ok()) ++failures;
        } else {
          if (!sessions_->AdminClose(*s).ok()) ++failures;
        }
        sessions_->ReapIdle(absl::Now());
        ++cycles;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(cycles.load(), 6 * 500);
  const TableStats st = sessions_->Stats();
  EXPECT_EQ(st.sessions, 0);
  EXPECT_EQ(st.handles, 0);
  EXPECT_EQ(st.named_arrays, 0);
  for (const auto& [tenant, u] : sessions_->AllUsage()) {
    EXPECT_EQ(u.arrays, 0) << tenant;
    EXPECT_EQ(u.bytes, 0) << tenant;
    EXPECT_EQ(u.reserved_bytes, 0) << tenant;
  }
  EXPECT_EQ(device_.budget().used(), baseline_);
}

}  // namespace
}  // namespace resident
