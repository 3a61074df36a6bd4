// Kill soak: clients killed or cancelled at random points of upload,
// download, run and shared-memory transfers (memfd regions over the local
// data socket), against the real resident-server binary.
//
// Two kinds of kill, mixed at random, from several worker threads at once:
//  - a client process (this binary with --child) doing uploads, downloads or
//    long programs (loops and never-ending whiles) is SIGKILLed after a random delay: its
//    connection drops mid-call, its session is left for the idle reaper;
//  - an in-process call on a channel of its own is cancelled at a chosen
//    point (before the first chunk, mid-stream, after the last chunk before
//    the status, mid-program) and its channel dropped, its session closed
//    or left behind.
// Afterwards the server must still serve, its device bytes must be exactly
// back at the baseline, its session and handle tables empty, no region
// mapped, its open descriptors back at the warmed-up count, and its RSS
// settled: less the backend's cache of freed blocks (which Describe reports
// as cached_bytes), the second half of the soak may not grow it by more than
// --rss-growth-mib over the first half (no leak trend), nor beyond
// --rss-bound-mib over the warmed-up server.
//
//   kill_soak --server build/server/rpc/resident-server --kills 1000
#include <dirent.h>
#include <grpcpp/grpcpp.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/local_data.h"
#include "resident/v1/resident.grpc.pb.h"
#include "tests/support/server_process.h"

namespace resident::soak {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct Flags {
  std::string server;
  std::string device = "cpu";
  std::string child;   // action of a child process
  std::string target;  // the server, for a child
  int64_t kills = 1000;
  int workers = 6;
  double process_fraction = 0.3;
  bool shared_memory_only = false;  // every kill one of a shared-memory transfer
  uint64_t seed = 1;
  int64_t rss_growth_mib = 48;
  int64_t rss_bound_mib = 256;
  std::string log = "/tmp/resident-kill-soak.log";
};

std::unique_ptr<v1::Resident::Stub> NewStub(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  return v1::Resident::NewStub(
      grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
}

std::string Open(v1::Resident::Stub& stub, std::string* local_socket = nullptr) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::OpenSessionResponse resp;
  if (!stub.OpenSession(&ctx, v1::OpenSessionRequest(), &resp).ok()) return "";
  if (local_socket != nullptr) *local_socket = resp.local_data_socket();
  return resp.session();
}

void Close(v1::Resident::Stub& stub, const std::string& session) {
  grpc::ClientContext ctx;
  v1::CloseSessionRequest req;
  req.set_session(session);
  v1::CloseSessionResponse resp;
  stub.CloseSession(&ctx, req, &resp);
}

void Release(v1::Resident::Stub& stub, const std::string& session,
             const std::vector<std::string>& handles) {
  grpc::ClientContext ctx;
  v1::ReleaseRequest req;
  req.set_session(session);
  for (const std::string& h : handles) req.add_handles(h);
  v1::ReleaseResponse resp;
  stub.Release(&ctx, req, &resp);
}

v1::DescribeResponse Describe(v1::Resident::Stub& stub) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::DescribeResponse resp;
  stub.Describe(&ctx, v1::DescribeRequest(), &resp);
  return resp;
}

std::string Pattern(int64_t bytes, uint64_t seed) {
  std::string s(static_cast<size_t>(bytes), '\0');
  for (int64_t i = 0; i < bytes; ++i) s[i] = static_cast<char>((i * 131 + seed) & 0xff);
  return s;
}

// A shared-memory upload of `bytes` from `region` (filled first), and
// optionally its download back into the region; the new handle in *handle.
grpc::Status RegionRoundTrip(v1::Resident::Stub& stub, grpc::ClientContext& ctx,
                             const std::string& session, client::LocalRegion& region, int64_t bytes,
                             bool download, std::string* handle) {
  const std::string data = Pattern(bytes, static_cast<uint64_t>(bytes));
  std::memcpy(region.data, data.data(), data.size());
  v1::RegionUploadRequest up;
  up.set_session(session);
  up.set_region(region.id);
  up.set_dtype(v1::DTYPE_FLOAT64);
  up.add_shape(bytes / 8);
  v1::ArrayInfo info;
  grpc::Status s = stub.RegionUpload(&ctx, up, &info);
  if (!s.ok() || !download) return s;
  *handle = info.handle();
  grpc::ClientContext down_ctx;
  v1::RegionDownloadRequest down;
  down.set_session(session);
  down.set_handle(info.handle());
  down.set_region(region.id);
  return stub.RegionDownload(&down_ctx, down, &info);
}

