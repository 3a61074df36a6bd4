#include "server/rpc/service.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"
#include "server/program/op_registry.h"
#include "server/rpc/proto_convert.h"
#include "server/rpc/status_util.h"
#include "server/rpc/transfer_reactors.h"

#ifndef RESIDENT_VERSION
#define RESIDENT_VERSION "0.0.0"
#endif

namespace resident {
namespace {

constexpr uint32_t kProtocolVersion = 1;

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

// Run requests up to this size are decoded on the gRPC thread (small
// programs run there); larger ones are decoded by their worker.
constexpr int64_t kDecodeOnReceiveBytes = 64 << 10;
// Host memory a queued call holds beside its request bytes (the call, its
// context, the task), charged to the tenant's queued bytes.
constexpr int64_t kQueuedCallBytes = 4 << 10;

// A Run request, decoded.
struct DecodedRun {
  absl::StatusOr<HandleId> session;
  absl::StatusOr<std::shared_ptr<const Program>> program;
  absl::StatusOr<std::vector<OutputSpec>> outputs;
  std::vector<HandleId> releases;  // malformed ones are ignored, as unknown ones
};

DecodedRun DecodeRun(const v1::RunRequest& req, int max_loop_depth) {
  DecodedRun d{SessionOf(req.session()),
               DecodeProgram(req.program(), max_loop_depth),
               DecodeOutputs(req.outputs()),
               {}};
  for (const std::string& h : req.release()) {
    if (std::optional<HandleId> id = HandleId::FromBytes(h)) d.releases.push_back(*id);
  }
  return d;
}

// Elementwise, creation and loop instructions on arrays of at most
// `small_bytes` each (the device's inline_program_bytes), at most
// `small_work` element-ops in all (its inline_program_work: each executed
// instruction counted at the largest array's size, a loop's body once per
// trip): cheaper to run on the gRPC thread than to hand to a worker (when
// the tenant is idle). A fused loop or a folded chain is one kernel, so
// the seed loop on a GPU takes well under the bound's time.
class SmallProgramCheck {
 public:
  SmallProgramCheck(int64_t small_bytes, int64_t small_work,
                    std::function<int64_t(const HandleId&)> bytes_of)
      : small_bytes_(small_bytes), small_work_(small_work), bytes_of_(std::move(bytes_of)) {}

  bool Small(const Program& program) {
    int64_t executed = 0;
    if (!Walk(program, 1, executed)) return false;
    // The largest array an op reads or makes, in elements (8 bytes each at most).
    const int64_t elements = std::max<int64_t>(1, largest_bytes_ / 8);
    return executed <= kMaxExecuted && executed <= small_work_ / elements;
  }

 private:
  // Instructions a small program may execute: each costs a launch.
  static constexpr int64_t kMaxExecuted = int64_t{1} << 14;

  // Adds the instructions `program` executes `times` times to `executed`;
  // false as soon as one is not small.
  bool Walk(const Program& program, int64_t times, int64_t& executed) {
    for (const Instruction& ins : program.instructions) {
      // One that may run long would hold the RPC thread (op_registry.h).
      if (!OpDefOf(ins.op).size_bounded) return false;
      if (ins.op == OpKind::kLoop) {
        if (ins.body == nullptr || ins.trip_count < 0 ||
            ins.trip_count > kMaxExecuted / std::max<int64_t>(1, times)) {
          return false;
        }
        if (!Walk(*ins.body, times * ins.trip_count, executed)) return false;
        // Carrying a value from trip to trip costs like an instruction.
        executed += times * ins.trip_count * static_cast<int64_t>(ins.body->yields.size());
        if (executed > kMaxExecuted) return false;
      }
      absl::StatusOr<int64_t> n = CheckedNumElements(ins.shape);
      if (!n.ok() || *n > small_bytes_ / 8) return false;
      largest_bytes_ = std::max(largest_bytes_, *n * 8);
      for (const Operand& o : ins.operands) {
        if (!o.is_handle) continue;
        const int64_t bytes = bytes_of_(o.handle);
        if (bytes > small_bytes_) return false;
        largest_bytes_ = std::max(largest_bytes_, bytes);
      }
      executed += times;
      if (executed > kMaxExecuted) return false;
    }
    return true;
  }

