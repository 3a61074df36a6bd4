// resident.v1.Admin on gRPC's callback API, registered raw like the main
// service (raw_call.h): operators list and close any tenant's sessions.
// Every method needs the admin role (PERMISSION_DENIED for a user,
// UNAUTHENTICATED without a valid token).
#ifndef RESIDENT_SERVER_RPC_ADMIN_SERVICE_H_
#define RESIDENT_SERVER_RPC_ADMIN_SERVICE_H_

#include "resident/v1/resident.grpc.pb.h"
#include "server/rpc/auth.h"
#include "server/session/session_manager.h"

namespace resident {

using RawAdminService = v1::Admin::WithRawCallbackMethod_ListSessions<
    v1::Admin::WithRawCallbackMethod_CloseSession<v1::Admin::Service>>;

class AdminService final : public RawAdminService {
 public:
  AdminService(SessionManager& sessions, const Authenticator& auth)
      : sessions_(sessions), auth_(auth) {}

  grpc::ServerUnaryReactor* ListSessions(grpc::CallbackServerContext* ctx,
                                         const grpc::ByteBuffer* in,
                                         grpc::ByteBuffer* out) override;
  // Closes the session and stops a program running in it at its next op.
  // NOT_FOUND for an unknown id; INVALID_ARGUMENT for a hex prefix shorter
  // than 8 digits or one that matches several sessions.
  grpc::ServerUnaryReactor* CloseSession(grpc::CallbackServerContext* ctx,
                                         const grpc::ByteBuffer* in,
                                         grpc::ByteBuffer* out) override;

 private:
  SessionManager& sessions_;
  const Authenticator& auth_;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_ADMIN_SERVICE_H_
