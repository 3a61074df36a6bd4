#include "server/device/device_set.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace resident {
namespace {

// Hostile lists can be long; messages quote at most this much of an entry.
std::string Quote(absl::string_view s) {
  constexpr size_t kMax = 40;
  return absl::StrCat("'", s.substr(0, kMax), s.size() > kMax ? "...'" : "'");
}

bool AllDigits(absl::string_view s) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

absl::Status BadList(absl::string_view list, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("--device ", Quote(list), ": ", why,
                   " (expected auto, all, or a comma-separated list of cpu and cuda:N)"));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseDeviceList(absl::string_view list, int cuda_devices) {
  const absl::string_view whole = absl::StripAsciiWhitespace(list);
  if (whole.empty()) return BadList(list, "the list is empty");
  std::vector<absl::string_view> entries = absl::StrSplit(whole, ',');
  if (entries.size() > static_cast<size_t>(kMaxDevices)) {
    return BadList(list, absl::StrCat(entries.size(), " entries, more than the ", kMaxDevices,
                                      " a server drives"));
  }
  std::vector<std::string> out;
  bool cpu = false, cuda = false;
  for (size_t i = 0; i < entries.size(); ++i) {
    const absl::string_view e = absl::StripAsciiWhitespace(entries[i]);
    if (e.empty()) return BadList(list, absl::StrCat("entry ", i, " is empty"));
    if (e == "auto" || e == "all") {
      if (entries.size() != 1) {
        return BadList(list, absl::StrCat(e, " stands alone; it cannot be combined"));
      }
      if (cuda_devices <= 0) return std::vector<std::string>{"cpu"};
      if (e == "auto") return std::vector<std::string>{"cuda:0"};
      for (int d = 0; d < cuda_devices; ++d) out.push_back(absl::StrCat("cuda:", d));
      return out;
    }
    if (e == "cpu") {
      cpu = true;
      out.emplace_back("cpu");
      continue;
    }
    int ordinal = 0;
    if (!absl::StartsWith(e, "cuda:") || !AllDigits(e.substr(5)) ||
        !absl::SimpleAtoi(e.substr(5), &ordinal)) {
      return BadList(list, absl::StrCat("unknown device ", Quote(e)));
    }
    if (cuda_devices < 0) {
      return BadList(list,
                     absl::StrCat(Quote(e),
                                  " needs CUDA support, which this build lacks "
                                  "(configure with -DRESIDENT_CUDA=ON on a machine with nvcc)"));
    }
    if (ordinal >= cuda_devices) {
      return BadList(list, absl::StrCat(Quote(e), " is out of range: ", cuda_devices,
                                        " CUDA device(s) visible"));
    }
    cuda = true;
    out.push_back(absl::StrCat("cuda:", ordinal));
  }
  if (cpu && cuda) {
    return BadList(list, "cpu and cuda devices cannot be mixed (peer copies need one kind)");
  }
  return out;
}

std::vector<std::string> UniqueDeviceNames(const std::vector<std::string>& backend_names) {
  absl::flat_hash_map<std::string, int> seen;
  std::vector<std::string> out;
  out.reserve(backend_names.size());
  for (const std::string& n : backend_names) {
    const int k = seen[n]++;
    out.push_back(k == 0 ? n : absl::StrCat(n, "#", k));
  }
  return out;
}

DeviceSet::DeviceSet(std::vector<std::unique_ptr<Device>> devices) : owned_(std::move(devices)) {
  for (const auto& d : owned_) devices_.push_back(d.get());
}

DeviceSet::DeviceSet(Device& device) : devices_{&device} {}

Device& DeviceSet::LeastLoaded() const {
  Device* best = devices_.front();
  int64_t best_free = 0;
  for (Device* d : devices_) {
    MemoryBudget& b = d->budget();
    const int64_t room = b.limit() - b.used() - b.reserved();
    if (d == devices_.front() || room > best_free) {
      best = d;
      best_free = room;
    }
  }
  return *best;
}

absl::StatusOr<Device*> DeviceSet::Find(absl::string_view request) const {
  if (request.empty()) return &LeastLoaded();
  auto known = [&] {
    std::vector<std::string> names;
    for (size_t i = 0; i < devices_.size(); ++i) {
      names.push_back(absl::StrCat(i, "=", devices_[i]->name()));
    }
    return absl::StrJoin(names, ", ");
  };
  if (AllDigits(request)) {
    int index = 0;
    if (absl::SimpleAtoi(request, &index) && index < size()) return devices_[index];
    return absl::InvalidArgumentError(absl::StrCat("device index ", Quote(request),
                                                   " is out of range: the server has ", size(),
                                                   " device(s): ", known()));
  }
  for (Device* d : devices_) {
    if (d->name() == request) return d;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown device ", Quote(request), ": the server has ", known(), " (ask by index or name)"));
}

Device* DeviceSet::FirstPoisoned() const {
  for (Device* d : devices_) {
    if (d->backend().poisoned()) return d;
  }
  return nullptr;
}

}  // namespace resident
