#include "server/session/session_manager.h"

#include <malloc.h>
#include <unistd.h>

#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "core/log.h"
#include "core/status_macros.h"
#include "server/program/saturating.h"
#include "server/session/array_store.h"
#include "server/session/session_device.h"

namespace resident {

SessionManager::SessionManager(Device& device, SessionOptions options)
    : SessionManager(*new DeviceSet(device), std::move(options)) {
  own_set_.reset(&devices_);
}

SessionManager::SessionManager(DeviceSet& devices, SessionOptions options)
    : devices_(devices),
      options_(std::move(options)),
      sessions_(options_.table_limits),
      handles_(options_.table_limits),
      ledger_(options_.quotas, mu_),
      names_(options_.table_limits.max_names_per_tenant),
      transfers_(options_.table_limits.max_transfers_per_tenant),
      regions_(options_.table_limits),
      reaper_(std::make_unique<Reaper>(options_.reap_interval, [this] {
        ReapIdle(absl::Now());
        TrimIdle();
      })) {}

void SessionManager::TrimIdle() {
  bool trimmed = false;
  for (Device* d : devices_.all()) trimmed |= d->TrimIfIdle();
  if (options_.trim_host_caches) trimmed |= options_.trim_host_caches();
  // The heap too: glibc keeps freed tables and requests in its arenas.
  if (trimmed) malloc_trim(0);
}

SessionManager::~SessionManager() {
  reaper_.reset();
  std::lock_guard<std::mutex> lock(mu_);
  handles_.Clear();
  sessions_.Clear();
  names_.Clear();
  ledger_.Clear();
}

// --- sessions -----------------------------------------------------------------

absl::StatusOr<HandleId> SessionManager::Open(const std::string& tenant, const std::string& device,
                                              Device** placed) {
  ASSIGN_OR_RETURN(Device * d, devices_.Find(device));
  {
    std::lock_guard<std::mutex> lock(mu_);
    RETURN_IF_ERROR(sessions_.CheckRoom(tenant));  // before making a stream
  }
  auto session = std::make_shared<Session>();
  session->tenant = tenant;
  session->device = d;
  session->stream = NewDeviceStream(*d);
  session->last_used = absl::Now();
  session->opened = session->last_used;
  const HandleId id = HandleId::Random();
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(sessions_.Insert(id, session));
  if (placed != nullptr) *placed = d;
  return id;
}

std::shared_ptr<Stream> SessionManager::StreamFor(const Session& session, const DeviceArray& array,
                                                  Device** device) {
  *device = DeviceOf(array, session.device);
  return *device == session.device ? session.stream : NewDeviceStream(**device);
}

absl::Status SessionManager::Close(const std::string& tenant, const HandleId& session) {
  std::vector<DeviceArray> doomed;  // freed outside the lock
  std::shared_ptr<Session> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A program still running in it stops at its next op; it holds the
    // session (and so its stream) and its own references to its inputs, so
    // nothing it uses is freed under it.
    ASSIGN_OR_RETURN(s, sessions_.Remove(tenant, session));
    handles_.EraseSession(session, [&](HandleEntry e) { Drop(std::move(e), doomed); });
  }
  doomed.clear();                  // outside the lock: freeing may wait for the device
  regions_.EraseSession(session);  // unmapped once no transfer holds them
  return absl::OkStatus();
}

absl::Status SessionManager::Renew(const std::string& tenant, const HandleId& session) {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.Renew(tenant, session, absl::Now());
}

absl::StatusOr<std::shared_ptr<Session>> SessionManager::Touch(const std::string& tenant,
                                                               const HandleId& session) {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.Touch(tenant, session, absl::Now());
}

int SessionManager::ReapIdle(absl::Time now) {
  std::vector<std::pair<std::string, HandleId>> idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    idle = sessions_.Idle(now, options_.idle_timeout);
  }
  int closed = 0;
  for (const auto& [tenant, id] : idle) {
    if (Close(tenant, id).ok()) {  // unless it was used or closed meanwhile
      ++closed;
      RESIDENT_LOG(kInfo, "session ", id.ToHex().substr(0, 8), " of tenant '", tenant,
                   "' expired after its idle timeout");
    }
  }
  return closed;
}

std::vector<SessionSnapshot> SessionManager::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SessionSnapshot> out = sessions_.Snapshot();
  for (SessionSnapshot& s : out) std::tie(s.arrays, s.bytes) = handles_.SessionTotals(s.id);
  return out;
}

