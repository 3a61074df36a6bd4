#include "client/client.h"

#include <grpcpp/support/client_interceptor.h>

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/channel.h"
#include "client/client_core.h"
#include "client/program_builder.h"
#include "client/transfer.h"
#include "core/handle_id.h"

namespace resident::client {

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

namespace {

void Materialize(Node& n, const v1::ArrayInfo& info) {
  n.kind = Node::Kind::kMaterialized;
  n.handle = info.handle();
  n.dtype = DecodeDType(info.dtype()).value_or(DType::kFloat64);
  n.shape.assign(info.shape().begin(), info.shape().end());
  n.nbytes = info.nbytes();
  n.ins.Clear();
  std::vector<std::shared_ptr<Node>> drop = std::move(n.inputs);
  n.inputs.clear();
}

// An Array of a handle this session now owns: released with the Array.
Array OwnedArray(const std::shared_ptr<ClientCore>& core, const v1::ArrayInfo& info) {
  auto n = std::make_shared<Node>();
  n->core = core;
  Materialize(*n, info);
  return MakeArray(std::move(n));
}

std::string Hex(const std::string& raw) {
  std::optional<HandleId> h = HandleId::FromBytes(raw);
  return h ? h->ToHex() : "";
}

// Adds `authorization: Bearer <token>` to every call of a channel, so no
// call site can forget it. (gRPC refuses call credentials on an insecure
// channel, hence an interceptor rather than MetadataCredentialsPlugin.)
class BearerInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit BearerInterceptor(const std::string& header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* m) override {
    if (m->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      m->GetSendInitialMetadata()->emplace("authorization", header_);
    }
    m->Proceed();
  }

 private:
  const std::string& header_;  // owned by the factory, which the channel keeps
};

class BearerFactory final : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerFactory(const std::string& token) : header_("Bearer " + token) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new BearerInterceptor(header_);
  }

 private:
  const std::string header_;
};

}  // namespace

// --- Node --------------------------------------------------------------------

Node::~Node() {
  if (kind == Kind::kMaterialized && core != nullptr && !handle.empty() && !borrowed) {
    core->QueueRelease(handle);
  }
  // Unlink chains iteratively: a recorded loop of a million ops must not
  // recurse a million destructors deep.
  std::vector<std::shared_ptr<Node>> stack = std::move(inputs);
  while (!stack.empty()) {
    std::shared_ptr<Node> n = std::move(stack.back());
    stack.pop_back();
    if (n.use_count() == 1) {
      for (auto& in : n->inputs) stack.push_back(std::move(in));
      n->inputs.clear();
    }
  }
}

// --- ClientCore ----------------------------------------------------------------

ClientCore::~ClientCore() { Close(); }

void ClientCore::QueueRelease(std::string handle) {
  size_t queued;
  {
    std::lock_guard<std::mutex> lock(release_mu);
    if (closing) return;
    pending_releases.push_back(std::move(handle));
    queued = pending_releases.size();
  }
  if (queued >= 256) SendReleases().IgnoreError();
}

std::vector<std::string> ClientCore::TakeReleases() {
  std::lock_guard<std::mutex> lock(release_mu);
  return std::exchange(pending_releases, {});
}

absl::Status ClientCore::SendReleases() {
  std::vector<std::string> handles = TakeReleases();
  if (handles.empty()) return absl::OkStatus();
  v1::RunRequest req;  // an empty program that releases: no extra RPC kind
  req.set_session(session);
  for (auto& h : handles) req.add_release(std::move(h));
  v1::RunResponse resp;
  grpc::ClientContext ctx;
  return FromGrpc(CallRun(&ctx, req, &resp));
}

