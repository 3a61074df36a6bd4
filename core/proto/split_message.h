// Splits a serialised protobuf message held in pieces (the slices of a gRPC
// ByteBuffer) into its one large bytes field and everything else, without
// copying the large field: Upload and Download move arrays of GiBs in
// messages of a few MiB, and protobuf's parser would copy every chunk into
// a std::string first.
#ifndef RESIDENT_CORE_PROTO_SPLIT_MESSAGE_H_
#define RESIDENT_CORE_PROTO_SPLIT_MESSAGE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"

namespace resident {

struct SplitMessage {
  // Every field but the data field, still serialised (tags included): parse
  // it with protobuf. It is small (a header), so copying it is cheap.
  std::string rest;
  // The data field's bytes, as views into the input pieces, in order. As in
  // protobuf, a field that occurs twice keeps its last value.
  std::vector<std::string_view> data;
  size_t data_size = 0;
};

// Walks the wire format of the message in `pieces` (in order), taking field
// `data_field` (which must be length-delimited) into out->data. Every
// varint, length and fixed-width value is checked against the bytes left;
// malformed input is INVALID_ARGUMENT saying what is wrong and where.
// Groups (wire types 3 and 4) are refused: resident.proto has none.
absl::Status SplitDataField(absl::Span<const std::string_view> pieces, int data_field,
                            SplitMessage* out);

// One field of a serialised message, as ForEachField reads it: `varint`
// holds a varint field's value, `bytes` a length-delimited or fixed-width
// field's bytes (a view into the input).
struct WireField {
  uint64_t number = 0;
  int wire_type = 0;
  uint64_t varint = 0;
  std::string_view bytes;
};

// Calls `fn` on each field of the message `bytes`, in order, with the
// checks SplitDataField makes; stops at fn's first error. For the few
// messages we have no generated class for (grpc.health.v1: Debian ships no
// health.proto).
absl::Status ForEachField(std::string_view bytes,
                          absl::FunctionRef<absl::Status(const WireField&)> fn);

// Appends `v` in varint encoding.
void AppendVarint(uint64_t v, std::string* out);

}  // namespace resident

#endif  // RESIDENT_CORE_PROTO_SPLIT_MESSAGE_H_