absl::Status SessionManager::AdminClose(const HandleId& session) {
  std::string tenant;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ASSIGN_OR_RETURN(tenant, sessions_.TenantOf(session));
  }
  return Close(tenant, session);
}

int SessionManager::session_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(sessions_.size());
}

// --- handles ------------------------------------------------------------------

absl::StatusOr<DeviceArray> SessionManager::Resolve(const std::string& tenant,
                                                    const HandleId& handle) {
  std::lock_guard<std::mutex> lock(mu_);
  return handles_.Resolve(tenant, handle);
}

std::optional<int64_t> SessionManager::ArrayBytes(const std::string& tenant,
                                                  const HandleId& handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  const HandleEntry* e = handles_.Find(tenant, handle);
  if (e == nullptr) return std::nullopt;
  return e->array.nbytes();
}

absl::StatusOr<std::vector<HandleId>> SessionManager::Register(const std::string& tenant,
                                                               const HandleId& session,
                                                               std::vector<DeviceArray> arrays,
                                                               const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  // A long program renews its session on finishing.
  RETURN_IF_ERROR(sessions_.Renew(tenant, session, absl::Now()));
  RETURN_IF_ERROR(handles_.CheckRoom(tenant, session, static_cast<int64_t>(arrays.size())));
  std::vector<HandleId> ids;
  ids.reserve(arrays.size());
  for (DeviceArray& a : arrays) {
    ledger_.AddRef(tenant, a);
    ids.push_back(handles_.Insert(HandleEntry{tenant, session, std::move(a), name}));
  }
  return ids;
}

void SessionManager::Drop(HandleEntry entry, std::vector<DeviceArray>& doomed) {
  ledger_.DropRef(entry.tenant, entry.array);
  doomed.push_back(std::move(entry.array));
}

absl::StatusOr<std::vector<ProgramResult>> SessionManager::Run(
    const std::string& tenant, const HandleId& session, std::shared_ptr<const Program> program,
    std::vector<OutputSpec> outputs, const ExecOptions& options, int64_t* executed_ops,
    PeerCopyStats* copies) {
  ASSIGN_OR_RETURN(std::shared_ptr<Session> s, Touch(tenant, session));
  Device& device = *s->device;
  // Busy while it runs: the reaper leaves the session alone.
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.BeginRun(*s);
  }
  struct Idle {
    SessionManager* m;
    Session* s;
    ~Idle() {
      std::lock_guard<std::mutex> lock(m->mu_);
      m->sessions_.EndRun(*s, absl::Now());
    }
  } idle{this, s.get()};
  const absl::Time start = absl::Now();
  // Loop graphs only where this session's device records them.
  ProgramLimits limits = options_.limits;
  limits.loop_graphs = limits.loop_graphs && device.backend().CapturesLoops();
  ASSIGN_OR_RETURN(Plan plan, PlanProgram(
                                  std::move(program), std::move(outputs),
                                  [&](const HandleId& h) { return Resolve(tenant, h); }, limits));
  if (options.phases != nullptr) options.phases->plan += absl::ToDoubleSeconds(absl::Now() - start);
  int64_t kept_count = 0;
  for (const OutputSpec& o : plan.outputs) kept_count += o.keep ? 1 : 0;
  // Inputs living on another device are copied to this one before the
  // program runs: their bytes are reserved with the program's own.
  PeerCopyStats peer;
  for (const auto& [h, a] : plan.inputs) {
    if (DeviceOf(a, &device) == &device) continue;
    ++peer.arrays;
    peer.bytes = SaturatingAdd(peer.bytes, a.nbytes());
  }
  const int64_t need = SaturatingAdd(plan.peak_bytes, peer.bytes);
  // A bound past the device's limit can never be reserved: refuse it before
  // it is added to the tenant's reservations (it may saturate at INT64_MAX).
  if (need > device.budget().limit()) {
    RETURN_IF_ERROR(device.budget().Reserve(need).status());
  }
  // The inputs stay the tenant's while the program reads them, even if
  // their handles are released meanwhile (destroyed without mu_).
  std::vector<DeviceArray> inputs;
  inputs.reserve(plan.inputs.size());
  for (const auto& [h, a] : plan.inputs) inputs.push_back(a);
  const std::shared_ptr<void> readers = ChargeReaders(tenant, std::move(inputs));
  std::unique_ptr<QuotaHold> hold;  // destroyed after run_lock, without mu_
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Fail before running what could not be registered afterwards.
    if (kept_count > 0) RETURN_IF_ERROR(handles_.CheckRoom(tenant, session, kept_count));
    ASSIGN_OR_RETURN(hold, ledger_.Hold(tenant, need, kept_count));
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
  ASSIGN_OR_RETURN(MemoryBudget::Reservation reservation, device.budget().Reserve(need));
  if (peer.arrays > 0) {
    for (auto& [h, a] : plan.inputs) {
      if (DeviceOf(a, &device) == &device) continue;
      // The copy replaces the input for this run only; the handle keeps
      // its array where it is. The copy is freed when the plan goes.
      ASSIGN_OR_RETURN(a, device.CopyFrom(a, *s->stream, &reservation));
    }
    RESIDENT_LOG(kDebug, "program of tenant '", tenant, "' on ", device.name(), ": ", peer.arrays,
                 " peer copies (", peer.bytes, " bytes) of inputs on other devices");
  }
  if (copies != nullptr) *copies = peer;
  ASSIGN_OR_RETURN(std::vector<DeviceArray> arrays,
                   Execute(plan, device, *s->stream, &reservation, exec));
  // Closed during its last op: the same answer as at an op boundary.
  RETURN_IF_ERROR(exec.check_continue());
  if (executed_ops != nullptr) *executed_ops = plan.executed_ops;
  const absl::Time executed = absl::Now();
  std::vector<ProgramResult> results(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    results[i].array = Describe(HandleId(), arrays[i]);
    if (plan.outputs[i].return_data) {
      ASSIGN_OR_RETURN(results[i].data, ReadArray(device, *s->stream, arrays[i]));
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
    ASSIGN_OR_RETURN(std::vector<HandleId> ids, Register(tenant, session, std::move(kept)));
    for (size_t j = 0; j < ids.size(); ++j) results[kept_index[j]].array.handle = ids[j];
  }
  if (options.phases != nullptr) {
    options.phases->results += absl::ToDoubleSeconds(absl::Now() - executed);
  }
  return results;
}

