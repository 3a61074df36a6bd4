// Named arrays survive a SIGKILL of the real resident-server binary: keep,
// kill -9, restart on the same --data-dir, attach: the bytes are identical.
// What a crash leaves half-written (a temporary file, a data file shorter
// than the manifest says, a data file no manifest names) is ignored with a
// log line and never loaded as data.
#include <unistd.h>

#include <regex>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tenancy/server_process.h"

namespace resident::tenancy {
namespace {

using ::testing::HasSubstr;

TEST(PersistenceTest, KeptArraysSurviveSigkillAndDamageIsIgnored) {
  ScratchDir dir;
  const std::string data = dir.path() + "/data";
  const std::string weights = RandomBytes(300000 * 8, 1);  // 2.4 MB of float64 bit patterns
  const std::string counts = RandomBytes(1000 * 4, 2);
  {
    ServerProcess server(data, dir.path() + "/log1");
    ASSERT_GT(server.port(), 0) << server.log();
    auto c = server.Connect();
    ASSERT_NE(c, nullptr);
    auto w = c->Upload(DType::kFloat64, {300, 1000}, weights);
    auto n = c->Upload(DType::kInt32, {10, 10, 10}, counts);
    ASSERT_TRUE(w.ok() && n.ok());
    ASSERT_TRUE(c->Keep(*w, "weights").ok());
    ASSERT_TRUE(c->Keep(*n, "counts.v2").ok());
    ASSERT_TRUE(c->Keep(client::ones(*c, {0}), "empty").ok());
    ASSERT_TRUE(c->Keep(client::ones(*c, {5}), "doomed").ok());
    ASSERT_TRUE(c->Keep(client::arange(*c, 100), "to-truncate").ok());
    ASSERT_TRUE(c->Delete("doomed").ok());
    server.Kill();  // SIGKILL right after the acknowledgements: no clean shutdown
  }
  // What a crash mid-write leaves behind.
  const std::string manifest = ReadFile(data + "/MANIFEST");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(manifest, m, std::regex("to-truncate ([0-9a-f]+\\.npy) ")))
      << manifest;
  const std::string victim = data + "/arrays/" + m[1].str();
  ASSERT_EQ(truncate(victim.c_str(), 100), 0);
  dir.Write("data/arrays/0123456789abcdef.npy.tmp", "half a file");
  dir.Write("data/MANIFEST.tmp", "resident-manifest 1\ngarbage");
  dir.Write("data/arrays/fedcba9876543210.npy", ReadFile(data + "/arrays/" + m[1].str()));
  {
    ServerProcess server(data, dir.path() + "/log2");
    ASSERT_GT(server.port(), 0) << server.log();
    auto c = server.Connect();
    ASSERT_NE(c, nullptr);
    auto w = c->Attach("weights");
    ASSERT_TRUE(w.ok()) << w.status() << "\n" << server.log();
    auto wd = w->Download();
    ASSERT_TRUE(wd.ok());
    EXPECT_EQ(wd->dtype, DType::kFloat64);
    EXPECT_EQ(wd->shape, (Shape{300, 1000}));
    EXPECT_TRUE(wd->bytes == weights) << "weights differ after the restart";
    auto n = c->Attach("counts.v2");
    ASSERT_TRUE(n.ok());
    auto nd = n->Download();
    ASSERT_TRUE(nd.ok());
    EXPECT_EQ(nd->shape, (Shape{10, 10, 10}));
    EXPECT_TRUE(nd->bytes == counts);
    auto e = c->Attach("empty");
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(*e->shape(), Shape{0});
    // Deleted before the kill: stays deleted. Truncated: not loaded.
    EXPECT_EQ(c->Attach("doomed").status().code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(c->Attach("to-truncate").status().code(), absl::StatusCode::kNotFound);
    const std::string log = server.log();
    EXPECT_THAT(log, HasSubstr("named array 'to-truncate' of tenant 'default'"));
    EXPECT_THAT(log, HasSubstr("truncated"));
    EXPECT_THAT(
        log, HasSubstr("0123456789abcdef.npy.tmp, a temporary file left by an interrupted write"));
    EXPECT_THAT(log, HasSubstr("MANIFEST.tmp"));
    EXPECT_THAT(log, HasSubstr("fedcba9876543210.npy, which no manifest entry names"));
    EXPECT_THAT(log, HasSubstr("3 named arrays loaded"));
    auto ls = c->List();
    ASSERT_TRUE(ls.ok());
    std::vector<std::string> names;
    for (const auto& a : *ls) names.push_back(a.name);
    EXPECT_THAT(names, ::testing::UnorderedElementsAre("weights", "counts.v2", "empty"));
    // The name can be used again, and the new keep is durable too.
    ASSERT_TRUE(c->Keep(client::full(*c, {3}, Scalar::Float(2.5)), "to-truncate").ok());
    server.Kill();
  }
  ServerProcess server(data, dir.path() + "/log3");
  ASSERT_GT(server.port(), 0) << server.log();
  auto c = server.Connect();
  auto t = c->Attach("to-truncate");
  ASSERT_TRUE(t.ok()) << server.log();
  EXPECT_EQ(*t->ToVector<double>(), (std::vector<double>{2.5, 2.5, 2.5}));
  EXPECT_THAT(server.log(), HasSubstr("4 named arrays loaded"));
}

// A second server on a data dir in use would delete the first's in-flight
// files and overwrite its manifest: it refuses to start instead. Once the
// first is gone (even by SIGKILL) the dir is free again.
TEST(PersistenceTest, SecondServerOnTheSameDataDirIsRefused) {
  ScratchDir dir;
  const std::string data = dir.path() + "/data";
  auto first = std::make_unique<ServerProcess>(data, dir.path() + "/log1");
  ASSERT_GT(first->port(), 0) << first->log();
  {
    auto c = first->Connect();
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->Keep(client::arange(*c, 10), "kept").ok());
  }
  ServerProcess second(data, dir.path() + "/log2");
  EXPECT_EQ(second.port(), 0) << "a second server started on " << data;
  EXPECT_THAT(second.log(), HasSubstr("is in use by another process"));
  first->Kill();
  ServerProcess third(data, dir.path() + "/log3");
  ASSERT_GT(third.port(), 0) << third.log();
  auto c = third.Connect();
  ASSERT_NE(c, nullptr);
  auto k = c->Attach("kept");
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(*k->ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

}  // namespace
}  // namespace resident::tenancy