// Uploads `data` as float64 in chunks; `cancel_at` (chunk index, or -1 for
// none, or n for "after the last chunk, before the status") cancels there.
grpc::Status Upload(v1::Resident::Stub& stub, grpc::ClientContext& ctx, const std::string& session,
                    const std::string& data, int64_t chunk, int64_t cancel_at,
                    v1::ArrayInfo* info) {
  auto writer = stub.Upload(&ctx, info);
  const int64_t n = (static_cast<int64_t>(data.size()) + chunk - 1) / chunk;
  for (int64_t i = 0; i < n; ++i) {
    if (i == cancel_at) ctx.TryCancel();
    v1::UploadRequest req;
    if (i == 0) {
      req.set_session(session);
      req.set_dtype(v1::DTYPE_FLOAT64);
      req.add_shape(static_cast<int64_t>(data.size()) / 8);
    }
    req.set_data(data.substr(static_cast<size_t>(i * chunk), static_cast<size_t>(chunk)));
    if (!writer->Write(req)) break;
  }
  if (cancel_at == n) ctx.TryCancel();
  writer->WritesDone();
  if (cancel_at == n + 1) ctx.TryCancel();
  return writer->Finish();
}

// Downloads `handle`, cancelling after `cancel_after` chunks (-1: never).
grpc::Status Download(v1::Resident::Stub& stub, grpc::ClientContext& ctx,
                      const std::string& session, const std::string& handle, int64_t cancel_after,
                      std::string* out) {
  v1::DownloadRequest req;
  req.set_session(session);
  req.set_handle(handle);
  auto reader = stub.Download(&ctx, req);
  v1::DownloadChunk chunk;
  int64_t got = 0;
  if (cancel_after == 0) ctx.TryCancel();
  while (reader->Read(&chunk)) {
    if (out != nullptr) *out += chunk.data();
    if (++got == cancel_after) ctx.TryCancel();
  }
  return reader->Finish();
}

// A program that runs long on any device: a loop doubling a 4096-element
// array `trips` times, or (as_while) a while doing the same whose condition,
// a 0-d int64 compared with itself, never fails (max_trips `trips`).
v1::RunRequest LongRun(const std::string& session, const std::string& handle, int64_t trips,
                       bool as_while = false) {
  auto binary = [](v1::Program* p, const char* op, uint32_t a, uint32_t b) {
    v1::Instruction* ins = p->add_instructions();
    ins->set_op(op);
    ins->add_operands()->set_value(a);
    ins->add_operands()->set_value(b);
  };
  v1::RunRequest req;
  req.set_session(session);
  v1::Program* program = req.mutable_program();
  if (as_while) {
    v1::Instruction* k = program->add_instructions();  // value 0: k = 0
    k->set_op("zeros");
    k->set_dtype(v1::DTYPE_INT64);
  }
  v1::Instruction* loop = program->add_instructions();
  loop->set_op(as_while ? "while" : "loop");
  loop->set_trip_count(trips);
  loop->add_operands()->set_handle(handle);
  v1::Program* body = loop->mutable_body();
  binary(body, "add", 0, 0);  // x + x
  if (as_while) {
    loop->add_operands()->set_value(0);
    binary(body, "add", 1, 1);  // k + k: still 0
    body->add_yields()->set_value(2);
    body->add_yields()->set_value(3);
    binary(loop->mutable_cond(), "greater_equal", 1, 1);
    loop->mutable_cond()->add_yields()->set_value(2);
  } else {
    body->add_yields()->set_value(1);
  }
  v1::Output* o = req.add_outputs();
  o->set_value(as_while ? 1 : 0);  // the carried x
  o->set_keep(true);
  return req;
}

// --- Child processes: loop until killed --------------------------------------

