#include "server/session/session_manager.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/log.h"
#include "core/status_macros.h"
#include "server/session/array_store.h"

namespace resident {

absl::Status HandleNotFound() {
  return absl::NotFoundError("array handle not found");
}

absl::Status NameNotFound() {
  return absl::NotFoundError("array name not found");
}

absl::Status ValidateArrayName(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 128;
  for (char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-');
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "array names are 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' and '-'");
}

namespace {
absl::Status SessionNotFound() {
  return absl::NotFoundError(
      "session not found (closed, expired after its idle timeout, or never "
      "opened)");
}

ArrayDescription Describe(const HandleId& h, const DeviceArray& a) {
  return ArrayDescription{h, a.dtype, a.shape, a.nbytes(), ""};
}

// Heap bytes a string owns beyond its own object (none within the SSO).
int64_t StringHeap(const std::string& s) {
  return s.capacity() > std::string().capacity() ? static_cast<int64_t>(s.capacity()) + 1 : 0;
}

absl::Status LimitReached(const char* what, int64_t limit, const char* flag) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "the server's limit of ", limit, " ", what, " is reached (", flag,
      "); close sessions or release handles first"));
}
}  // namespace

// --- Upload -----------------------------------------------------------------

Upload::~Upload() = default;

absl::Status Upload::Append(std::string_view bytes) {
  const int64_t total = array_.nbytes();
  if (static_cast<int64_t>(bytes.size()) > total - received_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "upload carries more than the ", total, " bytes its shape ",
        ShapeString(array_.shape), " and dtype ", DTypeName(array_.dtype),
        " declare"));
  }
  if (bytes.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(stream_->CopyToDevice(bytes.data(), *array_.buffer, received_,
                                        static_cast<int64_t>(bytes.size())));
  // The chunk's memory is the caller's only until we return.
  RETURN_IF_ERROR(stream_->Synchronize());
  received_ += static_cast<int64_t>(bytes.size());
  return absl::OkStatus();
}

absl::StatusOr<ArrayDescription> Upload::Finish() {
  const int64_t total = array_.nbytes();
  if (received_ != total) {
    return absl::InvalidArgumentError(absl::StrCat(
        "upload ended after ", received_, " of the ", total,
        " bytes its shape ", ShapeString(array_.shape), " and dtype ",
        DTypeName(array_.dtype), " declare"));
  }
  std::vector<DeviceArray> arrays{std::move(array_)};
  ASSIGN_OR_RETURN(std::vector<HandleId> ids,
                   manager_->Register(tenant_, session_, arrays));
  hold_.reset();  // the array is now charged to the tenant itself
  return Describe(ids[0], arrays[0]);
}

// --- Download ---------------------------------------------------------------

absl::Status Download::Read(int64_t offset, int64_t size, void* dst) {
  if (offset < 0 || size < 0 || offset > array_.nbytes() - size) {
    return absl::OutOfRangeError("read past the end of the array");
  }
  if (size == 0) return absl::OkStatus();
  return stream_->CopyToHost(*array_.buffer, offset, dst, size);
}

// --- QuotaHold ----------------------------------------------------------------

QuotaHold::~QuotaHold() { manager_->ReturnQuota(tenant_, bytes_, arrays_); }

// --- SessionManager ---------------------------------------------------------

SessionManager::SessionManager(Device& device, SessionOptions options)
    : device_(device), options_(std::move(options)) {
  reaper_ = std::thread([this] { ReaperLoop(); });
}

SessionManager::~SessionManager() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  reaper_cv_.notify_all();
  reaper_.join();
  std::lock_guard<std::mutex> lock(mu_);
  arrays_.clear();
  sessions_.clear();
  tenants_.clear();
}

void SessionManager::AddRef(const std::string& tenant, const DeviceArray& a) {
  Tenant& t = tenants_[tenant];
  ++t.usage.arrays;
  auto [it, inserted] = t.buffers.try_emplace(a.buffer.get(), 0, a.nbytes());
  if (inserted) t.usage.bytes += a.nbytes();
  ++it->second.first;
}

void SessionManager::DropRef(const std::string& tenant, const DeviceArray& a) {
  auto t = tenants_.find(tenant);
  if (t == tenants_.end()) return;
  --t->second.usage.arrays;
  auto it = t->second.buffers.find(a.buffer.get());
  if (it != t->second.buffers.end() && --it->second.first == 0) {
    t->second.usage.bytes -= it->second.second;
    t->second.buffers.erase(it);
  }
}

