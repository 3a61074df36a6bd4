// A server of two devices (the test device twice: cpu,cpu in CI): Describe's
// list, placement, peer copies of named and copied arrays, and budgets per
// device, through the real server and the client library.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "e2e_fixture.h"
#include "gtest/gtest.h"

namespace resident::e2e {
namespace {

constexpr int64_t kLimit = 1 << 20;  // --max-memory: per device

class MultiDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.max_memory_bytes = kLimit;
    server_ = StartServer(o, TwoTestDevices());
    ASSERT_NE(server_, nullptr);
  }
  std::unique_ptr<Client> On(const std::string& device) {
    ClientOptions o;
    o.device = device;
    return Connect(*server_, o);
  }
  client::DeviceListing Device(Client& c, int i) {
    absl::StatusOr<client::ServerInfo> info = c.Info();
    EXPECT_TRUE(info.ok()) << info.status();
    return info.ok() ? info->devices.at(static_cast<size_t>(i)) : client::DeviceListing();
  }
  std::unique_ptr<Server> server_;
};

TEST_F(MultiDeviceTest, DescribeListsEveryDevice) {
  std::unique_ptr<Client> c = On("");
  ASSERT_NE(c, nullptr);
  absl::StatusOr<client::ServerInfo> info = c->Info();
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_EQ(info->devices.size(), 2u);
  EXPECT_EQ(info->devices[0].name, TestDevice());
  EXPECT_EQ(info->devices[1].name, TestDevice() + "#1");
  for (uint32_t i = 0; i < 2; ++i) {
    const client::DeviceListing& d = info->devices[i];
    EXPECT_EQ(d.index, i);
    EXPECT_EQ(d.backend, TestDevice());
    EXPECT_EQ(d.kind, TestDevice() == "cpu" ? "cpu" : "cuda");
    EXPECT_EQ(d.limit_bytes, kLimit) << "--max-memory applies to each device";
    EXPECT_GT(d.total_bytes, 0);
    EXPECT_FALSE(d.description.empty());
  }
  // The old single-device fields describe device 0.
  EXPECT_EQ(info->device_name, TestDevice());
}

TEST_F(MultiDeviceTest, DefaultPlacementIsTheLeastLoaded) {
  std::unique_ptr<Client> first = On("");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->device(), TestDevice()) << "a tie goes to the lowest index";
  // Fill device 0 a little: the next session goes to device 1, then (with
  // device 1 fuller) back to 0.
  Array a = UploadAs(*first, DType::kFloat64, {1024}, std::vector<double>(1024, 1.0));
  std::unique_ptr<Client> second = On("");
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->device(), TestDevice() + "#1");
  Array b = UploadAs(*second, DType::kFloat64, {2048}, std::vector<double>(2048, 2.0));
  std::unique_ptr<Client> third = On("");
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(third->device(), TestDevice());
}

TEST_F(MultiDeviceTest, ExplicitPlacementByIndexOrName) {
  std::unique_ptr<Client> by_index = On("1");
  ASSERT_NE(by_index, nullptr);
  EXPECT_EQ(by_index->device(), TestDevice() + "#1");
  std::unique_ptr<Client> by_name = On(TestDevice() + "#1");
  ASSERT_NE(by_name, nullptr);
  EXPECT_EQ(by_name->device(), TestDevice() + "#1");
  std::unique_ptr<Client> zero = On("0");
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->device(), TestDevice());
  // Arrays are made where their session lives.
  Array a = UploadAs(*by_index, DType::kFloat64, {4}, {1, 2, 3, 4});
  ASSERT_TRUE(a.Evaluate().ok());
  EXPECT_EQ(Device(*by_index, 1).used_bytes, 32);
  EXPECT_EQ(Device(*by_index, 0).used_bytes, 0);
}

TEST_F(MultiDeviceTest, UnknownDeviceIsInvalidArgument) {
  const std::vector<std::string> bads = {"2",
                                         "99",
                                         "gpu:0",
                                         "cuda:7",
                                         "cpu#9",
                                         "-1",
                                         " 1",
                                         "1,0",
                                         std::string(4096, 'x'),
                                         "99999999999999999999"};
  for (const std::string& bad : bads) {
    ClientOptions o;
    o.device = bad;
    absl::StatusOr<std::unique_ptr<Client>> c = Client::Connect(Target(*server_), o);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << bad << ": " << c.status();
    EXPECT_LT(c.status().message().size(), 400u) << "a hostile name is not echoed in full";
  }
  // The server still serves.
  std::unique_ptr<Client> c = On("");
  ASSERT_NE(c, nullptr);
  ExpectArray(UploadAs(*c, DType::kInt64, {2}, {5, 6}), DType::kInt64, {2}, {5, 6});
}

