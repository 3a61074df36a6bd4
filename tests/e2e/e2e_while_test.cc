// While loops decided on the device, through the C++ client against a real
// server: the final carried values, the trips taken and whether max_trips
// stopped the loop, for elementwise bodies, bodies with a dot and invariants
// read by both the condition and the body, and a while nested in a loop.
// Expected values are the same loops written in NumPy (noted beside each);
// halving by 0.5 is exact, so they hold bit for bit.
#include <cstdint>
#include <vector>

#include "e2e_fixture.h"
#include "gmock/gmock.h"

namespace resident::e2e {
namespace {

using client::full;
using client::ones;
using ::testing::HasSubstr;

constexpr DType kF64 = DType::kFloat64, kI64 = DType::kInt64, kB = DType::kBool;

class WhileTest : public SharedServerTest<WhileTest> {};

// The body and condition of most tests: x = x * 0.5 while x.max() > limit.
std::vector<Array> Halving(const std::vector<Array>& s) { return {s[0] * 0.5}; }
Array Above(const std::vector<Array>& s, double limit) { return client::max(s[0]) > limit; }

TEST_F(WhileTest, RunsUntilTheConditionFailsAndCountsTrips) {
  absl::StatusOr<Array> x =
      c_->Upload(Shape{4}, absl::MakeConstSpan(std::vector<double>{1, 10, 100, 1000}));
  ASSERT_TRUE(x.ok()) << x.status();
  // 1000 / 2**10 = 0.977 <= 1: ten trips; NumPy's loop gives the same.
  Client::WhileResult r =
      c_->While([](const std::vector<Array>& s) { return Above(s, 1.0); }, Halving, {*x}, 100);
  ASSERT_EQ(r.carried.size(), 1u);
  ExpectArray(r.carried[0], kF64, {4}, {1.0 / 1024, 10.0 / 1024, 100.0 / 1024, 1000.0 / 1024});
  ExpectArray(r.trips, kI64, {}, {10});
  ExpectArray(r.capped, kB, {}, {0});
  // The input is unchanged (arrays are immutable).
  ExpectArray(*x, kF64, {4}, {1, 10, 100, 1000});
}

TEST_F(WhileTest, MaxTripsStopsItAndSaysSo) {
  absl::StatusOr<Array> x = c_->Upload(Shape{2}, absl::MakeConstSpan(std::vector<double>{64, 8}));
  ASSERT_TRUE(x.ok());
  auto above1 = [](const std::vector<Array>& s) { return Above(s, 1.0); };
  Client::WhileResult three = c_->While(above1, Halving, {*x}, 3);
  ExpectArray(three.carried[0], kF64, {2}, {8, 1});
  ExpectArray(three.trips, kI64, {}, {3});
  ExpectArray(three.capped, kB, {}, {1});
  // Six trips bring 64 to 1 exactly: the condition fails on the sixth test,
  // so max_trips=6 is not a cap.
  Client::WhileResult six = c_->While(above1, Halving, {*x}, 6);
  ExpectArray(six.trips, kI64, {}, {6});
  ExpectArray(six.capped, kB, {}, {0});
  Client::WhileResult none = c_->While(above1, Halving, {*x}, 0);
  ExpectArray(none.carried[0], kF64, {2}, {64, 8});
  ExpectArray(none.trips, kI64, {}, {0});
  ExpectArray(none.capped, kB, {}, {1});
  // A condition false from the start: no trip, not capped.
  Client::WhileResult idle =
      c_->While([](const std::vector<Array>& s) { return Above(s, 100.0); }, Halving, {*x}, 5);
  ExpectArray(idle.carried[0], kF64, {2}, {64, 8});
  ExpectArray(idle.trips, kI64, {}, {0});
  ExpectArray(idle.capped, kB, {}, {0});
}

TEST_F(WhileTest, ADotBodyWithInvariantsInTheConditionAndTheBody) {
  // a = 0.5 * np.eye(2); v = np.array([8., 8.]); limit = np.array(1.)
  // while v.sum() > limit: v = a @ v; k += 1   ->  v = [0.5, 0.5], k = 4
  absl::StatusOr<Array> a =
      c_->Upload(Shape{2, 2}, absl::MakeConstSpan(std::vector<double>{0.5, 0, 0, 0.5}));
  absl::StatusOr<Array> limit = c_->Upload(Shape{}, absl::MakeConstSpan(std::vector<double>{1}));
  ASSERT_TRUE(a.ok() && limit.ok());
  Array v = full(*c_, {2}, Scalar::Float(8.0));
  Array k = client::zeros(*c_, {}, kI64);
  // The body reads `a` and the condition `limit`: both are the while's
  // invariants, numbered once for both scopes.
  Client::WhileResult r =
      c_->While([&](const std::vector<Array>& s) { return client::sum(s[0]) > *limit; },
                [&](const std::vector<Array>& s) {
                  return std::vector<Array>{client::dot(*a, s[0]), s[1] + 1};
                },
                {v, k}, 1000);
  ASSERT_EQ(r.carried.size(), 2u);
  ExpectArray(r.carried[0], kF64, {2}, {0.5, 0.5});
  ExpectArray(r.carried[1], kI64, {}, {4});
  ExpectArray(r.trips, kI64, {}, {4});
}

TEST_F(WhileTest, NestedInALoopAndLazy) {
  // for _ in range(3): x = x * 4; while x.max() > 1: x = x * 0.5
  // x = [0.75] -> 3 -> 0.75 (2 trips) each outer trip: [0.75].
  Array x = full(*c_, {1}, Scalar::Float(0.75));
  std::vector<Array> out = c_->Loop(3, {x}, [&](const std::vector<Array>& p) {
    Client::WhileResult inner = c_->While([](const std::vector<Array>& s) { return Above(s, 1.0); },
                                          Halving, {p[0] * 4.0}, 50);
    return inner.carried;
  });
  ExpectArray(out[0], kF64, {1}, {0.75});
}

TEST_F(WhileTest, BadBodiesAreRefusedBeforeAnythingRuns) {
  Array x = ones(*c_, {3});
  // A condition that is not a bool scalar: float, and bool of shape (3,).
  Client::WhileResult f =
      c_->While([](const std::vector<Array>& s) { return client::sum(s[0]); }, Halving, {x}, 4);
  absl::Status s = f.carried[0].Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("a while condition must be a bool scalar"));
  Client::WhileResult v =
      c_->While([](const std::vector<Array>& s) { return s[0] > 1.0; }, Halving, {x}, 4);
  s = v.trips.Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("cond yield is bool (3,)"));
  // A body that changes the carried dtype.
  Client::WhileResult d = c_->While(
      [](const std::vector<Array>& s) { return Above(s, 1.0); },
      [](const std::vector<Array>& s) { return std::vector<Array>{client::astype(s[0], kI64)}; },
      {x}, 4);
  s = d.carried[0].Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("must keep each carried value's dtype"));
  // The server still serves, and x is intact.
  ExpectArray(x, kF64, {3}, {1, 1, 1});
}

}  // namespace
}  // namespace resident::e2e
