// Concurrency soak: 16 clients for 60 s (RESIDENT_SOAK_SECONDS to change)
// against one real server, each on its own arrays: uploads, lazily batched
// programs (elementwise, casts, dot, sums, reshapes, server-side loops),
// downloads, keeps, attaches, deletes and releases. Every result is
// compared byte for byte with the one NumPy computed (oracle/, written by
// make_oracle.py from the same input formulas). Afterwards: no wrong
// result, no error, and the server holds exactly what it held before.
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/npy.h"
#include "tests/e2e/e2e_fixture.h"

#ifndef RESIDENT_SOAK_ORACLE_DIR
#error "RESIDENT_SOAK_ORACLE_DIR must name tests/soak/oracle"
#endif

namespace resident::e2e {
namespace {

constexpr int64_t kM = 32, kN = 24;
constexpr int kRecipes = 9, kSeeds = 4;

// The inputs, as make_oracle.py defines them.
struct Inputs {
  std::vector<double> a, b;
  std::vector<int32_t> ai, bi;
};
Inputs MakeInputs(int64_t s) {
  Inputs in;
  for (int64_t i = 0; i < kM * kN; ++i) {
    in.a.push_back(static_cast<double>((i * 7919 + s * 104729) % 201 - 100) / 8.0);
    in.b.push_back(static_cast<double>((i * 6271 + s * 15485863) % 157 - 78) / 4.0);
    in.ai.push_back(static_cast<int32_t>((i * 40503 + s * 9973) % 2001 - 1000));
    in.bi.push_back(static_cast<int32_t>((i * 2654435761 + s) % 127 - 63));
  }
  return in;
}

// The same recipes as make_oracle.py, through the client library.
absl::StatusOr<Array> Recipe(Client& c, int r, const Inputs& in) {
  const Shape mn = {kM, kN};
  absl::StatusOr<Array> a = c.Upload<double>(mn, in.a);
  absl::StatusOr<Array> b = c.Upload<double>(mn, in.b);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  switch (r) {
    case 0:
      return (*a + *b) * *a - *b / full(c, mn, Scalar::Float(4.0));
    case 1:
      return astype(*a, DType::kFloat32) * full(c, mn, Scalar::Float(0.5), DType::kFloat32) +
             astype(*b, DType::kFloat32);
    case 2:
      return dot(*a, transpose(*b));
    case 3:
      return sum(*a * *b, 0);
    case 4: {
      std::vector<Array> out = c.Loop(10, {*a, *b}, [](const std::vector<Array>& v) {
        return std::vector<Array>{v[0] + v[1], v[1]};
      });
      return out[0];
    }
    case 5:
    case 7: {
      absl::StatusOr<Array> ai = c.Upload<int32_t>(mn, in.ai);
      absl::StatusOr<Array> bi = c.Upload<int32_t>(mn, in.bi);
      if (!ai.ok()) return ai.status();
      if (!bi.ok()) return bi.status();
      return r == 5 ? (*ai + *bi) * *ai : dot(*ai, transpose(*bi));
    }
    case 6:
      return transpose(reshape(*a, {kN, kM})) - *a;
    case 8:
      return sum(*a);
  }
  return absl::InvalidArgumentError("no such recipe");
}

struct Oracle {
  HostArray want[kRecipes][kSeeds];
};

// Empty when `got` is exactly NumPy's result; else what differs.
std::string Compare(const client::HostData& got, const HostArray& want) {
  if (got.dtype != want.dtype) {
    return absl::StrCat("dtype ", DTypeName(got.dtype), " != ", DTypeName(want.dtype));
  }
  if (got.shape != want.shape) {
    return absl::StrCat("shape ", ShapeString(got.shape), " != ", ShapeString(want.shape));
  }
  if (got.bytes != want.bytes) return "values differ";
  return "";
}

TEST(ConcurrencySoakTest, SixteenClientsMixedWorkEveryResultIsNumPys) {
  Oracle oracle;
  // The build's source tree, unless the test runs elsewhere (a GPU bundle).
  const char* dir_env = std::getenv("RESIDENT_SOAK_ORACLE_DIR");
  const std::string dir = dir_env != nullptr ? dir_env : RESIDENT_SOAK_ORACLE_DIR;
  for (int r = 0; r < kRecipes; ++r) {
    for (int s = 0; s < kSeeds; ++s) {
      absl::StatusOr<HostArray> a = ReadNpy(absl::StrCat(dir, "/r", r, "_s", s, ".npy"));
      ASSERT_TRUE(a.ok()) << a.status();
      oracle.want[r][s] = *std::move(a);
    }
  }
  const char* env = std::getenv("RESIDENT_SOAK_SECONDS");
  const int seconds = env != nullptr ? std::atoi(env) : 60;
  ServerOptions o;
  o.worker_threads = 4;
  o.max_concurrent_per_tenant = 4;
  std::unique_ptr<Server> server = StartServer(o);
  ASSERT_NE(server, nullptr);
  const int64_t baseline = server->device().budget().used();

  std::mutex mu;
  std::map<std::string, int64_t> errors;  // what went wrong -> count
  std::atomic<int64_t> results{0}, wrong{0}, keeps{0}, uploads{0};
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  auto fail = [&](const std::string& what) {
    std::lock_guard<std::mutex> l(mu);
    ++errors[what];
  };
  std::vector<std::thread> clients;
  clients.reserve(16);
  for (int k = 0; k < 16; ++k) {
    clients.emplace_back([&, k] {
      std::mt19937_64 rng(static_cast<uint64_t>(k) * 977 + 1);
      std::vector<Inputs> inputs;
      inputs.reserve(kSeeds);
      for (int s = 0; s < kSeeds; ++s) inputs.push_back(MakeInputs(s));
      client::ClientOptions co;
      co.lazy = k % 4 != 0;  // a quarter of the clients eager
      int64_t iteration = 0;
      while (std::chrono::steady_clock::now() < end) {
        // A fresh session now and then: closing one frees its arrays.
        std::unique_ptr<Client> c = Connect(*server, co);
        if (c == nullptr) {
          fail("connect");
          continue;
        }
        for (int j = 0; j < 8 && std::chrono::steady_clock::now() < end; ++j, ++iteration) {
          const int r = static_cast<int>(rng() % kRecipes);
          const int s = static_cast<int>(rng() % kSeeds);
          absl::StatusOr<Array> x = Recipe(*c, r, inputs[s]);
          uploads += (r == 5 || r == 7) ? 4 : 2;
          if (!x.ok()) {
            fail(absl::StrCat("recipe ", r, ": ", x.status().ToString()));
            continue;
          }
          Array result = *x;
          if (rng() % 4 == 0) {  // through a name: keep, attach, download, delete
            const std::string name = absl::StrCat("c", k, "-", iteration);
            absl::Status kept = c->Keep(result, name);
            if (!kept.ok()) {
              fail(absl::StrCat("keep: ", kept.ToString()));
              continue;
            }
            absl::StatusOr<Array> attached = c->Attach(name);
            if (!attached.ok()) {
              fail(absl::StrCat("attach: ", attached.status().ToString()));
              continue;
            }
            result = *attached;
            if (absl::Status d = c->Delete(name); !d.ok()) {
              fail(absl::StrCat("delete: ", d.ToString()));
            }
            ++keeps;
          }
          absl::StatusOr<client::HostData> got = result.Download();
          if (!got.ok()) {
            fail(absl::StrCat("download: ", got.status().ToString()));
            continue;
          }
          ++results;
          const std::string diff = Compare(*got, oracle.want[r][s]);
          if (!diff.empty()) {
            ++wrong;
            fail(absl::StrCat("recipe ", r, " seed ", s, ": ", diff));
          }
          if (rng() % 3 == 0) {
            if (absl::Status rel = result.Release(); !rel.ok()) {
              fail(absl::StrCat("release: ", rel.ToString()));
            }
          }
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();

  std::printf(
      "concurrency soak: 16 clients x %d s: %lld results checked, %lld via names, "
      "%lld uploads, %lld wrong\n",
      seconds, static_cast<long long>(results.load()), static_cast<long long>(keeps.load()),
      static_cast<long long>(uploads.load()), static_cast<long long>(wrong.load()));
  for (const auto& [what, n] : errors) ADD_FAILURE() << n << " x " << what;
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(results.load(), 16 * 10) << "too little work to mean anything";
  EXPECT_TRUE(WaitFor([&] { return server->device().budget().used() == baseline; }))
      << "device bytes " << server->device().budget().used() << ", baseline " << baseline;
  const TableStats st = server->sessions().Stats();
  EXPECT_EQ(st.sessions, 0);
  EXPECT_EQ(st.handles, 0);
  EXPECT_EQ(st.named_arrays, 0);
}

}  // namespace
}  // namespace resident::e2e