absl::Status SessionManager::Release(const std::string& tenant, const HandleId& session,
                                     const std::vector<HandleId>& handles,
                                     const std::vector<std::string>& names) {
  RETURN_IF_ERROR(Renew(tenant, session));
  for (const std::string& n : names) RETURN_IF_ERROR(ValidateArrayName(n));
  std::vector<DeviceArray> doomed;  // freed after the lock is dropped
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const HandleId& h : handles) {
      if (handles_.Find(tenant, h) == nullptr) return HandleNotFound();
    }
    // Pending from now on, so that no one attaches or deletes them while
    // the data dir is rewritten; if that fails, nothing is released.
    RETURN_IF_ERROR(names_.BeginDelete(tenant, names));
  }
  if (!names.empty()) {
    const absl::Status deleted = names_.PersistDelete(tenant, names);
    std::lock_guard<std::mutex> lock(mu_);
    names_.EndDelete(tenant, names, deleted.ok(), [&](DeviceArray a) {
      ledger_.DropRef(tenant, a);
      doomed.push_back(std::move(a));
    });
    RETURN_IF_ERROR(deleted);
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const HandleId& h : handles) {
    // Gone already if listed twice, or released meanwhile.
    if (std::optional<HandleEntry> e = handles_.Erase(h)) Drop(*std::move(e), doomed);
  }
  return absl::OkStatus();
}

