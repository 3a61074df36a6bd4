// resident: the command-line client.
//
//   resident [--server HOST:PORT] info | ls | put FILE.npy | get HANDLE FILE.npy
//            | rm HANDLE | seed [--iterations N]
//
// The server address comes from --server, else RESIDENT_SERVER, else
// 127.0.0.1:50051.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "server/base/flags_util.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/cli/seed.h"
#include "client/client.h"
#include "client/npy.h"

ABSL_FLAG(std::string, server, "", "server address HOST:PORT (default: $RESIDENT_SERVER or 127.0.0.1:50051)");
ABSL_FLAG(int64_t, iterations, 1024, "seed: number of adds");

namespace {

using resident::client::Client;

std::string ServerAddress() {
  std::string s = absl::GetFlag(FLAGS_server);
  if (!s.empty()) return s;
  if (const char* env = std::getenv("RESIDENT_SERVER"); env && *env) return env;
  return "127.0.0.1:50051";
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "resident: %s: %s\n",
               absl::StatusCodeToString(s.code()).c_str(), std::string(s.message()).c_str());
  return 1;
}

int Usage() {
  std::fprintf(stderr,
               "usage: resident [--server HOST:PORT] COMMAND\n"
               "  info                  server version, device and memory\n"
               "  ls                    this tenant's arrays\n"
               "  put FILE.npy          upload; prints the new handle\n"
               "  get HANDLE FILE.npy   download into a .npy file\n"
               "  rm HANDLE             release an array\n"
               "  seed [--iterations N] the tutorial's loop, three ways\n");
  return 2;
}

absl::StatusOr<std::unique_ptr<Client>> Connect(bool close_on_exit = true) {
  resident::client::ClientOptions o;
  o.keep_alive = false;
  o.close_session_on_exit = close_on_exit;
  return Client::Connect(ServerAddress(), o);
}

std::string Bytes(int64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? absl::StrCat(n, " B") : absl::StrFormat("%.1f %s", v, units[u]);
}

int Info() {
  auto c = Connect();
  if (!c.ok()) return Fail(c.status());
  auto info = (*c)->Info();
  if (!info.ok()) return Fail(info.status());
  std::printf("server     %s (protocol %u) at %s\n", info->server_version.c_str(),
              info->protocol_version, ServerAddress().c_str());
  std::printf("device     %s: %s\n", info->device_name.c_str(), info->device_description.c_str());
  std::printf("memory     %s total, %s free on the device\n", Bytes(info->total_bytes).c_str(),
              Bytes(info->free_bytes).c_str());
  std::printf("limit      %s (--max-memory), %s held by arrays\n",
              Bytes(info->limit_bytes).c_str(), Bytes(info->used_bytes).c_str());
  return 0;
}

int Ls() {
  auto c = Connect();
  if (!c.ok()) return Fail(c.status());
  auto arrays = (*c)->List();
  if (!arrays.ok()) return Fail(arrays.status());
  std::printf("%-32s  %-8s  %-20s  %s\n", "handle", "dtype", "shape", "bytes");
  for (const auto& a : *arrays) {
    std::printf("%-32s  %-8s  %-20s  %lld\n", a.handle_hex.c_str(),
                resident::DTypeName(a.dtype), resident::ShapeString(a.shape).c_str(),
                static_cast<long long>(a.nbytes));
  }
  return 0;
}

int Put(const std::string& path) {
  auto host = resident::ReadNpy(path);
  if (!host.ok()) return Fail(host.status());
  // The session stays open after we exit so the array lives on (until the
  // session's idle timeout) for `get` and `rm`.
  auto c = Connect(/*close_on_exit=*/false);
  if (!c.ok()) return Fail(c.status());
  auto a = (*c)->Upload(host->dtype, host->shape, host->bytes);
  if (!a.ok()) return Fail(a.status());
  auto h = a->handle_hex();
  if (!h.ok()) return Fail(h.status());
  std::printf("%s\n", h->c_str());
  return 0;
}

int Get(const std::string& handle, const std::string& path) {
  auto c = Connect();
  if (!c.ok()) return Fail(c.status());
  auto a = (*c)->Attach(handle);
  if (!a.ok()) return Fail(a.status());
  auto d = a->Download();
  if (!d.ok()) return Fail(d.status());
  if (auto s = resident::WriteNpy(path, d->dtype, d->shape, d->bytes); !s.ok()) return Fail(s);
  std::printf("wrote %s: %s %s\n", path.c_str(), resident::DTypeName(d->dtype),
              resident::ShapeString(d->shape).c_str());
  return 0;
}

int Rm(const std::string& handle) {
  auto c = Connect();
  if (!c.ok()) return Fail(c.status());
  if (auto s = (*c)->ReleaseHandle(handle); !s.ok()) return Fail(s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("resident [--server HOST:PORT] info|ls|put|get|rm|seed");
  std::vector<std::string> flag_storage;
  resident::DashesToUnderscores(argc, argv, flag_storage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) return Usage();
  const std::string cmd = args[1];
  const size_t n = args.size() - 2;
  if (cmd == "info" && n == 0) return Info();
  if (cmd == "ls" && n == 0) return Ls();
  if (cmd == "put" && n == 1) return Put(args[2]);
  if (cmd == "get" && n == 2) return Get(args[2], args[3]);
  if (cmd == "rm" && n == 1) return Rm(args[2]);
  if (cmd == "seed" && n == 0) {
    resident::cli::SeedOptions o;
    o.server = ServerAddress();
    o.iterations = absl::GetFlag(FLAGS_iterations);
    if (auto s = resident::cli::RunSeed(o); !s.ok()) return Fail(s);
    return 0;
  }
  return Usage();
}
