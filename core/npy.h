// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0, as
// specified in numpy.lib.format / NEP 1), for the five dtypes Resident holds.
//
// Usage:
//   ASSIGN_OR_RETURN(HostArray a, ReadNpy("weights.npy"));
//   ... a.dtype, a.shape, a.bytes ...
//   RETURN_IF_ERROR(WriteNpy("out.npy", a.dtype, a.shape, a.bytes));
//
// Only little-endian, C-ordered arrays of bool, int32, int64, float32 and
// float64 are accepted; anything else (big-endian, Fortran order, complex,
// object, structured, ...) is refused with INVALID_ARGUMENT naming the reason
// and, where there is one, the NumPy call that converts the array. Sizes are
// int64 throughout and file I/O is chunked, so arrays over 2 GiB work.
#ifndef RESIDENT_CLIENT_NPY_H_
#define RESIDENT_CLIENT_NPY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace resident {

// An array on the host, as read from or written to a .npy file.
struct HostArray {
  DType dtype = DType::kFloat64;
  Shape shape;
  // NumElements(shape) * ItemSize(dtype) bytes, little-endian, C order.
  std::string bytes;
};

// Reads the .npy file at `path`. The data is read straight into the result
// (no second copy of the file is held), in chunks.
// Errors: the errno-derived code (NOT_FOUND, PERMISSION_DENIED, ...) with the
// path and strerror when the file cannot be opened or read; INVALID_ARGUMENT,
// prefixed with the path, when the contents are not a supported .npy array
// (see ParseNpy).
absl::StatusOr<HostArray> ReadNpy(const std::string& path);

// Parses the complete contents of a .npy file.
// Errors: INVALID_ARGUMENT, saying why, for a bad magic string, a truncated
// preamble or header, an unsupported format version, a header that is not
// the dict NumPy writes, a big-endian, Fortran-ordered, object, structured or
// otherwise unsupported dtype, a negative dimension, an element count that
// overflows int64, and data shorter or longer than the shape says.
absl::StatusOr<HostArray> ParseNpy(std::string_view file_contents);

// Writes `bytes` (little-endian, C order) as a .npy file at `path`, replacing
// any file there; the bytes are exactly those SerializeNpy returns.
// Errors: INVALID_ARGUMENT for an invalid shape or when bytes.size() is not
// NumElements(shape) * ItemSize(dtype); the errno-derived code with the path
// and strerror when the file cannot be created or written (a partly written
// regular file is removed).
absl::Status WriteNpy(const std::string& path, DType dtype, absl::Span<const int64_t> shape,
                      std::string_view bytes);

// The .npy file NumPy's np.save writes for this array, byte for byte: format
// 1.0 (2.0 only if the header would not fit in 65535 bytes), the data
// 64-byte aligned. Precondition: `shape` is valid and bytes.size() is
// NumElements(shape) * ItemSize(dtype); WriteNpy checks this, this does not.
std::string SerializeNpy(DType dtype, absl::Span<const int64_t> shape, std::string_view bytes);

}  // namespace resident

#endif  // RESIDENT_CLIENT_NPY_H_
