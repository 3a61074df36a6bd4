// The C++ client library: arrays on a Resident server, used like NumPy.
//
//   ASSIGN_OR_RETURN(auto client, resident::client::Client::Connect("localhost:50051"));
//   Array x = ones(*client, {1024, 512, 4, 4});
//   for (int i = 0; i < 1024; ++i) x = x + x;   // recorded, not sent
//   ASSIGN_OR_RETURN(std::vector<double> v, x.ToVector<double>());  // one request
//
// Operations are lazy by default: they are recorded into one program and
// sent when a value is needed (download, shape, an explicit Evaluate). With
// ClientOptions::lazy = false every operation is its own request. Errors of
// an operation surface when its array is evaluated, as absl::Status with
// the server's code and message.
#ifndef RESIDENT_CLIENT_CLIENT_H_
#define RESIDENT_CLIENT_CLIENT_H_

#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/elementwise_kind.h"
#include "core/scalar.h"
#include "core/shape.h"

namespace resident::client {

struct ClientOptions {
  bool lazy = true;
  // Renew the session in the background while the client lives.
  bool keep_alive = true;
  // Close the session (freeing its arrays) when the client goes. The CLI's
  // `put` leaves it open so the array outlives the command until the
  // session's idle timeout.
  bool close_session_on_exit = true;

  // Sent as `authorization: Bearer <token>` on every call (the CLI takes
  // it from --token or RESIDENT_TOKEN); empty: none (a single-user server).
  std::string token;
  // TLS: on when any of these is set. The CA (PEM) verifies the server
  // (empty: the system's roots); a certificate and key (PEM) identify the
  // client to a server that requires mutual TLS.
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;

  // Move array bytes through shared memory (the server's local data
  // socket) when the server is on this host and offers it; Client::transport
  // says which path was taken and why.
  bool local_data = true;

  // The server device the session is placed on: empty for the least
  // loaded, a decimal index into ServerInfo::devices, or a device name
  // ("cuda:1", "cpu#1"). An unknown one fails Connect with INVALID_ARGUMENT.
  std::string device;

  // Wait for a program's reply by polling the connection instead of
  // sleeping in the kernel: the calling thread keeps a core busy while the
  // program runs, and sees the reply without a sleeping thread's wake-up
  // (tens to hundreds of microseconds on an idle host). As CUDA's
  // cudaDeviceScheduleSpin, for latency-bound scripts; off by default.
  bool busy_poll = false;
};

// One device of the server (ServerInfo::devices).
struct DeviceListing {
  uint32_t index = 0;
  std::string name;         // unique: "cpu", "cuda:0", "cpu#1" (a repeat)
  std::string kind;         // "cpu" or "cuda"
  std::string backend;      // the hardware: "cuda:0" for both of cuda:0,cuda:0
  std::string description;  // e.g. "NVIDIA H200 (sm_90)"
  int64_t total_bytes = 0, free_bytes = 0, limit_bytes = 0, used_bytes = 0;
  int64_t peer_copies = 0, peer_copy_bytes = 0;
};

// A session as an administrator sees it (Client::ListSessions).
struct SessionListing {
  std::string session_hex;  // 32 hex digits
  std::string tenant;
  int64_t age_ms = 0, idle_ms = 0;
  int64_t arrays = 0, bytes = 0;
};

// What the server says about itself.
struct ServerInfo {
  std::string server_version;
  uint32_t protocol_version = 0;
  // The first device's (the only one of a one-device server).
  std::string device_name, device_description;
  int64_t total_bytes = 0, free_bytes = 0, limit_bytes = 0, used_bytes = 0;
  std::vector<DeviceListing> devices;  // every device, in index order
  int64_t max_inline_bytes = 0, max_message_bytes = 0, chunk_bytes = 0;
};

// An array as the server lists it.
struct ArrayListing {
  std::string handle_hex;  // empty for a named array no handle is attached to
  std::string name;        // set for named arrays
  DType dtype;
  Shape shape;
  int64_t nbytes = 0;
};

// Host copy of an array: little-endian bytes in C order.
struct HostData {
  DType dtype = DType::kFloat64;
  Shape shape;
  std::string bytes;
};

// An array's bytes in host memory, read without a copy where the transport
// allows: on shared memory, bytes() is the region the server wrote into,
// leased to this view (and its copies) until the last is destroyed, then
// reused by the client's next transfer; over gRPC the view owns a
// downloaded copy. A view may outlive its Client and Array.
//
//   ASSIGN_OR_RETURN(HostView v, x.DownloadView());
//   absl::Span<const double> d = v.span<double>();  // INVALID_ARGUMENT-free: check v.dtype()
class HostView {
 public:
  HostView() = default;
  HostView(DType dtype, Shape shape, std::string_view bytes, std::shared_ptr<const void> keep,
           bool zero_copy)
      : dtype_(dtype),
        shape_(std::move(shape)),
        bytes_(bytes),
        keep_(std::move(keep)),
        zero_copy_(zero_copy) {}
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::string_view bytes() const { return bytes_; }
  // The elements as T; the caller checks dtype() == DTypeOf<T>().
  template <typename T>
  absl::Span<const T> span() const {
    return absl::Span<const T>(reinterpret_cast<const T*>(bytes_.data()),
                               bytes_.size() / sizeof(T));
  }
  // True when bytes() is shared memory the server wrote (no copy made here).
  bool zero_copy() const { return zero_copy_; }