absl::StatusOr<std::unique_ptr<QuotaHold>> SessionManager::HoldQuota(
    const std::string& tenant, int64_t bytes, int64_t arrays) {
  RETURN_IF_ERROR(CheckQuota(tenant, bytes, arrays));
  Tenant& t = tenants_[tenant];
  t.usage.reserved_bytes += bytes;
  t.reserved_arrays += arrays;
  return std::unique_ptr<QuotaHold>(new QuotaHold(this, tenant, bytes, arrays));
}

absl::Status SessionManager::CheckQuota(const std::string& tenant, int64_t bytes,
                                        int64_t arrays) {
  const Quota& q = options_.quotas.For(tenant);
  Tenant& t = tenants_[tenant];
  const TenantUsage& u = t.usage;
  if (q.max_bytes != Quota::kUnlimited &&
      (bytes > q.max_bytes || u.bytes + u.reserved_bytes > q.max_bytes - bytes)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "tenant '", tenant, "' quota of ", q.max_bytes, " device bytes would be exceeded: it holds ",
        u.bytes, " bytes", u.reserved_bytes > 0 ? absl::StrCat(" (and ", u.reserved_bytes,
                                                               " are reserved by calls in flight)")
                                                : "",
        " and this needs up to ", bytes, " more; release or delete arrays first"));
  }
  if (q.max_arrays != Quota::kUnlimited &&
      (arrays > q.max_arrays || u.arrays + t.reserved_arrays > q.max_arrays - arrays)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "tenant '", tenant, "' quota of ", q.max_arrays, " arrays would be exceeded: it holds ",
        u.arrays, " handles and names", t.reserved_arrays > 0 ? absl::StrCat(" (and ", t.reserved_arrays,
                                                                          " are reserved by calls in flight)")
                                                             : "",
        " and this needs ", arrays, " more; release or delete arrays first"));
  }
  return absl::OkStatus();
}

void SessionManager::ReturnQuota(const std::string& tenant, int64_t bytes,
                                 int64_t arrays) {
  std::lock_guard<std::mutex> lock(mu_);
  auto t = tenants_.find(tenant);
  if (t == tenants_.end()) return;
  t->second.usage.reserved_bytes -= bytes;
  t->second.reserved_arrays -= arrays;
}

std::optional<int64_t> SessionManager::ArrayBytes(const std::string& tenant,
                                                  const HandleId& handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = arrays_.find(handle);
  if (it == arrays_.end() || it->second.tenant != tenant) return std::nullopt;
  return it->second.array.nbytes();
}

TenantUsage SessionManager::Usage(const std::string& tenant) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto t = tenants_.find(tenant);
  if (t == tenants_.end()) return TenantUsage();
  TenantUsage u = t->second.usage;
  u.names = static_cast<int64_t>(t->second.names.size());
  return u;
}

std::vector<std::pair<std::string, TenantUsage>> SessionManager::AllUsage() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, TenantUsage>> out;
  for (const auto& [name, t] : tenants_) {
    TenantUsage u = t.usage;
    u.names = static_cast<int64_t>(t.names.size());
    out.emplace_back(name, u);
  }
  return out;
}

void SessionManager::ReaperLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    reaper_cv_.wait_for(lock, absl::ToChronoMilliseconds(options_.reap_interval));
    if (stopping_) break;
    lock.unlock();
    ReapIdle(absl::Now());
    lock.lock();
  }
}

