#include "client/transfer.h"

#include <grpcpp/impl/rpc_method.h>
#include <grpcpp/support/sync_stream.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/proto/split_message.h"
#include "core/status_macros.h"

namespace resident::client {
namespace {

constexpr char kUploadMethod[] = "/resident.v1.Resident/Upload";
constexpr char kDownloadMethod[] = "/resident.v1.Resident/Download";

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Counts the slices over the caller's memory that gRPC still references;
// the upload returns only once none is left, so the caller may free it.
class Pins {
 public:
  grpc::Slice Wrap(const char* data, size_t n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++live_;
    }
    return grpc::Slice(const_cast<char*>(data), n, &Pins::Unpin, this);
  }
  void WaitReleased() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return live_ == 0; });
  }

 private:
  static void Unpin(void* self) {
    Pins* p = static_cast<Pins*>(self);
    std::lock_guard<std::mutex> lock(p->mu_);
    if (--p->live_ == 0) p->cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  int live_ = 0;
};

// One Download message, cut into its header and data; the views point
// into `slices`.
struct Received {
  std::vector<grpc::Slice> slices;
  std::vector<std::string_view> pieces;
  SplitMessage split;
  v1::DownloadChunk head;
};

absl::Status Split(grpc::ByteBuffer& message, int64_t index, Received* r) {
  auto bad = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrCat(
        "download message ", index, " could not be parsed as resident.v1.DownloadChunk: ", why));
  };
  r->slices.clear();
  if (!message.Dump(&r->slices).ok()) return bad("the message cannot be read");
  r->pieces.clear();
  for (const grpc::Slice& s : r->slices) {
    r->pieces.emplace_back(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  absl::Status s = SplitDataField(r->pieces, v1::DownloadChunk::kDataFieldNumber, &r->split);
  if (!s.ok()) return bad(s.message());
  if (!r->head.ParseFromString(r->split.rest)) return bad("the header fields do not parse");
  return absl::OkStatus();
}

// Asks Linux to back a large fresh buffer with huge pages: faulting in a
// GiB 4 KiB at a time costs more than copying it. Only a hint.
void PreferHugePages(const char* p, size_t n) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (n < 8 * kHuge) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// The first message's description: dtype, shape and room for the bytes.
absl::Status Begin(const v1::DownloadChunk& head, HostData* out, int64_t* want) {
  if (!head.has_array()) {
    return absl::DataLossError("the first download message carries no array description");
  }
  absl::StatusOr<DType> dt = DecodeDType(head.array().dtype());
  if (!dt.ok()) return dt.status();
  absl::StatusOr<Shape> shape = DecodeShape(head.array().shape());
  if (!shape.ok()) return shape.status();
  out->dtype = *dt;
  out->shape = *shape;
  *want = NumElements(out->shape) * ItemSize(out->dtype);
  try {
    out->bytes.reserve(static_cast<size_t>(*want));
    PreferHugePages(out->bytes.data(), out->bytes.capacity());
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat("no memory for a ", *want, "-byte download"));
  } catch (const std::length_error&) {
    return absl::ResourceExhaustedError(absl::StrCat("no memory for a ", *want, "-byte download"));
  }
  return absl::OkStatus();
}

absl::Status Take(const Received& r, int64_t index, HostData* out, int64_t* want) {
  if (index == 1) {
    if (absl::Status s = Begin(r.head, out, want); !s.ok()) return s;
  } else if (r.head.has_array()) {
    return absl::DataLossError(
        absl::StrCat("download message ", index, " repeats the array description"));
  }
  if (static_cast<int64_t>(out->bytes.size() + r.split.data_size) > *want) {
    return absl::DataLossError(
        absl::StrCat("download carried more than the ", *want, " bytes of the array"));
  }
  for (std::string_view piece : r.split.data) out->bytes.append(piece);
  return absl::OkStatus();
}

}  // namespace

