// TenantLedger: what each tenant holds and has set aside, against its quota.
//
// A tenant's bytes are the distinct device buffers its handles and names
// hold (references are counted per buffer, so an array kept under a name
// and still held by a handle counts once); its arrays are its handles plus
// its names. A download or a running program that reads a buffer keeps it
// charged (AddReader) until it lets go, so releasing a handle mid-read
// frees no quota while the buffer still lives. A call in flight (a program, an upload, an attach)
// first sets its bytes and arrays aside with Hold, which checks the quota and gives them back when
// the QuotaHold is destroyed. Fits is the one quota check: Hold, Keep's and the data dir's load all
// ask it.
//
// Thread-safety: not synchronised itself. Its owner holds one mutex, the
// `mu` given at construction, around every call. A QuotaHold takes that
// mutex when it is destroyed, so destroy holds without it.
//
//   std::mutex mu;
//   TenantLedger ledger(quotas, mu);
//   std::unique_lock<std::mutex> lock(mu);
//   ASSIGN_OR_RETURN(std::unique_ptr<QuotaHold> hold, ledger.Hold("alice", bytes, 1));
//   lock.unlock();
//   ... allocate and fill the array ...
//   lock.lock();
//   ledger.AddRef("alice", array);  // the array is now the tenant's own
//   lock.unlock();
//   hold.reset();                   // the reservation goes back (takes mu)
#ifndef RESIDENT_SERVER_SESSION_TENANT_LEDGER_H_
#define RESIDENT_SERVER_SESSION_TENANT_LEDGER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "server/device/backend.h"
#include "server/session/quota.h"

namespace resident {

// What a tenant holds now (for quotas, listings and metrics).
struct TenantUsage {
  int64_t bytes = 0;           // distinct device buffers of its handles and names
  int64_t arrays = 0;          // handles plus names
  int64_t reserved_bytes = 0;  // set aside for programs and uploads in flight
  int64_t names = 0;           // filled in by the owner of the names (NamedArrays)
};

class TenantLedger;

// Bytes and arrays set aside in a tenant's quota; given back when destroyed
// (which takes the ledger's mutex: never destroy one with it held).
class QuotaHold {
 public:
  ~QuotaHold();
  QuotaHold(const QuotaHold&) = delete;
  QuotaHold& operator=(const QuotaHold&) = delete;

 private:
  friend class TenantLedger;
  QuotaHold(TenantLedger* ledger, std::string tenant, int64_t bytes, int64_t arrays)
      : ledger_(ledger), tenant_(std::move(tenant)), bytes_(bytes), arrays_(arrays) {}
  TenantLedger* ledger_;
  std::string tenant_;
  int64_t bytes_;
  int64_t arrays_;
};

class TenantLedger {
 public:
  // `mu` is the lock the owner holds around every call; it must outlive
  // every QuotaHold.
  TenantLedger(QuotaConfig quotas, std::mutex& mu);
  TenantLedger(const TenantLedger&) = delete;
  TenantLedger& operator=(const TenantLedger&) = delete;

  // OK if the tenant can take `bytes` more device bytes and `arrays` more
  // arrays on top of what it holds and has set aside; RESOURCE_EXHAUSTED
  // naming the quota, the holdings and the need otherwise. Changes nothing.
  absl::Status Fits(const std::string& tenant, int64_t bytes, int64_t arrays) const;
  // Fits, then sets them aside until the hold is destroyed. The tenant is
  // listed by All() from then on, even if it does not fit.
  absl::StatusOr<std::unique_ptr<QuotaHold>> Hold(const std::string& tenant, int64_t bytes,
                                                  int64_t arrays);

  // One more / one fewer handle or name of the tenant holding `array`: its
  // bytes count while any of them holds the buffer.
  void AddRef(const std::string& tenant, const DeviceArray& array);
  void DropRef(const std::string& tenant, const DeviceArray& array);
  // One more / one fewer reader (a download, a running program) of the
  // tenant's `array`: the buffer stays charged to the tenant while any
  // reader holds it, even once its handles and names are released. Not
  // counted as an array.
  void AddReader(const std::string& tenant, const DeviceArray& array);
  void DropReader(const std::string& tenant, const DeviceArray& array);

  // Zero for a tenant the ledger does not know; `names` is left zero.
  TenantUsage Usage(const std::string& tenant) const;
  // Every tenant the ledger knows (once it held or asked for something).
  std::vector<std::pair<std::string, TenantUsage>> All() const;
  // The tenants holding more than their quota (after a quota was lowered
  // and the data dir reloaded), with what they hold.
  std::vector<std::pair<std::string, TenantUsage>> OverQuota() const;

  int64_t HostBytes() const;
  void Clear();

 private:
  friend class QuotaHold;
  struct Account {
    // Buffers the tenant's handles and names hold: references, bytes.
    absl::flat_hash_map<const Buffer*, std::pair<int, int64_t>> buffers;
    TenantUsage usage;
    int64_t reserved_arrays = 0;
  };
  static absl::Status FitsAccount(const std::string& tenant, const Quota& quota,
                                  const Account& account, int64_t bytes, int64_t arrays);
  // The buffer counting of AddRef/DropRef and the readers'.
  static void AddBuffer(Account& a, const DeviceArray& array);
  static void DropBuffer(Account& a, const DeviceArray& array);
  // QuotaHold's destructor: locks mu_.
  void Return(const std::string& tenant, int64_t bytes, int64_t arrays);

  const QuotaConfig quotas_;
  std::mutex& mu_;
  absl::flat_hash_map<std::string, Account> tenants_;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_TENANT_LEDGER_H_