// A shared-memory client: regions registered, filled, uploaded from and
// downloaded into, some released, until killed (mid-copy, mid-call, with
// regions mapped on both sides).
int RunRegionChild(const Flags& f) {
  std::mt19937_64 rng(f.seed);
  auto stub = NewStub(f.target);
  std::string path;
  const std::string session = Open(*stub, &path);
  if (session.empty() || path.empty()) return 2;
  absl::StatusOr<std::unique_ptr<client::LocalData>> local =
      client::LocalData::Connect(path, session, "");
  if (!local.ok()) return 3;
  for (;;) {
    const int64_t bytes = 8 * static_cast<int64_t>(1 + rng() % (1 << 20));  // up to 8 MiB
    absl::StatusOr<std::shared_ptr<client::LocalRegion>> region = (*local)->Acquire(bytes);
    if (!region.ok()) return 4;
    grpc::ClientContext ctx;
    std::string handle;
    if (RegionRoundTrip(*stub, ctx, session, **region, bytes, rng() % 2 == 0, &handle).ok()) {
      Release(*stub, session, {handle});
    }
    if (rng() % 4 == 0) {
      (void)(*local)->Release((*region)->id);
    } else {
      (*local)->GiveBack(*std::move(region));
    }
  }
}

int RunChild(const Flags& f) {
  if (f.child == "region") return RunRegionChild(f);
  std::mt19937_64 rng(f.seed);
  auto stub = NewStub(f.target);
  const std::string session = Open(*stub);
  if (session.empty()) return 2;
  for (;;) {
    grpc::ClientContext ctx;
    v1::ArrayInfo info;
    const int64_t bytes = 8 * static_cast<int64_t>(1 + rng() % (1 << 20));  // up to 8 MiB
    grpc::Status s = Upload(*stub, ctx, session, Pattern(bytes, rng()), 256 << 10, -1, &info);
    if (!s.ok()) continue;
    // Each iteration gives its arrays back: a child that lives long (fast
    // transfers) must not fill --max-memory for every other worker.
    std::vector<std::string> held = {info.handle()};
    if (f.child == "download") {
      for (int i = 0; i < 4; ++i) {
        grpc::ClientContext d;
        Download(*stub, d, session, info.handle(), -1, nullptr);
      }
    } else if (f.child == "run") {
      grpc::ClientContext small;
      v1::ArrayInfo small_info;
      if (Upload(*stub, small, session, Pattern(4096 * 8, 7), 1 << 20, -1, &small_info).ok()) {
        held.push_back(small_info.handle());
        grpc::ClientContext r;
        v1::RunResponse resp;
        const bool as_while = rng() % 2 == 0;
        if (stub->Run(&r, LongRun(session, small_info.handle(), int64_t{1} << 30, as_while), &resp)
                .ok()) {
          for (const v1::RunResult& res : resp.results()) held.push_back(res.array().handle());
        }
      }
    }
    Release(*stub, session, held);
  }
}

// --- The soak ------------------------------------------------------------------

struct Tally {
  std::mutex mu;
  std::map<std::string, int64_t> kills;       // by kind
  std::map<std::string, int64_t> unexpected;  // "kind: code message" -> count
  void Kill(const std::string& kind) {
    std::lock_guard<std::mutex> l(mu);
    ++kills[kind];
  }
  void Unexpected(const std::string& kind, const grpc::Status& s) {
    std::lock_guard<std::mutex> l(mu);
    ++unexpected[absl::StrCat(kind, ": code ", s.error_code(), " ", s.error_message())];
  }
};

bool Expected(const grpc::Status& s) {
  return s.ok() || s.error_code() == grpc::StatusCode::CANCELLED;
}

// One SIGKILLed client process; true if it was still running when killed.
bool KillOneProcess(const Flags& f, const std::string& target, const char* action, uint64_t seed,
                    int delay_ms) {
  std::string self = "/proc/self/exe";
  std::vector<std::string> args = {self,     "--child",           action, "--target", target,
                                   "--seed", std::to_string(seed)};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), environ) != 0) return false;
  std::this_thread::sleep_for(milliseconds(delay_ms));
  int status = 0;
  const bool running = waitpid(pid, &status, WNOHANG) == 0;
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return running;
}