grpc::Status ClientCore::CallRun(grpc::ClientContext* ctx, const v1::RunRequest& req,
                                 v1::RunResponse* resp) {
  if (!options.busy_poll) return stub->Run(ctx, req, resp);
  // With a zero deadline AsyncNext polls the socket on this thread and
  // returns at once; looping on it is the spin.
  grpc::CompletionQueue cq;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::RunResponse>> call =
      stub->AsyncRun(ctx, req, &cq);
  int done_tag = 0;
  call->Finish(resp, &status, &done_tag);
  void* tag = nullptr;
  bool ok = false;
  while (cq.AsyncNext(&tag, &ok, gpr_time_0(GPR_CLOCK_MONOTONIC)) !=
         grpc::CompletionQueue::GOT_EVENT) {
  }
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

void ClientCore::StartRenewer(int64_t idle_timeout_ms) {
  const auto period = std::chrono::milliseconds(std::max<int64_t>(idle_timeout_ms / 3, 10));
  renewer = std::thread([this, period] {
    std::unique_lock<std::mutex> lock(renew_mu);
    while (!renew_cv.wait_for(lock, period, [this] { return closing; })) {
      lock.unlock();
      v1::RenewSessionRequest req;
      req.set_session(session);
      v1::RenewSessionResponse resp;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + period);
      stub->RenewSession(&ctx, req, &resp);
      SendReleases().IgnoreError();
      lock.lock();
    }
  });
}

void ClientCore::Close() {
  {
    std::lock_guard<std::mutex> lock(renew_mu);
    if (closing) return;
    closing = true;
  }
  renew_cv.notify_all();
  if (renewer.joinable()) renewer.join();
  {
    std::lock_guard<std::mutex> lock(release_mu);
    pending_releases.clear();  // the whole session goes
  }
  if (stub != nullptr && !session.empty() && options.close_session_on_exit) {
    v1::CloseSessionRequest req;
    req.set_session(session);
    v1::CloseSessionResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    stub->CloseSession(&ctx, req, &resp);
  }
}

absl::Status ClientCore::Flush(const std::vector<std::shared_ptr<Node>>& targets) {
  std::lock_guard<std::mutex> lock(mu);
  ScopeBuilder builder(nullptr, 0);
  v1::RunRequest req;
  if (absl::Status s = builder.Build(targets, req.mutable_program()); !s.ok()) return s;
  if (builder.emitted().empty()) return absl::OkStatus();
  // Keep the targets and whatever an Array still points to; the rest are
  // intermediates the server frees as soon as they die.
  std::vector<std::shared_ptr<Node>> kept;
  for (const auto& n : builder.emitted()) {
    if (n->kind == Node::Kind::kOp && n->num_outputs != 1) continue;  // loop
    const bool target =
        std::any_of(targets.begin(), targets.end(), [&](const auto& t) { return t == n; });
    if (target || n->user_refs.load() > 0) {
      v1::Output* o = req.add_outputs();
      o->set_value(builder.ValueOf(n.get()));
      o->set_keep(true);
      kept.push_back(n);
    }
  }
  req.set_session(session);
  for (auto& h : TakeReleases()) req.add_release(std::move(h));
  v1::RunResponse resp;
  grpc::ClientContext ctx;
  absl::Status status = FromGrpc(CallRun(&ctx, req, &resp));
  if (!status.ok()) return status;
  if (resp.results_size() != static_cast<int>(kept.size())) {
    return absl::InternalError("server returned the wrong number of results");
  }
  for (size_t i = 0; i < kept.size(); ++i) Materialize(*kept[i], resp.results(i).array());
  return absl::OkStatus();
}

std::shared_ptr<Node> ClientCore::NewOp(const char* op, std::vector<std::shared_ptr<Node>> inputs) {
  auto n = std::make_shared<Node>();
  n->core = shared_from_this();
  n->kind = Node::Kind::kOp;
  n->ins.set_op(op);
  n->inputs = std::move(inputs);
  return n;
}

Array ClientCore::Finish(std::shared_ptr<Node> node) {
  if (!options.lazy) Flush({node}).IgnoreError();  // the error resurfaces on use
  return MakeArray(std::move(node));
}

// --- Array ---------------------------------------------------------------------

Array MakeArray(std::shared_ptr<Node> node) { return Array(std::move(node)); }
const std::shared_ptr<Node>& NodeOf(const Array& a) { return a.node_; }

