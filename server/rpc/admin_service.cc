#include "server/rpc/admin_service.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/base/log.h"
#include "server/base/status_macros.h"
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
                                                     const v1::ListSessionsRequest*,
                                                     v1::ListSessionsResponse* resp) {
  auto* reactor = ctx->DefaultReactor();
  absl::StatusOr<Identity> who = auth_.Authorize(ctx->client_metadata(), Role::kAdmin);
  if (!who.ok()) {
    reactor->Finish(ToGrpcStatus(who.status()));
    return reactor;
  }
  const absl::Time now = absl::Now();
  for (const SessionSnapshot& s : sessions_.Snapshot()) {
    v1::SessionSummary* out = resp->add_sessions();
    out->set_session(s.id.bytes());
    out->set_tenant(s.tenant);
    out->set_age_ms(absl::ToInt64Milliseconds(now - s.opened));
    out->set_idle_ms(absl::ToInt64Milliseconds(now - s.last_used));
    out->set_arrays(s.arrays);
    out->set_bytes(s.bytes);
  }
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* AdminService::CloseSession(
    grpc::CallbackServerContext* ctx, const v1::AdminCloseSessionRequest* req,
    v1::AdminCloseSessionResponse* resp) {
  auto* reactor = ctx->DefaultReactor();
  auto close = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(Identity who, auth_.Authorize(ctx->client_metadata(), Role::kAdmin));
    ASSIGN_OR_RETURN(HandleId id, FindSession(sessions_, *req));
    RETURN_IF_ERROR(sessions_.AdminClose(id));
    RESIDENT_LOG(kInfo, "admin '", who.tenant, "' closed session ", id.ToHex().substr(0, 8));
    resp->set_session(id.bytes());
    return absl::OkStatus();
  };
  reactor->Finish(ToGrpcStatus(close()));
  return reactor;
}

}  // namespace resident