 private:
  DType dtype_ = DType::kFloat64;
  Shape shape_;
  std::string_view bytes_;
  std::shared_ptr<const void> keep_;  // the leased region, or the owned copy
  bool zero_copy_ = false;
};

class Client;
struct Node;
struct ClientCore;

// The dtype a host element type uploads and downloads as (C++'s bool is
// NumPy's: one byte, 0 or 1).
template <typename T>
constexpr DType DTypeOf();
#define RESIDENT_CLIENT_DTYPE(T, D) \
  template <>                       \
  constexpr DType DTypeOf<T>() {    \
    return DType::D;                \
  }
RESIDENT_CLIENT_DTYPE(bool, kBool)
RESIDENT_CLIENT_DTYPE(int8_t, kInt8)
RESIDENT_CLIENT_DTYPE(int16_t, kInt16)
RESIDENT_CLIENT_DTYPE(int32_t, kInt32)
RESIDENT_CLIENT_DTYPE(int64_t, kInt64)
RESIDENT_CLIENT_DTYPE(uint8_t, kUint8)
RESIDENT_CLIENT_DTYPE(uint16_t, kUint16)
RESIDENT_CLIENT_DTYPE(uint32_t, kUint32)
RESIDENT_CLIENT_DTYPE(uint64_t, kUint64)
RESIDENT_CLIENT_DTYPE(float, kFloat32)
RESIDENT_CLIENT_DTYPE(double, kFloat64)
// float16 / bfloat16 elements are their storage structs (core/half.h):
// resident::Float16{bits}; resident_load / resident_store convert.
RESIDENT_CLIENT_DTYPE(Float16, kFloat16)
RESIDENT_CLIENT_DTYPE(BFloat16, kBFloat16)
// complex64 / complex128: std::complex (the same layout as NumPy's, real
// then imaginary), or core/complex.h's storage structs.
RESIDENT_CLIENT_DTYPE(std::complex<float>, kComplex64)
RESIDENT_CLIENT_DTYPE(std::complex<double>, kComplex128)
RESIDENT_CLIENT_DTYPE(Complex64, kComplex64)
RESIDENT_CLIENT_DTYPE(Complex128, kComplex128)
#undef RESIDENT_CLIENT_DTYPE
static_assert(sizeof(std::complex<float>) == 8 && sizeof(std::complex<double>) == 16);

// An array on the server, or one recorded and not yet computed. Copies
// share it; the server's copy is released when the last one goes.
class Array {
 public:
  Array();
  ~Array();
  Array(const Array& other);
  Array& operator=(const Array& other);
  Array(Array&& other) noexcept;
  Array& operator=(Array&& other) noexcept;