Array::Array() = default;
Array::Array(std::shared_ptr<Node> node) : node_(std::move(node)) {
  if (node_) ++node_->user_refs;
}
Array::~Array() {
  if (node_) --node_->user_refs;
}
Array::Array(const Array& other) : node_(other.node_) {
  if (node_) ++node_->user_refs;
}
Array& Array::operator=(const Array& other) {
  if (this != &other) {
    if (other.node_) ++other.node_->user_refs;
    if (node_) --node_->user_refs;
    node_ = other.node_;
  }
  return *this;
}
Array::Array(Array&& other) noexcept : node_(std::move(other.node_)) {}
Array& Array::operator=(Array&& other) noexcept {
  if (this != &other) {
    if (node_) --node_->user_refs;
    node_ = std::move(other.node_);
  }
  return *this;
}

absl::Status Array::WrongType(DType got, DType want) {
  return absl::InvalidArgumentError(
      absl::StrCat("array is ", DTypeName(got), ", not ", DTypeName(want)));
}

absl::Status Array::Evaluate() const {
  if (!node_) return absl::FailedPreconditionError("empty Array");
  if (node_->kind == Node::Kind::kMaterialized) {
    if (node_->handle.empty()) return absl::FailedPreconditionError("array was released");
    return absl::OkStatus();
  }
  if (node_->kind == Node::Kind::kParam) {
    return absl::FailedPreconditionError("a loop body's parameter has no value outside the loop");
  }
  return node_->core->Flush({node_});
}

absl::StatusOr<DType> Array::dtype() const {
  if (absl::Status s = Evaluate(); !s.ok()) return s;
  return node_->dtype;
}
absl::StatusOr<Shape> Array::shape() const {
  if (absl::Status s = Evaluate(); !s.ok()) return s;
  return node_->shape;
}
absl::StatusOr<int64_t> Array::nbytes() const {
  if (absl::Status s = Evaluate(); !s.ok()) return s;
  return node_->nbytes;
}
absl::StatusOr<std::string> Array::handle_hex() const {
  if (absl::Status s = Evaluate(); !s.ok()) return s;
  return Hex(node_->handle);
}

absl::StatusOr<HostData> Array::Download() const {
  if (absl::Status s = Evaluate(); !s.ok()) return s;
  return DownloadBytes(*node_->core, node_->handle, node_->nbytes);
}

absl::StatusOr<HostView> Array::DownloadView() const {
  if (absl::Status s = Evaluate(); !s.ok()) return s;
  return DownloadViewBytes(*node_->core, node_->handle, node_->nbytes);
}

absl::Status Array::Release() {
  if (!node_ || node_->kind != Node::Kind::kMaterialized || node_->handle.empty()) {
    return absl::FailedPreconditionError("array is not on the server");
  }
  ClientCore& core = *node_->core;
  v1::ReleaseRequest req;
  req.set_session(core.session);
  req.add_handles(node_->handle);
  v1::ReleaseResponse resp;
  grpc::ClientContext ctx;
  absl::Status s = FromGrpc(core.stub->Release(&ctx, req, &resp));
  if (s.ok()) node_->handle.clear();
  return s;
}

// --- Client --------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(const std::string& target,
                                                        const ClientOptions& options) {
  auto core = std::make_shared<ClientCore>();
  core->options = options;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // the server bounds what it sends
  args.SetMaxSendMessageSize(-1);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ChannelCredentials(options);
  if (!credentials.ok()) return credentials.status();
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  if (!options.token.empty()) {
    interceptors.push_back(std::make_unique<BearerFactory>(options.token));
  }
  auto channel = grpc::experimental::CreateCustomChannelWithInterceptors(target, *credentials, args,
                                                                         std::move(interceptors));
  core->channel = channel;
  core->stub = v1::Resident::NewStub(channel);
  core->admin_stub = v1::Admin::NewStub(channel);
  std::unique_ptr<Client> client(new Client(core));
  absl::StatusOr<ServerInfo> info = client->Info();
  if (!info.ok()) {
    return absl::Status(info.status().code(),
                        absl::StrCat("cannot reach ", target, ": ", info.status().message()));
  }
  core->info = *info;
  v1::OpenSessionRequest req;
  req.set_device(options.device);
  v1::OpenSessionResponse resp;
  grpc::ClientContext ctx;
  if (absl::Status s = FromGrpc(core->stub->OpenSession(&ctx, req, &resp)); !s.ok()) return s;
  core->session = resp.session();
  core->device = resp.device();
  ConnectLocalData(*core, resp.local_data_socket());
  if (options.keep_alive) core->StartRenewer(resp.idle_timeout_ms());
  return client;
}

