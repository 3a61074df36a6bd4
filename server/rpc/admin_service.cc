#include "server/rpc/admin_service.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/log.h"
#include "core/status_macros.h"
#include "server/rpc/raw_call.h"
#include "server/rpc/status_util.h"

namespace resident {
namespace {

// The session an admin names: 16 raw bytes, or a unique hex prefix.
absl::StatusOr<HandleId> FindSession(const SessionManager& sessions,
                                     const v1::AdminCloseSessionRequest& req) {
  if (!req.session().empty()) {
    std::optional<HandleId> id = HandleId::FromBytes(req.session());
    if (!id) return absl::InvalidArgumentError("session id is not 16 bytes");
    return *id;
  }
  const std::string prefix = absl::AsciiStrToLower(req.session_hex());
  if (prefix.size() < 8) {
    return absl::InvalidArgumentError("give at least 8 hex digits of the session id");
  }
  std::vector<HandleId> matches;
  for (const SessionSnapshot& s : sessions.Snapshot()) {
    if (absl::StartsWith(s.id.ToHex(), prefix)) matches.push_back(s.id);
  }
  if (matches.empty()) return absl::NotFoundError(absl::StrCat("no session ", prefix));
  if (matches.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(matches.size(), " sessions start with ", prefix, "; give more digits"));
  }
  return matches[0];
}

}  // namespace

grpc::ServerUnaryReactor* AdminService::ListSessions(grpc::CallbackServerContext* ctx,
                                                     const grpc::ByteBuffer* in,
                                                     grpc::ByteBuffer* out) {
  auto* call = new UnaryCall<v1::ListSessionsRequest, v1::ListSessionsResponse>(ctx, in, out);
  absl::Status status = call->Start(auth_, Role::kAdmin);
  if (status.ok()) {
    const absl::Time now = absl::Now();
    for (const SessionSnapshot& s : sessions_.Snapshot()) {
      v1::SessionSummary* o = call->response().add_sessions();
      o->set_session(s.id.bytes());
      o->set_tenant(s.tenant);
      o->set_age_ms(absl::ToInt64Milliseconds(now - s.opened));
      o->set_idle_ms(absl::ToInt64Milliseconds(now - s.last_used));
      o->set_arrays(s.arrays);
      o->set_bytes(s.bytes);
    }
  }
  call->Finish(status);
  return call;
}

grpc::ServerUnaryReactor* AdminService::CloseSession(grpc::CallbackServerContext* ctx,
                                                     const grpc::ByteBuffer* in,
                                                     grpc::ByteBuffer* out) {
  auto* call =
      new UnaryCall<v1::AdminCloseSessionRequest, v1::AdminCloseSessionResponse>(ctx, in, out);
  auto close = [&]() -> absl::Status {
    RETURN_IF_ERROR(call->Start(auth_, Role::kAdmin));
    ASSIGN_OR_RETURN(HandleId id, FindSession(sessions_, call->request()));
    RETURN_IF_ERROR(sessions_.AdminClose(id));
    RESIDENT_LOG(kInfo, "admin '", call->identity().tenant, "' closed session ",
                 id.ToHex().substr(0, 8));
    call->response().set_session(id.bytes());
    return absl::OkStatus();
  };
  call->Finish(close());
  return call;
}

}  // namespace resident
