// Conversions between the wire contract and the domain types.
#ifndef RESIDENT_SERVER_RPC_PROTO_CONVERT_H_
#define RESIDENT_SERVER_RPC_PROTO_CONVERT_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/proto/wire.h"
#include "resident/v1/resident.pb.h"
#include "server/program/program.h"
#include "server/session/session_manager.h"

namespace resident {

// Decodes a program, rejecting unknown ops, malformed operands and bodies
// nested deeper than max_depth, naming the instruction.
absl::StatusOr<std::shared_ptr<const Program>> DecodeProgram(const v1::Program& program,
                                                             int max_depth);
absl::StatusOr<std::vector<OutputSpec>> DecodeOutputs(
    const google::protobuf::RepeatedPtrField<v1::Output>& outputs);

void EncodeArray(const ArrayDescription& a, v1::ArrayInfo* out);

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_PROTO_CONVERT_H_
