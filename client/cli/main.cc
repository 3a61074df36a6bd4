// resident: the command-line client.
//
//   resident [--server HOST:PORT] info | ls | put FILE.npy | get HANDLE|NAME FILE.npy
//            | keep HANDLE NAME | rm HANDLE|NAME | seed [--iterations N]
//            | token new TENANT [--admin] | admin sessions | admin close ID
//            | health [--tls-server-name NAME]
//
// The server address comes from --server, else RESIDENT_SERVER, else
// 127.0.0.1:50051; the token from --token, else RESIDENT_TOKEN.
#include <openssl/evp.h>
#include <sys/random.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/cli/health.h"
#include "client/cli/seed.h"
#include "client/client.h"
#include "core/flags_util.h"
#include "core/npy.h"

ABSL_FLAG(std::string, server, "",
          "server address HOST:PORT (default: $RESIDENT_SERVER or 127.0.0.1:50051)");
ABSL_FLAG(int64_t, iterations, 1024, "seed: number of adds");
ABSL_FLAG(std::string, token, "", "bearer token (default: $RESIDENT_TOKEN)");
ABSL_FLAG(std::string, tls_ca, "", "PEM CA that signed the server's certificate (enables TLS)");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate, for mutual TLS");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert");
ABSL_FLAG(bool, admin, false, "token new: give the token the admin role");
ABSL_FLAG(std::string, tls_server_name, "",
          "health: the name to verify in the server's certificate (default: the host of --server)");

namespace {

using resident::client::Client;

std::string ServerAddress() {
  std::string s = absl::GetFlag(FLAGS_server);
  if (!s.empty()) return s;
  if (const char* env = std::getenv("RESIDENT_SERVER"); env && *env) return env;
  return "127.0.0.1:50051";
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "resident: %s: %s\n", absl::StatusCodeToString(s.code()).c_str(),
               std::string(s.message()).c_str());
  return 1;
}

int Usage() {
  std::fprintf(stderr,
               "usage: resident [--server HOST:PORT] COMMAND\n"
               "  info                  server version, device and memory\n"
               "  ls                    this tenant's arrays\n"
               "  put FILE.npy          upload; prints the new handle\n"
               "  get HANDLE|NAME FILE.npy  download into a .npy file\n"
               "  keep HANDLE NAME      name an array: it outlives sessions (and restarts\n"
               "                        with the server's --data-dir)\n"
               "  rm HANDLE|NAME        release a handle, or delete a name\n"
               "  seed [--iterations N] the tutorial's loop, three ways\n"
               "  token new TENANT [--admin]  a fresh token and its tokens-file line\n"
               "  admin sessions        every session (admin role)\n"
               "  admin close ID        close a session by id or 8+ digit prefix (admin role)\n"
               "  health                the server's gRPC health: prints SERVING and exits 0,\n"
               "                        else exits 1 (container HEALTHCHECK, exec probes)\n"
               "connection flags: --token (or $RESIDENT_TOKEN), --tls-ca, --tls-cert, --tls-key\n");
  return 2;
}

// Token, TLS files and server-independent settings of every connection.
resident::client::ClientOptions ConnectionOptions() {
  resident::client::ClientOptions o;
  o.token = absl::GetFlag(FLAGS_token);
  if (o.token.empty()) {
    if (const char* env = std::getenv("RESIDENT_TOKEN"); env && *env) o.token = env;
  }
  o.tls_ca_file = absl::GetFlag(FLAGS_tls_ca);
  o.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  o.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  return o;
}

absl::StatusOr<std::unique_ptr<Client>> Connect(bool close_on_exit = true) {
  resident::client::ClientOptions o = ConnectionOptions();
  o.keep_alive = false;
  o.close_session_on_exit = close_on_exit;
  return Client::Connect(ServerAddress(), o);
}

// `token new`: 32 random bytes, base64url without padding; the tokens file
// gets only the SHA-256 of that text.
int TokenNew(const std::string& tenant) {
  unsigned char raw[32];
  for (size_t got = 0; got < sizeof(raw);) {
    const ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
    if (n < 0) return Fail(absl::InternalError("getrandom failed"));
    got += static_cast<size_t>(n);
  }
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string token;
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char b : raw) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      token += kAlphabet[(acc >> bits) & 63];
    }
  }
  if (bits > 0) token += kAlphabet[(acc << (6 - bits)) & 63];
  unsigned char hash[32];
  unsigned int n = 0;
  EVP_Digest(token.data(), token.size(), hash, &n, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned char b : hash) absl::StrAppend(&hex, absl::Hex(b, absl::kZeroPad2));
  const char* role = absl::GetFlag(FLAGS_admin) ? "admin" : "user";
  std::printf(
      "token (give it to %s; it is not stored anywhere):\n  %s\n"
      "line for the --auth-tokens file:\n%s %s %s\n",
      tenant.c_str(), token.c_str(), hex.c_str(), tenant.c_str(), role);
  return 0;
}

