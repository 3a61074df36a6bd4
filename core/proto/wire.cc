#include "core/proto/wire.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace resident {
namespace {

// "bool, int8, ...": every dtype's NumPy name.
std::string SupportedNames() {
  std::string out;
  for (DType d : kEveryDType) absl::StrAppend(&out, out.empty() ? "" : ", ", DTypeName(d));
  return out;
}

}  // namespace

// The wire enum numbers are the contract; DType's are ours. core/dtype.h's
// table pairs them by name, so neither order matters.
absl::StatusOr<DType> DecodeDType(int wire) {
  switch (wire) {
#define RESIDENT_DTYPE_DECODE(K, name, S, W, descr, ctype) \
  case v1::DTYPE_##W:                                      \
    return DType::K;
    RESIDENT_DTYPES(RESIDENT_DTYPE_DECODE)
#undef RESIDENT_DTYPE_DECODE
    case v1::DTYPE_UNSPECIFIED:
      return absl::InvalidArgumentError("dtype is unspecified");
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported dtype ", wire, "; supported: ", SupportedNames()));
  }
}

v1::DType EncodeDType(DType dtype) {
  switch (dtype) {
#define RESIDENT_DTYPE_ENCODE(K, name, S, W, descr, ctype) \
  case DType::K:                                           \
    return v1::DTYPE_##W;
    RESIDENT_DTYPES(RESIDENT_DTYPE_ENCODE)
#undef RESIDENT_DTYPE_ENCODE
  }
  return v1::DTYPE_UNSPECIFIED;
}

absl::StatusOr<HandleId> DecodeHandle(const std::string& bytes, const char* what) {
  std::optional<HandleId> h = HandleId::FromBytes(bytes);
  if (!h) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be ", HandleId::kSize, " bytes, got ", bytes.size()));
  }
  return *h;
}

absl::StatusOr<Shape> DecodeShape(const google::protobuf::RepeatedField<int64_t>& dims) {
  Shape shape(dims.begin(), dims.end());
  RETURN_IF_ERROR(CheckedNumElements(shape).status());
  return shape;
}

std::optional<Scalar> DecodeScalar(const v1::Scalar& s) {
  switch (s.value_case()) {
    case v1::Scalar::kBoolValue:
      return Scalar::Bool(s.bool_value());
    case v1::Scalar::kIntValue:
      return Scalar::Int(s.int_value());
    case v1::Scalar::kFloatValue:
      return Scalar::Float(s.float_value());
    case v1::Scalar::kComplexValue:
      return Scalar::Complex(s.complex_value().real(), s.complex_value().imag());
    case v1::Scalar::VALUE_NOT_SET:
      break;
  }
  return std::nullopt;
}

void EncodeScalar(const Scalar& s, v1::Scalar* out) {
  if (s.is_complex()) {
    out->mutable_complex_value()->set_real(s.as_double());
    out->mutable_complex_value()->set_imag(s.imag());
  } else if (s.is_bool()) {
    out->set_bool_value(s.as_bool());
  } else if (s.is_int()) {
    out->set_int_value(s.as_int64());
  } else {
    out->set_float_value(s.as_double());
  }
}

}  // namespace resident