// --- transfers ------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Upload>> SessionManager::BeginUpload(const std::string& tenant,
                                                                    const HandleId& session,
                                                                    DType dtype,
                                                                    const Shape& shape) {
  ASSIGN_OR_RETURN(std::shared_ptr<Session> s, Touch(tenant, session));
  {
    std::lock_guard<std::mutex> lock(mu_);
    RETURN_IF_ERROR(handles_.CheckRoom(tenant, session, 1));  // fail before the data comes
  }
  ASSIGN_OR_RETURN(int64_t n, CheckedNumElements(shape));
  ASSIGN_OR_RETURN(int64_t bytes, CheckedNumBytes(n, ItemSize(dtype)));
  ASSIGN_OR_RETURN(std::shared_ptr<void> slot, transfers_.Take(tenant));
  std::unique_ptr<QuotaHold> hold;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ASSIGN_OR_RETURN(hold, ledger_.Hold(tenant, bytes, 1));
  }
  DeviceArray array;
  array.dtype = dtype;
  array.shape = shape;
  ASSIGN_OR_RETURN(array.buffer, AllocateOnDevice(*s->device, bytes, *s->stream));
  auto finish = [this, tenant, session](const DeviceArray& a) -> absl::StatusOr<HandleId> {
    ASSIGN_OR_RETURN(std::vector<HandleId> ids, Register(tenant, session, {a}));
    return ids[0];
  };
  return std::make_unique<Upload>(*s->device, s->stream, std::move(array), std::move(hold),
                                  std::move(slot), std::move(finish));
}

std::shared_ptr<void> SessionManager::ChargeReaders(const std::string& tenant,
                                                    std::vector<DeviceArray> arrays) {
  std::erase_if(arrays, [](const DeviceArray& a) { return a.buffer == nullptr; });
  if (arrays.empty()) return nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const DeviceArray& a : arrays) ledger_.AddReader(tenant, a);
  }
  return std::shared_ptr<void>(nullptr, [this, tenant, arrays = std::move(arrays)](void*) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const DeviceArray& a : arrays) ledger_.DropReader(tenant, a);
  });
}

absl::StatusOr<std::unique_ptr<Download>> SessionManager::BeginDownload(const std::string& tenant,
                                                                        const HandleId& session,
                                                                        const HandleId& handle) {
  ASSIGN_OR_RETURN(std::shared_ptr<Session> s, Touch(tenant, session));
  ASSIGN_OR_RETURN(DeviceArray a, Resolve(tenant, handle));
  ASSIGN_OR_RETURN(std::shared_ptr<void> slot, transfers_.Take(tenant));
  // The buffer stays the tenant's while the download reads it; the guard
  // goes with the transfer slot.
  std::shared_ptr<void> reader = ChargeReaders(tenant, {a});
  slot = std::shared_ptr<void>(nullptr, [slot, reader](void*) {});
  ArrayDescription d = Describe(handle, a);
  // Read where the array lives, which may not be the session's device.
  Device* home = nullptr;
  std::shared_ptr<Stream> stream = StreamFor(*s, a, &home);
  return std::make_unique<Download>(*home, std::move(stream), std::move(a), std::move(d),
                                    std::move(slot));
}

absl::StatusOr<ArrayDescription> SessionManager::CopyTo(const std::string& tenant,
                                                        const HandleId& session,
                                                        const HandleId& handle,
                                                        const std::string& device) {
  ASSIGN_OR_RETURN(std::shared_ptr<Session> s, Touch(tenant, session));
  Device* target = s->device;
  if (!device.empty()) {
    ASSIGN_OR_RETURN(target, devices_.Find(device));
  }
  ASSIGN_OR_RETURN(DeviceArray src, Resolve(tenant, handle));
  std::unique_ptr<QuotaHold> hold;  // until the copy is registered
  {
    std::lock_guard<std::mutex> lock(mu_);
    RETURN_IF_ERROR(handles_.CheckRoom(tenant, session, 1));
    ASSIGN_OR_RETURN(hold, ledger_.Hold(tenant, src.nbytes(), 1));
  }
  std::shared_ptr<Stream> stream = target == s->device ? s->stream : NewDeviceStream(*target);
  DeviceArray copy;
  {
    // The session's stream runs one piece of work at a time.
    std::lock_guard<std::mutex> run_lock(s->run_mu);
    ASSIGN_OR_RETURN(copy, target->CopyFrom(src, *stream));
  }
  ASSIGN_OR_RETURN(std::vector<HandleId> ids, Register(tenant, session, {copy}));
  return Describe(ids[0], copy);
}

// --- names ----------------------------------------------------------------------

