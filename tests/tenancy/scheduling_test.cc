// Fair scheduling end to end: while alice floods the server with long
// programs, bob's small ones keep completing within a stated bound; a
// program queued past its deadline does not run.
#include <atomic>
#include <condition_variable>
#include <mutex>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tenancy/tenancy_fixture.h"

namespace resident::tenancy {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Alice's long programs, sent asynchronously and cancelled at the end.
class Flood {
 public:
  Flood(RawCaller& who, int64_t trips, int count) {
    calls_.resize(static_cast<size_t>(count));
    for (Call& c : calls_) {
      c.req.set_session(who.session);
      *c.req.mutable_program() = DoublingProgram(100000, trips);
      v1::Output* o = c.req.add_outputs();
      o->set_value(1);
      o->set_keep(true);
      who.Prepare(c.ctx, std::chrono::seconds(120));
      who.stub->async()->Run(&c.ctx, &c.req, &c.resp, [this](const grpc::Status&) {
        std::lock_guard<std::mutex> lock(mu_);
        ++done_;
        cv_.notify_all();
      });
    }
  }
  ~Flood() {
    for (Call& c : calls_) c.ctx.TryCancel();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_ == static_cast<int>(calls_.size()); });
  }
  int done() {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }

 private:
  struct Call {
    grpc::ClientContext ctx;
    v1::RunRequest req;
    v1::RunResponse resp;
  };
  std::deque<Call> calls_;
  std::mutex mu_;
  std::condition_variable cv_;
  int done_ = 0;
};

// Seconds one program of `trips` doublings of 100000 float64 takes here.
double TimeOne(RawCaller& who, int64_t trips) {
  v1::RunRequest req;
  req.set_session(who.session);
  *req.mutable_program() = DoublingProgram(100000, trips);
  v1::Output* o = req.add_outputs();
  o->set_value(1);
  o->set_keep(true);
  grpc::ClientContext ctx;
  who.Prepare(ctx);
  v1::RunResponse resp;
  const auto start = steady_clock::now();
  EXPECT_TRUE(who.stub->Run(&ctx, req, &resp).ok());
  return std::chrono::duration<double>(steady_clock::now() - start).count();
}

grpc::Status Small(RawCaller& who, milliseconds deadline = milliseconds(30000)) {
  v1::RunRequest req;
  req.set_session(who.session);
  *req.mutable_program()->add_instructions() = Ins("ones", {4});
  req.add_outputs()->set_return_data(true);
  grpc::ClientContext ctx;
  who.Prepare(ctx, deadline);
  v1::RunResponse resp;
  return who.stub->Run(&ctx, req, &resp);
}

TEST(FairSchedulingTest, AFloodingTenantDoesNotStarveAnother) {
  ScratchDir dir;
  ServerOptions o;
  o.worker_threads = 4;
  o.max_concurrent_per_tenant = 2;
  std::unique_ptr<Server> server = StartTenantServer(dir, o);
  ASSERT_NE(server, nullptr);
  RawCaller alice = RawCaller::Open(*server, kAliceToken);
  RawCaller bob = RawCaller::Open(*server, kBobToken);
  // Calibrate: programs of about 1 s on this machine (doubling until they
  // are: a loaded machine or fused loops make one short sample misleading).
  const double t = TimeOne(alice, 2000);
  int64_t trips = std::max<int64_t>(2000, static_cast<int64_t>(2000 / std::max(t, 1e-3)));
  double each = TimeOne(alice, trips);
  for (int i = 0; i < 6 && each < 0.8; ++i) {
    trips *= 2;
    each = TimeOne(alice, trips);
  }
  std::printf("alice's programs: %lld trips, %.2f s each\n", static_cast<long long>(trips), each);
  EXPECT_GT(each, 0.6) << "calibration: alice's programs should be long";
  const int kFlood = 16;  // > 10 s of alice's work queued; her cap runs 2 at once
  Flood flood(alice, trips, kFlood);
  std::this_thread::sleep_for(milliseconds(200));  // the flood is queued and running
  // The bound: each of bob's small programs completes within 2 s (a FIFO
  // pool would hold them behind seconds of alice's work).
  for (int i = 0; i < 10; ++i) {
    const auto start = steady_clock::now();
    grpc::Status s = Small(bob);
    const double took = std::chrono::duration<double>(steady_clock::now() - start).count();
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_LT(took, 2.0) << "bob's program " << i << " waited behind alice's flood";
  }
  EXPECT_LT(flood.done(), kFlood - 4) << "alice's queue should still hold most of her work";
}

TEST(FairSchedulingTest, AProgramQueuedPastItsDeadlineDoesNotRun) {
  ScratchDir dir;
  ServerOptions o;
  o.worker_threads = 4;
  o.max_concurrent_per_tenant = 1;
  std::unique_ptr<Server> server = StartTenantServer(dir, o);
  ASSERT_NE(server, nullptr);
  RawCaller alice = RawCaller::Open(*server, kAliceToken);
  RawCaller alice2 = RawCaller::Open(*server, kAliceToken);
  // One long program holds alice's only slot.
  Flood busy(alice, int64_t{1} << 30, 1);
  std::this_thread::sleep_for(milliseconds(200));
  // Her next program (a kept output) waits its turn past its deadline.
  v1::RunRequest req;
  req.set_session(alice2.session);
  *req.mutable_program()->add_instructions() = Ins("ones", {4});
  req.add_outputs()->set_keep(true);
  grpc::ClientContext ctx;
  alice2.Prepare(ctx, milliseconds(300));
  v1::RunResponse resp;
  grpc::Status s = alice2.stub->Run(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // It never ran: no array was kept in its session, even once the slot frees.
  std::this_thread::sleep_for(milliseconds(300));
  v1::ListRequest list;
  list.set_session(alice2.session);
  grpc::ClientContext lctx;
  alice2.Prepare(lctx);
  v1::ListResponse listed;
  ASSERT_TRUE(alice2.stub->List(&lctx, list, &listed).ok());
  EXPECT_EQ(listed.arrays_size(), 0);
  // Bob is not held up by alice's full slot.
  RawCaller bob = RawCaller::Open(*server, kBobToken);
  EXPECT_TRUE(Small(bob, milliseconds(2000)).ok());
}

}  // namespace
}  // namespace resident::tenancy
