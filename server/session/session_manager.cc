#include "server/session/session_manager.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/base/log.h"
#include "server/base/status_macros.h"

namespace resident {

absl::Status HandleNotFound() {
  return absl::NotFoundError("array handle not found");
}

namespace {
absl::Status SessionNotFound() {
  return absl::NotFoundError(
      "session not found (closed, expired after its idle timeout, or never "
      "opened)");
}

ArrayDescription Describe(const HandleId& h, const DeviceArray& a) {
  return ArrayDescription{h, a.dtype, a.shape, a.nbytes()};
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
  Backend& be = manager_->device().backend();
  RETURN_IF_ERROR(be.CopyToDevice(*stream_, bytes.data(), *array_.buffer,
                                  received_, static_cast<int64_t>(bytes.size())));
  // The chunk's memory is the caller's only until we return.
  RETURN_IF_ERROR(be.Synchronize(*stream_));
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
  return Describe(ids[0], arrays[0]);
}

// --- Download ---------------------------------------------------------------

absl::Status Download::Read(int64_t offset, int64_t size, void* dst) {
  if (offset < 0 || size < 0 || offset > array_.nbytes() - size) {
    return absl::OutOfRangeError("read past the end of the array");
  }
  if (size == 0) return absl::OkStatus();
  return device_->backend().CopyToHost(*stream_, *array_.buffer, offset, dst, size);
}

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
  auto session = std::make_shared<Session>();
  session->tenant = tenant;
  session->stream = device_.backend().NewStream();
  session->last_used = absl::Now();
  session->opened = session->last_used;
  const HandleId id = HandleId::Random();
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.emplace(id, std::move(session));
  return id;
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
    for (const HandleId& h : s->handles) {
      auto a = arrays_.find(h);
      if (a != arrays_.end()) {
        doomed.push_back(std::move(a->second.array));
        arrays_.erase(a);
      }
    }
  }
  // Wait for any program still running in the session before dropping its
  // stream (the session's run_mu is held by it).
  std::lock_guard<std::mutex> run_lock(s->run_mu);
  doomed.clear();
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
    std::vector<DeviceArray> arrays) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(session);
  if (it == sessions_.end() || it->second->tenant != tenant) {
    return SessionNotFound();
  }
  std::vector<HandleId> ids;
  for (DeviceArray& a : arrays) {
    HandleId id = HandleId::Random();
    it->second->handles.insert(id);
    arrays_.emplace(id, Entry{tenant, session, std::move(a)});
    ids.push_back(id);
  }
  return ids;
}

absl::StatusOr<std::vector<ProgramResult>> SessionManager::Run(
    const std::string& tenant, const HandleId& session,
    std::shared_ptr<const Program> program, std::vector<OutputSpec> outputs,
    const ExecOptions& options) {
  ASSIGN_OR_RETURN(std::shared_ptr<Session> s, Touch(tenant, session));
  ASSIGN_OR_RETURN(Plan plan,
                   PlanProgram(std::move(program), std::move(outputs),
                               [&](const HandleId& h) { return Resolve(tenant, h); },
                               options_.limits));
  std::lock_guard<std::mutex> run_lock(s->run_mu);
  ASSIGN_OR_RETURN(MemoryBudget::Reservation reservation,
                   device_.budget().Reserve(plan.peak_bytes));
  ASSIGN_OR_RETURN(std::vector<DeviceArray> arrays,
                   Execute(plan, device_, *s->stream, &reservation, options));
  std::vector<ProgramResult> results(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    results[i].array = Describe(HandleId(), arrays[i]);
    if (plan.outputs[i].return_data) {
      std::string data(static_cast<size_t>(arrays[i].nbytes()), '\0');
      if (!data.empty()) {
        RETURN_IF_ERROR(device_.backend().CopyToHost(
            *s->stream, *arrays[i].buffer, 0, data.data(), arrays[i].nbytes()));
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
  ASSIGN_OR_RETURN(int64_t n, CheckedNumElements(shape));
  ASSIGN_OR_RETURN(int64_t bytes, CheckedNumBytes(n, ItemSize(dtype)));
  std::unique_ptr<Upload> up(new Upload());
  up->manager_ = this;
  up->tenant_ = tenant;
  up->session_ = session;
  up->stream_ = s->stream;
  up->array_.dtype = dtype;
  up->array_.shape = shape;
  ASSIGN_OR_RETURN(up->array_.buffer, device_.Allocate(bytes, *s->stream));
  return up;
}

absl::StatusOr<std::unique_ptr<Download>> SessionManager::BeginDownload(
    const std::string& tenant, const HandleId& session, const HandleId& handle) {
  ASSIGN_OR_RETURN(std::shared_ptr<Session> s, Touch(tenant, session));
  ASSIGN_OR_RETURN(DeviceArray a, Resolve(tenant, handle));
  std::unique_ptr<Download> d(new Download());
  d->device_ = &device_;
  d->stream_ = s->stream;
  d->description_ = Describe(handle, a);
  d->array_ = std::move(a);
  return d;
}

absl::Status SessionManager::Release(const std::string& tenant,
                                     const HandleId& session,
                                     const std::vector<HandleId>& handles) {
  RETURN_IF_ERROR(Touch(tenant, session).status());
  std::vector<DeviceArray> doomed;
  std::lock_guard<std::mutex> lock(mu_);
  for (const HandleId& h : handles) {
    auto it = arrays_.find(h);
    if (it == arrays_.end() || it->second.tenant != tenant) return HandleNotFound();
  }
  for (const HandleId& h : handles) {
    auto it = arrays_.find(h);
    if (it == arrays_.end()) continue;  // listed twice
    auto s = sessions_.find(it->second.session);
    if (s != sessions_.end()) s->second->handles.erase(h);
    doomed.push_back(std::move(it->second.array));
    arrays_.erase(it);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ArrayDescription>> SessionManager::List(
    const std::string& tenant, const HandleId& session) {
  RETURN_IF_ERROR(Touch(tenant, session).status());
  std::vector<ArrayDescription> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, e] : arrays_) {
    if (e.tenant == tenant) out.push_back(Describe(id, e.array));
  }
  return out;
}

int SessionManager::ReapIdle(absl::Time now) {
  std::vector<std::pair<std::string, HandleId>> idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, s] : sessions_) {
      if (now - s->last_used > options_.idle_timeout) idle.emplace_back(s->tenant, id);
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
