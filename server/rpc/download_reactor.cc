// Download: a server stream of chunks, double-buffered so that the next
// chunk is read from the device while gRPC writes the last.
//
// Two kinds of event touch the reactor: the constructor and OnWriteDone
// (gRPC never runs OnWriteDone concurrently with itself, but it may run
// while another thread reads a chunk). Both only record what happened and
// call Advance(), the one function that decides what to do next, under
// the lock: start a write, read a chunk, or finish. It finishes exactly
// once, and only when no write is in flight and no read is running, so
// nothing touches the reactor after OnDone may have deleted it.
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/rpc/proto_convert.h"
#include "server/rpc/raw_call.h"
#include "server/rpc/service.h"
#include "server/rpc/slice_pool.h"
#include "server/rpc/transfer_reactors.h"

namespace resident {
namespace {

// DownloadChunk.data's tag: field 2, length-delimited.
constexpr char kDataTag = 0x12;

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

class DownloadReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  DownloadReactor(ResidentService& service, grpc::CallbackServerContext* ctx,
                  const grpc::ByteBuffer* request)
      : service_(service), ctx_(ctx) {
    error_ = Begin(*request);
    Advance();
  }

  void OnWriteDone(bool ok) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      writing_ = false;
      if (!ok && error_.ok()) error_ = absl::CancelledError("download cancelled");
    }
    Advance();
  }

  void OnDone() override { delete this; }

 private:
  absl::Status Begin(const grpc::ByteBuffer& request) {
    ASSIGN_OR_RETURN(Identity who, AuthenticateCall(service_.auth(), ctx_, Role::kUser));
    tenant_ = who.tenant;
    RETURN_IF_ERROR(service_.CheckDevice());
    v1::DownloadRequest req;
    RETURN_IF_ERROR(ParseMessage(request, &req));
    ASSIGN_OR_RETURN(HandleId session, SessionOf(req.session()));
    ASSIGN_OR_RETURN(HandleId handle, DecodeHandle(req.handle(), "handle"));
    ASSIGN_OR_RETURN(download_, service_.sessions().BeginDownload(tenant_, session, handle));
    // The range asked for: [begin_, total_).
    const int64_t nbytes = download_->description().nbytes;
    if (req.offset() < 0 || req.length() < 0 || req.offset() > nbytes ||
        req.length() > nbytes - req.offset()) {
      return absl::OutOfRangeError(absl::StrCat("bytes [", req.offset(), ", +", req.length(),
                                                ") are outside the array's ", nbytes));
    }
    begin_ = offset_ = req.offset();
    total_ = req.length() == 0 ? nbytes : req.offset() + req.length();
    return absl::OkStatus();
  }

  void Advance() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (finished_) return;
      if (!error_.ok()) {
        // Stop: finish once nothing of ours is in flight (the write's
        // OnWriteDone or the reader comes back here).
        if (writing_ || reading_) return;
        finished_ = true;
        const absl::Status error = service_.Observe(error_);
        lock.unlock();
        download_.reset();
        Finish(ToGrpcStatus(error));
        return;
      }
      if (ready_ >= 0 && !writing_) {
        const int k = ready_;
        ready_ = -1;
        writing_ = true;
        if (ready_last_) {
          finished_ = true;
          service_.metrics().RecordDownload(tenant_, total_ - begin_);
          lock.unlock();
          // Every byte is in the chunk: let go of the array before the
          // client can see the end (a release or close right after it
          // must find the memory free).
          download_.reset();
          // A last-message write is held until Finish anyway: write and
          // finish in one step (no OnWriteDone follows, only OnDone).
          StartWriteAndFinish(&chunks_[k], grpc::WriteOptions(), grpc::Status::OK);
          return;
        }
        // Claim the next read before letting go of the lock: once the
        // write is started this thread may touch the reactor only while
        // it holds a claim that keeps the call from finishing.
        const bool read_next = !read_all_;
        if (read_next) reading_ = true;
        lock.unlock();
        StartWrite(&chunks_[k]);
        if (!read_next) return;
        lock.lock();
        ReadNext(lock);
        continue;
      }
      if (reading_ || ready_ >= 0 || read_all_) return;
      reading_ = true;
      ReadNext(lock);
    }
  }

  // With reading_ claimed and `lock` held: reads the next chunk into the
  // buffer that is not being written, with the lock dropped meanwhile.
  void ReadNext(std::unique_lock<std::mutex>& lock) {
    const int k = writing_ ? 1 - writing_slot_ : 0;
    const int64_t offset = offset_;
    const int64_t n = std::min<int64_t>(service_.options().chunk_bytes, total_ - offset);
    lock.unlock();
    absl::Status read = Fill(k, offset, n);
    lock.lock();
    reading_ = false;
    if (!read.ok()) {
      if (error_.ok()) error_ = read;
      return;
    }
    offset_ = offset + n;
    ready_ = k;
    writing_slot_ = k;  // the next write is this buffer
    ready_last_ = offset_ >= total_;
    read_all_ = ready_last_;
  }

  // Chunk k := bytes [offset, offset + n) of the array, as a serialised
  // DownloadChunk (the first carries the description), read straight from
  // the device into the slice gRPC sends.
  absl::Status Fill(int k, int64_t offset, int64_t n) {
    std::string prefix;
    if (offset == begin_) {
      v1::DownloadChunk head;
      EncodeArray(download_->description(), head.mutable_array());
      prefix = head.SerializeAsString();
    }
    prefix.push_back(kDataTag);
    AppendVarint(static_cast<uint64_t>(n), &prefix);
    grpc::Slice data = PooledSlice(static_cast<size_t>(n));
    RETURN_IF_ERROR(download_->Read(offset, n, const_cast<uint8_t*>(data.begin())));
    grpc::Slice slices[2] = {grpc::Slice(prefix), std::move(data)};
    chunks_[k] = grpc::ByteBuffer(slices, 2);
    return absl::OkStatus();
  }

  ResidentService& service_;
  grpc::CallbackServerContext* const ctx_;
  std::string tenant_;
  std::unique_ptr<resident::Download> download_;
  grpc::ByteBuffer chunks_[2];

  std::mutex mu_;       // guards everything below
  absl::Status error_;  // first failure (cancel, read error); stops the call
  int64_t begin_ = 0;   // the range sent: [begin_, total_)
  int64_t total_ = 0;
  int64_t offset_ = 0;    // next byte to read from the device
  bool writing_ = false;  // a write is in flight
  int writing_slot_ = 0;  // buffer of the write in flight (or next)
  bool reading_ = false;  // a thread is reading a chunk
  int ready_ = -1;        // buffer read and not yet written, or -1
  bool ready_last_ = false;
  bool read_all_ = false;
  bool finished_ = false;  // Finish (or StartWriteAndFinish) was called
};

}  // namespace

grpc::ServerWriteReactor<grpc::ByteBuffer>* NewDownloadReactor(ResidentService& service,
                                                               grpc::CallbackServerContext* ctx,
                                                               const grpc::ByteBuffer* request) {
  return new DownloadReactor(service, ctx, request);
}

}  // namespace resident
