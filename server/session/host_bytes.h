// Estimates of the host memory a table holds, for TableStats::host_bytes:
// from the containers' capacities and their entries' heap parts, not
// counting the allocator's own overhead. Every part of the session layer
// counts itself with these, so the figures add up the same way.
//
// Thread-safety: pure functions of what they are given.
//
//   int64_t bytes = SlotBytes(entries_) + StringHeap(entry.name);
#ifndef RESIDENT_SERVER_SESSION_HOST_BYTES_H_
#define RESIDENT_SERVER_SESSION_HOST_BYTES_H_

#include <cstdint>
#include <string>

namespace resident {

// The slots of an absl flat hash table: one value and one control byte each.
template <typename Table>
int64_t SlotBytes(const Table& table) {
  return static_cast<int64_t>(table.capacity() * (sizeof(typename Table::value_type) + 1));
}

// Heap bytes a string owns beyond its own object (none within the SSO).
inline int64_t StringHeap(const std::string& s) {
  return s.capacity() > std::string().capacity() ? static_cast<int64_t>(s.capacity()) + 1 : 0;
}

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_HOST_BYTES_H_
