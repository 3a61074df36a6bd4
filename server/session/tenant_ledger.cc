#include "server/session/tenant_ledger.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/session/host_bytes.h"

namespace resident {
namespace {

// How one dimension of a quota (bytes or arrays) is worded.
struct Dimension {
  const char* quota_unit;  // "quota of N <quota_unit>"
  const char* held_unit;   // "it holds N <held_unit>"
  const char* needs;       // "and this <needs> N more"
};
constexpr Dimension kBytes{"device bytes", "bytes", "needs up to"};
constexpr Dimension kArrays{"arrays", "handles and names", "needs"};

// OK if `more` fits under `limit` beside what is held and set aside.
absl::Status FitsUnder(const std::string& tenant, const Dimension& d, int64_t limit, int64_t held,
                       int64_t reserved, int64_t more) {
  // more <= limit first, so that limit - more cannot overflow.
  if (limit == Quota::kUnlimited || (more <= limit && held + reserved <= limit - more)) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "tenant '", tenant, "' quota of ", limit, " ", d.quota_unit, " would be exceeded: it holds ",
      held, " ", d.held_unit,
      reserved > 0 ? absl::StrCat(" (and ", reserved, " are reserved by calls in flight)") : "",
      " and this ", d.needs, " ", more, " more; release or delete arrays first"));
}

}  // namespace

QuotaHold::~QuotaHold() { ledger_->Return(tenant_, bytes_, arrays_); }

TenantLedger::TenantLedger(QuotaConfig quotas, std::mutex& mu)
    : quotas_(std::move(quotas)), mu_(mu) {}

absl::Status TenantLedger::FitsAccount(const std::string& tenant, const Quota& quota,
                                       const Account& account, int64_t bytes, int64_t arrays) {
  const TenantUsage& u = account.usage;
  RETURN_IF_ERROR(FitsUnder(tenant, kBytes, quota.max_bytes, u.bytes, u.reserved_bytes, bytes));
  return FitsUnder(tenant, kArrays, quota.max_arrays, u.arrays, account.reserved_arrays, arrays);
}

absl::Status TenantLedger::Fits(const std::string& tenant, int64_t bytes, int64_t arrays) const {
  static const Account kNothing;
  auto it = tenants_.find(tenant);
  return FitsAccount(tenant, quotas_.For(tenant), it == tenants_.end() ? kNothing : it->second,
                     bytes, arrays);
}

absl::StatusOr<std::unique_ptr<QuotaHold>> TenantLedger::Hold(const std::string& tenant,
                                                              int64_t bytes, int64_t arrays) {
  Account& a = tenants_[tenant];
  RETURN_IF_ERROR(FitsAccount(tenant, quotas_.For(tenant), a, bytes, arrays));
  a.usage.reserved_bytes += bytes;
  a.reserved_arrays += arrays;
  return std::unique_ptr<QuotaHold>(new QuotaHold(this, tenant, bytes, arrays));
}

void TenantLedger::Return(const std::string& tenant, int64_t bytes, int64_t arrays) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tenants_.find(tenant);
  if (it == tenants_.end()) return;
  it->second.usage.reserved_bytes -= bytes;
  it->second.reserved_arrays -= arrays;
}

void TenantLedger::AddBuffer(Account& a, const DeviceArray& array) {
  auto [it, inserted] = a.buffers.try_emplace(array.buffer.get(), 0, array.nbytes());
  if (inserted) a.usage.bytes += array.nbytes();
  ++it->second.first;
}

void TenantLedger::DropBuffer(Account& a, const DeviceArray& array) {
  auto it = a.buffers.find(array.buffer.get());
  if (it != a.buffers.end() && --it->second.first == 0) {
    a.usage.bytes -= it->second.second;
    a.buffers.erase(it);
  }
}

void TenantLedger::AddRef(const std::string& tenant, const DeviceArray& array) {
  Account& a = tenants_[tenant];
  ++a.usage.arrays;
  AddBuffer(a, array);
}

void TenantLedger::DropRef(const std::string& tenant, const DeviceArray& array) {
  auto t = tenants_.find(tenant);
  if (t == tenants_.end()) return;
  --t->second.usage.arrays;
  DropBuffer(t->second, array);
}

void TenantLedger::AddReader(const std::string& tenant, const DeviceArray& array) {
  AddBuffer(tenants_[tenant], array);
}

void TenantLedger::DropReader(const std::string& tenant, const DeviceArray& array) {
  auto t = tenants_.find(tenant);
  if (t != tenants_.end()) DropBuffer(t->second, array);
}

TenantUsage TenantLedger::Usage(const std::string& tenant) const {
  auto it = tenants_.find(tenant);
  return it == tenants_.end() ? TenantUsage() : it->second.usage;
}

std::vector<std::pair<std::string, TenantUsage>> TenantLedger::All() const {
  std::vector<std::pair<std::string, TenantUsage>> out;
  out.reserve(tenants_.size());
  for (const auto& [tenant, a] : tenants_) out.emplace_back(tenant, a.usage);
  return out;
}

std::vector<std::pair<std::string, TenantUsage>> TenantLedger::OverQuota() const {
  std::vector<std::pair<std::string, TenantUsage>> out;
  for (const auto& [tenant, a] : tenants_) {
    if (!FitsAccount(tenant, quotas_.For(tenant), a, 0, 0).ok()) {
      out.emplace_back(tenant, a.usage);
    }
  }
  return out;
}

int64_t TenantLedger::HostBytes() const {
  int64_t bytes = SlotBytes(tenants_);
  for (const auto& [tenant, a] : tenants_) bytes += StringHeap(tenant) + SlotBytes(a.buffers);
  return bytes;
}

void TenantLedger::Clear() { tenants_.clear(); }

}  // namespace resident