absl::StatusOr<ArrayDescription> SessionManager::Keep(const std::string& tenant,
                                                      const HandleId& session,
                                                      const HandleId& handle,
                                                      const std::string& name) {
  RETURN_IF_ERROR(ValidateArrayName(name));
  ASSIGN_OR_RETURN(std::shared_ptr<Session> s, Touch(tenant, session));
  DeviceArray array;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ASSIGN_OR_RETURN(array, handles_.Resolve(tenant, handle));
    // The name counts (pending) from now on, if it is free and fits.
    RETURN_IF_ERROR(
        names_.BeginKeep(tenant, name, array, [&] { return ledger_.Fits(tenant, 0, 1); }));
    ledger_.AddRef(tenant, array);
    handles_.SetName(handle, name);
  }
  const absl::Status durable = PersistKeep(*s, tenant, name, array);
  std::lock_guard<std::mutex> lock(mu_);
  names_.EndKeep(tenant, name, durable.ok());
  if (!durable.ok()) {
    ledger_.DropRef(tenant, array);
    return durable;
  }
  ArrayDescription d = Describe(handle, array);
  d.name = name;
  return d;
}

absl::Status SessionManager::PersistKeep(Session& session, const std::string& tenant,
                                         const std::string& name, const DeviceArray& array) {
  if (!names_.durable()) return absl::OkStatus();
  Device* home = nullptr;
  std::shared_ptr<Stream> stream = StreamFor(session, array, &home);
  ASSIGN_OR_RETURN(std::string host, ReadArray(*home, *stream, array));
  return names_.PersistKeep(tenant, name, array, host);
}

absl::StatusOr<ArrayDescription> SessionManager::Attach(const std::string& tenant,
                                                        const HandleId& session,
                                                        const std::string& name) {
  RETURN_IF_ERROR(ValidateArrayName(name));
  RETURN_IF_ERROR(Renew(tenant, session));
  DeviceArray array;
  std::unique_ptr<QuotaHold> hold;  // until the handle is registered
  {
    std::lock_guard<std::mutex> lock(mu_);
    ASSIGN_OR_RETURN(array, names_.Find(tenant, name));
    ASSIGN_OR_RETURN(hold, ledger_.Hold(tenant, 0, 1));
  }
  ASSIGN_OR_RETURN(std::vector<HandleId> ids, Register(tenant, session, {array}, name));
  ArrayDescription d = Describe(ids[0], array);
  d.name = name;
  return d;
}

absl::Status SessionManager::EnableDataDir(const std::string& dir) {
  ASSIGN_OR_RETURN(std::unique_ptr<ArrayStore> store, ArrayStore::Open(dir));
  std::vector<ArrayStore::Stored> stored = store->Load();
  // Each array goes to the least loaded device at the time, one stream each.
  std::vector<std::shared_ptr<Stream>> streams(static_cast<size_t>(devices_.size()));
  for (ArrayStore::Stored& a : stored) {
    Device& target = devices_.LeastLoaded();
    std::shared_ptr<Stream>& stream = streams[static_cast<size_t>(target.index())];
    if (stream == nullptr) stream = NewDeviceStream(target);
    absl::StatusOr<DeviceArray> array = LoadArray(target, *stream, a.array);
    if (!array.ok()) {
      RESIDENT_LOG(kError, "data dir: cannot load named array '", a.name, "' of tenant '", a.tenant,
                   "' onto the device: ", array.status().message(), "; it stays on disk");
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    names_.AddLoaded(a.tenant, a.name, *array);
    ledger_.AddRef(a.tenant, *array);
    a.array.bytes = std::string();  // the host copy goes as soon as it is on the device
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [tenant, u] : ledger_.OverQuota()) {
      RESIDENT_LOG(kWarning, "tenant '", tenant, "' holds ", u.bytes, " bytes in ", u.arrays,
                   " named arrays, over its quota; new arrays are refused until some are "
                   "deleted");
    }
  }
  names_.SetStore(std::move(store));
  return absl::OkStatus();
}

// --- listings and figures -------------------------------------------------------

absl::StatusOr<std::vector<ArrayDescription>> SessionManager::List(const std::string& tenant,
                                                                   const HandleId& session) {
  RETURN_IF_ERROR(Renew(tenant, session));
  std::vector<ArrayDescription> out;
  absl::flat_hash_set<std::string> shown;
  std::lock_guard<std::mutex> lock(mu_);
  handles_.ForEachOf(tenant, [&](const HandleId& id, const HandleEntry& e) {
    ArrayDescription d = Describe(id, e.array);
    if (!e.name.empty() && names_.Shows(tenant, e.name, e.array.buffer.get())) {
      d.name = e.name;
      shown.insert(e.name);
    }
    out.push_back(std::move(d));
  });
  names_.ForEachOf(tenant, [&](const std::string& name, const DeviceArray& array) {
    if (shown.contains(name)) return;
    ArrayDescription d = Describe(HandleId(), array);
    d.name = name;
    out.push_back(std::move(d));
  });
  return out;
}