absl::StatusOr<HandleId> SessionManager::Open(const std::string& tenant) {
  const TableLimits& lim = options_.table_limits;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<int64_t>(sessions_.size()) >= lim.max_sessions) {
      return LimitReached("open sessions", lim.max_sessions, "--max-sessions");
    }
    auto n = sessions_per_tenant_.find(tenant);
    if (n != sessions_per_tenant_.end() && n->second >= lim.max_sessions_per_tenant) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "tenant '", tenant, "' has ", n->second, " open sessions, the server's limit per "
          "tenant (--max-sessions-per-tenant); close some first"));
    }
  }
  auto session = std::make_shared<Session>();
  session->tenant = tenant;
  session->stream = device_.backend().NewStream();
  session->last_used = absl::Now();
  session->opened = session->last_used;
  const HandleId id = HandleId::Random();
  std::lock_guard<std::mutex> lock(mu_);
  // Checked again: others may have opened sessions since.
  if (static_cast<int64_t>(sessions_.size()) >= lim.max_sessions) {
    return LimitReached("open sessions", lim.max_sessions, "--max-sessions");
  }
  int64_t& count = sessions_per_tenant_[tenant];
  if (count >= lim.max_sessions_per_tenant) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "tenant '", tenant, "' has ", count, " open sessions, the server's limit per "
        "tenant (--max-sessions-per-tenant); close some first"));
  }
  ++count;
  sessions_.emplace(id, std::move(session));
  return id;
}

absl::Status SessionManager::CheckHandleLimits(const Session& session, int64_t more) const {
  const TableLimits& lim = options_.table_limits;
  if (static_cast<int64_t>(session.handles.size()) > lim.max_handles_per_session - more) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the session holds ", session.handles.size(), " handles and this needs ", more,
        " more, over the server's limit of ", lim.max_handles_per_session,
        " per session (--max-handles-per-session); release handles first"));
  }
  if (static_cast<int64_t>(arrays_.size()) > lim.max_handles - more) {
    return LimitReached("handles in all sessions", lim.max_handles, "--max-handles");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<void>> SessionManager::TakeTransferSlot(
    const std::string& tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t& n = transfers_per_tenant_[tenant];
  if (n >= options_.table_limits.max_transfers_per_tenant) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "tenant '", tenant, "' has ", n, " uploads and downloads in flight, the server's "
        "limit (--max-transfers-per-tenant); finish some first"));
  }
  ++n;
  return std::shared_ptr<void>(nullptr, [this, tenant](void*) {
    std::lock_guard<std::mutex> lock(mu_);
    if (--transfers_per_tenant_[tenant] <= 0) transfers_per_tenant_.erase(tenant);
  });
}

void SessionManager::InsertEntry(const HandleId& id, Entry entry) {
  entry_heap_bytes_ += StringHeap(entry.tenant) + StringHeap(entry.name) +
                       static_cast<int64_t>(entry.array.shape.capacity() * sizeof(int64_t));
  arrays_.emplace(id, std::move(entry));
}

void SessionManager::EraseEntry(absl::flat_hash_map<HandleId, Entry>::iterator it,
                                std::vector<DeviceArray>& doomed) {
  Entry& e = it->second;
  entry_heap_bytes_ -= StringHeap(e.tenant) + StringHeap(e.name) +
                       static_cast<int64_t>(e.array.shape.capacity() * sizeof(int64_t));
  DropRef(e.tenant, e.array);
  doomed.push_back(std::move(e.array));
  arrays_.erase(it);
}

TableStats SessionManager::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  TableStats st;
  st.sessions = static_cast<int64_t>(sessions_.size());
  st.handles = static_cast<int64_t>(arrays_.size());
  int64_t bytes = static_cast<int64_t>(
      arrays_.capacity() * (sizeof(decltype(arrays_)::value_type) + 1) +
      sessions_.capacity() * (sizeof(decltype(sessions_)::value_type) + 1));
  bytes += entry_heap_bytes_;
  for (const auto& [id, sess] : sessions_) {
    bytes += static_cast<int64_t>(sizeof(Session) +
                                  sess->handles.capacity() * (sizeof(HandleId) + 1)) +
             StringHeap(sess->tenant);
  }
  for (const auto& [name, t] : tenants_) {
    st.named_arrays += static_cast<int64_t>(t.names.size());
    bytes += static_cast<int64_t>(
        sizeof(Tenant) + t.buffers.capacity() * (sizeof(decltype(t.buffers)::value_type) + 1) +
        t.names.capacity() * (sizeof(decltype(t.names)::value_type) + 1));
  }
  st.host_bytes = bytes;
  return st;
}

