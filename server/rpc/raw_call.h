// Calls on raw (ByteBuffer) methods: we parse requests ourselves.
//
// gRPC's generated callback handlers answer a request that does not parse
// with UNIMPLEMENTED and an empty message, as if the method did not exist.
// Every method of our services is registered raw instead, and parses here:
// an undecodable request is INVALID_ARGUMENT naming the message type.
//
// UnaryCall is the one reactor of every unary method: it owns the parsed
// request and the response, the caller's identity (authenticated once per
// call), and finishes exactly once.
//
//   auto* call = new UnaryCall<v1::ListRequest, v1::ListResponse>(ctx, in, out);
//   absl::Status s = call->Start(auth, Role::kUser);
//   if (s.ok()) s = Handle(call->identity(), call->request(), &call->response());
//   call->Finish(s);
//   return call;
#ifndef RESIDENT_SERVER_RPC_RAW_CALL_H_
#define RESIDENT_SERVER_RPC_RAW_CALL_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/proto_buffer_writer.h>
#include <grpcpp/support/server_callback.h>

#include <google/protobuf/arena.h>

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/proto/split_message.h"
#include "server/rpc/auth.h"
#include "server/rpc/status_util.h"

namespace resident {

// Trailing-metadata key through which a handler tells the call-log
// interceptor who the caller was, so the token is checked once per call.
// The interceptor removes it before the trailers are sent.
inline constexpr char kTenantTrailer[] = "x-resident-tenant";

// Parses `buffer` into `message`; INVALID_ARGUMENT naming the type if the
// bytes are not one.
template <class Message>
absl::Status ParseMessage(const grpc::ByteBuffer& buffer, Message* message) {
  grpc::ByteBuffer copy(buffer);  // shares the slices; the reader needs non-const
  grpc::ProtoBufferReader reader(&copy);
  if (!reader.status().ok() || !message->ParseFromZeroCopyStream(&reader)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request could not be parsed as ", Message::descriptor()->full_name(),
                     " (is the client built from the same resident.proto?)"));
  }
  return absl::OkStatus();
}

// Serialises `message` into `out`; INTERNAL if protobuf refuses (too large).
absl::Status SerializeMessage(const google::protobuf::MessageLite& message, grpc::ByteBuffer* out);

// Authenticates the caller once and records the tenant for the call log.
absl::StatusOr<Identity> AuthenticateCall(const Authenticator& auth,
                                          grpc::CallbackServerContext* ctx, Role needed);

template <class Request, class Response>
class UnaryCall final : public grpc::ServerUnaryReactor {
 public:
  UnaryCall(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in, grpc::ByteBuffer* out)
      : ctx_(ctx), in_(in), out_(out) {}

  // Authenticates the caller (who must hold `needed`) and parses the
  // request, unless `parse` is false (then Parse later). On error, Finish
  // with it.
  absl::Status Start(const Authenticator& auth, Role needed, bool parse = true) {
    absl::StatusOr<Identity> who = AuthenticateCall(auth, ctx_, needed);
    if (!who.ok()) return who.status();
    identity_ = *std::move(who);
    return parse ? Parse() : absl::OkStatus();
  }
  // Parses the request (again, after DropRequest).
  absl::Status Parse() { return ParseMessage(*in_, request_); }
  // Parses every field of the request but `field` (a length-delimited
  // one, left empty): the header of a request whose bulk is not needed.
  absl::Status ParseWithout(int field) {
    grpc::ByteBuffer copy(*in_);  // shares the slices; Dump needs non-const
    std::vector<grpc::Slice> slices;
    std::vector<std::string_view> pieces;
    SplitMessage split;
    if (copy.Dump(&slices).ok()) {
      for (const grpc::Slice& s : slices) {
        pieces.emplace_back(reinterpret_cast<const char*>(s.begin()), s.size());
      }
      if (SplitDataField(pieces, field, &split).ok() && request_->ParseFromString(split.rest)) {
        return absl::OkStatus();
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat("the request could not be parsed as ", Request::descriptor()->full_name()));
  }
  // Frees the parsed request (request() is then empty): a call that waits
  // its turn holds only the raw bytes gRPC keeps anyway.
  void DropRequest() {
    arena_.Reset();
    request_ = google::protobuf::Arena::CreateMessage<Request>(&arena_);
  }
  // Bytes of the raw request.
  int64_t request_bytes() const { return static_cast<int64_t>(in_->Length()); }

  grpc::CallbackServerContext* context() const { return ctx_; }
  const Identity& identity() const { return identity_; }
  const Request& request() const { return *request_; }
  Response& response() { return response_; }

  // Sends the response (when `status` is OK) and the status. Call once; the
  // call deletes itself after gRPC is done with it.
  void Finish(const absl::Status& status) {
    absl::Status s = status;
    if (s.ok()) s = SerializeMessage(response_, out_);
    grpc::ServerUnaryReactor::Finish(ToGrpcStatus(s));
  }

  void OnDone() override { delete this; }

 private:
  grpc::CallbackServerContext* const ctx_;
  const grpc::ByteBuffer* const in_;
  grpc::ByteBuffer* const out_;
  Identity identity_;
  // The request lives on an arena: a Run of 10,000 instructions is 30,000
  // small messages, which the heap would allocate and free one by one.
  google::protobuf::Arena arena_;
  Request* request_ = google::protobuf::Arena::CreateMessage<Request>(&arena_);
  Response response_;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_RAW_CALL_H_
