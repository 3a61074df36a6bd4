// Named arrays survive a SIGKILL of the real resident-server binary: keep,
// kill -9, restart on the same --data-dir, attach: the bytes are identical.
// What a crash leaves half-written (a temporary file, a data file shorter
// than the manifest says, a data file no manifest names) is ignored with a
// log line and never loaded as data.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tenancy/tenancy_fixture.h"

#ifndef RESIDENT_SERVER_BINARY
#error "RESIDENT_SERVER_BINARY must name the resident-server binary"
#endif

namespace resident::tenancy {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// resident-server as a child process; its log goes to a file.
class ServerProcess {
 public:
  ServerProcess(const std::string& data_dir, const std::string& log) : log_(log) {
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
      dup2(fd, 2);
      dup2(fd, 1);
      execl(RESIDENT_SERVER_BINARY, RESIDENT_SERVER_BINARY, "--listen", "127.0.0.1:0",
            "--device", "cpu", "--data-dir", data_dir.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // The port is in the "listening on" line.
    const std::regex port_re("\\(port ([0-9]+)\\)");
    for (int i = 0; i < 1000 && port_ == 0; ++i) {
      std::smatch m;
      const std::string text = ReadFile(log);
      if (std::regex_search(text, m, port_re)) port_ = std::stoi(m[1]);
      if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
    }
  }
  ~ServerProcess() { Kill(); }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  int port() const { return port_; }
  std::string log() const { return ReadFile(log_); }
  std::unique_ptr<client::Client> Connect() const {
    auto c = client::Client::Connect(absl::StrCat("127.0.0.1:", port_));
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *std::move(c) : nullptr;
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
  int port_ = 0;
};

std::string RandomBytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    s[i] = static_cast<char>(seed >> 24);
  }
  return s;
}

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
    EXPECT_THAT(log, HasSubstr("0123456789abcdef.npy.tmp, a temporary file left by an interrupted write"));
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

}  // namespace
}  // namespace resident::tenancy