void ConnectLocalData(ClientCore& core, const std::string& path) {
  core.transport = "grpc";
  if (!core.options.local_data) {
    core.transport_detail = "shared memory turned off (ClientOptions::local_data)";
    return;
  }
  if (path.empty()) {
    core.transport_detail = "the server offers no local data socket (--local-data-socket off)";
    return;
  }
  if (access(path.c_str(), F_OK) != 0) {
    core.transport_detail = absl::StrCat("the server's local data socket ", path,
                                         " is not visible here (another host or container?)");
    return;
  }
  absl::StatusOr<std::unique_ptr<LocalData>> local =
      LocalData::Connect(path, core.session, core.options.token);
  absl::StatusOr<std::shared_ptr<LocalRegion>> probe =
      local.ok() ? (*local)->Register(1) : local.status();
  if (!probe.ok()) {
    core.transport_detail = absl::StrCat("the local data socket ", path,
                                         " could not be used: ", probe.status().message());
    return;
  }
  (*local)->GiveBack(*std::move(probe));
  core.local = *std::move(local);
  core.transport = "shared-memory";
  core.transport_detail = absl::StrCat("memfd regions over ", path);
}

namespace {

absl::StatusOr<v1::ArrayInfo> UploadShared(ClientCore& core, DType dtype, const Shape& shape,
                                           std::string_view bytes) {
  ASSIGN_OR_RETURN(std::shared_ptr<LocalRegion> region,
                   core.local->Acquire(static_cast<int64_t>(bytes.size())));
  std::memcpy(region->data, bytes.data(), bytes.size());
  v1::RegionUploadRequest req;
  req.set_session(core.session);
  req.set_region(region->id);
  req.set_dtype(EncodeDType(dtype));
  for (int64_t d : shape) req.add_shape(d);
  v1::ArrayInfo info;
  grpc::ClientContext ctx;
  const absl::Status s = FromGrpc(core.stub->RegionUpload(&ctx, req, &info));
  core.local->GiveBack(std::move(region));
  if (!s.ok()) return s;
  return info;
}

// RegionDownload of `handle` into a region of the pool: the region, still
// leased to the caller, and the array's dtype and shape.
struct SharedDownload {
  std::shared_ptr<LocalRegion> region;
  DType dtype;
  Shape shape;
};

absl::StatusOr<SharedDownload> DownloadToRegion(ClientCore& core, const std::string& handle,
                                                int64_t nbytes) {
  ASSIGN_OR_RETURN(std::shared_ptr<LocalRegion> region, core.local->Acquire(nbytes));
  v1::RegionDownloadRequest req;
  req.set_session(core.session);
  req.set_handle(handle);
  req.set_region(region->id);
  v1::ArrayInfo info;
  grpc::ClientContext ctx;
  absl::Status s = FromGrpc(core.stub->RegionDownload(&ctx, req, &info));
  if (s.ok() && info.nbytes() != nbytes) {
    s = absl::DataLossError(absl::StrCat("the array has ", info.nbytes(), " bytes, not ", nbytes));
  }
  absl::StatusOr<DType> dtype = s.ok() ? DecodeDType(info.dtype()) : s;
  if (!dtype.ok()) {
    core.local->GiveBack(std::move(region));
    return dtype.status();
  }
  return SharedDownload{std::move(region), *dtype, Shape(info.shape().begin(), info.shape().end())};
}

absl::StatusOr<HostData> DownloadShared(ClientCore& core, const std::string& handle,
                                        int64_t nbytes) {
  ASSIGN_OR_RETURN(SharedDownload d, DownloadToRegion(core, handle, nbytes));
  HostData out;
  out.dtype = d.dtype;
  out.shape = std::move(d.shape);
  out.bytes.assign(d.region->data, static_cast<size_t>(nbytes));
  core.local->GiveBack(std::move(d.region));
  return out;
}

}  // namespace