absl::Status SessionManager::Close(const std::string& tenant,
                                   const HandleId& session) {
  std::vector<DeviceArray> doomed;  // freed outside the lock
  std::shared_ptr<Session> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(session);
    if (it == sessions_.end() || it->second->tenant != tenant) {
      return SessionNotFound();
    }
    s = std::move(it->second);
    sessions_.erase(it);
    if (--sessions_per_tenant_[tenant] <= 0) sessions_per_tenant_.erase(tenant);
    // A program still running in it stops at its next op; it holds the
    // session (and so its stream) and its own references to its inputs, so
    // nothing it uses is freed under it.
    s->closed = true;
    for (const HandleId& h : s->handles) {
      auto a = arrays_.find(h);
      if (a != arrays_.end()) EraseEntry(a, doomed);
    }
  }
  doomed.clear();  // outside the lock: freeing may wait for the device
  return absl::OkStatus();
}

absl::Status SessionManager::Renew(const std::string& tenant,
                                   const HandleId& session) {
  return Touch(tenant, session).status();
}

absl::StatusOr<std::shared_ptr<SessionManager::Session>> SessionManager::Touch(
    const std::string& tenant, const HandleId& session) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(session);
  if (it == sessions_.end() || it->second->tenant != tenant) {
    return SessionNotFound();
  }
  it->second->last_used = absl::Now();
  return it->second;
}

absl::StatusOr<DeviceArray> SessionManager::Resolve(const std::string& tenant,
                                                    const HandleId& handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = arrays_.find(handle);
  if (it == arrays_.end() || it->second.tenant != tenant) return HandleNotFound();
  return it->second.array;
}

absl::StatusOr<std::vector<HandleId>> SessionManager::Register(
    const std::string& tenant, const HandleId& session,
    std::vector<DeviceArray> arrays, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(session);
  if (it == sessions_.end() || it->second->tenant != tenant) {
    return SessionNotFound();
  }
  it->second->last_used = absl::Now();  // a long program renews on finishing
  RETURN_IF_ERROR(CheckHandleLimits(*it->second, static_cast<int64_t>(arrays.size())));
  std::vector<HandleId> ids;
  for (DeviceArray& a : arrays) {
    HandleId id = HandleId::Random();
    it->second->handles.insert(id);
    AddRef(tenant, a);
    InsertEntry(id, Entry{tenant, session, std::move(a), name});
    ids.push_back(id);
  }
  return ids;
}

absl::StatusOr<std::vector<ProgramResult>> SessionManager::Run(
    const std::string& tenant, const HandleId& session,
    std::shared_ptr<const Program> program, std::vector<OutputSpec> outputs,
    const ExecOptions& options, int64_t* executed_ops) {
  ASSIGN_OR_RETURN(std::shared_ptr<Session> s, Touch(tenant, session));
  // Busy while it runs: the reaper leaves the session alone.
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++s->running;
  }
  struct Idle {
    SessionManager* m;
    Session* s;
    ~Idle() {
      std::lock_guard<std::mutex> lock(m->mu_);
      --s->running;
      s->last_used = absl::Now();
    }
  } idle{this, s.get()};
  ASSIGN_OR_RETURN(Plan plan,
                   PlanProgram(std::move(program), std::move(outputs),
                               [&](const HandleId& h) { return Resolve(tenant, h); },
                               options_.limits));
  int64_t kept_count = 0;
  for (const OutputSpec& o : plan.outputs) kept_count += o.keep ? 1 : 0;
  // A bound past the device's limit can never be reserved: refuse it before
  // it is added to the tenant's reservations (it may saturate at INT64_MAX).
  if (plan.peak_bytes > device_.budget().limit()) {
    RETURN_IF_ERROR(device_.budget().Reserve(plan.peak_bytes).status());
  }
  std::unique_ptr<QuotaHold> hold;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Fail before running what could not be registered afterwards.
    if (kept_count > 0) RETURN_IF_ERROR(CheckHandleLimits(*s, kept_count));
    ASSIGN_OR_RETURN(hold, HoldQuota(tenant, plan.peak_bytes, kept_count));
  }
  std::lock_guard<std::mutex> run_lock(s->run_mu);
  ExecOptions exec = options;
  exec.check_continue = [s, outer = options.check_continue]() -> absl::Status {
    if (s->closed) {
      return absl::CancelledError(
          "the session was closed while the program ran (by an administrator); "
          "the program stopped");
    }
    return outer ? outer() : absl::OkStatus();
  };
  ASSIGN_OR_RETURN(MemoryBudget::Reservation reservation,
                   device_.budget().Reserve(plan.peak_bytes));
  ASSIGN_OR_RETURN(std::vector<DeviceArray> arrays,
                   Execute(plan, device_, *s->stream, &reservation, exec));
  // Closed during its last op: the same answer as at an op boundary.
  RETURN_IF_ERROR(exec.check_continue());
  if (executed_ops != nullptr) *executed_ops = plan.executed_ops;
  std::vector<ProgramResult> results(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    results[i].array = Describe(HandleId(), arrays[i]);
    if (plan.outputs[i].return_data) {
      std::string data(static_cast<size_t>(arrays[i].nbytes()), '\0');
      if (!data.empty()) {
        RETURN_IF_ERROR(s->stream->CopyToHost(*arrays[i].buffer, 0, data.data(),
                                              arrays[i].nbytes()));
      }
      results[i].data = std::move(data);
    }
  }
  std::vector<DeviceArray> kept;
  std::vector<size_t> kept_index;
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (plan.outputs[i].keep) {
      kept.push_back(arrays[i]);
      kept_index.push_back(i);
    }
  }
  if (!kept.empty()) {
    ASSIGN_OR_RETURN(std::vector<HandleId> ids,
                     Register(tenant, session, std::move(kept)));
    for (size_t j = 0; j < ids.size(); ++j) results[kept_index[j]].array.handle = ids[j];
  }
  return results;
}

