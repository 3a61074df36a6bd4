// The C++ client on the server's host: its transport is shared memory (the
// server's local data socket), array bytes round-trip through memfd regions
// with no Upload or Download call, and it falls back to gRPC, saying why,
// when the socket is off or not wanted. The regions go with the client.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "e2e_fixture.h"
#include "gmock/gmock.h"

namespace resident::e2e {
namespace {

using client::HostView;
using ::testing::HasSubstr;

int64_t Regions(Server& server) { return server.sessions().RegionTotals().regions; }

TEST(LocalDataTest, ClientsOnTheServersHostMoveBytesThroughSharedMemory) {
  std::unique_ptr<Server> server = StartServer();
  ASSERT_NE(server, nullptr);
  ASSERT_FALSE(server->local_data_socket().empty());
  const std::string target = absl::StrCat("127.0.0.1:", server->port());
  {
    auto c = Client::Connect(target);
    ASSERT_TRUE(c.ok()) << c.status();
    Client& client = **c;
    EXPECT_EQ(client.transport(), "shared-memory") << client.transport_detail();
    EXPECT_THAT(client.transport_detail(), HasSubstr(server->local_data_socket()));
    RpcCounter calls = RpcCounter::Install(client, target);
    std::vector<double> values(3 << 18);  // 6 MiB
    std::iota(values.begin(), values.end(), -5.5);
    absl::StatusOr<Array> x = client.Upload(Shape{3 << 18}, absl::MakeConstSpan(values));
    ASSERT_TRUE(x.ok()) << x.status();
    absl::StatusOr<std::vector<double>> back = x->ToVector<double>();
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, values);
    // A computed result too (larger than the inline limit: a download).
    absl::StatusOr<std::vector<double>> twice = (*x + *x).ToVector<double>();
    ASSERT_TRUE(twice.ok()) << twice.status();
    EXPECT_EQ((*twice)[7], 2 * values[7]);
    EXPECT_EQ(calls.count("RegionUpload"), 1);
    EXPECT_GE(calls.count("RegionDownload"), 1);
    EXPECT_EQ(calls.count("Upload") + calls.count("Download"), 0);
    EXPECT_GT(Regions(*server), 0);
  }
  // The client's socket closed: its regions are unmapped.
  for (int i = 0; i < 200 && Regions(*server) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Regions(*server), 0);
  ClientOptions no_shm;
  no_shm.local_data = false;
  auto plain = Client::Connect(target, no_shm);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->transport(), "grpc");
  EXPECT_THAT((*plain)->transport_detail(), HasSubstr("turned off"));
}

TEST(LocalDataTest, DownloadViewsReadTheServersRegionWithoutACopy) {
  std::unique_ptr<Server> server = StartServer();
  ASSERT_NE(server, nullptr);
  const std::string target = absl::StrCat("127.0.0.1:", server->port());
  std::vector<int32_t> values(1 << 20);  // 4 MiB
  std::iota(values.begin(), values.end(), -7);
  HostView outlives;
  {
    auto c = Client::Connect(target);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_EQ((*c)->transport(), "shared-memory") << (*c)->transport_detail();
    absl::StatusOr<Array> x = (*c)->Upload(Shape{1 << 10, 1 << 10}, absl::MakeConstSpan(values));
    ASSERT_TRUE(x.ok()) << x.status();
    const int64_t before = Regions(*server);
    for (int i = 0; i < 12; ++i) {  // views come and go: their regions are reused
      absl::StatusOr<HostView> v = x->DownloadView();
      ASSERT_TRUE(v.ok()) << v.status();
      EXPECT_TRUE(v->zero_copy());
      EXPECT_EQ(v->dtype(), DType::kInt32);
      EXPECT_EQ(v->shape(), (Shape{1 << 10, 1 << 10}));
      ASSERT_EQ(v->span<int32_t>().size(), values.size());
      EXPECT_TRUE(std::equal(values.begin(), values.end(), v->span<int32_t>().begin()));
    }
    EXPECT_LE(Regions(*server), before + 1);
    // Two live views hold two regions: the second download cannot overwrite the first.
    absl::StatusOr<HostView> a = x->DownloadView();
    absl::StatusOr<HostView> b = (*x + *x).DownloadView();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE(a->bytes().data(), b->bytes().data());
    EXPECT_EQ(a->span<int32_t>()[9], values[9]);
    EXPECT_EQ(b->span<int32_t>()[9], 2 * values[9]);
    outlives = *std::move(b);
  }
  // The client is gone (its regions released on the server); the view's
  // mapping stays readable until the view goes.
  EXPECT_EQ(outlives.span<int32_t>()[values.size() - 1], 2 * values.back());
  ClientOptions no_shm;
  no_shm.local_data = false;
  auto plain = Client::Connect(target, no_shm);
  ASSERT_TRUE(plain.ok());
  absl::StatusOr<Array> y = (*plain)->Upload(Shape{1 << 20}, absl::MakeConstSpan(values));
  ASSERT_TRUE(y.ok());
  absl::StatusOr<HostView> owned = y->DownloadView();
  ASSERT_TRUE(owned.ok()) << owned.status();
  EXPECT_FALSE(owned->zero_copy());
  EXPECT_TRUE(std::equal(values.begin(), values.end(), owned->span<int32_t>().begin()));
}

TEST(LocalDataTest, AServerWithoutTheSocketServesOverGrpcAndSaysSo) {
  ServerOptions options;
  options.local_data_socket = "off";
  std::unique_ptr<Server> server = StartServer(options);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->local_data_socket(), "");
  auto c = Client::Connect(absl::StrCat("127.0.0.1:", server->port()));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->transport(), "grpc");
  EXPECT_THAT((*c)->transport_detail(), HasSubstr("offers no local data socket"));
  std::vector<float> values(1 << 19, 2.5f);
  absl::StatusOr<Array> x = (*c)->Upload(Shape{1 << 19}, absl::MakeConstSpan(values));
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(*x->ToVector<float>(), values);
}

}  // namespace
}  // namespace resident::e2e
