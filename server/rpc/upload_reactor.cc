// Upload: a client stream of chunks. gRPC delivers one read at a time and
// OnDone only after Finish, so the reactor runs on one logical thread: each
// message is taken in OnReadDone and Done() is the one place that finishes.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/proto/split_message.h"
#include "core/status_macros.h"
#include "server/rpc/proto_convert.h"
#include "server/rpc/raw_call.h"
#include "server/rpc/service.h"
#include "server/rpc/transfer_reactors.h"

namespace resident {
namespace {

class UploadReactor final : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  UploadReactor(ResidentService& service, grpc::CallbackServerContext* ctx,
                grpc::ByteBuffer* response)
      : service_(service), ctx_(ctx), response_(response) {
    absl::StatusOr<Identity> who = AuthenticateCall(service_.auth(), ctx_, Role::kUser);
    absl::Status status = who.status();
    if (status.ok()) status = service_.CheckDevice();
    if (!status.ok()) {
      Done(status);
      return;
    }
    tenant_ = who->tenant;
    StartRead(&message_);
  }

  void OnReadDone(bool ok) override {
    // Not ok: the client half-closed, or the call is gone (then Finish is
    // only bookkeeping; gRPC still needs it).
    if (!ok) return Done(End());
    absl::Status status = Take();
    if (!status.ok()) return Done(status);
    slices_.clear();
    message_.Clear();
    StartRead(&message_);
  }

  void OnDone() override { delete this; }

 private:
  // One message: the header (first only) and data. The data goes from
  // gRPC's slices straight into the upload; only the header is parsed by
  // protobuf.
  absl::Status Take() {
    v1::UploadRequest req;
    ++messages_;
    RETURN_IF_ERROR(Split());
    if (!req.ParseFromString(split_.rest)) return NotARequest("the header fields do not parse");
    if (upload_ == nullptr) {
      RETURN_IF_ERROR(Begin(req));
    } else if (!req.session().empty() || req.dtype() != v1::DTYPE_UNSPECIFIED ||
               req.shape_size() > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("message ", messages_, " of the upload repeats a header field (",
                       !req.session().empty() ? "session"
                       : req.dtype() != 0     ? "dtype"
                                              : "shape",
                       "); only the first upload message carries session, dtype and shape"));
    }
    return upload_->Append(absl::MakeConstSpan(split_.data));
  }

  // split_ := message_ cut into its data field and the rest. The views
  // point into slices_, which hold references to message_'s memory.
  absl::Status Split() {
    slices_.clear();
    if (!message_.Dump(&slices_).ok()) return NotARequest("the message cannot be read");
    pieces_.clear();
    for (const grpc::Slice& s : slices_) {
      pieces_.emplace_back(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    absl::Status s = SplitDataField(pieces_, v1::UploadRequest::kDataFieldNumber, &split_);
    if (!s.ok()) return NotARequest(s.message());
    return absl::OkStatus();
  }

  absl::Status NotARequest(absl::string_view why) const {
    return absl::InvalidArgumentError(
        absl::StrCat("upload message ", messages_, " could not be parsed as ",
                     v1::UploadRequest::descriptor()->full_name(), ": ", why,
                     " (is the client built from the same resident.proto?)"));
  }

  absl::Status Begin(const v1::UploadRequest& header) {
    if (header.session().empty()) {
      return absl::InvalidArgumentError("the first upload message names no session");
    }
    ASSIGN_OR_RETURN(HandleId session, DecodeHandle(header.session(), "session id"));
    ASSIGN_OR_RETURN(DType dtype, DecodeDType(header.dtype()));
    ASSIGN_OR_RETURN(Shape shape, DecodeShape(header.shape()));
    ASSIGN_OR_RETURN(upload_, service_.sessions().BeginUpload(tenant_, session, dtype, shape));
    return absl::OkStatus();
  }

  // The stream ended: register the array if every byte came.
  absl::Status End() {
    if (ctx_->IsCancelled()) return absl::CancelledError("upload cancelled");
    if (upload_ == nullptr) return absl::InvalidArgumentError("upload stream carried no header");
    ASSIGN_OR_RETURN(ArrayDescription a, upload_->Finish());
    service_.metrics().RecordUpload(tenant_, a.nbytes);
    v1::ArrayInfo info;
    EncodeArray(a, &info);
    return SerializeMessage(info, response_);
  }

  void Done(const absl::Status& status) {
    upload_.reset();  // frees the buffer of an unfinished upload
    Finish(ToGrpcStatus(service_.Observe(status)));
  }

  ResidentService& service_;
  grpc::CallbackServerContext* const ctx_;
  grpc::ByteBuffer* const response_;
  std::string tenant_;
  grpc::ByteBuffer message_;
  std::vector<grpc::Slice> slices_;
  std::vector<std::string_view> pieces_;
  SplitMessage split_;
  int64_t messages_ = 0;
  std::unique_ptr<resident::Upload> upload_;
};

}  // namespace

grpc::ServerReadReactor<grpc::ByteBuffer>* NewUploadReactor(ResidentService& service,
                                                            grpc::CallbackServerContext* ctx,
                                                            grpc::ByteBuffer* response) {
  return new UploadReactor(service, ctx, response);
}

}  // namespace resident