absl::StatusOr<std::unique_ptr<Upload>> SessionManager::BeginUpload(
    const std::string& tenant, const HandleId& session, DType dtype,
    const Shape& shape) {
  ASSIGN_OR_RETURN(std::shared_ptr<Session> s, Touch(tenant, session));
  {
    std::lock_guard<std::mutex> lock(mu_);
    RETURN_IF_ERROR(CheckHandleLimits(*s, 1));  // fail before the data comes
  }
  ASSIGN_OR_RETURN(int64_t n, CheckedNumElements(shape));
  ASSIGN_OR_RETURN(int64_t bytes, CheckedNumBytes(n, ItemSize(dtype)));
  std::unique_ptr<Upload> up(new Upload());
  ASSIGN_OR_RETURN(up->slot_, TakeTransferSlot(tenant));
  up->manager_ = this;
  up->tenant_ = tenant;
  up->session_ = session;
  up->stream_ = s->stream;
  up->array_.dtype = dtype;
  up->array_.shape = shape;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ASSIGN_OR_RETURN(up->hold_, HoldQuota(tenant, bytes, 1));
  }
  ASSIGN_OR_RETURN(up->array_.buffer, device_.Allocate(bytes, *s->stream));
  return up;
}

absl::StatusOr<std::unique_ptr<Download>> SessionManager::BeginDownload(
    const std::string& tenant, const HandleId& session, const HandleId& handle) {
  ASSIGN_OR_RETURN(std::shared_ptr<Session> s, Touch(tenant, session));
  ASSIGN_OR_RETURN(DeviceArray a, Resolve(tenant, handle));
  std::unique_ptr<Download> d(new Download());
  ASSIGN_OR_RETURN(d->slot_, TakeTransferSlot(tenant));
  d->device_ = &device_;
  d->stream_ = s->stream;
  d->description_ = Describe(handle, a);
  d->array_ = std::move(a);
  return d;
}

absl::Status SessionManager::Release(const std::string& tenant,
                                     const HandleId& session,
                                     const std::vector<HandleId>& handles,
                                     const std::vector<std::string>& names) {
  RETURN_IF_ERROR(Touch(tenant, session).status());
  for (const std::string& n : names) RETURN_IF_ERROR(ValidateArrayName(n));
  std::vector<DeviceArray> doomed;  // freed after the lock is dropped
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const HandleId& h : handles) {
      auto it = arrays_.find(h);
      if (it == arrays_.end() || it->second.tenant != tenant) return HandleNotFound();
    }
    auto t = tenants_.find(tenant);
    for (const std::string& n : names) {
      if (t == tenants_.end()) return NameNotFound();
      auto it = t->second.names.find(n);
      if (it == t->second.names.end() || it->second.pending) return NameNotFound();
    }
    if (!names.empty()) {
      // Marked so that no one attaches or deletes them while the manifest
      // is rewritten; if that fails, nothing is released.
      for (const std::string& n : names) t->second.names[n].pending = true;
    }
  }
  if (!names.empty()) {
    absl::Status stored = store_ ? store_->Remove(tenant, names) : absl::OkStatus();
    std::lock_guard<std::mutex> lock(mu_);
    Tenant& t = tenants_[tenant];
    for (const std::string& n : names) {
      auto it = t.names.find(n);
      if (it == t.names.end()) continue;  // listed twice
      if (!stored.ok()) {
        it->second.pending = false;
        continue;
      }
      DropRef(tenant, it->second.array);
      doomed.push_back(std::move(it->second.array));
      t.names.erase(it);
    }
    RETURN_IF_ERROR(stored);
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const HandleId& h : handles) {
    auto it = arrays_.find(h);
    if (it == arrays_.end()) continue;  // listed twice, or released meanwhile
    auto s = sessions_.find(it->second.session);
    if (s != sessions_.end()) s->second->handles.erase(h);
    EraseEntry(it, doomed);
  }
  return absl::OkStatus();
}

