// The local data socket against hostile peers on the server's host, through
// the real server: a register racing a shrink-and-seal of its memfd never
// maps past the file's end (so no RegionUpload can fault the server), and
// what a connection can hold before it authenticates is bounded: one
// deadline for its whole first request however it dribbles bytes, at most
// one descriptor per frame (counted as they arrive), and a cap on strangers'
// connections per peer uid. The server keeps serving throughout.
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <random>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

#include "core/local_frame.h"
#include "e2e_fixture.h"
#include "gmock/gmock.h"
#include "tests/support/memfd.h"

namespace resident::e2e {
namespace {

using testing_support::Memfd;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

int ConnectRaw(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  EXPECT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0)
      << strerror(errno);
  return fd;
}

// Sends `bytes` as one message carrying `fds` (SCM_RIGHTS); false once the
// server has closed the connection.
bool SendWithFds(int sock, std::string_view bytes, const std::vector<int>& fds) {
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(fds.size() * sizeof(int)));
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds.data(), fds.size() * sizeof(int));
  }
  return sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) == static_cast<ssize_t>(bytes.size());
}

// True once the server has closed `sock` (end of stream or reset), waiting
// at most `wait`; what it answered before is read and dropped.
bool ClosedWithin(int sock, milliseconds wait) {
  const Clock::time_point until = Clock::now() + wait;
  while (true) {
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now()).count();
    pollfd p{sock, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 0))) <= 0) return false;
    char buf[256];
    const ssize_t r = recv(sock, buf, sizeof(buf), MSG_DONTWAIT);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) return true;
  }
}

// Descriptors open in this process, the in-process server's included.
int OpenFds() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