  const int64_t small_bytes_, small_work_;
  const std::function<int64_t(const HandleId&)> bytes_of_;
  int64_t largest_bytes_ = 0;
};

// The prologue of a call that needs the device: authenticate (one user
// identity for the call) and check the device is serving; on failure the
// call is finished with that status and false returned.
template <typename Call>
bool StartDeviceCall(ResidentService& service, Call& call) {
  absl::Status started = call.Start(service.auth(), Role::kUser);
  if (started.ok()) started = service.CheckDevice();
  if (!started.ok()) call.Finish(service.Observe(started));
  return started.ok();
}

}  // namespace

absl::StatusOr<HandleId> SessionOf(const std::string& bytes) {
  if (bytes.empty()) {
    return absl::InvalidArgumentError("request names no session; call OpenSession first");
  }
  return DecodeHandle(bytes, "session id");
}

ResidentService::ResidentService(SessionManager& sessions, Scheduler& scheduler,
                                 const ServerOptions& options, std::function<void()> on_poisoned,
                                 const Authenticator& auth, Metrics& metrics)
    : sessions_(sessions),
      scheduler_(scheduler),
      options_(options),
      on_poisoned_(std::move(on_poisoned)),
      auth_(auth),
      metrics_(metrics) {
  // Every device of a server is of one kind; the smallest bound keeps
  // the rule safe anyway.
  small_program_bytes_ = sessions_.device().backend().inline_program_bytes();
  small_program_work_ = sessions_.device().backend().inline_program_work();
  for (int i = 0; i < sessions_.devices().size(); ++i) {
    const Backend& b = sessions_.devices().at(i).backend();
    small_program_bytes_ = std::min(small_program_bytes_, b.inline_program_bytes());
    small_program_work_ = std::min(small_program_work_, b.inline_program_work());
  }
}

absl::Status ResidentService::CheckDevice() {
  // A sticky CUDA error poisons the whole process (every context of it), so
  // one poisoned device takes the server down, naming the device.
  const Device* poisoned = sessions_.devices().FirstPoisoned();
  if (poisoned == nullptr) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("device ", poisoned->name(),
                                             " hit an unrecoverable error; the server is "
                                             "restarting"));
}

absl::Status ResidentService::Observe(const absl::Status& status) {
  if (sessions_.devices().FirstPoisoned() != nullptr) {
    if (on_poisoned_) on_poisoned_();
    return CheckDevice();
  }
  return status;
}

template <class Request, class Response>
grpc::ServerUnaryReactor* ResidentService::Serve(
    grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out,
    const std::function<absl::Status(UnaryCall<Request, Response>&)>& handle) {
  auto* call = new UnaryCall<Request, Response>(ctx, in, out);
  absl::Status status = call->Start(auth_, Role::kUser);
  if (status.ok()) status = CheckDevice();
  if (status.ok()) status = handle(*call);
  call->Finish(Observe(status));
  return call;
}