// One in-process call cancelled at a random point; its channel is dropped.
void CancelOneCall(const std::string& target, std::mt19937_64& rng, Tally& tally,
                   bool shared_memory_only) {
  auto stub = NewStub(target);
  const std::string session = Open(*stub);
  if (session.empty()) {
    tally.Unexpected("open", grpc::Status(grpc::StatusCode::UNKNOWN, "no session"));
    return;
  }
  const int64_t chunk = 256 << 10;
  const int64_t chunks = 1 + static_cast<int64_t>(rng() % 8);
  const std::string data = Pattern(chunks * chunk, rng());
  const int kind = shared_memory_only ? 3 : static_cast<int>(rng() % 4);
  if (kind == 3) {  // shared memory: a region call cancelled, its socket closed mid-call
    std::string path;
    const std::string s2 = Open(*stub, &path);
    absl::StatusOr<std::unique_ptr<client::LocalData>> local =
        client::LocalData::Connect(path, s2, "");
    absl::StatusOr<std::shared_ptr<client::LocalRegion>> region =
        local.ok() ? (*local)->Register(chunks * chunk) : local.status();
    if (!region.ok()) {
      tally.Unexpected("region", grpc::Status(grpc::StatusCode::UNKNOWN,
                                              std::string(region.status().message())));
      return;
    }
    grpc::ClientContext ctx;
    const int delay = static_cast<int>(rng() % 3);
    const bool close_socket = rng() % 2 == 0;
    std::thread canceller([&] {
      std::this_thread::sleep_for(milliseconds(delay));
      ctx.TryCancel();
      if (close_socket) local->reset();  // the socket goes while the call may run
    });
    std::string handle;
    grpc::Status st = RegionRoundTrip(*stub, ctx, s2, **region, chunks * chunk, true, &handle);
    canceller.join();
    if (!Expected(st) && st.error_code() != grpc::StatusCode::NOT_FOUND) {
      tally.Unexpected("region transfer", st);  // NOT_FOUND: the socket closed first
    }
    tally.Kill("shared-memory transfer cancelled, its socket closed at random");
    if (rng() % 2 == 0) Close(*stub, s2);
    Close(*stub, session);
    return;
  }
  if (kind == 0) {  // upload: before the first chunk .. after the status was asked for
    const int64_t at = static_cast<int64_t>(rng() % static_cast<uint64_t>(chunks + 2));
    grpc::ClientContext ctx;
    v1::ArrayInfo info;
    grpc::Status s = Upload(*stub, ctx, session, data, chunk, at, &info);
    if (!Expected(s)) tally.Unexpected("upload", s);
    tally.Kill(at == 0        ? "upload cancelled before the first chunk"
               : at >= chunks ? "upload cancelled after the last chunk"
                              : "upload cancelled mid-stream");
  } else {
    grpc::ClientContext up_ctx;
    v1::ArrayInfo info;
    grpc::Status up = Upload(*stub, up_ctx, session, data, chunk, -1, &info);
    if (!up.ok()) {
      tally.Unexpected("upload before download/run", up);
      return;
    }
    if (kind == 1) {  // download: the server sends 64 KiB chunks, many messages
      const int64_t messages = std::max<int64_t>(1, (chunks * chunk + 65535) / 65536);
      const int64_t after = static_cast<int64_t>(rng() % static_cast<uint64_t>(messages + 2));
      grpc::ClientContext ctx;
      grpc::Status s = Download(*stub, ctx, session, info.handle(), after, nullptr);
      if (!Expected(s)) tally.Unexpected("download", s);
      tally.Kill(after == 0          ? "download cancelled before the first chunk"
                 : after >= messages ? "download cancelled after the last chunk"
                                     : "download cancelled mid-stream");
    } else {  // a long program cancelled while it runs
      grpc::ClientContext ctx;
      v1::RunResponse resp;
      const int delay = static_cast<int>(rng() % 30);
      std::thread canceller([&] {
        std::this_thread::sleep_for(milliseconds(delay));
        ctx.TryCancel();
      });
      const bool as_while = rng() % 2 == 0;
      grpc::Status s =
          stub->Run(&ctx, LongRun(session, info.handle(), int64_t{1} << 30, as_while), &resp);
      canceller.join();
      if (!Expected(s) && s.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) {
        tally.Unexpected("run", s);
      }
      tally.Kill(as_while ? "while cancelled mid-loop" : "run cancelled mid-program");
    }
  }
  if (rng() % 2 == 0) Close(*stub, session);  // else the reaper's job
}

// Waits until the server holds nothing beyond `baseline` device bytes and
// no session or handle; false after `timeout`.
bool WaitForEmpty(v1::Resident::Stub& stub, int64_t baseline, milliseconds timeout) {
  const auto end = Clock::now() + timeout;
  for (;;) {
    const v1::DescribeResponse d = Describe(stub);
    if (d.devices_size() > 0 && d.devices(0).used_bytes() == baseline &&
        d.usage().sessions() == 0 && d.usage().handles() == 0 && d.usage().regions() == 0) {
      return true;
    }
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(100));
  }
}