absl::StatusOr<ArrayDescription> SessionManager::Keep(const std::string& tenant,
                                                      const HandleId& session,
                                                      const HandleId& handle,
                                                      const std::string& name) {
  RETURN_IF_ERROR(ValidateArrayName(name));
  ASSIGN_OR_RETURN(std::shared_ptr<Session> s, Touch(tenant, session));
  DeviceArray array;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = arrays_.find(handle);
    if (it == arrays_.end() || it->second.tenant != tenant) return HandleNotFound();
    array = it->second.array;
    Tenant& t = tenants_[tenant];
    if (t.names.contains(name)) {
      return absl::AlreadyExistsError(absl::StrCat(
          "this tenant already has an array named '", name,
          "'; delete it first (resident rm ", name, ") or pick another name"));
    }
    RETURN_IF_ERROR(CheckQuota(tenant, 0, 1));
    if (static_cast<int64_t>(t.names.size()) >= options_.table_limits.max_names_per_tenant) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "tenant '", tenant, "' has ", t.names.size(), " named arrays, the server's limit "
          "(--max-names-per-tenant); delete some first"));
    }
    // The name counts from now on.
    t.names[name] = Named{array, /*pending=*/true};
    AddRef(tenant, array);
    it->second.name = name;
  }
  auto undo = [&](const absl::Status& why) {
    std::lock_guard<std::mutex> lock(mu_);
    Tenant& t = tenants_[tenant];
    t.names.erase(name);
    DropRef(tenant, array);
    return why;
  };
  if (store_ != nullptr) {
    std::string host(static_cast<size_t>(array.nbytes()), '\0');
    if (!host.empty()) {
      absl::Status copied =
          s->stream->CopyToHost(*array.buffer, 0, host.data(), array.nbytes());
      if (!copied.ok()) return undo(copied);
    }
    absl::Status put = store_->Put(tenant, name, array.dtype, array.shape, host);
    if (!put.ok()) return undo(Annotate(put, absl::StrCat("keeping '", name, "'")));
  }
  std::lock_guard<std::mutex> lock(mu_);
  tenants_[tenant].names[name].pending = false;
  ArrayDescription d = Describe(handle, array);
  d.name = name;
  return d;
}

absl::StatusOr<ArrayDescription> SessionManager::Attach(const std::string& tenant,
                                                        const HandleId& session,
                                                        const std::string& name) {
  RETURN_IF_ERROR(ValidateArrayName(name));
  RETURN_IF_ERROR(Touch(tenant, session).status());
  DeviceArray array;
  std::unique_ptr<QuotaHold> hold;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto t = tenants_.find(tenant);
    if (t == tenants_.end()) return NameNotFound();
    auto it = t->second.names.find(name);
    if (it == t->second.names.end() || it->second.pending) return NameNotFound();
    array = it->second.array;
    ASSIGN_OR_RETURN(hold, HoldQuota(tenant, 0, 1));
  }
  ASSIGN_OR_RETURN(std::vector<HandleId> ids, Register(tenant, session, {array}, name));
  ArrayDescription d = Describe(ids[0], array);
  d.name = name;
  return d;
}

