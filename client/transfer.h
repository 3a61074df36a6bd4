// Upload and Download on raw ByteBuffers: the array's bytes go from the
// caller's memory into gRPC's slices and from gRPC's slices into the result
// without protobuf copying each chunk into a std::string on the way.
#ifndef RESIDENT_CLIENT_TRANSFER_H_
#define RESIDENT_CLIENT_TRANSFER_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "client/client_core.h"

namespace resident::client {

// Streams `bytes` to the server as a new array of the session; returns
// the server's description of it. `bytes` is not referenced after return.
absl::StatusOr<v1::ArrayInfo> UploadBytes(ClientCore& core, DType dtype, const Shape& shape,
                                          std::string_view bytes);

// Reads the array `handle` of the session; `nbytes` (its size, when
// known) lets a large one come through shared memory.
absl::StatusOr<HostData> DownloadBytes(ClientCore& core, const std::string& handle,
                                       int64_t nbytes = -1);

// The array `handle` as a HostView: a leased region on shared memory when
// connected and nbytes is large enough, else an owned download.
absl::StatusOr<HostView> DownloadViewBytes(ClientCore& core, const std::string& handle,
                                           int64_t nbytes = -1);

// Connects the shared-memory path to the server's local data socket
// `path` (empty: the server offers none) unless options.local_data is off,
// proving it with one region; sets core.transport and transport_detail.
void ConnectLocalData(ClientCore& core, const std::string& path);

// Transfers from this size go through shared memory when it is connected.
inline constexpr int64_t kLocalMinBytes = int64_t{1} << 20;

}  // namespace resident::client

#endif  // RESIDENT_CLIENT_TRANSFER_H_
