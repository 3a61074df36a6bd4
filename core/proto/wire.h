// Conversions between the wire contract's types (resident.proto) and core's,
// in one place for the server and the client.
#ifndef RESIDENT_CORE_PROTO_WIRE_H_
#define RESIDENT_CORE_PROTO_WIRE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "core/handle_id.h"
#include "core/scalar.h"
#include "core/shape.h"
#include "resident/v1/resident.pb.h"

namespace resident {

// INVALID_ARGUMENT for an unspecified or unknown dtype.
absl::StatusOr<DType> DecodeDType(int wire);
v1::DType EncodeDType(DType dtype);

// INVALID_ARGUMENT unless `bytes` is a 16-byte id; `what` names it.
absl::StatusOr<HandleId> DecodeHandle(const std::string& bytes, const char* what);

// INVALID_ARGUMENT for a negative dimension or an element count over int64.
absl::StatusOr<Shape> DecodeShape(const google::protobuf::RepeatedField<int64_t>& dims);

// The scalar a message holds; nullopt when it holds none.
std::optional<Scalar> DecodeScalar(const v1::Scalar& s);
void EncodeScalar(const Scalar& s, v1::Scalar* out);

}  // namespace resident

#endif  // RESIDENT_CORE_PROTO_WIRE_H_
