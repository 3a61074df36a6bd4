#include "server/device/buffer.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace resident {

absl::Status CheckHeld(const DeviceArray& array, absl::string_view role) {
  absl::StatusOr<int64_t> n = CheckedNumElements(array.shape);
  if (!n.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(role, ": ", n.status().message()));
  }
  absl::StatusOr<int64_t> bytes = CheckedNumBytes(*n, ItemSize(array.dtype));
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(role, ": ", bytes.status().message()));
  }
  const int64_t have = array.buffer ? array.buffer->size() : 0;
  if (*bytes > have) {
    return absl::InvalidArgumentError(absl::StrCat(role, ": ", DTypeName(array.dtype),
                                                   ShapeString(array.shape), " needs ", *bytes,
                                                   " bytes but its buffer holds ", have));
  }
  return absl::OkStatus();
}

absl::Status CheckCopy(absl::string_view what, const Buffer& buffer, int64_t offset, int64_t bytes,
                       const void* host) {
  if (offset < 0 || bytes < 0 || offset > buffer.size() || bytes > buffer.size() - offset) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": [", offset, ", +", bytes, ") is outside a buffer of ", buffer.size(), " bytes"));
  }
  if (bytes > 0 && host == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": null host pointer"));
  }
  return absl::OkStatus();
}

bool Overlaps(const DeviceArray& x, const DeviceArray& y) {
  const auto* xs = static_cast<const char*>(x.data());
  const auto* ys = static_cast<const char*>(y.data());
  const int64_t xn = x.nbytes(), yn = y.nbytes();
  if (xs == nullptr || ys == nullptr || xn == 0 || yn == 0) return false;
  return xs < ys + yn && ys < xs + xn;
}

}  // namespace resident
