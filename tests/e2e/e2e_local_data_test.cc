// The C++ client on the server's host: its transport is shared memory (the
// server's local data socket), array bytes round-trip through memfd regions
// with no Upload or Download call, and it falls back to gRPC, saying why,
// when the socket is off or not wanted. The regions go with the client.
#include <cstdint>
#include <numeric>
#include <vector>

#include "e2e_fixture.h"
#include "gmock/gmock.h"

namespace resident::e2e {
namespace {

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