  // Computes the array on the server if it is still pending; the status of
  // its program (or of the operation that made it).
  absl::Status Evaluate() const;
  absl::StatusOr<DType> dtype() const;
  absl::StatusOr<Shape> shape() const;
  absl::StatusOr<int64_t> nbytes() const;
  // The server handle, 32 hex digits (evaluates first).
  absl::StatusOr<std::string> handle_hex() const;

  // Downloads the array (in chunks; any size).
  absl::StatusOr<HostData> Download() const;
  // The array's bytes without a copy on the shared-memory transport (see
  // HostView); over gRPC, a download the view owns.
  absl::StatusOr<HostView> DownloadView() const;
  // Downloads into a vector; INVALID_ARGUMENT if T is not the array's dtype.
  template <typename T>
  absl::StatusOr<std::vector<T>> ToVector() const {
    absl::StatusOr<HostData> d = Download();
    if (!d.ok()) return d.status();
    if (d->dtype != DTypeOf<T>()) return WrongType(d->dtype, DTypeOf<T>());
    std::vector<T> out(d->bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), d->bytes.data(), d->bytes.size());
    return out;
  }
  // Releases the server's copy now (all copies of this Array see it gone).
  absl::Status Release();

  bool valid() const { return node_ != nullptr; }

 private:
  friend class Client;
  friend struct ClientCore;
  friend Array MakeArray(std::shared_ptr<Node> node);
  explicit Array(std::shared_ptr<Node> node);
  static absl::Status WrongType(DType got, DType want);
  std::shared_ptr<Node> node_;
  friend const std::shared_ptr<Node>& NodeOf(const Array& a);
};

class Client {
 public:
  // Connects to `target` ("host:port") and opens a session.
  static absl::StatusOr<std::unique_ptr<Client>> Connect(const std::string& target,
                                                         const ClientOptions& options = {});
  // Closes the session: the server frees every array of it.
  ~Client();