// A clean round trip whose bytes must come back exactly.
bool RoundTrip(v1::Resident::Stub& stub) {
  const std::string session = Open(stub);
  const std::string data = Pattern(3 << 20, 11);
  grpc::ClientContext up;
  v1::ArrayInfo info;
  if (!Upload(stub, up, session, data, 1 << 20, -1, &info).ok()) return false;
  grpc::ClientContext down;
  std::string got;
  const bool ok = Download(stub, down, session, info.handle(), -1, &got).ok() && got == data;
  Close(stub, session);
  return ok;
}

int RunSoak(const Flags& f) {
  testing::ServerProcess server(
      f.server,
      // --loop-graphs: on a GPU the never-ending whiles run as device graphs
      // (cancelled between rounds); the CPU backend records none.
      {"--device", f.device, "--max-memory", "2G", "--session-idle-timeout", "1s",
       "--max-sessions-per-tenant", "4096", "--max-sessions", "8192", "--chunk-bytes", "65536",
       "--loop-graphs"},
      f.log);
  if (!server.ok()) {
    std::fprintf(stderr, "server did not start; log:\n%s\n", server.log().c_str());
    return 1;
  }
  auto stub = NewStub(server.target());
  const v1::DescribeResponse first = Describe(*stub);
  if (first.devices_size() == 0) {
    std::fprintf(stderr, "the server does not answer Describe; log:\n%s\n", server.log().c_str());
    return 1;
  }
  const int64_t baseline = first.devices(0).used_bytes();
  auto open_fds = [&] {
    int64_t n = 0;
    if (DIR* d = opendir(absl::StrCat("/proc/", server.pid(), "/fd").c_str())) {
      while (readdir(d) != nullptr) ++n;
      closedir(d);
    }
    return n;
  };
  const auto start = Clock::now();
  for (int i = 0; i < 30; ++i) RoundTrip(*stub);  // warm the allocators
  const int64_t warm_rss = server.rss_bytes();
  const int64_t warm_fds = open_fds();

  Tally tally;
  std::atomic<int64_t> next{0};
  std::atomic<bool> server_died{false};
  int64_t half_rss[2] = {0, 0};
  int64_t half_cached[2] = {0, 0};  // the backend's cache of freed blocks
  bool drained[2] = {false, false};
  for (int half = 0; half < 2; ++half) {
    const int64_t stop = f.kills * (half + 1) / 2;
    std::vector<std::thread> workers;
    workers.reserve(static_cast<size_t>(f.workers));
    for (int w = 0; w < f.workers; ++w) {
      workers.emplace_back([&, w] {
        std::mt19937_64 rng(f.seed * 7919 + static_cast<uint64_t>(w) + 1000 * half);
        static const char* kActions[] = {"upload", "download", "run", "region"};
        while (next.fetch_add(1) < stop && !server_died) {
          if (std::uniform_real_distribution<double>(0, 1)(rng) < f.process_fraction) {
            const char* action = f.shared_memory_only ? "region" : kActions[rng() % 4];
            const int delay = 5 + static_cast<int>(rng() % 400);
            if (KillOneProcess(f, server.target(), action, rng(), delay)) {
              tally.Kill(absl::StrCat("client process SIGKILLed mid-", action));
            } else {
              tally.Unexpected(absl::StrCat("client process (", action, ")"),
                               grpc::Status(grpc::StatusCode::UNKNOWN, "exited before its kill"));
            }
          } else {
            CancelOneCall(server.target(), rng, tally, f.shared_memory_only);
          }
          if (!server.alive()) server_died = true;
        }
      });
    }
    for (std::thread& t : workers) t.join();
    next = stop;
    if (server_died) break;
    drained[half] = WaitForEmpty(*stub, baseline, std::chrono::seconds(30));
    half_rss[half] = server.rss_bytes();
    const v1::DescribeResponse d = Describe(*stub);
    half_cached[half] = d.devices_size() > 0 ? d.devices(0).cached_bytes() : 0;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const bool alive = server.alive();
  const bool serves = alive && RoundTrip(*stub);
  const v1::DescribeResponse after = Describe(*stub);
  int64_t fds = open_fds();
  for (int i = 0; i < 100 && fds > warm_fds; ++i) {  // connections still closing
    std::this_thread::sleep_for(milliseconds(100));
    fds = open_fds();
  }

  int64_t total = 0;
  std::printf("kill soak: %s backend, %d workers, %.1f s\n", f.device.c_str(), f.workers, seconds);
  std::printf("  %-52s %8s\n", "kill", "count");
  for (const auto& [kind, n] : tally.kills) {
    std::printf("  %-52s %8lld\n", kind.c_str(), static_cast<long long>(n));
    total += n;
  }
  std::printf("  %-52s %8lld\n", "total", static_cast<long long>(total));
  const int64_t mib = 1 << 20;
  std::printf(
      "server RSS: warm %lld MiB, after half 1 %lld MiB (%lld cached), after half 2 "
      "%lld MiB (%lld cached)\n",
      static_cast<long long>(warm_rss / mib), static_cast<long long>(half_rss[0] / mib),
      static_cast<long long>(half_cached[0] / mib), static_cast<long long>(half_rss[1] / mib),
      static_cast<long long>(half_cached[1] / mib));
  std::printf(
      "after: device used %lld bytes (baseline %lld), sessions %lld, handles %lld, "
      "table host bytes %lld\n",
      static_cast<long long>(after.devices_size() ? after.devices(0).used_bytes() : -1),
      static_cast<long long>(baseline), static_cast<long long>(after.usage().sessions()),
      static_cast<long long>(after.usage().handles()),
      static_cast<long long>(after.usage().table_host_bytes()));
  bool ok = true;
  auto check = [&](bool cond, const std::string& what) {
    std::printf("  [%s] %s\n", cond ? "ok" : "FAIL", what.c_str());
    ok = ok && cond;
  };
  check(alive, "the server process is alive");
  check(serves, "a clean upload + download round trip returns every byte");
  check(total >= f.kills, absl::StrCat("at least ", f.kills, " kills"));
  check(drained[0] && drained[1],
        "after each half: device bytes exactly at the baseline, no session, no handle");
  // The backend's cache of freed blocks is memory kept on purpose (and
  // reported as cached_bytes); what must settle is everything else.
  const int64_t held[2] = {half_rss[0] - half_cached[0], half_rss[1] - half_cached[1]};
  check(
      held[1] <= held[0] + f.rss_growth_mib * mib,
      absl::StrCat("RSS less the block cache grew at most ", f.rss_growth_mib,
                   " MiB from half 1 to half 2 (", held[0] / mib, " -> ", held[1] / mib, " MiB)"));
  check(held[1] <= warm_rss + f.rss_bound_mib * mib,
        absl::StrCat("RSS less the block cache at most ", f.rss_bound_mib,
                     " MiB over the warmed-up server's RSS"));
  check(after.usage().regions() == 0 && after.usage().region_bytes() == 0,
        "no shared-memory region left mapped");
  check(fds <= warm_fds, absl::StrCat("the server's open descriptors back to the warmed-up ",
                                      warm_fds, " (", fds, ")"));
  check(tally.unexpected.empty(), "no unexpected status (only OK or CANCELLED)");
  for (const auto& [what, n] : tally.unexpected) {
    std::printf("    %lld x %s\n", static_cast<long long>(n), what.c_str());
  }
  if (!alive)
    std::printf("server exit status %d; log:\n%s\n", server.exit_status(), server.log().c_str());
  return ok ? 0 : 1;
}

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--server")
      f.server = v;
    else if (k == "--device")
      f.device = v;
    else if (k == "--child")
      f.child = v;
    else if (k == "--target")
      f.target = v;
    else if (k == "--kills")
      f.kills = std::stoll(v);
    else if (k == "--workers")
      f.workers = std::stoi(v);
    else if (k == "--process-fraction")
      f.process_fraction = std::stod(v);
    else if (k == "--shared-memory-only")
      f.shared_memory_only = v == "1" || v == "true";
    else if (k == "--seed")
      f.seed = std::stoull(v);
    else if (k == "--rss-growth-mib")
      f.rss_growth_mib = std::stoll(v);
    else if (k == "--rss-bound-mib")
      f.rss_bound_mib = std::stoll(v);
    else if (k == "--log")
      f.log = v;
    else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      std::exit(2);
    }
  }
  return f;
}

}  // namespace
}  // namespace resident::soak

int main(int argc, char** argv) {
  const resident::soak::Flags f = resident::soak::ParseFlags(argc, argv);
  if (!f.child.empty()) return resident::soak::RunChild(f);
  if (f.server.empty()) {
    std::fprintf(stderr,
                 "usage: kill_soak --server PATH [--kills N] [--workers N] "
                 "[--device cpu|cuda:0] [--seed N]\n");
    return 2;
  }
  return resident::soak::RunSoak(f);
}
