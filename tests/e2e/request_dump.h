// The e2e suites' opt-in request dump: the seed corpus of
// tests/fuzz/program_fuzzer (see RequestDump). Test code only; the client
// library knows nothing of it.
#ifndef RESIDENT_TESTS_E2E_REQUEST_DUMP_H_
#define RESIDENT_TESTS_E2E_REQUEST_DUMP_H_

#include <grpcpp/support/client_interceptor.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/handle_id.h"
#include "resident/v1/resident.pb.h"
#include "tests/fuzz/fuzz_handles.h"

namespace resident::e2e {

// Opt-in seed corpus for tests/fuzz/program_fuzzer: with
// RESIDENT_DUMP_REQUESTS_DIR set, every Run request any client of the
// suite sends is written there, one file each (session and releases
// cleared). Handles of arrays the suite uploaded, kept, attached or got
// back from Run are rewritten into the fuzzer's self-describing form
// (tests/fuzz/fuzz_handles.h), so the fuzzer's planner sees their real
// dtypes and shapes; other handles stay unknown to it, as to the server.
// A global client interceptor (gRPC's test-only hook) sees the client
// library's channels and the suites' raw stubs alike.
class RequestDump : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  // Registers the dump once per process when the variable is set; call it
  // before any client channel exists.
  static void InstallIfAsked() {
    static std::once_flag once;
    std::call_once(once, [] {
      const char* dir = std::getenv("RESIDENT_DUMP_REQUESTS_DIR");
      if (dir == nullptr || *dir == '\0') return;
      grpc::experimental::RegisterGlobalClientInterceptorFactory(new RequestDump(dir));
    });
  }

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override {
    return new Call(this, info->method());
  }

 private:
  explicit RequestDump(std::string dir) : dir_(std::move(dir)) {}

  class Call : public grpc::experimental::Interceptor {
   public:
    Call(RequestDump* dump, std::string method) : dump_(dump), method_(std::move(method)) {}
    void Intercept(grpc::experimental::InterceptorBatchMethods* m) override {
      using grpc::experimental::InterceptionHookPoints;
      const std::string prefix = "/resident.v1.Resident/";
      if (m->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE) &&
          method_ == prefix + "Run" && m->GetSendMessage() != nullptr) {
        dump_->Write(*static_cast<const v1::RunRequest*>(m->GetSendMessage()));
      }
      if (m->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
          m->GetRecvMessage() != nullptr) {
        if (method_ == prefix + "Run") {
          const auto* resp = static_cast<const v1::RunResponse*>(m->GetRecvMessage());
          for (const v1::RunResult& r : resp->results()) dump_->Learn(r.array());
        } else if (method_ == prefix + "Upload" || method_ == prefix + "Keep" ||
                   method_ == prefix + "Attach") {
          dump_->Learn(*static_cast<v1::ArrayInfo*>(m->GetRecvMessage()));
        }
      }
      m->Proceed();
    }

   private:
    RequestDump* dump_;
    std::string method_;
  };

  void Learn(const v1::ArrayInfo& a) {
    if (a.handle().size() != HandleId::kSize || a.dtype() < v1::DTYPE_BOOL ||
        a.dtype() > v1::DTYPE_FLOAT64) {
      return;
    }
    std::optional<HandleId> fuzz = fuzz::EncodeHandle(kAllDTypes[a.dtype() - v1::DTYPE_BOOL],
                                                      Shape(a.shape().begin(), a.shape().end()));
    std::lock_guard<std::mutex> lock(mu_);
    if (fuzz) handles_[a.handle()] = fuzz->bytes();
  }

  void Rewrite(v1::Operand& o) {
    if (!o.has_handle()) return;
    auto it = handles_.find(o.handle());
    if (it != handles_.end()) o.set_handle(it->second);
  }
  void Rewrite(v1::Program& p) {
    for (v1::Instruction& ins : *p.mutable_instructions()) {
      for (v1::Operand& o : *ins.mutable_operands()) Rewrite(o);
      if (ins.has_body()) Rewrite(*ins.mutable_body());
    }
    for (v1::Operand& o : *p.mutable_yields()) Rewrite(o);
  }

  void Write(const v1::RunRequest& sent) {
    v1::RunRequest req = sent;
    req.clear_session();
    req.clear_release();
    std::lock_guard<std::mutex> lock(mu_);
    Rewrite(*req.mutable_program());
    const std::string path = absl::StrCat(dir_, "/run-", getpid(), "-", next_++, ".pb");
    std::ofstream(path, std::ios::binary) << req.SerializeAsString();
  }

  const std::string dir_;
  std::mutex mu_;
  std::map<std::string, std::string> handles_;  // server handle -> fuzzer handle
  int next_ = 0;
};

}  // namespace resident::e2e

#endif  // RESIDENT_TESTS_E2E_REQUEST_DUMP_H_