TEST_F(MultiDeviceTest, ProgramCopiesANamedArrayFromAnotherDevice) {
  std::unique_ptr<Client> a = On("0");
  std::unique_ptr<Client> b = On("1");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  Array x = UploadAs(*a, DType::kFloat64, {6}, {-1.5, 0.25, 2.0, 3.75, -0.125, 10.0});
  ASSERT_TRUE(a->Keep(x, "shared").ok());
  absl::StatusOr<Array> xb = b->Attach("shared");
  ASSERT_TRUE(xb.ok()) << xb.status();
  const int64_t used1 = Device(*b, 1).used_bytes;
  // x = np.array([-1.5, 0.25, 2.0, 3.75, -0.125, 10.0]); np.sqrt(np.abs(x)) * x + 0.5
  Array y = client::sqrt(client::abs(*xb)) * *xb + 0.5;
  ExpectArray(y, DType::kFloat64, {6},
              {-1.3371173070873834, 0.625, 3.3284271247461903, 7.761843774138907,
               0.45580582617584076, 32.122776601683796});
  const client::DeviceListing d1 = Device(*b, 1);
  EXPECT_EQ(d1.peer_copies, 1);
  EXPECT_EQ(d1.peer_copy_bytes, 48);
  EXPECT_EQ(Device(*b, 0).peer_copies, 0);
  // The copy was released with the program: device 1 holds y only.
  EXPECT_EQ(d1.used_bytes, used1 + 48);
  // The named array itself stays on device 0; reading it there copies nothing.
  // x + np.arange(6.0)
  ExpectArray(
      x + client::arange(*a, Scalar::Int(0), Scalar::Int(6), Scalar::Int(1), DType::kFloat64),
      DType::kFloat64, {6}, {-1.5, 1.25, 4.0, 6.75, 3.875, 15.0});
  EXPECT_EQ(Device(*a, 0).peer_copies, 0);
  // A download from the session on device 1 reads it where it lives.
  ExpectArray(*xb, DType::kFloat64, {6}, {-1.5, 0.25, 2.0, 3.75, -0.125, 10.0});
}

TEST_F(MultiDeviceTest, CopyToAnotherDevice) {
  std::unique_ptr<Client> a = On("0");
  ASSERT_NE(a, nullptr);
  Array x = UploadAs(*a, DType::kInt32, {2, 3}, {1, -2, 3, -4, 5, -6});
  absl::StatusOr<Array> moved = a->CopyTo(x, TestDevice() + "#1");
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(Device(*a, 1).used_bytes, 24) << "charged on the destination";
  EXPECT_EQ(Device(*a, 1).peer_copies, 1);
  ExpectArray(*moved, DType::kInt32, {2, 3}, {1, -2, 3, -4, 5, -6});
  // A program of the session (on device 0) reading it copies it back.
  // np.array([[1,-2,3],[-4,5,-6]], np.int32) * 3
  ExpectArray(*moved * 3, DType::kInt32, {2, 3}, {3, -6, 9, -12, 15, -18});
  EXPECT_EQ(Device(*a, 0).peer_copies, 1);
  ASSERT_TRUE(moved->Release().ok());
  EXPECT_TRUE(WaitFor([&] { return Device(*a, 1).used_bytes == 0; })) << "released there";
  // Unknown destinations.
  for (const char* bad : {"2", "nope"}) {
    absl::StatusOr<Array> c = a->CopyTo(x, bad);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << c.status();
  }
}

TEST_F(MultiDeviceTest, FillingOneDeviceDoesNotRefuseTheOther) {
  std::unique_ptr<Client> a = On("0");
  std::unique_ptr<Client> b = On("1");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const int64_t n = kLimit / 8;
  Array full_a = UploadAs(*a, DType::kFloat64, {n}, std::vector<double>(n, 1.0));
  ASSERT_TRUE(full_a.Evaluate().ok());
  absl::StatusOr<Array> more = a->Upload(DType::kFloat64, {1}, Bytes(DType::kFloat64, {1}));
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().code(), absl::StatusCode::kResourceExhausted) << more.status();
  // Device 1 has its own budget.
  Array on_b = UploadAs(*b, DType::kFloat64, {n / 4}, std::vector<double>(n / 4, 2.0));
  ASSERT_TRUE(on_b.Evaluate().ok());
  // A copy onto the full device, and a program there needing a peer copy,
  // are refused; the same program on device 1 runs.
  absl::StatusOr<Array> c = b->CopyTo(on_b, "0");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted) << c.status();
  ASSERT_TRUE(b->Keep(on_b, "half").ok());
  absl::StatusOr<Array> half_on_a = a->Attach("half");
  ASSERT_TRUE(half_on_a.ok()) << half_on_a.status();
  absl::Status s = (*half_on_a + 1.0).Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_EQ(Device(*a, 0).used_bytes, kLimit) << "nothing leaked by the refused program";
  // np.sum(np.full(n // 4, 2.0) + 1.0) == 3.0 * (n // 4), exact in float64
  ExpectArray(client::sum(on_b + 1.0), DType::kFloat64, {}, {3.0 * static_cast<double>(n / 4)});
}

}  // namespace
}  // namespace resident::e2e