absl::Status SessionManager::EnableDataDir(const std::string& dir) {
  ASSIGN_OR_RETURN(std::unique_ptr<ArrayStore> store, ArrayStore::Open(dir));
  std::vector<ArrayStore::Stored> stored = store->Load();
  std::shared_ptr<Stream> stream = device_.backend().NewStream();
  for (ArrayStore::Stored& a : stored) {
    DeviceArray array;
    array.dtype = a.array.dtype;
    array.shape = a.array.shape;
    auto load = [&]() -> absl::Status {
      ASSIGN_OR_RETURN(array.buffer,
                       device_.Allocate(static_cast<int64_t>(a.array.bytes.size()), *stream));
      if (!a.array.bytes.empty()) {
        RETURN_IF_ERROR(stream->CopyToDevice(a.array.bytes.data(), *array.buffer, 0,
                                             static_cast<int64_t>(a.array.bytes.size())));
      }
      return stream->Synchronize();
    };
    if (absl::Status s = load(); !s.ok()) {
      RESIDENT_LOG(kError, "data dir: cannot load named array '", a.name, "' of tenant '",
                   a.tenant, "' onto the device: ", s.message(), "; it stays on disk");
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    tenants_[a.tenant].names[a.name] = Named{array, false};
    AddRef(a.tenant, array);
    a.array.bytes = std::string();  // the host copy goes as soon as it is on the device
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [tenant, t] : tenants_) {
    const Quota& q = options_.quotas.For(tenant);
    if (t.usage.bytes > q.max_bytes || t.usage.arrays > q.max_arrays) {
      RESIDENT_LOG(kWarning, "tenant '", tenant, "' holds ", t.usage.bytes, " bytes in ",
                   t.usage.arrays, " named arrays, over its quota; new arrays are refused "
                   "until some are deleted");
    }
  }
  store_ = std::move(store);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ArrayDescription>> SessionManager::List(
    const std::string& tenant, const HandleId& session) {
  RETURN_IF_ERROR(Touch(tenant, session).status());
  std::vector<ArrayDescription> out;
  std::lock_guard<std::mutex> lock(mu_);
  auto t = tenants_.find(tenant);
  absl::flat_hash_set<std::string> shown;
  for (const auto& [id, e] : arrays_) {
    if (e.tenant != tenant) continue;
    ArrayDescription d = Describe(id, e.array);
    if (!e.name.empty() && t != tenants_.end()) {
      auto n = t->second.names.find(e.name);
      if (n != t->second.names.end() && !n->second.pending &&
          n->second.array.buffer == e.array.buffer) {
        d.name = e.name;
        shown.insert(e.name);
      }
    }
    out.push_back(std::move(d));
  }
  if (t != tenants_.end()) {
    for (const auto& [name, n] : t->second.names) {
      if (n.pending || shown.contains(name)) continue;
      ArrayDescription d = Describe(HandleId(), n.array);
      d.name = name;
      out.push_back(std::move(d));
    }
  }
  return out;
}

int SessionManager::ReapIdle(absl::Time now) {
  std::vector<std::pair<std::string, HandleId>> idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, s] : sessions_) {
      if (s->running == 0 && now - s->last_used > options_.idle_timeout) {
        idle.emplace_back(s->tenant, id);
      }
    }
  }
  int closed = 0;
  for (const auto& [tenant, id] : idle) {
    if (Close(tenant, id).ok()) {
      ++closed;
      RESIDENT_LOG(kInfo, "session ", id.ToHex().substr(0, 8),
                   " of tenant '", tenant, "' expired after its idle timeout");
    }
  }
  return closed;
}

std::vector<SessionSnapshot> SessionManager::Snapshot() const {
  std::vector<SessionSnapshot> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, s] : sessions_) {
    SessionSnapshot snap{id, s->tenant, s->opened, s->last_used, 0, 0};
    for (const HandleId& h : s->handles) {
      auto a = arrays_.find(h);
      if (a == arrays_.end()) continue;
      ++snap.arrays;
      snap.bytes += a->second.array.nbytes();
    }
    out.push_back(std::move(snap));
  }
  std::sort(out.begin(), out.end(), [](const SessionSnapshot& a, const SessionSnapshot& b) {
    return a.opened < b.opened;
  });
  return out;
}

absl::Status SessionManager::AdminClose(const HandleId& session) {
  std::string tenant;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(session);
    if (it == sessions_.end()) return SessionNotFound();
    tenant = it->second->tenant;
  }
  return Close(tenant, session);
}

int SessionManager::session_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(sessions_.size());
}

}  // namespace resident
