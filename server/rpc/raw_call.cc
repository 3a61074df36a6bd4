#include "server/rpc/raw_call.h"

#include <grpcpp/impl/codegen/proto_utils.h>

namespace resident {

absl::Status SerializeMessage(const google::protobuf::MessageLite& message, grpc::ByteBuffer* out) {
  bool own = false;
  grpc::Status s =
      grpc::SerializationTraits<google::protobuf::MessageLite>::Serialize(message, out, &own);
  if (!s.ok()) {
    return absl::InternalError(absl::StrCat("cannot serialise the response: ", s.error_message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Identity> AuthenticateCall(const Authenticator& auth,
                                          grpc::CallbackServerContext* ctx, Role needed) {
  absl::StatusOr<Identity> who = auth.Authenticate(ctx->client_metadata());
  if (!who.ok()) return who;
  ctx->AddTrailingMetadata(kTenantTrailer, who->tenant);
  if (needed == Role::kAdmin && who->role != Role::kAdmin) {
    return absl::PermissionDeniedError("this method needs the admin role");
  }
  return who;
}

}  // namespace resident