int AdminSessions() {
  auto c = Connect();
  if (!c.ok()) return Fail(c.status());
  auto sessions = (*c)->ListSessions();
  if (!sessions.ok()) return Fail(sessions.status());
  std::printf("%-16s  %-16s  %10s  %10s  %7s  %s\n", "session", "tenant", "age", "idle", "arrays",
              "bytes");
  for (const auto& s : *sessions) {
    std::printf("%-16s  %-16s  %9.1fs  %9.1fs  %7lld  %lld\n", s.session_hex.substr(0, 16).c_str(),
                s.tenant.c_str(), s.age_ms / 1e3, s.idle_ms / 1e3, static_cast<long long>(s.arrays),
                static_cast<long long>(s.bytes));
  }
  return 0;
}

int AdminClose(const std::string& id) {
  auto c = Connect();
  if (!c.ok()) return Fail(c.status());
  auto closed = (*c)->AdminCloseSession(id);
  if (!closed.ok()) return Fail(closed.status());
  std::printf("closed session %s\n", closed->c_str());
  return 0;
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
  std::printf("limit      %s (--max-memory), %s held by arrays\n", Bytes(info->limit_bytes).c_str(),
              Bytes(info->used_bytes).c_str());
  if (info->devices.size() > 1) {  // the lines above describe device 0
    for (const resident::client::DeviceListing& d : info->devices) {
      std::printf("device %-3u %s (%s): %s held of %s, %s total, %lld peer copies\n", d.index,
                  d.name.c_str(), d.description.c_str(), Bytes(d.used_bytes).c_str(),
                  Bytes(d.limit_bytes).c_str(), Bytes(d.total_bytes).c_str(),
                  static_cast<long long>(d.peer_copies));
    }
  }
  return 0;
}

int Ls() {
  auto c = Connect();
  if (!c.ok()) return Fail(c.status());
  auto arrays = (*c)->List();
  if (!arrays.ok()) return Fail(arrays.status());
  std::printf("%-32s  %-8s  %-20s  %-12s  %s\n", "handle", "dtype", "shape", "bytes", "name");
  for (const auto& a : *arrays) {
    std::printf("%-32s  %-8s  %-20s  %-12lld  %s\n",
                a.handle_hex.empty() ? "-" : a.handle_hex.c_str(), resident::DTypeName(a.dtype),
                resident::ShapeString(a.shape).c_str(), static_cast<long long>(a.nbytes),
                a.name.c_str());
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

// 32 hex digits: a handle (names may look like one too; see Lookup).
bool LooksLikeHandle(const std::string& s) {
  return s.size() == 32 && std::all_of(s.begin(), s.end(), [](char ch) {
           return std::isxdigit(static_cast<unsigned char>(ch)) != 0;
         });
}

// HANDLE or NAME: a handle if it looks like one and exists, else a name.
absl::StatusOr<resident::client::Array> Lookup(Client& c, const std::string& what) {
  if (LooksLikeHandle(what)) {
    auto a = c.AttachHandle(what);
    if (a.ok() || a.status().code() != absl::StatusCode::kNotFound) return a;
  }
  return c.Attach(what);
}

int Keep(const std::string& handle, const std::string& name) {
  auto c = Connect();
  if (!c.ok()) return Fail(c.status());
  auto a = (*c)->AttachHandle(handle);
  if (!a.ok()) return Fail(a.status());
  if (auto s = (*c)->Keep(*a, name); !s.ok()) return Fail(s);
  return 0;
}

int Get(const std::string& handle, const std::string& path) {
  auto c = Connect();
  if (!c.ok()) return Fail(c.status());
  auto a = Lookup(**c, handle);
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
  absl::Status s =
      LooksLikeHandle(handle) ? (*c)->ReleaseHandle(handle) : absl::NotFoundError("not a handle");
  if (s.code() == absl::StatusCode::kNotFound) s = (*c)->Delete(handle);
  if (!s.ok()) return Fail(s);
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
  if (cmd == "keep" && n == 2) return Keep(args[2], args[3]);
  if (cmd == "token" && n == 2 && std::string(args[2]) == "new") return TokenNew(args[3]);
  if (cmd == "admin" && n == 1 && std::string(args[2]) == "sessions") return AdminSessions();
  if (cmd == "admin" && n == 2 && std::string(args[2]) == "close") return AdminClose(args[3]);
  if (cmd == "health" && n == 0) {
    resident::cli::HealthOptions o;
    o.server = ServerAddress();
    o.connection = ConnectionOptions();
    o.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
    absl::StatusOr<std::string> status = resident::cli::CheckHealth(o);
    if (!status.ok()) return Fail(status.status());
    std::printf("%s\n", status->c_str());
    return *status == "SERVING" ? 0 : 1;
  }
  if (cmd == "seed" && n == 0) {
    resident::cli::SeedOptions o;
    o.server = ServerAddress();
    o.connection = ConnectionOptions();
    o.iterations = absl::GetFlag(FLAGS_iterations);
    if (auto s = resident::cli::RunSeed(o); !s.ok()) return Fail(s);
    return 0;
  }
  return Usage();
}
