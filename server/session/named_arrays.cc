#include "server/session/named_arrays.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/session/host_bytes.h"
#include "server/session/table_limits.h"

namespace resident {

absl::Status NameNotFound() { return absl::NotFoundError("array name not found"); }

absl::Status ValidateArrayName(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 128;
  for (char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-');
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "array names are 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' and '-'");
}

NamedArrays::NamedArrays(int64_t max_names_per_tenant) : max_per_tenant_(max_names_per_tenant) {}

const NamedArrays::Names* NamedArrays::NamesOf(const std::string& tenant) const {
  auto t = tenants_.find(tenant);
  return t == tenants_.end() ? nullptr : &t->second;
}

absl::StatusOr<DeviceArray> NamedArrays::Find(const std::string& tenant,
                                              const std::string& name) const {
  const Names* names = NamesOf(tenant);
  if (names == nullptr) return NameNotFound();
  auto it = names->find(name);
  if (it == names->end() || it->second.pending) return NameNotFound();
  return it->second.array;
}

absl::Status NamedArrays::BeginKeep(const std::string& tenant, const std::string& name,
                                    const DeviceArray& array,
                                    absl::FunctionRef<absl::Status()> fits) {
  Names& names = tenants_[tenant];
  if (names.contains(name)) {
    return absl::AlreadyExistsError(absl::StrCat("this tenant already has an array named '", name,
                                                 "'; delete it first (resident rm ", name,
                                                 ") or pick another name"));
  }
  RETURN_IF_ERROR(fits());
  const int64_t n = static_cast<int64_t>(names.size());
  if (n >= max_per_tenant_) {
    return TenantLimitReached(tenant, n, "named arrays", "the server's limit",
                              "--max-names-per-tenant", "delete some first");
  }
  names.emplace(name, Named{array, /*pending=*/true});
  ++total_;
  return absl::OkStatus();
}

void NamedArrays::EndKeep(const std::string& tenant, const std::string& name, bool kept) {
  auto t = tenants_.find(tenant);
  if (t == tenants_.end()) return;
  auto it = t->second.find(name);
  if (it == t->second.end()) return;
  if (kept) {
    it->second.pending = false;
  } else {
    t->second.erase(it);
    --total_;
  }
}

void NamedArrays::AddLoaded(const std::string& tenant, const std::string& name,
                            const DeviceArray& array) {
  if (tenants_[tenant].insert_or_assign(name, Named{array, /*pending=*/false}).second) ++total_;
}

absl::Status NamedArrays::BeginDelete(const std::string& tenant,
                                      const std::vector<std::string>& names) {
  if (names.empty()) return absl::OkStatus();
  auto t = tenants_.find(tenant);
  for (const std::string& n : names) {
    if (t == tenants_.end()) return NameNotFound();
    auto it = t->second.find(n);
    if (it == t->second.end() || it->second.pending) return NameNotFound();
  }
  // Marked so that no one attaches or deletes them while the data dir is
  // rewritten; if that fails, EndDelete makes them usable again.
  for (const std::string& n : names) t->second[n].pending = true;
  return absl::OkStatus();
}

void NamedArrays::EndDelete(const std::string& tenant, const std::vector<std::string>& names,
                            bool deleted, absl::FunctionRef<void(DeviceArray)> gone) {
  auto t = tenants_.find(tenant);
  if (t == tenants_.end()) return;
  for (const std::string& n : names) {
    auto it = t->second.find(n);
    if (it == t->second.end()) continue;  // listed twice
    if (!deleted) {
      it->second.pending = false;
      continue;
    }
    DeviceArray array = std::move(it->second.array);
    t->second.erase(it);
    --total_;
    gone(std::move(array));
  }
}

bool NamedArrays::Shows(const std::string& tenant, const std::string& name,
                        const Buffer* buffer) const {
  const Names* names = NamesOf(tenant);
  if (names == nullptr) return false;
  auto it = names->find(name);
  return it != names->end() && !it->second.pending && it->second.array.buffer.get() == buffer;
}

void NamedArrays::ForEachOf(
    const std::string& tenant,
    absl::FunctionRef<void(const std::string&, const DeviceArray&)> fn) const {
  const Names* names = NamesOf(tenant);
  if (names == nullptr) return;
  for (const auto& [name, n] : *names) {
    if (!n.pending) fn(name, n.array);
  }
}

int64_t NamedArrays::Count(const std::string& tenant) const {
  const Names* names = NamesOf(tenant);
  return names == nullptr ? 0 : static_cast<int64_t>(names->size());
}

int64_t NamedArrays::Total() const { return total_; }

int64_t NamedArrays::HostBytes() const {
  int64_t bytes = SlotBytes(tenants_);
  // Per tenant, not per name: Stats() stays cheap however many names there are.
  for (const auto& [tenant, names] : tenants_) bytes += StringHeap(tenant) + SlotBytes(names);
  return bytes;
}

void NamedArrays::Clear() {
  tenants_.clear();
  total_ = 0;
}

void NamedArrays::SetStore(std::unique_ptr<ArrayStore> store) { store_ = std::move(store); }

absl::Status NamedArrays::PersistKeep(const std::string& tenant, const std::string& name,
                                      const DeviceArray& array, absl::string_view host) {
  if (store_ == nullptr) return absl::OkStatus();
  return Annotate(store_->Put(tenant, name, array.dtype, array.shape, host),
                  absl::StrCat("keeping '", name, "'"));
}

absl::Status NamedArrays::PersistDelete(const std::string& tenant,
                                        const std::vector<std::string>& names) {
  if (store_ == nullptr) return absl::OkStatus();
  return store_->Remove(tenant, names);
}

}  // namespace resident
