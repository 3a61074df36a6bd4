#include "server/rpc/service.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/base/log.h"
#include "server/base/status_macros.h"
#include "server/rpc/proto_convert.h"
#include "server/rpc/status_util.h"

#ifndef RESIDENT_VERSION
#define RESIDENT_VERSION "0.0.0"
#endif

namespace resident {
namespace {

constexpr uint32_t kProtocolVersion = 1;

absl::StatusOr<HandleId> SessionOf(const std::string& bytes) {
  if (bytes.empty()) {
    return absl::InvalidArgumentError("request names no session; call OpenSession first");
  }
  return DecodeHandle(bytes, "session id");
}

// Stops a program at the next op boundary when the call's deadline passes
// or the client goes away.
std::function<absl::Status()> CallChecker(grpc::CallbackServerContext* ctx) {
  const auto deadline = ctx->deadline();
  return [ctx, deadline]() -> absl::Status {
    if (ctx->IsCancelled()) return absl::CancelledError("call cancelled by the client");
    if (std::chrono::system_clock::now() > deadline) {
      return absl::DeadlineExceededError("deadline passed; program stopped");
    }
    return absl::OkStatus();
  };
}

}  // namespace

// Operations a program runs: loop bodies once per iteration.
static int64_t CountOps(const v1::Program& program) {
  int64_t n = 0;
  for (const v1::Instruction& ins : program.instructions()) {
    n += ins.op() == "loop" ? 1 + ins.trip_count() * CountOps(ins.body()) : 1;
  }
  return n;
}

ResidentService::ResidentService(SessionManager& sessions, Scheduler& scheduler,
                                 const ServerOptions& options,
                                 std::function<void()> on_poisoned,
                                 const Authenticator& auth, Metrics& metrics)
    : sessions_(sessions), scheduler_(scheduler), options_(options),
      on_poisoned_(std::move(on_poisoned)), auth_(auth), metrics_(metrics) {}

absl::Status ResidentService::Authorize(const grpc::CallbackServerContext& ctx) const {
  return auth_.Authenticate(ctx.client_metadata()).status();
}

std::string ResidentService::TenantOf(const grpc::CallbackServerContext& ctx) const {
  absl::StatusOr<Identity> who = auth_.Authenticate(ctx.client_metadata());
  return who.ok() ? who->tenant : std::string();
}

absl::Status ResidentService::CheckDevice() {
  if (!sessions_.device().backend().poisoned()) return absl::OkStatus();
  return absl::UnavailableError(
      "the device hit an unrecoverable error; the server is restarting");
}

absl::Status ResidentService::Observe(const char* method,
                                      const absl::Status& status) {
  if (sessions_.device().backend().poisoned()) {
    if (on_poisoned_) on_poisoned_();
    return CheckDevice();
  }
  return status;
}

void ResidentService::Finish(grpc::ServerUnaryReactor* reactor,
                             const absl::Status& status) {
  reactor->Finish(ToGrpcStatus(status));
}

grpc::ServerUnaryReactor* ResidentService::Describe(
    grpc::CallbackServerContext* ctx, const v1::DescribeRequest*,
    v1::DescribeResponse* resp) {
  Device& device = sessions_.device();
  resp->set_server_version(RESIDENT_VERSION);
  resp->set_protocol_version(kProtocolVersion);
  const MemoryInfo mem = device.backend().memory();
  v1::DeviceInfo* d = resp->add_devices();
  d->set_name(device.backend().name());
  d->set_description(device.backend().description());
  d->set_total_bytes(mem.total);
  d->set_free_bytes(mem.free);
  d->set_limit_bytes(device.budget().limit());
  d->set_used_bytes(device.budget().used());
  resp->set_max_inline_bytes(options_.limits.max_inline_bytes);
  resp->set_max_message_bytes(options_.max_message_bytes);
  resp->set_chunk_bytes(options_.chunk_bytes);
  auto* reactor = ctx->DefaultReactor();
  absl::Status status = Authorize(*ctx);
  Finish(reactor, status.ok() ? CheckDevice() : status);
  return reactor;
}

grpc::ServerUnaryReactor* ResidentService::OpenSession(
    grpc::CallbackServerContext* ctx, const v1::OpenSessionRequest*,
    v1::OpenSessionResponse* resp) {
  auto* reactor = ctx->DefaultReactor();
  absl::Status status = Authorize(*ctx);
  if (status.ok()) status = CheckDevice();
  if (status.ok()) {
    absl::StatusOr<HandleId> id = sessions_.Open(TenantOf(*ctx));
    status = id.status();
    if (id.ok()) {
      resp->set_session(id->bytes());
      resp->set_idle_timeout_ms(
          absl::ToInt64Milliseconds(sessions_.options().idle_timeout));
    }
  }
  Finish(reactor, Observe("OpenSession", status));
  return reactor;
}

grpc::ServerUnaryReactor* ResidentService::CloseSession(
    grpc::CallbackServerContext* ctx, const v1::CloseSessionRequest* req,
    v1::CloseSessionResponse*) {
  auto* reactor = ctx->DefaultReactor();
  absl::StatusOr<HandleId> s = SessionOf(req->session());
  absl::Status status = Authorize(*ctx);
  if (status.ok()) status = s.ok() ? sessions_.Close(TenantOf(*ctx), *s) : s.status();
  Finish(reactor, Observe("CloseSession", status));
  return reactor;
}

grpc::ServerUnaryReactor* ResidentService::RenewSession(
    grpc::CallbackServerContext* ctx, const v1::RenewSessionRequest* req,
    v1::RenewSessionResponse*) {
  auto* reactor = ctx->DefaultReactor();
  absl::StatusOr<HandleId> s = SessionOf(req->session());
  absl::Status status = Authorize(*ctx);
  if (status.ok()) status = s.ok() ? sessions_.Renew(TenantOf(*ctx), *s) : s.status();
  Finish(reactor, Observe("RenewSession", status));
  return reactor;
}

grpc::ServerUnaryReactor* ResidentService::Run(grpc::CallbackServerContext* ctx,
                                               const v1::RunRequest* req,
                                               v1::RunResponse* resp) {
  auto* reactor = ctx->DefaultReactor();
  // Queued per tenant and served round-robin (scheduler.h); a program whose
  // deadline passes while it waits never runs.
  Scheduler::Task task = [this, ctx, req, resp, reactor](bool expired) {
    auto run = [&]() -> absl::Status {
      RETURN_IF_ERROR(Authorize(*ctx));
      RETURN_IF_ERROR(CheckDevice());
      ASSIGN_OR_RETURN(HandleId session, SessionOf(req->session()));
      // Decoded and run in one step so that the releases below happen
      // whether the program fails to decode, to plan or to run.
      auto decode_and_run = [&]() -> absl::StatusOr<std::vector<ProgramResult>> {
        if (expired) {
          return absl::DeadlineExceededError(
              "deadline passed while the program waited its turn; it did not run");
        }
        ASSIGN_OR_RETURN(std::shared_ptr<const Program> program,
                         DecodeProgram(req->program(), options_.limits.max_loop_depth));
        ASSIGN_OR_RETURN(std::vector<OutputSpec> outputs, DecodeOutputs(req->outputs()));
        ExecOptions exec;
        exec.check_continue = CallChecker(ctx);
        return sessions_.Run(TenantOf(*ctx), session, std::move(program),
                             std::move(outputs), exec);
      };
      absl::StatusOr<std::vector<ProgramResult>> ran = decode_and_run();
      for (const std::string& h : req->release()) {
        std::optional<HandleId> id = HandleId::FromBytes(h);
        if (id) sessions_.Release(TenantOf(*ctx), session, {*id}).IgnoreError();
      }
      ASSIGN_OR_RETURN(std::vector<ProgramResult> results, std::move(ran));
      metrics_.RecordProgram(TenantOf(*ctx), CountOps(req->program()));
      for (ProgramResult& r : results) {
        v1::RunResult* out = resp->add_results();
        EncodeArray(r.array, out->mutable_array());
        if (r.data) out->set_data(std::move(*r.data));
      }
      return absl::OkStatus();
    };
    Finish(reactor, Observe("Run", run()));
  };
  if (SmallProgram(*ctx, *req) &&
      scheduler_.RunInlineIfIdle(TenantOf(*ctx), task)) {
    return reactor;
  }
  scheduler_.Submit(TenantOf(*ctx), ctx->deadline(), std::move(task));
  return reactor;
}

bool ResidentService::SmallProgram(const grpc::CallbackServerContext& ctx,
                                   const v1::RunRequest& req) {
  constexpr int64_t kSmallBytes = 1 << 19;
  if (req.program().instructions_size() > 8) return false;
  std::optional<HandleId> session = HandleId::FromBytes(req.session());
  for (const v1::Instruction& ins : req.program().instructions()) {
    if (ins.op() == "loop" || ins.op() == "dot" || ins.op() == "matmul" ||
        ins.op() == "arange") {
      return false;
    }
    int64_t n = 1;
    for (int64_t d : ins.shape()) {
      if (d < 0 || d > kSmallBytes) return false;
      n *= d;
      if (n > kSmallBytes / 8) return false;
    }
    for (const v1::Operand& o : ins.operands()) {
      std::optional<HandleId> h = HandleId::FromBytes(o.handle());
      if (!h || !session) continue;  // fails fast, wherever it runs
      auto d = sessions_.BeginDownload(TenantOf(ctx), *session, *h);
      if (d.ok() && (*d)->description().nbytes > kSmallBytes) return false;
    }
  }
  return true;
}

grpc::ServerUnaryReactor* ResidentService::Release(
    grpc::CallbackServerContext* ctx, const v1::ReleaseRequest* req,
    v1::ReleaseResponse*) {
  auto* reactor = ctx->DefaultReactor();
  auto release = [&]() -> absl::Status {
    RETURN_IF_ERROR(Authorize(*ctx));
    ASSIGN_OR_RETURN(HandleId session, SessionOf(req->session()));
    std::vector<HandleId> handles;
    for (const std::string& h : req->handles()) {
      ASSIGN_OR_RETURN(HandleId id, DecodeHandle(h, "handle"));
      handles.push_back(id);
    }
    std::vector<std::string> names(req->names().begin(), req->names().end());
    return sessions_.Release(TenantOf(*ctx), session, handles, names);
  };
  Finish(reactor, Observe("Release", release()));
  return reactor;
}

grpc::ServerUnaryReactor* ResidentService::Keep(grpc::CallbackServerContext* ctx,
                                                const v1::KeepRequest* req,
                                                v1::ArrayInfo* resp) {
  auto* reactor = ctx->DefaultReactor();
  // With a data dir this writes and fsyncs the array: off gRPC's threads.
  scheduler_.Submit(TenantOf(*ctx), ctx->deadline(), [this, ctx, req, resp, reactor](bool) {
    auto keep = [&]() -> absl::Status {
      RETURN_IF_ERROR(Authorize(*ctx));
      RETURN_IF_ERROR(CheckDevice());
      ASSIGN_OR_RETURN(HandleId session, SessionOf(req->session()));
      ASSIGN_OR_RETURN(HandleId handle, DecodeHandle(req->handle(), "handle"));
      ASSIGN_OR_RETURN(ArrayDescription a,
                       sessions_.Keep(TenantOf(*ctx), session, handle, req->name()));
      EncodeArray(a, resp);
      return absl::OkStatus();
    };
    // Once acknowledged a keep is durable, so it runs even past the
    // deadline: the client may retry and find ALREADY_EXISTS.
    Finish(reactor, Observe("Keep", keep()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* ResidentService::Attach(grpc::CallbackServerContext* ctx,
                                                  const v1::AttachRequest* req,
                                                  v1::ArrayInfo* resp) {
  auto* reactor = ctx->DefaultReactor();
  auto attach = [&]() -> absl::Status {
    RETURN_IF_ERROR(Authorize(*ctx));
    RETURN_IF_ERROR(CheckDevice());
    ASSIGN_OR_RETURN(HandleId session, SessionOf(req->session()));
    ASSIGN_OR_RETURN(ArrayDescription a,
                     sessions_.Attach(TenantOf(*ctx), session, req->name()));
    EncodeArray(a, resp);
    return absl::OkStatus();
  };
  Finish(reactor, Observe("Attach", attach()));
  return reactor;
}

grpc::ServerUnaryReactor* ResidentService::List(grpc::CallbackServerContext* ctx,
                                                const v1::ListRequest* req,
                                                v1::ListResponse* resp) {
  auto* reactor = ctx->DefaultReactor();
  auto list = [&]() -> absl::Status {
    RETURN_IF_ERROR(Authorize(*ctx));
    ASSIGN_OR_RETURN(HandleId session, SessionOf(req->session()));
    ASSIGN_OR_RETURN(std::vector<ArrayDescription> arrays,
                     sessions_.List(TenantOf(*ctx), session));
    for (const ArrayDescription& a : arrays) EncodeArray(a, resp->add_arrays());
    return absl::OkStatus();
  };
  Finish(reactor, Observe("List", list()));
  return reactor;
}

// --- Upload: client-streaming chunks ----------------------------------------

namespace {

class UploadReactor final : public grpc::ServerReadReactor<v1::UploadRequest> {
 public:
  UploadReactor(ResidentService& service, grpc::CallbackServerContext* ctx,
                v1::ArrayInfo* resp)
      : service_(service), ctx_(ctx), resp_(resp) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      // The client half-closed (or went away: then Finish is a no-op).
      if (ctx_->IsCancelled()) return Done(absl::CancelledError("upload cancelled"));
      if (upload_ == nullptr) {
        return Done(absl::InvalidArgumentError("upload stream carried no header"));
      }
      absl::StatusOr<ArrayDescription> a = upload_->Finish();
      if (a.ok()) {
        EncodeArray(*a, resp_);
        service_.metrics().RecordUpload(service_.TenantOf(*ctx_), a->nbytes);
      }
      upload_.reset();
      return Done(a.status());
    }
    absl::Status status = upload_ == nullptr ? Begin() : absl::OkStatus();
    if (status.ok()) status = upload_->Append(request_.data());
    if (!status.ok()) return Done(status);
    request_.Clear();
    StartRead(&request_);
  }

  void OnDone() override { delete this; }

 private:
  absl::Status Begin() {
    RETURN_IF_ERROR(service_.Authorize(*ctx_));
    RETURN_IF_ERROR(service_.CheckDevice());
    if (request_.session().empty()) {
      return absl::InvalidArgumentError("the first upload message names no session");
    }
    ASSIGN_OR_RETURN(HandleId session, DecodeHandle(request_.session(), "session id"));
    ASSIGN_OR_RETURN(DType dtype, DecodeDType(request_.dtype()));
    ASSIGN_OR_RETURN(Shape shape, DecodeShape(request_.shape()));
    ASSIGN_OR_RETURN(upload_, service_.sessions().BeginUpload(
                                  service_.TenantOf(*ctx_), session, dtype, shape));
    return absl::OkStatus();
  }
  void Done(const absl::Status& status) {
    upload_.reset();  // frees the buffer of an unfinished upload
    Finish(ToGrpcStatus(service_.Observe("Upload", status)));
  }

  ResidentService& service_;
  grpc::CallbackServerContext* ctx_;
  v1::ArrayInfo* resp_;
  v1::UploadRequest request_;
  std::unique_ptr<resident::Upload> upload_;
};

// --- Download: server-streaming chunks ---------------------------------------

class DownloadReactor final : public grpc::ServerWriteReactor<v1::DownloadChunk> {
 public:
  DownloadReactor(ResidentService& service, grpc::CallbackServerContext* ctx,
                  const v1::DownloadRequest* req)
      : service_(service), ctx_(ctx) {
    absl::Status status = Begin(req);
    if (!status.ok()) {
      Finish(ToGrpcStatus(service_.Observe("Download", status)));
      return;
    }
    total_ = download_->description().nbytes;
    EncodeArray(download_->description(), chunks_[0].mutable_array());
    Pump();
  }

  void OnWriteDone(bool ok) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      writing_ = -1;
      if (!ok) {
        cancelled_ = true;
        if (filling_) return;  // the filler finishes the call
      }
    }
    if (!ok) {
      Finish(ToGrpcStatus(absl::CancelledError("download cancelled")));
      return;
    }
    Pump();
  }

  void OnDone() override { delete this; }

 private:
  absl::Status Begin(const v1::DownloadRequest* req) {
    RETURN_IF_ERROR(service_.Authorize(*ctx_));
    RETURN_IF_ERROR(service_.CheckDevice());
    ASSIGN_OR_RETURN(HandleId session, SessionOf(req->session()));
    ASSIGN_OR_RETURN(HandleId handle, DecodeHandle(req->handle(), "handle"));
    ASSIGN_OR_RETURN(download_, service_.sessions().BeginDownload(
                                    service_.TenantOf(*ctx_), session, handle));
    return absl::OkStatus();
  }
  // Two chunk buffers: while gRPC writes one, the next is read from the
  // device into the other. Whichever thread finds a chunk ready and no write
  // in flight starts the write; the last write finishes the call, after
  // which nothing here may touch the reactor.
  void Pump() {
    for (;;) {
      std::unique_lock<std::mutex> lock(mu_);
      if (cancelled_) {
        if (!filling_ && writing_ < 0 && !finish_started_) {
          finish_started_ = true;
          lock.unlock();
          Finish(ToGrpcStatus(absl::CancelledError("download cancelled")));
        }
        return;
      }
      if (ready_ >= 0 && writing_ < 0) {
        const int k = ready_;
        ready_ = -1;
        writing_ = k;
        if (ready_last_) {
          service_.metrics().RecordDownload(service_.TenantOf(*ctx_), total_);
          lock.unlock();
          // A last-message write (StartWriteLast) is held until Finish, so
          // write and finish in one step; no OnWriteDone follows.
          StartWriteAndFinish(&chunks_[k], grpc::WriteOptions(), grpc::Status::OK);
          return;
        }
        StartWrite(&chunks_[k]);
        continue;  // fill the other buffer while this one is written
      }
      if (filling_ || ready_ >= 0 || filled_all_) return;
      const int k = writing_ == 0 ? 1 : 0;
      filling_ = true;
      const int64_t offset = offset_;
      const int64_t n = std::min<int64_t>(service_.options().chunk_bytes, total_ - offset);
      const bool first = offset == 0;
      lock.unlock();
      if (!first) chunks_[k].clear_array();
      std::string* data = chunks_[k].mutable_data();
      data->resize(static_cast<size_t>(n));
      absl::Status status = download_->Read(offset, n, data->data());
      lock.lock();
      filling_ = false;
      if (!status.ok() && !cancelled_) {
        // Wait for no write in flight (OnWriteDone comes back to Pump).
        cancelled_ = true;
        error_ = service_.Observe("Download", status);
      }
      if (cancelled_) {
        if (writing_ < 0 && !finish_started_) {
          finish_started_ = true;
          const absl::Status error = error_.ok() ? absl::CancelledError("download cancelled") : error_;
          lock.unlock();
          Finish(ToGrpcStatus(error));
        }
        return;
      }
      offset_ = offset + n;
      ready_ = k;
      ready_last_ = offset_ >= total_;
      filled_all_ = ready_last_;
    }
  }

  ResidentService& service_;
  grpc::CallbackServerContext* ctx_;
  std::unique_ptr<resident::Download> download_;
  v1::DownloadChunk chunks_[2];
  std::mutex mu_;
  int64_t total_ = 0;
  int64_t offset_ = 0;     // next byte to read from the device
  int writing_ = -1;       // chunk being written, or -1
  int ready_ = -1;         // chunk filled and not yet written, or -1
  bool ready_last_ = false;
  bool filling_ = false;
  bool filled_all_ = false;
  bool cancelled_ = false;
  bool finish_started_ = false;
  absl::Status error_;
};

}  // namespace

grpc::ServerReadReactor<v1::UploadRequest>* ResidentService::Upload(
    grpc::CallbackServerContext* ctx, v1::ArrayInfo* resp) {
  return new UploadReactor(*this, ctx, resp);
}

grpc::ServerWriteReactor<v1::DownloadChunk>* ResidentService::Download(
    grpc::CallbackServerContext* ctx, const v1::DownloadRequest* req) {
  return new DownloadReactor(*this, ctx, req);
}

}  // namespace resident
