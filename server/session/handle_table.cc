#include "server/session/handle_table.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/session/host_bytes.h"

namespace resident {

absl::Status HandleNotFound() { return absl::NotFoundError("array handle not found"); }

HandleTable::HandleTable(const TableLimits& limits) : limits_(limits) {}

absl::Status HandleTable::CheckRoom(const HandleId& session, int64_t more) const {
  auto s = by_session_.find(session);
  const int64_t held = s == by_session_.end() ? 0 : static_cast<int64_t>(s->second.size());
  if (held > limits_.max_handles_per_session - more) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the session holds ", held, " handles and this needs ", more,
                     " more, over the server's limit of ", limits_.max_handles_per_session,
                     " per session (--max-handles-per-session); release handles first"));
  }
  if (size() > limits_.max_handles - more) {
    return ServerLimitReached("handles in all sessions", limits_.max_handles, "--max-handles");
  }
  return absl::OkStatus();
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
  if (s != by_session_.end()) s->second.erase(handle);
  entry_heap_bytes_ -= EntryHeap(it->second);
  HandleEntry e = std::move(it->second);
  entries_.erase(it);
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
    gone(std::move(e));
  }
  by_session_.erase(s);
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
  return SlotBytes(entries_) + entry_heap_bytes_ + SlotBytes(by_session_) + set_bytes_;
}

void HandleTable::Clear() {
  entries_.clear();
  by_session_.clear();
  entry_heap_bytes_ = 0;
  set_bytes_ = 0;
}

}  // namespace resident
