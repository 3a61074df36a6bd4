#include "server/session/handle_table.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/session/host_bytes.h"

namespace resident {

absl::Status HandleNotFound() { return absl::NotFoundError("array handle not found"); }

HandleTable::HandleTable(const TableLimits& limits) : limits_(limits) {}

absl::Status HandleTable::CheckRoom(const std::string& tenant, const HandleId& session,
                                    int64_t more) const {
  auto s = by_session_.find(session);
  const int64_t held = s == by_session_.end() ? 0 : static_cast<int64_t>(s->second.size());
  if (held > limits_.max_handles_per_session - more) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the session holds ", held, " handles and this needs ", more,
                     " more, over the server's limit of ", limits_.max_handles_per_session,
                     " per session (--max-handles-per-session); release handles first"));
  }
  auto t = per_tenant_.find(tenant);
  const int64_t owned = t == per_tenant_.end() ? 0 : t->second;
  if (owned > limits_.max_handles_per_tenant - more) {
    return TenantLimitReached(tenant, owned, "handles", "the server's limit per tenant",
                              "--max-handles-per-tenant", "release handles first");
  }
  if (size() > limits_.max_handles - more) {
    return ServerLimitReached("handles in all sessions", limits_.max_handles, "--max-handles");
  }
  return absl::OkStatus();
}

template <typename Table>
void HandleTable::ShrinkIfSparse(Table& table) {
  // Hysteresis: a table that shrinks at an eighth full grows again only
  // after doubling its size, so churn around one size does not rehash.
  if (table.capacity() > 64 && table.size() * 8 < table.capacity()) table.rehash(0);
}

void HandleTable::CountTenant(const std::string& tenant, int64_t delta) {
  auto [it, inserted] = per_tenant_.try_emplace(tenant, 0);
  it->second += delta;
  if (it->second <= 0) {
    per_tenant_.erase(it);
    ShrinkIfSparse(per_tenant_);
  }
}

int64_t HandleTable::EntryHeap(const HandleEntry& e) {
  return StringHeap(e.tenant) + StringHeap(e.name) +
         static_cast<int64_t>(e.array.shape.capacity() * sizeof(int64_t));
}

HandleId HandleTable::Insert(const HandleEntry& entry) {
  const HandleId id = HandleId::Random();
  absl::flat_hash_set<HandleId>& set = by_session_[entry.session];
  set_bytes_ -= SlotBytes(set);
  set.insert(id);
  set_bytes_ += SlotBytes(set);
  entry_heap_bytes_ += EntryHeap(entry);
  entries_.emplace(id, entry);
  CountTenant(entry.tenant, 1);
  return id;
}

const HandleEntry* HandleTable::Find(const std::string& tenant, const HandleId& handle) const {
  auto it = entries_.find(handle);
  if (it == entries_.end() || it->second.tenant != tenant) return nullptr;
  return &it->second;
}

absl::StatusOr<DeviceArray> HandleTable::Resolve(const std::string& tenant,
                                                 const HandleId& handle) const {
  const HandleEntry* e = Find(tenant, handle);
  if (e == nullptr) return HandleNotFound();
  return e->array;
}

void HandleTable::SetName(const HandleId& handle, const std::string& name) {
  auto it = entries_.find(handle);
  if (it == entries_.end()) return;
  entry_heap_bytes_ -= StringHeap(it->second.name);
  it->second.name = name;
  entry_heap_bytes_ += StringHeap(it->second.name);
}

std::optional<HandleEntry> HandleTable::Erase(const HandleId& handle) {
  auto it = entries_.find(handle);
  if (it == entries_.end()) return std::nullopt;
  auto s = by_session_.find(it->second.session);
  if (s != by_session_.end()) {
    set_bytes_ -= SlotBytes(s->second);
    s->second.erase(handle);
    ShrinkIfSparse(s->second);
    set_bytes_ += SlotBytes(s->second);
  }
  entry_heap_bytes_ -= EntryHeap(it->second);
  HandleEntry e = std::move(it->second);
  entries_.erase(it);
  ShrinkIfSparse(entries_);
  CountTenant(e.tenant, -1);
  return e;
}

void HandleTable::EraseSession(const HandleId& session, absl::FunctionRef<void(HandleEntry)> gone) {
  auto s = by_session_.find(session);
  if (s == by_session_.end()) return;
  set_bytes_ -= SlotBytes(s->second);
  for (const HandleId& h : s->second) {
    auto it = entries_.find(h);
    if (it == entries_.end()) continue;
    entry_heap_bytes_ -= EntryHeap(it->second);
    HandleEntry e = std::move(it->second);
    entries_.erase(it);
    CountTenant(e.tenant, -1);
    gone(std::move(e));
  }
  by_session_.erase(s);
  ShrinkIfSparse(entries_);
  ShrinkIfSparse(by_session_);
}

std::pair<int64_t, int64_t> HandleTable::SessionTotals(const HandleId& session) const {
  int64_t arrays = 0, bytes = 0;
  auto s = by_session_.find(session);
  if (s == by_session_.end()) return {0, 0};
  for (const HandleId& h : s->second) {
    auto it = entries_.find(h);
    if (it == entries_.end()) continue;
    ++arrays;
    bytes += it->second.array.nbytes();
  }
  return {arrays, bytes};
}

void HandleTable::ForEachOf(const std::string& tenant,
                            absl::FunctionRef<void(const HandleId&, const HandleEntry&)> fn) const {
  for (const auto& [id, e] : entries_) {
    if (e.tenant == tenant) fn(id, e);
  }
}

int64_t HandleTable::HostBytes() const {
  // Kept up to date as handles come and go, so that Stats() stays cheap.
  return SlotBytes(entries_) + entry_heap_bytes_ + SlotBytes(by_session_) + set_bytes_ +
         SlotBytes(per_tenant_);
}

void HandleTable::Clear() {
  entries_.clear();
  per_tenant_.clear();
  by_session_.clear();
  entry_heap_bytes_ = 0;
  set_bytes_ = 0;
}

}  // namespace resident
