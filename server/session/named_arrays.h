// NamedArrays: each tenant's named arrays, kept beyond every session and,
// with a data dir, written through the durable ArrayStore.
//
// A name is pending while it is being written to the data dir (a keep) or
// deleted from it: it counts against the tenant from the moment a keep
// starts, but no one can attach, list or delete it until the store has
// answered. So a keep or a delete either happens whole, durably, or not at
// all:
//
//   keep:   BeginKeep -> PersistKeep -> EndKeep(kept = its status.ok())
//   delete: BeginDelete -> PersistDelete -> EndDelete(deleted = its status.ok())
//
// Thread-safety: the table (every method but the Persist ones and
// SetStore) is not synchronised; its owner holds one mutex around each
// call. PersistKeep and PersistDelete write to disk: call them WITHOUT that
// mutex (the ArrayStore locks itself). SetStore is called once, before
// anything else runs.
//
//   NamedArrays names(limits.max_names_per_tenant);
//   { lock; RETURN_IF_ERROR(names.BeginKeep("alice", "w", a, [&] { return quota_check(); })); }
//   absl::Status put = names.PersistKeep("alice", "w", a, host_bytes);
//   { lock; names.EndKeep("alice", "w", put.ok()); }
#ifndef RESIDENT_SERVER_SESSION_NAMED_ARRAYS_H_
#define RESIDENT_SERVER_SESSION_NAMED_ARRAYS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/device/backend.h"
#include "server/session/array_store.h"

namespace resident {

// NOT_FOUND message shared by unknown, deleted and foreign names.
absl::Status NameNotFound();
// OK for 1-128 characters of [A-Za-z0-9._-]; INVALID_ARGUMENT otherwise.
absl::Status ValidateArrayName(std::string_view name);

class NamedArrays {
 public:
  explicit NamedArrays(int64_t max_names_per_tenant);

  // --- the table (owner's lock held) ---

  // The tenant's array under `name`; NameNotFound() if it has none or the
  // name is pending.
  absl::StatusOr<DeviceArray> Find(const std::string& tenant, const std::string& name) const;
  // A keep begins, if the tenant does not have the name yet (pending or
  // not: ALREADY_EXISTS, names are never silently replaced), `fits` (the
  // caller's quota check) is OK, and the tenant has fewer than
  // max_names_per_tenant names (RESOURCE_EXHAUSTED), checked in that
  // order. The name counts from then on, pending.
  absl::Status BeginKeep(const std::string& tenant, const std::string& name,
                         const DeviceArray& array, absl::FunctionRef<absl::Status()> fits);
  // The keep is over: if `kept`, the name can be used; else it goes.
  void EndKeep(const std::string& tenant, const std::string& name, bool kept);
  // A name loaded from the data dir: usable at once.
  void AddLoaded(const std::string& tenant, const std::string& name, const DeviceArray& array);

  // A delete begins: NameNotFound() (and nothing marked) unless the tenant
  // has every name and none is pending; then all are marked pending.
  absl::Status BeginDelete(const std::string& tenant, const std::vector<std::string>& names);
  // The delete is over: if `deleted`, the names go, each array passed to
  // `gone` (a name listed twice, once); else they are usable again.
  void EndDelete(const std::string& tenant, const std::vector<std::string>& names, bool deleted,
                 absl::FunctionRef<void(DeviceArray)> gone);

  // True if `name` is the tenant's, not pending, and on `buffer` (so a
  // handle attached from it, or kept as it, shows the name).
  bool Shows(const std::string& tenant, const std::string& name, const Buffer* buffer) const;
  // Calls fn for each of the tenant's names that is not pending.
  void ForEachOf(const std::string& tenant,
                 absl::FunctionRef<void(const std::string&, const DeviceArray&)> fn) const;

  int64_t Count(const std::string& tenant) const;  // pending ones included
  int64_t Total() const;
  int64_t HostBytes() const;
  void Clear();

  // --- durability (never with the owner's lock) ---

  // From now on keeps and deletes are written to `store`.
  void SetStore(std::unique_ptr<ArrayStore> store);
  bool durable() const { return store_ != nullptr; }
  // Writes a pending keep's array (its bytes in `host`) to the data dir;
  // OK at once without one. Errors name the array.
  absl::Status PersistKeep(const std::string& tenant, const std::string& name,
                           const DeviceArray& array, absl::string_view host);
  // Deletes names from the data dir; OK at once without one.
  absl::Status PersistDelete(const std::string& tenant, const std::vector<std::string>& names);

 private:
  struct Named {
    DeviceArray array;
    bool pending = false;  // being written to the data dir or deleted
  };
  using Names = absl::flat_hash_map<std::string, Named>;
  const Names* NamesOf(const std::string& tenant) const;

  const int64_t max_per_tenant_;
  absl::flat_hash_map<std::string, Names> tenants_;
  int64_t total_ = 0;
  std::unique_ptr<ArrayStore> store_;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_NAMED_ARRAYS_H_
