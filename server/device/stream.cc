#include "server/device/stream.h"

namespace resident {

absl::Status Stream::CopyFromPeer(const Buffer& /*src*/, Buffer& /*dst*/, int64_t /*bytes*/) {
  return absl::UnimplementedError("this device has no peer copy");
}

}  // namespace resident
