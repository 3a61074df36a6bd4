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

// The wire enum numbers are the contract; DType's are ours. Each case below
// pairs them by name, so neither order matters.
absl::StatusOr<DType> DecodeDType(int wire) {
  switch (wire) {
    case v1::DTYPE_BOOL:
      return DType::kBool;
    case v1::DTYPE_INT8:
      return DType::kInt8;
    case v1::DTYPE_INT16:
      return DType::kInt16;
    case v1::DTYPE_INT32:
      return DType::kInt32;
    case v1::DTYPE_INT64:
      return DType::kInt64;
    case v1::DTYPE_UINT8:
      return DType::kUint8;
    case v1::DTYPE_UINT16:
      return DType::kUint16;
    case v1::DTYPE_UINT32:
      return DType::kUint32;
    case v1::DTYPE_UINT64:
      return DType::kUint64;
    case v1::DTYPE_FLOAT32:
      return DType::kFloat32;
    case v1::DTYPE_FLOAT64:
      return DType::kFloat64;
    case v1::DTYPE_FLOAT16:
      return DType::kFloat16;
    case v1::DTYPE_BFLOAT16:
      return DType::kBFloat16;
    case v1::DTYPE_COMPLEX64:
      return DType::kComplex64;
    case v1::DTYPE_COMPLEX128:
      return DType::kComplex128;
    case v1::DTYPE_UNSPECIFIED:
      return absl::InvalidArgumentError("dtype is unspecified");
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported dtype ", wire, "; supported: ", SupportedNames()));
  }
}

v1::DType EncodeDType(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return v1::DTYPE_BOOL;
    case DType::kInt8:
      return v1::DTYPE_INT8;
    case DType::kInt16:
      return v1::DTYPE_INT16;
    case DType::kInt32:
      return v1::DTYPE_INT32;
    case DType::kInt64:
      return v1::DTYPE_INT64;
    case DType::kUint8:
      return v1::DTYPE_UINT8;
    case DType::kUint16:
      return v1::DTYPE_UINT16;
    case DType::kUint32:
      return v1::DTYPE_UINT32;
    case DType::kUint64:
      return v1::DTYPE_UINT64;
    case DType::kFloat32:
      return v1::DTYPE_FLOAT32;
    case DType::kFloat64:
      return v1::DTYPE_FLOAT64;
    case DType::kFloat16:
      return v1::DTYPE_FLOAT16;
    case DType::kBFloat16:
      return v1::DTYPE_BFLOAT16;
    case DType::kComplex64:
      return v1::DTYPE_COMPLEX64;
    case DType::kComplex128:
      return v1::DTYPE_COMPLEX128;
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