Client::~Client() { core_->Close(); }

std::string Client::transport() const { return core_->transport; }
std::string Client::transport_detail() const { return core_->transport_detail; }

bool Client::lazy() const { return core_->options.lazy; }
std::string Client::session_hex() const { return Hex(core_->session); }

absl::StatusOr<ServerInfo> Client::Info() {
  v1::DescribeRequest req;
  v1::DescribeResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (absl::Status s = FromGrpc(core_->stub->Describe(&ctx, req, &resp)); !s.ok()) return s;
  ServerInfo info;
  info.server_version = resp.server_version();
  info.protocol_version = resp.protocol_version();
  if (resp.devices_size() > 0) {
    const v1::DeviceInfo& d = resp.devices(0);
    info.device_name = d.name();
    info.device_description = d.description();
    info.total_bytes = d.total_bytes();
    info.free_bytes = d.free_bytes();
    info.limit_bytes = d.limit_bytes();
    info.used_bytes = d.used_bytes();
  }
  for (const v1::DeviceInfo& d : resp.devices()) {
    info.devices.push_back(DeviceListing{
        d.index(), d.name(), d.kind(), d.backend(), d.description(), d.total_bytes(),
        d.free_bytes(), d.limit_bytes(), d.used_bytes(), d.peer_copies(), d.peer_copy_bytes()});
  }
  info.max_inline_bytes = resp.max_inline_bytes();
  info.max_message_bytes = resp.max_message_bytes();
  info.chunk_bytes = resp.chunk_bytes();
  return info;
}

absl::StatusOr<std::vector<ArrayListing>> Client::List() {
  v1::ListRequest req;
  req.set_session(core_->session);
  v1::ListResponse resp;
  grpc::ClientContext ctx;
  if (absl::Status s = FromGrpc(core_->stub->List(&ctx, req, &resp)); !s.ok()) return s;
  std::vector<ArrayListing> out;
  for (const v1::ArrayInfo& a : resp.arrays()) {
    ArrayListing l;
    l.handle_hex = a.handle().empty() ? "" : Hex(a.handle());
    l.name = a.name();
    l.dtype = DecodeDType(a.dtype()).value_or(DType::kFloat64);
    l.shape.assign(a.shape().begin(), a.shape().end());
    l.nbytes = a.nbytes();
    out.push_back(std::move(l));
  }
  return out;
}

absl::StatusOr<Array> Client::Upload(DType dtype, const Shape& shape, std::string_view bytes) {
  absl::StatusOr<v1::ArrayInfo> info = UploadBytes(*core_, dtype, shape, bytes);
  if (!info.ok()) return info.status();
  return OwnedArray(core_, *info);
}

absl::StatusOr<Array> Client::AttachHandle(const std::string& handle_hex) {
  std::optional<HandleId> h = HandleId::FromHex(handle_hex);
  if (!h)
    return absl::InvalidArgumentError(
        absl::StrCat("'", handle_hex, "' is not a 32-digit hex handle"));
  absl::StatusOr<std::vector<ArrayListing>> all = List();
  if (!all.ok()) return all.status();
  for (const ArrayListing& l : *all) {
    if (l.handle_hex != h->ToHex()) continue;
    auto n = std::make_shared<Node>();
    n->core = core_;
    n->kind = Node::Kind::kMaterialized;
    n->borrowed = true;  // the array outlives this client; never release it
    n->handle = h->bytes();
    n->dtype = l.dtype;
    n->shape = l.shape;
    n->nbytes = l.nbytes;
    return MakeArray(std::move(n));
  }
  return absl::NotFoundError("array handle not found");
}