  absl::StatusOr<ServerInfo> Info();
  absl::StatusOr<std::vector<ArrayListing>> List();
  // An array from host memory: `bytes` little-endian, C order.
  absl::StatusOr<Array> Upload(DType dtype, const Shape& shape, std::string_view bytes);
  template <typename T>
  absl::StatusOr<Array> Upload(const Shape& shape, absl::Span<const T> values) {
    return Upload(
        DTypeOf<T>(), shape,
        std::string_view(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
  }
  // An array of this tenant by its handle (e.g. from `resident put`).
  absl::StatusOr<Array> AttachHandle(const std::string& handle_hex);
  // Releases handles by hex id (the CLI's rm).
  absl::Status ReleaseHandle(const std::string& handle_hex);

  // Named arrays belong to the tenant, beyond sessions (and, with the
  // server's --data-dir, across restarts).
  // Names `array` (evaluating it first): 1-128 characters of
  // [A-Za-z0-9._-] (INVALID_ARGUMENT), ALREADY_EXISTS if the tenant has it.
  absl::Status Keep(const Array& array, const std::string& name);
  // A handle of this session to the tenant's named array (released when the
  // last Array copy goes; the name stays). NOT_FOUND if there is no such name.
  absl::StatusOr<Array> Attach(const std::string& name);
  // A copy of `array` (evaluated first) on the server device `device`
  // (index or name; empty: this session's), as a new array of this
  // session; the original stays where it is.
  absl::StatusOr<Array> CopyTo(const Array& array, const std::string& device);
  // The device this session was placed on (its name).
  const std::string& device() const;
  // Deletes a name (the array goes once no handle holds it). NOT_FOUND if
  // there is no such name.
  absl::Status Delete(const std::string& name);
  // Evaluates several pending arrays in one program.
  absl::Status EvaluateAll(absl::Span<const Array> arrays);

  // A server-side loop: body(carried) gives the next carried values; runs n
  // times in one program; returns the final carried values.
  std::vector<Array> Loop(int64_t n, const std::vector<Array>& carried,
                          const std::function<std::vector<Array>(const std::vector<Array>&)>& body);

  // A server-side while loop, decided on the device: `while cond(x) and
  // trips < max_trips: x = body(x)`, in one program. cond returns a 0-d bool
  // array. The result: the final carried values, the trips taken (0-d
  // int64) and `capped` (0-d bool: max_trips stopped it with cond still
  // true), all pending until used. A bad body (cond not a bool scalar, a
  // carried value changing dtype or shape) is INVALID_ARGUMENT when they are.
  //
  //   WhileResult r = client.While(
  //       [&](const std::vector<Array>& s) { return s[1] > 1e-8; },
  //       [&](const std::vector<Array>& s) { return std::vector<Array>{s[0] * 0.5, ...}; },
  //       {x, err}, 1000);
  struct WhileResult {
    std::vector<Array> carried;
    Array trips;
    Array capped;
  };
  WhileResult While(const std::function<Array(const std::vector<Array>&)>& cond,
                    const std::function<std::vector<Array>(const std::vector<Array>&)>& body,
                    const std::vector<Array>& init, int64_t max_trips);

  // Admin role only (PERMISSION_DENIED otherwise): every session on the
  // server, and closing any of them by id or a unique hex prefix of at
  // least 8 digits; returns the closed session's full id.
  absl::StatusOr<std::vector<SessionListing>> ListSessions();
  absl::StatusOr<std::string> AdminCloseSession(const std::string& session_hex);

  bool lazy() const;
  // The session's id in hex (for logs).
  std::string session_hex() const;
  // "shared-memory" (memfd regions over the server's local data socket) or
  // "grpc" (chunked streams); transport_detail() says why.
  std::string transport() const;
  std::string transport_detail() const;

  std::shared_ptr<ClientCore> core() const { return core_; }

 private:
  explicit Client(std::shared_ptr<ClientCore> core) : core_(std::move(core)) {}
  // The `count` outputs of a loop or while node (flushed unless lazy).
  std::vector<Array> LoopOutputs(const std::shared_ptr<Node>& loop, size_t count);
  std::shared_ptr<ClientCore> core_;
};

// --- NumPy-like functions ----------------------------------------------------

Array ones(Client& c, const Shape& shape, DType dtype = DType::kFloat64);
Array zeros(Client& c, const Shape& shape, DType dtype = DType::kFloat64);
// dtype defaults to the value's kind: bool, int64 or float64.
Array full(Client& c, const Shape& shape, Scalar value, std::optional<DType> dtype = std::nullopt);
// numpy.arange(start, stop, step[, dtype]).
Array arange(Client& c, Scalar start, Scalar stop, Scalar step = Scalar::Int(1),
             std::optional<DType> dtype = std::nullopt);
Array arange(Client& c, int64_t stop);

// An elementwise operand: an Array, or a C++ number standing for a Python
// scalar, weak in NumPy 2's promotion (NEP 50): a float32 x + 1.0 stays
// float32, an int32 x + 1 stays int32 (an int that does not fit is an
// error), an int32 x + 1.5 is float64.
// A parameter type: an operand that is an Array or a number. It refers to
// the Array it was made from (no reference counting on the hot path of
// recording), so it lives no longer than that Array, as a function
// argument does; don't keep one.
class ArrayOrScalar {
 public:
  ArrayOrScalar(const Array& a) : array_(&a) {}  // NOLINT(google-explicit-constructor)
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  ArrayOrScalar(T v)  // NOLINT(google-explicit-constructor)
      : scalar_(std::is_same_v<T, bool> ? Scalar::Bool(static_cast<bool>(v))
                : std::is_integral_v<T> ? Scalar::Int(static_cast<int64_t>(v))
                                        : Scalar::Float(static_cast<double>(v))) {}
  // A Python complex: weak as NEP 50 says (float32 x + 1i is complex64).
  ArrayOrScalar(std::complex<double> v)  // NOLINT(google-explicit-constructor)
      : scalar_(Scalar::Complex(v.real(), v.imag())) {}
  const Array* array() const { return scalar_ ? nullptr : array_; }
  const std::optional<Scalar>& scalar() const { return scalar_; }

 private:
  const Array* array_ = nullptr;
  std::optional<Scalar> scalar_;
};

// Any op of the server's elementwise table (core/elementwise_kind.h) by its
// NumPy name ("add", "maximum", "sqrt", "less", ...; aliases "abs", "mod"),
// or "where" / "clip", over arrays and scalars. An unknown name or a wrong count of operands is
// an error when the result is evaluated; an empty Array when no operand is
// an Array (there is no client to send it to).
Array Elementwise(const std::string& name, const std::vector<ArrayOrScalar>& operands);

// One named function per row of the table: add(a, b), maximum(a, b),
// less(a, b), logical_and(a, b), ... (binary: arrays or scalars), and
// negative(a), sqrt(a), isnan(a), ... (unary: arrays).
#define RESIDENT_CLIENT_EW_DECL_1(name) Array name(const Array& a);
#define RESIDENT_CLIENT_EW_DECL_2(name) Array name(const ArrayOrScalar& a, const ArrayOrScalar& b);
#define RESIDENT_CLIENT_EW_DECL(kind, name, arity, rule) RESIDENT_CLIENT_EW_DECL_##arity(name)
RESIDENT_ELEMENTWISE_OPS(RESIDENT_CLIENT_EW_DECL)
#undef RESIDENT_CLIENT_EW_DECL
#undef RESIDENT_CLIENT_EW_DECL_1
#undef RESIDENT_CLIENT_EW_DECL_2
inline Array abs(const Array& a) { return absolute(a); }
// numpy.where(cond, a, b) and numpy.clip(a, lo, hi) (NaN bounds propagate;
// lo > hi gives hi), with scalars as weak as above.
inline Array where(const Array& cond, const ArrayOrScalar& a, const ArrayOrScalar& b) {
  return Elementwise("where", {cond, a, b});
}
inline Array clip(const Array& a, const ArrayOrScalar& lo, const ArrayOrScalar& hi) {
  return Elementwise("clip", {a, lo, hi});
}
inline Array mod(const ArrayOrScalar& a, const ArrayOrScalar& b) { return remainder(a, b); }

Array dot(const Array& a, const Array& b);
Array matmul(const Array& a, const Array& b);
Array reshape(const Array& a, const Shape& shape);
Array transpose(const Array& a, const std::vector<int64_t>& axes = {});
Array astype(const Array& a, DType dtype);

// --- reductions and shaping (client/ops_reduce.cc) ---------------------------

// NumPy's `axis` argument: none (every axis), one axis, or a tuple (which
// may be empty: axis=()). Negative axes count from the end.
//   sum(x);  sum(x, 1);  sum(x, AxisArg::Tuple({0, 2}), /*keepdims=*/true);
class AxisArg {
 public:
  AxisArg() = default;
  AxisArg(std::nullopt_t) {}                             // NOLINT: None
  AxisArg(int64_t axis) : axis_(axis) {}                 // NOLINT: one axis
  AxisArg(std::optional<int64_t> axis) : axis_(axis) {}  // NOLINT: the old sum form
  static AxisArg Tuple(std::vector<int64_t> axes) {
    AxisArg a;
    a.tuple_ = true;
    a.axes_ = std::move(axes);
    return a;
  }
  bool is_tuple() const { return tuple_; }
  const std::optional<int64_t>& axis() const { return axis_; }
  const std::vector<int64_t>& axes() const { return axes_; }

 private:
  std::optional<int64_t> axis_;
  bool tuple_ = false;
  std::vector<int64_t> axes_;
};

// NumPy's reductions: result dtypes as NumPy's (sum/prod of bool and int32
// are int64, mean of integers float64, any/all bool). max/min/argmax/argmin
// of an empty reduction are INVALID_ARGUMENT (NumPy's ValueError).
Array sum(const Array& a, const AxisArg& axis = {}, bool keepdims = false);
Array prod(const Array& a, const AxisArg& axis = {}, bool keepdims = false);
Array mean(const Array& a, const AxisArg& axis = {}, bool keepdims = false);
Array max(const Array& a, const AxisArg& axis = {}, bool keepdims = false);
Array min(const Array& a, const AxisArg& axis = {}, bool keepdims = false);
Array any(const Array& a, const AxisArg& axis = {}, bool keepdims = false);
Array all(const Array& a, const AxisArg& axis = {}, bool keepdims = false);
// int64 positions; axis none is the flat index.
Array argmax(const Array& a, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Array argmin(const Array& a, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);

// One axis of a basic slice, Python's start:stop:step (unset: the default).
struct Slice {
  std::optional<int64_t> start = std::nullopt, stop = std::nullopt, step = std::nullopt;
};
// a[s0, s1, ...] (axes past the list whole), a copy.
Array slice(const Array& a, const std::vector<Slice>& slices);
// numpy.concatenate (axis none: the flattened arrays) and numpy.stack; the
// dtype is the arrays' promoted one.
Array concatenate(const std::vector<Array>& arrays, std::optional<int64_t> axis = 0);
Array stack(const std::vector<Array>& arrays, int64_t axis = 0);
// A copy of `a` broadcast to `shape`.
Array broadcast_to(const Array& a, const Shape& shape);
// Without an axis, squeeze drops every length-1 axis. Both share a's data.
Array squeeze(const Array& a, const AxisArg& axis = {});
Array expand_dims(const Array& a, const AxisArg& axis);

// --- sorting and scans (client/ops_reduce.cc) ----------------------------------

// The stable argsort (int64) and sort of `a` along `axis`, in NumPy's order
// (NaNs last, -0.0 equal to +0.0); descending is the Array API's.
Array argsort(const Array& a, int64_t axis = -1, bool descending = false);
Array sort(const Array& a, int64_t axis = -1, bool descending = false);
// numpy.take_along_axis (other axes broadcast; a bad index is an error).
Array take_along_axis(const Array& a, const Array& indices, int64_t axis = -1);
// numpy.cumsum / cumprod: sum's dtype; no axis is the flattened array.
Array cumsum(const Array& a, std::optional<int64_t> axis = std::nullopt);
// numpy.flatnonzero(a) (int64 positions) and numpy.extract(condition, arr)
// (arr's elements, flattened, where condition is true; the two of one
// size). `count` is the number of true elements, which the caller learns
// first (say, sum(condition != 0)); the server refuses another count.
Array flatnonzero(const Array& a, int64_t count);
// numpy.fft.fft / ifft / rfft along one axis (NumPy 2's dtypes, the
// default "backward" scaling); irfft gives n real points from n // 2 + 1.
Array fft(const Array& a, int64_t axis = -1);
Array ifft(const Array& a, int64_t axis = -1);
Array rfft(const Array& a, int64_t axis = -1);
Array irfft(const Array& a, int64_t n, int64_t axis = -1);
// numpy.fft.fftn / ifftn / rfftn over 1 to 3 axes (rfftn halves the last
// of them) as one multi-dimensional transform; the inverse divides by the
// points transformed.
Array fftn(const Array& a, const std::vector<int64_t>& axes);
Array ifftn(const Array& a, const std::vector<int64_t>& axes);
Array rfftn(const Array& a, const std::vector<int64_t>& axes);
// numpy.linalg's routines of stacks of matrices (the last two axes): the
// lower Cholesky factor, the solution of a x = b (b: (..., n, k), a's
// batch), the inverse, the determinant, eigvalsh (ascending) and svdvals
// (descending). A matrix that cannot be factored fails the program with
// INVALID_ARGUMENT "LinAlgError: ...".
Array cholesky(const Array& a);
Array solve(const Array& a, const Array& b);
Array inv(const Array& a);
Array det(const Array& a);
Array eigvalsh(const Array& a);
Array svdvals(const Array& a);
// The routines of several results, one instruction each: qr's {Q, R}
// (complete: mode='complete'), svd's {U, S, Vh} (full_matrices), eigh's
// {eigenvalues, eigenvectors} and slogdet's {sign, logabsdet}, as
// numpy.linalg's.
std::vector<Array> qr(const Array& a, bool complete = false);
std::vector<Array> svd(const Array& a, bool full_matrices = true);
std::vector<Array> eigh(const Array& a);
std::vector<Array> slogdet(const Array& a);
// numpy.random.Generator's draws from a PCG64 state array `state` (uint64
// (6,), NumPy's state dict: state hi, lo, inc hi, lo, has_uint32,
// uinteger): {values, the state after them}. float64 low + range * u,
// float32 u (low and range unused); integers and bool: off + a bounded
// draw of the inclusive span rng, NumPy's Lemire rejection.
std::vector<Array> random(const Array& state, DType dtype, const Shape& shape, double low = 0.0,
                          double range = 1.0);
std::vector<Array> random_integers(const Array& state, DType dtype, const Shape& shape,
                                   uint64_t off, uint64_t rng);
// numpy.random.Generator's standard_normal (float64 or float32) and normal
// (float64 loc + scale * z) from `state`, bit for bit: {values, the state
// after them}.
std::vector<Array> standard_normal(const Array& state, DType dtype, const Shape& shape);
std::vector<Array> normal(const Array& state, const Shape& shape, double loc, double scale);
// numpy.random.Generator's standard_exponential (float64 or float32) and
// exponential (float64 scale * z), bit for bit.
std::vector<Array> standard_exponential(const Array& state, DType dtype, const Shape& shape);
std::vector<Array> exponential(const Array& state, const Shape& shape, double scale);
Array extract(const Array& condition, const Array& arr, int64_t count);
Array cumprod(const Array& a, std::optional<int64_t> axis = std::nullopt);

// Operators of arrays, and of an array and a number (x + 1.0, 2 * x).
#define RESIDENT_CLIENT_OPERATOR(op, fn)                                                \
  inline Array operator op(const Array& a, const Array& b) { return fn(a, b); }         \
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>             \
  Array operator op(const Array& a, T b) {                                              \
    return fn(a, b);                                                                    \
  }                                                                                     \
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>             \
  Array operator op(T a, const Array& b) {                                              \
    return fn(a, b);                                                                    \
  }                                                                                     \
  inline Array operator op(const Array& a, std::complex<double> b) { return fn(a, b); } \
  inline Array operator op(std::complex<double> a, const Array& b) { return fn(a, b); }
RESIDENT_CLIENT_OPERATOR(+, add)
RESIDENT_CLIENT_OPERATOR(-, subtract)
RESIDENT_CLIENT_OPERATOR(*, multiply)
RESIDENT_CLIENT_OPERATOR(/, divide)
RESIDENT_CLIENT_OPERATOR(%, remainder)
// Comparisons give bool arrays, as NumPy's (a while's condition: x > tol).
RESIDENT_CLIENT_OPERATOR(<, less)
RESIDENT_CLIENT_OPERATOR(<=, less_equal)
RESIDENT_CLIENT_OPERATOR(>, greater)
RESIDENT_CLIENT_OPERATOR(>=, greater_equal)
#undef RESIDENT_CLIENT_OPERATOR
inline Array operator-(const Array& a) { return negative(a); }

}  // namespace resident::client

#endif  // RESIDENT_CLIENT_CLIENT_H_
