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

// Reads the array `handle` of the session.
absl::StatusOr<HostData> DownloadBytes(ClientCore& core, const std::string& handle);

}  // namespace resident::client

#endif  // RESIDENT_CLIENT_TRANSFER_H_