TenantUsage SessionManager::Usage(const std::string& tenant) const {
  std::lock_guard<std::mutex> lock(mu_);
  TenantUsage u = ledger_.Usage(tenant);
  u.names = names_.Count(tenant);
  return u;
}

std::vector<std::pair<std::string, TenantUsage>> SessionManager::AllUsage() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, TenantUsage>> out = ledger_.All();
  for (auto& [tenant, u] : out) u.names = names_.Count(tenant);
  return out;
}

TableStats SessionManager::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  TableStats st;
  st.sessions = sessions_.size();
  st.handles = handles_.size();
  st.named_arrays = names_.Total();
  st.host_bytes =
      sessions_.HostBytes() + handles_.HostBytes() + ledger_.HostBytes() + names_.HostBytes();
  return st;
}

}  // namespace resident

namespace resident {

// --- shared-memory regions ------------------------------------------------------

absl::StatusOr<HandleId> SessionManager::AddRegion(const std::string& tenant,
                                                   const HandleId& session, uint64_t owner, int fd,
                                                   int64_t bytes, bool* pinned) {
  absl::StatusOr<std::shared_ptr<Session>> s = Touch(tenant, session);
  absl::Status room = s.ok() ? regions_.CheckRoom(tenant, bytes) : s.status();
  if (!room.ok()) {
    if (fd >= 0) close(fd);
    return room;
  }
  // Mapping and pinning take a while: outside every lock.
  ASSIGN_OR_RETURN(std::shared_ptr<HostRegion> region,
                   HostRegion::Map(fd, bytes, (*s)->device->backend()));
  *pinned = region->pinned();
  ASSIGN_OR_RETURN(HandleId id, regions_.Insert(tenant, session, owner, std::move(region)));
  // The session may have closed while the region was mapped: then it goes too.
  if (!Touch(tenant, session).ok()) {
    regions_.EraseSession(session);
    return SessionNotFound();
  }
  return id;
}

absl::Status SessionManager::ReleaseRegion(const std::string& tenant, const HandleId& session,
                                           const HandleId& region) {
  ASSIGN_OR_RETURN(std::shared_ptr<HostRegion> gone, regions_.Remove(tenant, session, region));
  return absl::OkStatus();
}

void SessionManager::DropRegionsOf(uint64_t owner) { regions_.EraseOwner(owner); }

absl::StatusOr<ArrayDescription> SessionManager::UploadFromRegion(const std::string& tenant,
                                                                  const HandleId& session,
                                                                  const HandleId& region,
                                                                  int64_t offset, DType dtype,
                                                                  const Shape& shape) {
  ASSIGN_OR_RETURN(std::shared_ptr<HostRegion> r, regions_.Find(tenant, session, region));
  ASSIGN_OR_RETURN(int64_t n, CheckedNumElements(shape));
  ASSIGN_OR_RETURN(int64_t bytes, CheckedNumBytes(n, ItemSize(dtype)));
  // Before anything is allocated; prefaulted, so the copy cannot fault.
  ASSIGN_OR_RETURN(char* src, r->Range(offset, bytes, HostRegion::Access::kRead));
  ASSIGN_OR_RETURN(std::unique_ptr<Upload> up, BeginUpload(tenant, session, dtype, shape));
  RETURN_IF_ERROR(up->Append(std::string_view(src, static_cast<size_t>(bytes))));
  return up->Finish();
}

absl::StatusOr<ArrayDescription> SessionManager::DownloadToRegion(const std::string& tenant,
                                                                  const HandleId& session,
                                                                  const HandleId& handle,
                                                                  const HandleId& region,
                                                                  int64_t offset) {
  ASSIGN_OR_RETURN(std::shared_ptr<HostRegion> r, regions_.Find(tenant, session, region));
  ASSIGN_OR_RETURN(std::unique_ptr<Download> d, BeginDownload(tenant, session, handle));
  const int64_t bytes = d->description().nbytes;
  ASSIGN_OR_RETURN(char* dst, r->Range(offset, bytes, HostRegion::Access::kWrite));
  RETURN_IF_ERROR(d->Read(0, bytes, dst));
  return d->description();
}

}  // namespace resident