absl::StatusOr<v1::ArrayInfo> UploadBytes(ClientCore& core, DType dtype, const Shape& shape,
                                          std::string_view bytes) {
  if (core.local != nullptr && static_cast<int64_t>(bytes.size()) >= kLocalMinBytes) {
    return UploadShared(core, dtype, shape, bytes);
  }
  static const grpc::internal::RpcMethod kMethod(kUploadMethod,
                                                 grpc::internal::RpcMethod::CLIENT_STREAMING);
  const size_t chunk = static_cast<size_t>(
      std::max<int64_t>(core.info.chunk_bytes > 0 ? core.info.chunk_bytes : (1 << 20), 1));
  Pins pins;  // outlives the call, which may hold the slices until it is gone
  grpc::Status status;
  grpc::ByteBuffer response;
  {
    grpc::ClientContext ctx;
    std::unique_ptr<grpc::ClientWriter<grpc::ByteBuffer>> writer(
        grpc::internal::ClientWriterFactory<grpc::ByteBuffer>::Create(core.channel.get(), kMethod,
                                                                      &ctx, &response));
    // The first message: the header fields, then every message's data
    // field prefix (tag, length) and a slice over the caller's bytes.
    v1::UploadRequest head;
    head.set_session(core.session);
    head.set_dtype(EncodeDType(dtype));
    for (int64_t d : shape) head.add_shape(d);
    std::string prefix = head.SerializeAsString();
    size_t offset = 0;
    do {
      const size_t n = std::min(chunk, bytes.size() - offset);
      prefix.push_back(static_cast<char>((v1::UploadRequest::kDataFieldNumber << 3) | 2));
      AppendVarint(n, &prefix);
      grpc::Slice slices[2] = {grpc::Slice(prefix),
                               n > 0 ? pins.Wrap(bytes.data() + offset, n) : grpc::Slice()};
      offset += n;
      const bool written = writer->Write(grpc::ByteBuffer(slices, n > 0 ? 2 : 1));
      prefix.clear();
      if (!written) break;  // the server ended the call; see Finish
    } while (offset < bytes.size());
    writer->WritesDone();
    status = writer->Finish();
  }
  pins.WaitReleased();
  if (absl::Status s = FromGrpc(status); !s.ok()) return s;
  v1::ArrayInfo info;
  std::vector<grpc::Slice> slices;
  std::string flat;
  if (response.Dump(&slices).ok()) {
    for (const grpc::Slice& s : slices)
      flat.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  if (!info.ParseFromString(flat)) {
    return absl::DataLossError("the upload's response does not parse as resident.v1.ArrayInfo");
  }
  return info;
}

absl::StatusOr<HostView> DownloadViewBytes(ClientCore& core, const std::string& handle,
                                           int64_t nbytes) {
  if (core.local == nullptr || nbytes < kLocalMinBytes) {
    ASSIGN_OR_RETURN(HostData d, DownloadBytes(core, handle, nbytes));
    auto owned = std::make_shared<HostData>(std::move(d));
    return HostView(owned->dtype, owned->shape, owned->bytes, owned, false);
  }
  ASSIGN_OR_RETURN(SharedDownload d, DownloadToRegion(core, handle, nbytes));
  // The lease ends with the last view: the region goes back to the pool, or,
  // if the client is gone (its socket closed, the server's side unmapped),
  // it is only unmapped here.
  const std::string_view bytes(d.region->data, static_cast<size_t>(nbytes));
  std::shared_ptr<const void> lease(
      d.region.get(),
      [region = d.region, pool = std::weak_ptr<LocalData>(core.local)](const void*) mutable {
        if (std::shared_ptr<LocalData> p = pool.lock()) p->GiveBack(std::move(region));
      });
  return HostView(d.dtype, std::move(d.shape), bytes, std::move(lease), true);
}

absl::StatusOr<HostData> DownloadBytes(ClientCore& core, const std::string& handle,
                                       int64_t nbytes) {
  if (core.local != nullptr && nbytes >= kLocalMinBytes) {
    return DownloadShared(core, handle, nbytes);
  }
  static const grpc::internal::RpcMethod kMethod(kDownloadMethod,
                                                 grpc::internal::RpcMethod::SERVER_STREAMING);
  v1::DownloadRequest req;
  req.set_session(core.session);
  req.set_handle(handle);
  grpc::Slice serialised(req.SerializeAsString());
  const grpc::ByteBuffer request(&serialised, 1);
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader(
      grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(core.channel.get(), kMethod,
                                                                    &ctx, request));
  HostData out;
  int64_t want = -1;
  int64_t index = 0;
  absl::Status error;
  grpc::ByteBuffer message;
  Received r;
  while (reader->Read(&message)) {
    error = Split(message, ++index, &r);
    if (error.ok()) error = Take(r, index, &out, &want);
    r.slices.clear();
    message.Clear();
    if (!error.ok()) {
      ctx.TryCancel();
      while (reader->Read(&message)) message.Clear();
      break;
    }
  }
  const grpc::Status status = reader->Finish();
  if (!error.ok()) return error;
  if (absl::Status s = FromGrpc(status); !s.ok()) return s;
  if (index == 0 || static_cast<int64_t>(out.bytes.size()) != want) {
    return absl::DataLossError(
        absl::StrCat("download carried ", out.bytes.size(), " bytes, expected ", want));
  }
  return out;
}

}  // namespace resident::client
