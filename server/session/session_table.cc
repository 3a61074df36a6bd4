#include "server/session/session_table.h"

#include <algorithm>

#include "absl/status/status.h"
#include "core/status_macros.h"
#include "server/session/host_bytes.h"

namespace resident {

absl::Status SessionNotFound() {
  return absl::NotFoundError(
      "session not found (closed, expired after its idle timeout, or never "
      "opened)");
}

namespace {
int64_t SessionHeap(const Session& s) {
  return static_cast<int64_t>(sizeof(Session)) + StringHeap(s.tenant);
}
}  // namespace

SessionTable::SessionTable(const TableLimits& limits) : limits_(limits) {}

absl::Status SessionTable::RoomFor(const std::string& tenant, int64_t open_of_tenant) const {
  if (size() >= limits_.max_sessions) {
    return ServerLimitReached("open sessions", limits_.max_sessions, "--max-sessions");
  }
  if (open_of_tenant >= limits_.max_sessions_per_tenant) {
    return TenantLimitReached(tenant, open_of_tenant, "open sessions",
                              "the server's limit per tenant", "--max-sessions-per-tenant",
                              "close some first");
  }
  return absl::OkStatus();
}

absl::Status SessionTable::CheckRoom(const std::string& tenant) const {
  auto n = per_tenant_.find(tenant);
  return RoomFor(tenant, n == per_tenant_.end() ? 0 : n->second);
}

absl::Status SessionTable::Insert(const HandleId& id, const std::shared_ptr<Session>& session) {
  int64_t& open = per_tenant_[session->tenant];
  RETURN_IF_ERROR(RoomFor(session->tenant, open));
  ++open;
  heap_bytes_ += SessionHeap(*session);
  sessions_.emplace(id, session);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Session>> SessionTable::Remove(const std::string& tenant,
                                                              const HandleId& id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second->tenant != tenant) return SessionNotFound();
  std::shared_ptr<Session> s = std::move(it->second);
  sessions_.erase(it);
  heap_bytes_ -= SessionHeap(*s);
  if (--per_tenant_[tenant] <= 0) per_tenant_.erase(tenant);
  s->closed = true;
  return s;
}

const std::shared_ptr<Session>* SessionTable::Find(const std::string& tenant,
                                                   const HandleId& id) const {
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second->tenant != tenant) return nullptr;
  return &it->second;
}

absl::StatusOr<std::shared_ptr<Session>> SessionTable::Touch(const std::string& tenant,
                                                             const HandleId& id, absl::Time now) {
  const std::shared_ptr<Session>* s = Find(tenant, id);
  if (s == nullptr) return SessionNotFound();
  (*s)->last_used = now;
  return *s;
}

absl::Status SessionTable::Renew(const std::string& tenant, const HandleId& id, absl::Time now) {
  const std::shared_ptr<Session>* s = Find(tenant, id);
  if (s == nullptr) return SessionNotFound();
  (*s)->last_used = now;
  return absl::OkStatus();
}

absl::StatusOr<std::string> SessionTable::TenantOf(const HandleId& id) const {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return SessionNotFound();
  return it->second->tenant;
}

void SessionTable::BeginRun(Session& session) { ++session.running; }

void SessionTable::EndRun(Session& session, absl::Time now) {
  --session.running;
  session.last_used = now;
}

std::vector<std::pair<std::string, HandleId>> SessionTable::Idle(absl::Time now,
                                                                 absl::Duration timeout) const {
  std::vector<std::pair<std::string, HandleId>> idle;
  for (const auto& [id, s] : sessions_) {
    if (s->running == 0 && now - s->last_used > timeout) idle.emplace_back(s->tenant, id);
  }
  return idle;
}

std::vector<SessionSnapshot> SessionTable::Snapshot() const {
  std::vector<SessionSnapshot> out;
  out.reserve(sessions_.size());
  for (const auto& [id, s] : sessions_) {
    out.push_back(SessionSnapshot{id, s->tenant, s->opened, s->last_used, 0, 0});
  }
  std::sort(out.begin(), out.end(),
            [](const SessionSnapshot& a, const SessionSnapshot& b) { return a.opened < b.opened; });
  return out;
}

int64_t SessionTable::HostBytes() const {
  // heap_bytes_ is kept up to date as sessions come and go, so that Stats()
  // stays cheap; the per-tenant counts' keys are left out.
  return SlotBytes(sessions_) + SlotBytes(per_tenant_) + heap_bytes_;
}

void SessionTable::Clear() {
  sessions_.clear();
  per_tenant_.clear();
  heap_bytes_ = 0;
}

}  // namespace resident
