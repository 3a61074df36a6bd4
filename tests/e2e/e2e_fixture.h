// Shared pieces of the end-to-end suites: a real resident::Server started
// in-process on 127.0.0.1:0 with the CPU device, clients connected to it,
// and host-side helpers to upload and compare arrays.
#ifndef RESIDENT_TESTS_E2E_E2E_FIXTURE_H_
#define RESIDENT_TESTS_E2E_E2E_FIXTURE_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/client_interceptor.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/client.h"
#include "client/client_core.h"
#include "gtest/gtest.h"
#include "request_dump.h"
#include "resident/v1/resident.grpc.pb.h"
#include "server/device/device.h"
#include "server/rpc/server.h"
#include "server/session/session_manager.h"

namespace resident::e2e {

using client::Array;
using client::Client;
using client::ClientOptions;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The device the suites run on: RESIDENT_TEST_DEVICE (e.g. cuda:0 on a GPU
// host), else the CPU reference.
inline std::string TestDevice() {
  const char* d = std::getenv("RESIDENT_TEST_DEVICE");
  return d != nullptr && *d != '\0' ? d : "cpu";
}

// The test device twice: two Device instances of one piece of hardware
// (cpu,cpu in CI, cuda:0,cuda:0 on a one-GPU host), how the multi-device
// paths run without several GPUs.
inline std::string TwoTestDevices() { return absl::StrCat(TestDevice(), ",", TestDevice()); }

// Starts a server on an ephemeral port with the test device (or the
// --device list `devices`).
inline std::unique_ptr<Server> StartServer(ServerOptions options = {},
                                           const std::string& devices = "") {
  RequestDump::InstallIfAsked();
  options.listen = "127.0.0.1:0";
  options.device = devices.empty() ? TestDevice() : devices;
  if (options.worker_threads == 0) options.worker_threads = 4;
  absl::StatusOr<std::unique_ptr<Server>> server = Server::Start(std::move(options));
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

inline std::string Target(const Server& server) {
  return absl::StrCat("127.0.0.1:", server.port());
}

inline std::unique_ptr<Client> Connect(const Server& server, const ClientOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<Client>> c = Client::Connect(Target(server), options);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *std::move(c) : nullptr;
}

// Counts the RPCs a client sends, by method name, through a client
// interceptor on a fresh channel swapped into the client. Use with
// keep_alive = false (no background renewer shares the stub).
class RpcCounter {
 public:
  int count(const std::string& method) const {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->counts.find(absl::StrCat("/resident.v1.Resident/", method));
    return it == state_->counts.end() ? 0 : it->second;
  }

  static RpcCounter Install(Client& c, const std::string& target) {
    RpcCounter counter;
    std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> f;
    f.push_back(std::make_unique<Factory>(counter.state_));
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    auto channel = grpc::experimental::CreateCustomChannelWithInterceptors(
        target, grpc::InsecureChannelCredentials(), args, std::move(f));
    c.core()->stub = v1::Resident::NewStub(channel);
    return counter;
  }

 private:
  struct State {
    mutable std::mutex mu;
    std::map<std::string, int> counts;
  };
  class PassThrough : public grpc::experimental::Interceptor {
   public:
    void Intercept(grpc::experimental::InterceptorBatchMethods* m) override { m->Proceed(); }
  };
  class Factory : public grpc::experimental::ClientInterceptorFactoryInterface {
   public:
    explicit Factory(std::shared_ptr<State> s) : s_(std::move(s)) {}
    grpc::experimental::Interceptor* CreateClientInterceptor(
        grpc::experimental::ClientRpcInfo* info) override {
      std::lock_guard<std::mutex> lock(s_->mu);
      ++s_->counts[info->method()];
      return new PassThrough;
    }

   private:
    std::shared_ptr<State> s_;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

// Host bytes of `values` converted to `dtype` (C order, little-endian):
// bool is != 0; integers from their exact value (a negative one wraps into
// an unsigned dtype, as a uint64 at or above 2^63 is taken as given).
inline std::string Bytes(DType dtype, const std::vector<double>& values) {
  std::string out(values.size() * static_cast<size_t>(ItemSize(dtype)), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    char* p = out.data() + i * static_cast<size_t>(ItemSize(dtype));
    const double x = values[i];
    VisitDType(
        dtype,
        [&](auto zero) {
          using T = decltype(zero);
          T v;
          if constexpr (kIsBoolStorage<T>) {
            v = static_cast<T>(x != 0);
          } else if constexpr (kIsHalfStorage<T>) {
            v = resident_store_double<T>(x);  // one rounding to nearest even
          } else if constexpr (std::is_floating_point_v<T>) {
            v = static_cast<T>(x);
          } else if (x >= 9223372036854775808.0) {
            v = static_cast<T>(static_cast<uint64_t>(x));
          } else {
            v = static_cast<T>(static_cast<int64_t>(x));
          }
          std::memcpy(p, &v, sizeof(T));
          return 0;
        },
        [] { return 0; });
  }
  return out;
}

inline Array UploadAs(Client& c, DType dtype, const Shape& shape,
                      const std::vector<double>& values) {
  absl::StatusOr<Array> a = c.Upload(dtype, shape, Bytes(dtype, values));
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : Array();
}

// Downloaded array with every element widened to double (exact for bool,
// int32, float32, float64 and int64 within 2^53, and for INT64_MIN).
struct Values {
  DType dtype = DType::kFloat64;
  Shape shape;
  std::vector<double> v;
};

inline absl::StatusOr<Values> Fetch(const Array& a) {
  absl::StatusOr<client::HostData> d = a.Download();
  if (!d.ok()) return d.status();
  Values out{d->dtype, d->shape, {}};
  const int64_t n = NumElements(d->shape);
  out.v.resize(static_cast<size_t>(n));
  const char* p = d->bytes.data();
  for (int64_t i = 0; i < n; ++i) {
    out.v[i] = VisitDType(
        d->dtype,
        [&](auto zero) {
          using T = decltype(zero);
          T v;
          std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
          if constexpr (kIsBoolStorage<T>) {
            return v != 0 ? 1.0 : 0.0;
          } else if constexpr (kIsHalfStorage<T>) {
            return static_cast<double>(resident_load(v));
          } else {
            return static_cast<double>(v);
          }
        },
        [] { return 0.0; });
  }
  return out;
}

// A suite of tests sharing one server (started once per suite with
// Suite::Options()), each test with a client of its own in c_.
//   class OpsTest : public SharedServerTest<OpsTest> {};
template <class Suite>
class SharedServerTest : public ::testing::Test {
 protected:
  static ServerOptions Options() { return ServerOptions(); }
  static void SetUpTestSuite() { server_ = StartServer(Suite::Options()).release(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    c_ = Connect(*server_);
    ASSERT_NE(c_, nullptr);
  }
  void TearDown() override { c_.reset(); }

  inline static Server* server_ = nullptr;
  std::unique_ptr<Client> c_;
};

// Checks dtype, shape and every value exactly (NaN matches NaN, and the
// sign of zero must match).
inline void ExpectArray(const Array& a, DType dtype, const Shape& shape,
                        const std::vector<double>& want, const std::string& what = "") {
  absl::StatusOr<Values> got = Fetch(a);
  ASSERT_TRUE(got.ok()) << what << ": " << got.status();
  EXPECT_EQ(DTypeName(got->dtype), std::string(DTypeName(dtype))) << what;
  EXPECT_EQ(ShapeString(got->shape), ShapeString(shape)) << what;
  ASSERT_EQ(got->v.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got->v[i])) << what << " [" << i << "] = " << got->v[i];
    } else {
      EXPECT_EQ(got->v[i], want[i]) << what << " [" << i << "]";
      EXPECT_EQ(std::signbit(got->v[i]), std::signbit(want[i])) << what << " [" << i << "]";
    }
  }
}

// Waits (up to `timeout`) until `pred` holds; returns whether it did.
inline bool WaitFor(const std::function<bool()>& pred,
                    std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace resident::e2e

#endif  // RESIDENT_TESTS_E2E_E2E_FIXTURE_H_