grpc::ServerUnaryReactor* ResidentService::Describe(grpc::CallbackServerContext* ctx,
                                                    const Bytes* in, Bytes* out) {
  using Call = UnaryCall<v1::DescribeRequest, v1::DescribeResponse>;
  return Serve<v1::DescribeRequest, v1::DescribeResponse>(ctx, in, out, [this](Call& c) {
    v1::DescribeResponse& resp = c.response();
    resp.set_server_version(RESIDENT_VERSION);
    resp.set_protocol_version(kProtocolVersion);
    for (Device* device : sessions_.devices().all()) {
      const MemoryInfo mem = device->backend().memory();
      v1::DeviceInfo* d = resp.add_devices();
      d->set_name(device->name());
      d->set_description(device->backend().description());
      d->set_total_bytes(mem.total);
      d->set_free_bytes(mem.free);
      d->set_limit_bytes(device->budget().limit());
      d->set_used_bytes(device->budget().used());
      d->set_cached_bytes(mem.cached);
      d->set_index(static_cast<uint32_t>(device->index()));
      d->set_backend(device->backend().name());
      d->set_kind(absl::StartsWith(device->backend().name(), "cuda") ? "cuda" : "cpu");
      d->set_peer_copies(device->peer_copies());
      d->set_peer_copy_bytes(device->peer_copy_bytes());
    }
    resp.set_max_inline_bytes(options_.limits.max_inline_bytes);
    resp.set_max_message_bytes(options_.max_message_bytes);
    resp.set_chunk_bytes(options_.chunk_bytes);
    const TableStats st = sessions_.Stats();
    const TableLimits& lim = sessions_.options().table_limits;
    v1::ServerUsage* u = resp.mutable_usage();
    u->set_sessions(st.sessions);
    u->set_handles(st.handles);
    u->set_named_arrays(st.named_arrays);
    u->set_table_host_bytes(st.host_bytes);
    u->set_max_sessions(lim.max_sessions);
    u->set_max_sessions_per_tenant(lim.max_sessions_per_tenant);
    u->set_max_handles(lim.max_handles);
    u->set_max_handles_per_session(lim.max_handles_per_session);
    u->set_max_queued_per_tenant(options_.max_queued_per_tenant);
    u->set_max_names_per_tenant(lim.max_names_per_tenant);
    u->set_max_transfers_per_tenant(lim.max_transfers_per_tenant);
    u->set_max_handles_per_tenant(lim.max_handles_per_tenant);
    u->set_queued_bytes(scheduler_.stats().queued_bytes);
    u->set_max_queued_bytes_per_tenant(options_.max_queued_bytes_per_tenant);
    u->set_max_queued_bytes(options_.max_queued_bytes);
    u->set_max_regions_per_tenant(lim.max_regions_per_tenant);
    u->set_max_region_bytes_per_tenant(lim.max_region_bytes_per_tenant);
    const RegionTable::Usage regions = sessions_.RegionTotals();
    u->set_regions(regions.regions);
    u->set_region_bytes(regions.bytes);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ResidentService::OpenSession(grpc::CallbackServerContext* ctx,
                                                       const Bytes* in, Bytes* out) {
  using Call = UnaryCall<v1::OpenSessionRequest, v1::OpenSessionResponse>;
  return Serve<v1::OpenSessionRequest, v1::OpenSessionResponse>(
      ctx, in, out, [this](Call& c) -> absl::Status {
        Device* placed = nullptr;
        ASSIGN_OR_RETURN(HandleId id,
                         sessions_.Open(c.identity().tenant, c.request().device(), &placed));
        c.response().set_session(id.bytes());
        c.response().set_device(placed->name());
        c.response().set_device_index(static_cast<uint32_t>(placed->index()));
        c.response().set_idle_timeout_ms(
            absl::ToInt64Milliseconds(sessions_.options().idle_timeout));
        {
          std::lock_guard<std::mutex> lock(local_data_mu_);
          c.response().set_local_data_socket(local_data_socket_);
        }
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* ResidentService::CloseSession(grpc::CallbackServerContext* ctx,
                                                        const Bytes* in, Bytes* out) {
  using Call = UnaryCall<v1::CloseSessionRequest, v1::CloseSessionResponse>;
  return Serve<v1::CloseSessionRequest, v1::CloseSessionResponse>(
      ctx, in, out, [this](Call& c) -> absl::Status {
        ASSIGN_OR_RETURN(HandleId s, SessionOf(c.request().session()));
        return sessions_.Close(c.identity().tenant, s);
      });
}

grpc::ServerUnaryReactor* ResidentService::RenewSession(grpc::CallbackServerContext* ctx,
                                                        const Bytes* in, Bytes* out) {
  using Call = UnaryCall<v1::RenewSessionRequest, v1::RenewSessionResponse>;
  return Serve<v1::RenewSessionRequest, v1::RenewSessionResponse>(
      ctx, in, out, [this](Call& c) -> absl::Status {
        ASSIGN_OR_RETURN(HandleId s, SessionOf(c.request().session()));
        return sessions_.Renew(c.identity().tenant, s);
      });
}

grpc::ServerUnaryReactor* ResidentService::Run(grpc::CallbackServerContext* ctx, const Bytes* in,
                                               Bytes* out) {
  using Call = UnaryCall<v1::RunRequest, v1::RunResponse>;
  const absl::Time received = absl::Now();
  auto* call = new Call(ctx, in, out);
  // Only a short request is parsed and decoded on the gRPC thread (it may be
  // small enough to run here); a longer one waits its turn as raw bytes and
  // is decoded by the worker that runs it, so a queue of large programs
  // holds no decoded form (a program of 10^6 instructions decodes to about
  // 35 times its request bytes).
  const bool decode_now = call->request_bytes() <= kDecodeOnReceiveBytes;
  absl::Status started = call->Start(auth_, Role::kUser, decode_now);
  if (started.ok()) started = CheckDevice();
  if (!started.ok()) {
    call->Finish(Observe(started));
    return call;
  }
  // A copy: once the task has run, the call (and its identity) may be gone.
  const std::string tenant = call->identity().tenant;
  const int max_loop_depth = options_.limits.max_loop_depth;
  // Decodes the request, parsing the raw bytes first unless Start did
  // (a worker parses them again: the early decode dropped its parse); the
  // parsed request is freed after.
  auto decode = [call, max_loop_depth](bool parsed_already) -> std::shared_ptr<DecodedRun> {
    const absl::Status parsed = parsed_already ? absl::OkStatus() : call->Parse();
    auto d = std::make_shared<DecodedRun>(parsed.ok() ? DecodeRun(call->request(), max_loop_depth)
                                                      : DecodedRun{parsed, parsed, parsed, {}});
    call->DropRequest();
    return d;
  };
  std::shared_ptr<DecodedRun> early = decode_now ? decode(/*parsed_already=*/true) : nullptr;
  // Runs the program (unless `expired`), then the piggybacked releases,
  // whether the program failed to decode, to plan or to run.
  auto run = [this, call, decode, received](std::shared_ptr<DecodedRun> decoded,
                                            bool expired) -> absl::Status {
    const absl::Time begun = absl::Now();
    const std::string& tenant = call->identity().tenant;
    if (decoded == nullptr) decoded = decode(/*parsed_already=*/false);
    RETURN_IF_ERROR(decoded->session.status());
    const HandleId session = *decoded->session;
    RunPhases phases;
    auto execute = [&]() -> absl::StatusOr<std::vector<ProgramResult>> {
      if (expired) {
        return absl::DeadlineExceededError(
            "deadline passed while the program waited its turn; it did not run");
      }
      RETURN_IF_ERROR(decoded->program.status());
      RETURN_IF_ERROR(decoded->outputs.status());
      ExecOptions exec;
      exec.check_continue = CallChecker(call->context());
      exec.phases = &phases;
      FusionCounts fused;
      exec.fused = &fused;
      LoopCounts loops;
      exec.loops = &loops;
      int64_t ops = 0;
      PeerCopyStats copies;
      absl::StatusOr<std::vector<ProgramResult>> r = sessions_.Run(
          tenant, session, *decoded->program, std::move(*decoded->outputs), exec, &ops, &copies);
      if (r.ok()) {
        metrics_.RecordProgram(tenant, ops - loops.ops_not_run);
        metrics_.RecordFusion(fused);
        metrics_.RecordLoops(loops);
        call->response().set_peer_copies(copies.arrays);
        call->response().set_peer_copy_bytes(copies.bytes);
      }
      return r;
    };
    absl::StatusOr<std::vector<ProgramResult>> ran = execute();
    // The decoded program goes before the results are encoded.
    decoded->program = absl::CancelledError("done");
    if (!decoded->releases.empty()) {
      sessions_.Release(tenant, session, decoded->releases).IgnoreError();
    }
    ASSIGN_OR_RETURN(std::vector<ProgramResult> results, std::move(ran));
    const absl::Time ended = absl::Now();
    for (ProgramResult& r : results) {
      v1::RunResult* o = call->response().add_results();
      EncodeArray(r.array, o->mutable_array());
      if (r.data) o->set_data(std::move(*r.data));
    }
    const double program = phases.plan + phases.launch + phases.sync + phases.results;
    metrics_.RecordRunPhases(absl::ToDoubleSeconds(begun - received),
                             std::max(0.0, absl::ToDoubleSeconds(ended - begun) - program), phases,
                             absl::ToDoubleSeconds(absl::Now() - ended));
    return absl::OkStatus();
  };
  const bool small =
      early != nullptr && early->session.ok() && early->program.ok() &&
      SmallProgramCheck(small_program_bytes_, small_program_work_, [&](const HandleId& h) {
        return sessions_.ArrayBytes(tenant, h).value_or(0);
      }).Small(**early->program);
  if (small && scheduler_.RunInlineIfIdle(tenant, [this, call, run, early](bool expired) {
        call->Finish(Observe(run(early, expired)));
      })) {
    return call;
  }
  // Queued per tenant and served round-robin (scheduler.h) as raw bytes; a
  // program whose deadline passes while it waits never runs.
  std::vector<HandleId> releases;
  std::optional<HandleId> session;
  if (early != nullptr) {
    releases = early->releases;
    if (early->session.ok()) session = *early->session;
  }
  early.reset();
  Scheduler::Task task = [this, call, run](bool expired) {
    call->Finish(Observe(run(nullptr, expired)));
  };
  absl::Status queued = scheduler_.Submit(tenant, ctx->deadline(), std::move(task),
                                          call->request_bytes() + kQueuedCallBytes);
  if (!queued.ok()) {
    // The piggybacked releases still happen, as for a program that failed.
    if (!decode_now && call->ParseWithout(v1::RunRequest::kProgramFieldNumber).ok()) {
      // The header only: decoding the program would take the memory the
      // refusal protects.
      for (const std::string& h : call->request().release()) {
        if (std::optional<HandleId> id = HandleId::FromBytes(h)) releases.push_back(*id);
      }
      if (absl::StatusOr<HandleId> s = SessionOf(call->request().session()); s.ok()) session = *s;
      call->DropRequest();
    }
    if (session && !releases.empty()) sessions_.Release(tenant, *session, releases).IgnoreError();
    call->Finish(queued);
  }
  return call;
}

grpc::ServerUnaryReactor* ResidentService::Release(grpc::CallbackServerContext* ctx,
                                                   const Bytes* in, Bytes* out) {
  using Call = UnaryCall<v1::ReleaseRequest, v1::ReleaseResponse>;
  return Serve<v1::ReleaseRequest, v1::ReleaseResponse>(
      ctx, in, out, [this](Call& c) -> absl::Status {
        const v1::ReleaseRequest& req = c.request();
        ASSIGN_OR_RETURN(HandleId session, SessionOf(req.session()));
        std::vector<HandleId> handles;
        for (const std::string& h : req.handles()) {
          ASSIGN_OR_RETURN(HandleId id, DecodeHandle(h, "handle"));
          handles.push_back(id);
        }
        std::vector<std::string> names(req.names().begin(), req.names().end());
        return sessions_.Release(c.identity().tenant, session, handles, names);
      });
}

grpc::ServerUnaryReactor* ResidentService::Keep(grpc::CallbackServerContext* ctx, const Bytes* in,
                                                Bytes* out) {
  using Call = UnaryCall<v1::KeepRequest, v1::ArrayInfo>;
  auto* call = new Call(ctx, in, out);
  if (!StartDeviceCall(*this, *call)) return call;
  // With a data dir this writes and fsyncs the array: off gRPC's threads.
  // Once acknowledged a keep is durable, so it runs even past the deadline:
  // the client may retry and find ALREADY_EXISTS.
  const std::string tenant = call->identity().tenant;  // the call may go first
  absl::Status queued = scheduler_.Submit(tenant, ctx->deadline(), [this, call](bool) {
    auto keep = [&]() -> absl::Status {
      const v1::KeepRequest& req = call->request();
      ASSIGN_OR_RETURN(HandleId session, SessionOf(req.session()));
      ASSIGN_OR_RETURN(HandleId handle, DecodeHandle(req.handle(), "handle"));
      ASSIGN_OR_RETURN(ArrayDescription a,
                       sessions_.Keep(call->identity().tenant, session, handle, req.name()));
      EncodeArray(a, &call->response());
      return absl::OkStatus();
    };
    call->Finish(Observe(keep()));
  });
  if (!queued.ok()) call->Finish(queued);
  return call;
}

grpc::ServerUnaryReactor* ResidentService::Attach(grpc::CallbackServerContext* ctx, const Bytes* in,
                                                  Bytes* out) {
  using Call = UnaryCall<v1::AttachRequest, v1::ArrayInfo>;
  return Serve<v1::AttachRequest, v1::ArrayInfo>(ctx, in, out, [this](Call& c) -> absl::Status {
    ASSIGN_OR_RETURN(HandleId session, SessionOf(c.request().session()));
    ASSIGN_OR_RETURN(ArrayDescription a,
                     sessions_.Attach(c.identity().tenant, session, c.request().name()));
    EncodeArray(a, &c.response());
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ResidentService::Copy(grpc::CallbackServerContext* ctx, const Bytes* in,
                                                Bytes* out) {
  using Call = UnaryCall<v1::CopyRequest, v1::ArrayInfo>;
  auto* call = new Call(ctx, in, out);
  if (!StartDeviceCall(*this, *call)) return call;
  // Device work of any size: off gRPC's threads, queued fairly as programs are.
  const std::string tenant = call->identity().tenant;  // the call may go first
  absl::Status queued = scheduler_.Submit(tenant, ctx->deadline(), [this, call](bool expired) {
    auto copy = [&]() -> absl::Status {
      if (expired) {
        return absl::DeadlineExceededError("deadline passed while the copy waited its turn");
      }
      const v1::CopyRequest& req = call->request();
      ASSIGN_OR_RETURN(HandleId session, SessionOf(req.session()));
      ASSIGN_OR_RETURN(HandleId handle, DecodeHandle(req.handle(), "handle"));
      ASSIGN_OR_RETURN(ArrayDescription a,
                       sessions_.CopyTo(call->identity().tenant, session, handle, req.device()));
      EncodeArray(a, &call->response());
      return absl::OkStatus();
    };
    call->Finish(Observe(copy()));
  });
  if (!queued.ok()) call->Finish(queued);
  return call;
}

// Shared-memory transfers: device work of any size, so off gRPC's threads
// and queued fairly as programs are, like Copy.
template <class Request>
grpc::ServerUnaryReactor* ResidentService::ServeRegion(
    grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out,
    std::function<absl::StatusOr<ArrayDescription>(const std::string&, const Request&)> move) {
  using Call = UnaryCall<Request, v1::ArrayInfo>;
  auto* call = new Call(ctx, in, out);
  if (!StartDeviceCall(*this, *call)) return call;
  const std::string tenant = call->identity().tenant;  // the call may go first
  absl::Status queued =
      scheduler_.Submit(tenant, ctx->deadline(), [this, call, move](bool expired) {
        auto run = [&]() -> absl::Status {
          if (expired) {
            return absl::DeadlineExceededError(
                "deadline passed while the transfer waited its turn");
          }
          ASSIGN_OR_RETURN(ArrayDescription a, move(call->identity().tenant, call->request()));
          EncodeArray(a, &call->response());
          return absl::OkStatus();
        };
        call->Finish(Observe(run()));
      });
  if (!queued.ok()) call->Finish(queued);
  return call;
}

grpc::ServerUnaryReactor* ResidentService::RegionUpload(grpc::CallbackServerContext* ctx,
                                                        const Bytes* in, Bytes* out) {
  return ServeRegion<v1::RegionUploadRequest>(
      ctx, in, out,
      [this](const std::string& tenant,
             const v1::RegionUploadRequest& req) -> absl::StatusOr<ArrayDescription> {
        ASSIGN_OR_RETURN(HandleId session, SessionOf(req.session()));
        ASSIGN_OR_RETURN(HandleId region, DecodeHandle(req.region(), "region id"));
        ASSIGN_OR_RETURN(DType dtype, DecodeDType(req.dtype()));
        ASSIGN_OR_RETURN(Shape shape, DecodeShape(req.shape()));
        ASSIGN_OR_RETURN(
            ArrayDescription a,
            sessions_.UploadFromRegion(tenant, session, region, req.offset(), dtype, shape));
        metrics_.RecordUpload(tenant, a.nbytes);
        return a;
      });
}

grpc::ServerUnaryReactor* ResidentService::RegionDownload(grpc::CallbackServerContext* ctx,
                                                          const Bytes* in, Bytes* out) {
  return ServeRegion<v1::RegionDownloadRequest>(
      ctx, in, out,
      [this](const std::string& tenant,
             const v1::RegionDownloadRequest& req) -> absl::StatusOr<ArrayDescription> {
        ASSIGN_OR_RETURN(HandleId session, SessionOf(req.session()));
        ASSIGN_OR_RETURN(HandleId handle, DecodeHandle(req.handle(), "handle"));
        ASSIGN_OR_RETURN(HandleId region, DecodeHandle(req.region(), "region id"));
        ASSIGN_OR_RETURN(ArrayDescription a,
                         sessions_.DownloadToRegion(tenant, session, handle, region, req.offset()));
        metrics_.RecordDownload(tenant, a.nbytes);
        return a;
      });
}

grpc::ServerUnaryReactor* ResidentService::List(grpc::CallbackServerContext* ctx, const Bytes* in,
                                                Bytes* out) {
  using Call = UnaryCall<v1::ListRequest, v1::ListResponse>;
  return Serve<v1::ListRequest, v1::ListResponse>(ctx, in, out, [this](Call& c) -> absl::Status {
    ASSIGN_OR_RETURN(HandleId session, SessionOf(c.request().session()));
    ASSIGN_OR_RETURN(std::vector<ArrayDescription> arrays,
                     sessions_.List(c.identity().tenant, session));
    for (const ArrayDescription& a : arrays) EncodeArray(a, c.response().add_arrays());
    return absl::OkStatus();
  });
}

grpc::ServerReadReactor<grpc::ByteBuffer>* ResidentService::Upload(grpc::CallbackServerContext* ctx,
                                                                   Bytes* out) {
  return NewUploadReactor(*this, ctx, out);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* ResidentService::Download(
    grpc::CallbackServerContext* ctx, const Bytes* in) {
  return NewDownloadReactor(*this, ctx, in);
}

}  // namespace resident