class LocalDataBoundsTest : public ::testing::Test {
 protected:
  void Start(ServerOptions options = {}) {
    server_ = StartServer(std::move(options));
    ASSERT_NE(server_, nullptr);
    ASSERT_FALSE(server_->local_data_socket().empty());
    stub_ = v1::Resident::NewStub(
        grpc::CreateChannel(Target(*server_), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    v1::OpenSessionResponse resp;
    ASSERT_TRUE(stub_->OpenSession(&ctx, v1::OpenSessionRequest(), &resp).ok());
    session_ = resp.session();
  }

  // One request over `sock` (the memfd passed with it when >= 0) and its answer.
  v1::LocalDataResponse Ask(int sock, v1::LocalDataRequest req, int memfd = -1) {
    req.set_session(session_);
    v1::LocalDataResponse resp;
    std::string body;
    std::vector<int> fds;
    EXPECT_TRUE(SendFrame(sock, req.SerializeAsString(), memfd));
    EXPECT_TRUE(RecvFrame(sock, 1 << 20, &body, &fds) && resp.ParseFromString(body));
    CloseAll(fds);
    return resp;
  }
  v1::LocalDataResponse Register(int sock, int memfd, int64_t bytes) {
    v1::LocalDataRequest req;
    req.set_register_bytes(bytes);
    return Ask(sock, req, memfd);
  }
  v1::LocalDataResponse Release(int sock, const std::string& region) {
    v1::LocalDataRequest req;
    req.set_release_region(region);
    return Ask(sock, req);
  }

  // The server still serves: a computed result comes back over gRPC.
  void ExpectStillServes() {
    auto c = Connect(*server_);
    ASSERT_NE(c, nullptr);
    std::vector<double> v = {1, 2, 3};
    absl::StatusOr<Array> x = c->Upload(Shape{3}, absl::MakeConstSpan(v));
    ASSERT_TRUE(x.ok()) << x.status();
    EXPECT_EQ(*(*x + *x).ToVector<double>(), (std::vector<double>{2, 4, 6}));
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<v1::Resident::Stub> stub_;
  std::string session_;
};

// A client that shrinks its memfd and then seals it while the server checks
// it: the server must never accept a region longer than the file (its next
// RegionUpload would be a SIGBUS of the whole server). Four racers, each with
// its own connection and a client thread woken per attempt, race one of
// three at random: shrink then seal (never acceptable), seal alone, and grow
// an already sealed file (both acceptable). Every accepted region is then
// read whole by RegionUpload and written whole by RegionDownload.
TEST_F(LocalDataBoundsTest, RegisterRacingShrinkAndSealNeverMapsPastTheEnd) {
  Start();
  constexpr int64_t kBytes = 16 * 4096;
  std::atomic<int> attempts{0}, accepted{0}, refused{0}, bad{0};
  const Clock::time_point until = Clock::now() + std::chrono::seconds(3);
  auto racer = [&](unsigned seed) {
    const int sock = ConnectRaw(server_->local_data_socket());
    struct Round {
      int fd;
      int kind;  // 0 shrink then seal, 1 seal, 2 grow (already sealed)
      int delay_ns;
    };
    Round round{};
    std::binary_semaphore go{0}, done{0};
    bool stop = false;
    std::thread client([&] {
      while (true) {
        go.acquire();
        if (stop) return;
        const Clock::time_point at = Clock::now() + std::chrono::nanoseconds(round.delay_ns);
        while (Clock::now() < at) {
        }
        if (round.kind == 0) (void)!ftruncate(round.fd, 4096);
        if (round.kind == 2) (void)!ftruncate(round.fd, 2 * kBytes);
        if (round.kind != 2) fcntl(round.fd, F_ADD_SEALS, F_SEAL_SHRINK);
        done.release();
      }
    });
    std::mt19937 rng(seed);
    while (Clock::now() < until && bad == 0) {
      const int attempt = ++attempts;
      const int kind = static_cast<int>(rng() % 3);
      const int mine = Memfd(kBytes, kind == 2);
      round = Round{mine, kind, static_cast<int>(rng() % 60000)};
      go.release();  // the client acts while the request travels and is checked
      v1::LocalDataResponse resp = Register(sock, mine, kBytes);
      done.acquire();
      struct stat st {};
      if (resp.code() != 0) {
        ++refused;
        EXPECT_EQ(resp.code(), static_cast<int>(absl::StatusCode::kInvalidArgument))
            << resp.message();
      } else if (fstat(mine, &st) != 0 || st.st_size < kBytes) {
        ++bad;  // a RegionUpload now would kill the server
        ADD_FAILURE() << "a region was accepted past its memfd's end (race " << kind << ", attempt "
                      << attempt << ")";
      } else {
        ++accepted;
        grpc::ClientContext up_ctx;
        v1::RegionUploadRequest up;
        up.set_session(session_);
        up.set_region(resp.region());
        up.set_dtype(v1::DTYPE_UINT8);
        up.add_shape(kBytes);
        v1::ArrayInfo info;
        grpc::Status s = stub_->RegionUpload(&up_ctx, up, &info);
        EXPECT_TRUE(s.ok()) << s.error_message();
        grpc::ClientContext down_ctx;
        v1::RegionDownloadRequest down;
        down.set_session(session_);
        down.set_handle(info.handle());
        down.set_region(resp.region());
        v1::ArrayInfo back;
        s = stub_->RegionDownload(&down_ctx, down, &back);
        EXPECT_TRUE(s.ok()) << s.error_message();
        grpc::ClientContext rel_ctx;
        v1::ReleaseRequest rel;
        rel.set_session(session_);
        rel.add_handles(info.handle());
        v1::ReleaseResponse rel_resp;
        EXPECT_TRUE(stub_->Release(&rel_ctx, rel, &rel_resp).ok());
        EXPECT_EQ(Release(sock, resp.region()).code(), 0);
      }
      close(mine);
    }
    stop = true;
    go.release();
    client.join();
    close(sock);
  };
  std::vector<std::thread> racers;
  for (unsigned i = 0; i < 4; ++i) racers.emplace_back(racer, 43 + i);
  for (std::thread& t : racers) t.join();
  std::printf("%d attempts: %d regions accepted, %d refused\n", attempts.load(), accepted.load(),
              refused.load());
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
  ExpectStillServes();
}

// Bytes dribbled one at a time, each well inside the deadline, do not keep a
// connection that has not authenticated: it is closed at the one deadline
// for the whole first request. An authenticated connection may then stay
// quiet past it.
TEST_F(LocalDataBoundsTest, ADribbledFirstFrameIsClosedAtTheWholeFrameDeadline) {
  ServerOptions options;
  options.local_data_first_request_timeout_ms = 1000;
  Start(options);
  const int sock = ConnectRaw(server_->local_data_socket());
  const Clock::time_point start = Clock::now();
  std::string frame = {static_cast<char>(200), 0, 0, 0};  // a 200-byte frame, never finished
  frame.append(200, '\x0a');
  bool closed = false;
  for (size_t i = 0; i < frame.size() && Clock::now() - start < std::chrono::seconds(5); ++i) {
    if (!SendWithFds(sock, frame.substr(i, 1), {}) || ClosedWithin(sock, milliseconds(200))) {
      closed = true;
      break;
    }
  }
  const auto after = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
  close(sock);
  EXPECT_TRUE(closed) << "a dribbling stranger was still connected after " << after << " ms";
  EXPECT_GE(after, 900);
  EXPECT_LE(after, 2500) << "closed well after the 1 s deadline";

  // Authenticated (a region registered): quiet past the deadline is fine.
  const int good = ConnectRaw(server_->local_data_socket());
  const int memfd = Memfd(4096, true);
  v1::LocalDataResponse r = Register(good, memfd, 4096);
  close(memfd);
  ASSERT_EQ(r.code(), 0) << r.message();
  EXPECT_FALSE(ClosedWithin(good, milliseconds(1500)));
  EXPECT_EQ(Release(good, r.region()).code(), 0);
  close(good);
  ExpectStillServes();
}

// One frame passing a descriptor with each of its bytes: the second one
// closes every descriptor and the connection at once, so the server's
// descriptor count does not grow however many the peer sends. A message
// passing many at once is refused the same way.
TEST_F(LocalDataBoundsTest, AFrameFloodingDescriptorsIsDroppedAndPinsNone) {
  Start();
  const int baseline = OpenFds();
  const int memfd = Memfd(4096, true);
  {
    const int sock = ConnectRaw(server_->local_data_socket());
    std::string frame = {static_cast<char>(0xff), static_cast<char>(0xff), 0, 0};  // 65535 bytes
    for (int i = 0; i < 500; ++i) {  // until the server closes (or the buffer is full)
      const std::string_view byte = i < 4 ? std::string_view(frame).substr(i, 1) : "x";
      if (!SendWithFds(sock, byte, {memfd})) break;
    }
    EXPECT_TRUE(ClosedWithin(sock, milliseconds(2000)));
    close(sock);
  }
  {
    const int sock = ConnectRaw(server_->local_data_socket());
    const std::vector<int> many(16, memfd);
    for (int i = 0; i < 8 && SendWithFds(sock, "\x04", many); ++i) {
    }
    EXPECT_TRUE(ClosedWithin(sock, milliseconds(2000)));
    close(sock);
  }
  close(memfd);
  int now = OpenFds();
  for (int i = 0; i < 100 && now > baseline; ++i) {
    std::this_thread::sleep_for(milliseconds(20));
    now = OpenFds();
  }
  EXPECT_LE(now, baseline) << "descriptors passed to the server stayed open";
  // One descriptor with a register is still fine on a new connection.
  const int sock = ConnectRaw(server_->local_data_socket());
  const int region = Memfd(4096, true);
  v1::LocalDataResponse r = Register(sock, region, 4096);
  close(region);
  EXPECT_EQ(r.code(), 0) << r.message();
  close(sock);
  ExpectStillServes();
}

// Strangers of one uid hold at most
// max_unauthenticated_local_data_connections_per_uid connections: one more is
// closed at accept; a connection that authenticates stops counting.
TEST_F(LocalDataBoundsTest, StrangersOfOneUidAreCappedBeforeTheyAuthenticate) {
  ServerOptions options;
  options.max_unauthenticated_local_data_connections_per_uid = 3;
  Start(options);
  const std::string path = server_->local_data_socket();
  std::vector<int> strangers;
  for (int i = 0; i < 3; ++i) strangers.push_back(ConnectRaw(path));
  for (int s : strangers) EXPECT_FALSE(ClosedWithin(s, milliseconds(100)));
  const int fourth = ConnectRaw(path);
  EXPECT_TRUE(ClosedWithin(fourth, milliseconds(2000))) << "a fourth stranger was kept";
  close(fourth);
  // One of them authenticates (its request answers NOT_FOUND, but it is
  // now the tenant's): room for one more stranger, and only one.
  EXPECT_EQ(Release(strangers[0], std::string(16, '\x01')).code(),
            static_cast<int>(absl::StatusCode::kNotFound));
  const int fifth = ConnectRaw(path);
  EXPECT_FALSE(ClosedWithin(fifth, milliseconds(300))) << "an authenticated one still counted";
  const int sixth = ConnectRaw(path);
  EXPECT_TRUE(ClosedWithin(sixth, milliseconds(2000)));
  close(sixth);
  close(fifth);
  for (int s : strangers) close(s);
  // Closed strangers stop counting too.
  std::this_thread::sleep_for(milliseconds(200));
  const int later = ConnectRaw(path);
  EXPECT_FALSE(ClosedWithin(later, milliseconds(300)));
  close(later);
  ExpectStillServes();
}

}  // namespace
}  // namespace resident::e2e