absl::Status Client::Keep(const Array& array, const std::string& name) {
  absl::StatusOr<std::string> hex = array.handle_hex();
  if (!hex.ok()) return hex.status();
  v1::KeepRequest req;
  req.set_session(core_->session);
  req.set_handle(HandleId::FromHex(*hex)->bytes());
  req.set_name(name);
  v1::ArrayInfo resp;
  grpc::ClientContext ctx;
  return FromGrpc(core_->stub->Keep(&ctx, req, &resp));
}

absl::StatusOr<Array> Client::Attach(const std::string& name) {
  v1::AttachRequest req;
  req.set_session(core_->session);
  req.set_name(name);
  v1::ArrayInfo info;
  grpc::ClientContext ctx;
  if (absl::Status s = FromGrpc(core_->stub->Attach(&ctx, req, &info)); !s.ok()) return s;
  return OwnedArray(core_, info);
}

absl::StatusOr<Array> Client::CopyTo(const Array& array, const std::string& device) {
  absl::StatusOr<std::string> hex = array.handle_hex();
  if (!hex.ok()) return hex.status();
  v1::CopyRequest req;
  req.set_session(core_->session);
  req.set_handle(HandleId::FromHex(*hex)->bytes());
  req.set_device(device);
  v1::ArrayInfo info;
  grpc::ClientContext ctx;
  if (absl::Status s = FromGrpc(core_->stub->Copy(&ctx, req, &info)); !s.ok()) return s;
  return OwnedArray(core_, info);
}

const std::string& Client::device() const { return core_->device; }

absl::Status Client::Delete(const std::string& name) {
  v1::ReleaseRequest req;
  req.set_session(core_->session);
  req.add_names(name);
  v1::ReleaseResponse resp;
  grpc::ClientContext ctx;
  return FromGrpc(core_->stub->Release(&ctx, req, &resp));
}

absl::Status Client::ReleaseHandle(const std::string& handle_hex) {
  std::optional<HandleId> h = HandleId::FromHex(handle_hex);
  if (!h)
    return absl::InvalidArgumentError(
        absl::StrCat("'", handle_hex, "' is not a 32-digit hex handle"));
  v1::ReleaseRequest req;
  req.set_session(core_->session);
  req.add_handles(h->bytes());
  v1::ReleaseResponse resp;
  grpc::ClientContext ctx;
  return FromGrpc(core_->stub->Release(&ctx, req, &resp));
}

absl::StatusOr<std::vector<SessionListing>> Client::ListSessions() {
  v1::ListSessionsRequest req;
  v1::ListSessionsResponse resp;
  grpc::ClientContext ctx;
  if (absl::Status s = FromGrpc(core_->admin_stub->ListSessions(&ctx, req, &resp)); !s.ok()) {
    return s;
  }
  std::vector<SessionListing> out;
  for (const v1::SessionSummary& s : resp.sessions()) {
    out.push_back({Hex(s.session()), s.tenant(), s.age_ms(), s.idle_ms(), s.arrays(), s.bytes()});
  }
  return out;
}

absl::StatusOr<std::string> Client::AdminCloseSession(const std::string& session_hex) {
  v1::AdminCloseSessionRequest req;
  req.set_session_hex(session_hex);
  v1::AdminCloseSessionResponse resp;
  grpc::ClientContext ctx;
  if (absl::Status s = FromGrpc(core_->admin_stub->CloseSession(&ctx, req, &resp)); !s.ok()) {
    return s;
  }
  return Hex(resp.session());
}

absl::Status Client::EvaluateAll(absl::Span<const Array> arrays) {
  std::vector<std::shared_ptr<Node>> targets;
  for (const Array& a : arrays) {
    if (a.node_ && (a.node_->kind == Node::Kind::kOp || a.node_->kind == Node::Kind::kLoopOutput)) {
      targets.push_back(a.node_);
    }
  }
  if (targets.empty()) return absl::OkStatus();
  return core_->Flush(targets);
}

}  // namespace resident::client
