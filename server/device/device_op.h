// The ops a backend runs: a small vocabulary, one struct per kind, carried to
// the backend's single entry point, Backend::Run(Stream&, const DeviceOp&).
//
// A new elementwise op is a new ElementwiseKind (core/elementwise_kind.h)
// plus kernels; a new kind of op is a new struct here, added to DeviceOp and
// DeviceOpKind together (the static_asserts below check that they agree).
// A backend answers UNIMPLEMENTED for what it does not run.
//
// Ops borrow their arrays: every pointer is the caller's and must stay valid
// for the Run call (build the op in the call's argument list). Each op writes
// every element of its output and reads only its inputs, so no op exposes
// memory it did not write. Dtypes are already made to agree by the program
// layer (it inserts casts where NumPy promotes); each struct says what it
// accepts, and anything else is INVALID_ARGUMENT.
//
//   RETURN_IF_ERROR(backend.Run(stream, ElementwiseOp{ElementwiseKind::kAdd, {&a, &b}, &out}));
//   RETURN_IF_ERROR(backend.Run(stream, ReduceOp{ReduceKind::kSum, 0, &a, &row_sums}));
#ifndef RESIDENT_SERVER_DEVICE_DEVICE_OP_H_
#define RESIDENT_SERVER_DEVICE_DEVICE_OP_H_

#include <array>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/elementwise_kind.h"
#include "core/reduce_kind.h"
#include "core/scalar.h"
#include "server/device/buffer.h"

namespace resident {

// out[...] = value, converted to out's dtype as numpy.full would.
struct FillOp {
  Scalar value;
  const DeviceArray* out = nullptr;
};

// out is 1-D: out[0] = start, out[1] = second, out[i] = start + T(i) * delta
// for i >= 2, evaluated in T = out's dtype's own arithmetic (float32 math
// for float32, wrapping for integers), start, second and delta first
// converted to T: NumPy's arange, which stores its first two elements and
// fills the rest (the program layer computes the three as NumPy does). Not
// for bool.
struct ArangeOp {
  Scalar start, delta, second;
  const DeviceArray* out = nullptr;
};

// out = in[0] op in[1] (binary kinds) or op in[0] (unary kinds; in[1]
// null), with NumPy broadcasting of the inputs to out's shape. Inputs and out
// have one dtype, the op's compute dtype, which ElementwiseAccepts(kind,
// dtype) must allow. Kinds whose NumPy result is bool (kBoolResult:
// comparisons, logical ops, isnan, isfinite) write 0/1 of that dtype; the
// program layer casts it to bool. Integer arithmetic wraps, integer x // 0
// and x % 0 are 0; bool add/multiply are logical or/and. out may share a
// buffer with an input of out's own shape (in place).
struct ElementwiseOp {
  ElementwiseKind kind = ElementwiseKind::kAdd;
  std::array<const DeviceArray*, 2> in = {nullptr, nullptr};
  const DeviceArray* out = nullptr;
};

// out = in converted to out's dtype, broadcasting in to out's shape. Float
// to integer truncates toward zero; NaN and out-of-range give the integer's
// minimum (what NumPy gives on x86). Anything to bool is `!= 0`. Also the
// backends' broadcast copy (same dtype).
struct CastOp {
  const DeviceArray* in = nullptr;
  const DeviceArray* out = nullptr;
};

// Batched row-major matrix product, all of one dtype:
// out[i] (m x n) = a[i] (m x k) @ b[i] (k x n) for i < batch, where a[i]
// starts at element i * a_batch_stride (0 broadcasts one matrix), likewise b.
struct MatmulShape {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  int64_t a_batch_stride = 0, b_batch_stride = 0;
};
// Bool is or-of-ands, integers wrap; out must not share a buffer with a or b.
struct MatmulOp {
  MatmulShape shape;
  const DeviceArray* a = nullptr;
  const DeviceArray* b = nullptr;
  const DeviceArray* out = nullptr;
};

// Reduction over `axis` (removed from the shape; negative counts from the
// end, as in NumPy) or over all elements (out is 0-d). kSum only (the other
// kinds go through ReduceAxesOp): out's dtype is SumResultType(in's); empty
// sums are 0.
struct ReduceOp {
  ReduceKind kind = ReduceKind::kSum;
  std::optional<int> axis;
  const DeviceArray* in = nullptr;
  const DeviceArray* out = nullptr;
};

// Reduction over a set of axes (sorted, distinct, in [0, rank)); out has
// in's shape without them (keepdims is a reshape the program layer makes)
// and dtype ReduceResultType. The reduced elements of each output are taken
// in row-major order; argmax/argmin return the position in that order (the
// flat index for all axes, the index along the axis for one). Empty sums
// are 0, products 1, means NaN, any() false, all() true; max/min/argmax/
// argmin of an empty reduction are INVALID_ARGUMENT (the program layer
// refuses them first). NaN propagates through max/min; argmax/argmin return
// the first NaN. Float sums agree with NumPy's pairwise sums within a
// relative 1e-5 (float32) / 1e-12 (float64) of the sum of |terms|.
struct ReduceAxesOp {
  ReduceKind kind = ReduceKind::kSum;
  absl::Span<const int> axes;
  const DeviceArray* in = nullptr;
  const DeviceArray* out = nullptr;
};

// One axis of a basic slice, normalised as Python's slice.indices: out's
// extent along the axis is `length` (out.shape), element k is in[first +
// k * step] (step != 0, may be negative).
struct SliceAxisSpec {
  int64_t first = 0, step = 1;
};
// out = in[first0::step0, first1::step1, ...] with out's shape as the
// lengths, one SliceAxisSpec per axis of in (a copy, same dtype). out must
// not share in's buffer.
struct SliceOp {
  absl::Span<const SliceAxisSpec> axes;
  const DeviceArray* in = nullptr;
  const DeviceArray* out = nullptr;
};

// out = numpy.concatenate(ins, axis): every input of out's dtype and rank,
// equal to out's shape except along axis (in [0, rank)), whose lengths sum
// to out's. out must not share a buffer with an input.
struct ConcatOp {
  absl::Span<const DeviceArray> ins;
  int axis = 0;
  const DeviceArray* out = nullptr;
};

// out = in with axes permuted: out.shape[i] = in.shape[perm[i]]. out must
// not share in's buffer.
struct TransposeOp {
  absl::Span<const int> perm;
  const DeviceArray* in = nullptr;
  const DeviceArray* out = nullptr;
};

// A loop whose body is elementwise over arrays of one shape, described so a
// backend can run it in one pass: each element's values go through every
// iteration in registers, and memory is read and written once. Slots are
// numbered params first (carried values, then invariants), then one per step.
struct FusedLoopSpec {
  struct Step {
    // The elementwise op of slot a (and b, for binary kinds); nullopt: a cast
    // of slot a to `dtype`, or with `select` NumPy's where: slot a (bool) ?
    // slot b : slot c, both of `dtype`, their bit patterns unchanged.
    std::optional<ElementwiseKind> op;
    int a = -1, b = -1;
    DType dtype = DType::kFloat64;  // the result's; binary operands have it too
    bool select = false;
    int c = -1;

    static Step Of(ElementwiseKind kind, int a, int b, DType dtype) {
      return {kind, a, b, dtype, false, -1};
    }
    static Step Cast(int a, DType dtype) { return {std::nullopt, a, -1, dtype, false, -1}; }
    static Step Select(int cond, int a, int b, DType dtype) {
      return {std::nullopt, cond, a, dtype, true, b};
    }
  };
  int64_t trip_count = 0;
  int num_carried = 0;
  std::vector<DType> param_dtypes;
  std::vector<bool> param_scalar;  // one element, broadcast to every index
  // Per param (or empty: none is): 0, or the rank of its FusedBroadcast
  // layout: an invariant of fewer elements (a bias row, a column) read at
  // every index by NumPy's broadcasting, without being materialised.
  std::vector<int> param_broadcast;
  std::vector<Step> steps;
  std::vector<int> yields;  // per carried value: the slot it becomes
  // A straight-line region may end in a reduction of one slot over all its
  // elements, of a kind and dtype FusedReductionFits, written to the last
  // out (one element of ReduceResultType): the reduced value never reaches
  // memory.
  struct Reduction {
    ReduceKind kind = ReduceKind::kSum;
    int slot = -1;
  };
  std::optional<Reduction> reduction;
};

// Whether a region's trailing reduction of `kind` over elements of `dtype`
// fuses: only where the result cannot depend on the order the elements are
// combined in (so a fused kernel's tree equals the reduction kernels' bit
// for bit): sum, prod, max and min of integers and bool (wrapping), any and
// all of every real dtype. Float sums, means, arg-reductions and complex
// values do not.
bool FusedReductionFits(ReduceKind kind, DType dtype);

// Most dimensions a broadcast param's layout may keep after merging.
inline constexpr int kMaxFusedBroadcastRank = 4;
// Where a param of shape `from`, broadcast to `to` (NumPy's rules: aligned
// at the right, dimensions of 1 stretched), is read at flat index i of `to`:
// with i split row-major over dim[0..rank), the element
// sum(digit[d] * stride[d]) of the contiguous param. Neighbouring
// dimensions that are both stretched, or both kept, are merged, and those
// of 1 dropped, so a bias row over a matrix is {dim {N, M}, stride {0, 1}}.
struct FusedBroadcastLayout {
  int rank = 0;
  int64_t dim[kMaxFusedBroadcastRank] = {};
  int64_t stride[kMaxFusedBroadcastRank] = {};
};
// The layout of `from` read over `to`, or nullopt when it does not
// broadcast, equals `to`, is one element, `to` is empty, or the merged
// rank exceeds kMaxFusedBroadcastRank.
std::optional<FusedBroadcastLayout> FusedBroadcast(const Shape& from, const Shape& to);
// Runs `spec` over params (carried values first, all of one shape, then
// invariants, full-shape, one element or broadcast) into outs (one per carried value,
// the carried shape; an out may share a carried input's buffer). Results
// equal running the body op by op, bit for bit.
//
// A spec with no carried values (num_carried 0, trip_count 1) is a
// straight-line region (server/program/fusion.h): its steps run once and
// outs[k] (the outs' common shape, slot yields[k]'s dtype, sharing no
// param's buffer) gets slot yields[k]; every param is of that shape, one
// element, or broadcast to it (param_broadcast).
//
// A region with a reduction (spec.reduction) runs over `*shape` (outs but
// the last have it; the last is the reduction's one element), never empty.
struct FusedLoopOp {
  const FusedLoopSpec* spec = nullptr;
  absl::Span<const DeviceArray> params;
  absl::Span<const DeviceArray> outs;
  const Shape* shape = nullptr;  // a reducing region's shape
};

// The shape a FusedLoopOp runs over (the outs' for a region, else the first
// param's), or INVALID_ARGUMENT unless the op matches its spec: every step
// reads earlier slots of the dtypes it computes in (a select's condition
// bool), every yield names a slot, each param has its dtype and the shape
// (one element if scalar), and each out the shape and its yield's dtype (a
// loop's: its carried value's). Both backends check with it.
absl::StatusOr<Shape> CheckFusedLoopOp(const FusedLoopOp& op);

// out (int64, in's shape) = the stable argsort of each row of in (C order,
// rows of its last dimension), NumPy's order: ascending, NaNs last (any sign
// or payload), -0.0 equal to +0.0, equal elements in their order; with
// descending, the Array API's order (the reverse, equal elements still in
// their order, NaNs first). Complex rows take NumPy's lexicographic order
// (NaN-free numbers first, then R + nanj, nan + Rj, nan + nanj). out
// shares no buffer with in.
// With `values`, out (in's dtype) receives the sorted elements themselves
// (numpy.sort): each element's bits in the argsort's order, NaN payloads and
// the order of -0.0 among +0.0 included.
struct ArgsortOp {
  const DeviceArray* in = nullptr;
  const DeviceArray* out = nullptr;
  bool descending = false;
  bool values = false;
};

// out[r, j] = in[r, idx[r, j]] over rows of the last dimension (in: rows x
// n; idx, int64, and out: rows x m, with in's leading dimensions). A
// negative index counts from the end; one outside [-n, n) is
// INVALID_ARGUMENT (NumPy's IndexError). Any dtype; out shares no buffer
// with in or idx.
struct TakeAlongAxisOp {
  const DeviceArray* in = nullptr;
  const DeviceArray* idx = nullptr;
  const DeviceArray* out = nullptr;
};

// out = the running sums (kSum) or products (kProd) along each row of in's
// last dimension, in and out of one dtype other than bool (the program
// layer converts to NumPy's accumulation dtype first). Integers wrap. The
// CPU adds left to right, as numpy.cumsum does (floats bit for bit, halves
// rounded each step as NumPy's stored running value); CUDA scans blocks of
// the row in a tree, so float results agree within rounding.
struct ScanOp {
  ReduceKind kind = ReduceKind::kSum;
  const DeviceArray* in = nullptr;
  const DeviceArray* out = nullptr;
};

// out (1-D, `count` = out's length) = the elements of `values` whose
// element of `cond` (bool, values' element count, read flat) is true, in
// C order (numpy.extract); without `values`, their flat positions (int64:
// numpy.flatnonzero). The count is the program's, learnt by evaluating
// cond's sum: a cond with another number of true elements is
// INVALID_ARGUMENT and out is left unwritten, so a wrong count never writes
// past out. Any dtype; out shares no buffer with the inputs.
struct ExtractOp {
  const DeviceArray* cond = nullptr;
  const DeviceArray* values = nullptr;  // nullptr: the positions
  const DeviceArray* out = nullptr;
};

// Discrete Fourier transforms over the last `axes` dimensions (1 to 3; one
// multi-dimensional transform, as cuFFT's and FFTW's plans of that rank),
// unnormalised (the program layer scales): kForward/kInverse complex to
// complex (sign -1 / +1) of one complex dtype, the transformed dimensions
// equal in both; kRealForward real (float32/float64) to complex
// (complex64/complex128), the last dimension n becoming n/2 + 1 (numpy's
// rfftn); kRealInverse (one axis only) complex n/2 + 1 to real n, n = out's
// last dimension (the imaginary parts of the first and, for even n, the
// last element are ignored, as NumPy's irfft). The other leading
// dimensions are rows, equal in both.
enum class FftKind : uint8_t { kForward, kInverse, kRealForward, kRealInverse };
struct FftOp {
  FftKind kind = FftKind::kForward;
  const DeviceArray* in = nullptr;
  const DeviceArray* out = nullptr;
  int axes = 1;
};
inline constexpr int kMaxFftAxes = 3;

// OK when an FftOp's arrays fit its kind: the dtypes (one precision for
// both), the rows and the last dimensions; else INVALID_ARGUMENT. Both
// backends check with it.
absl::Status CheckFftOp(const FftOp& op);

// Dense linear algebra over stacks of C-contiguous matrices a (..., m, n)
// of float32, float64, complex64 or complex128, out of a's dtype unless
// said: kCholesky (square; out a's shape, the lower factor, zeros above),
// kSolve (square a, b (..., n, k) of a's dtype and batch; out b's shape),
// kInv (out a's shape), kDet (out (...)), kEigvalsh (the Hermitian
// matrix of a's lower triangle; out (..., n) of the real dtype, ascending),
// kSvdvals (out (..., min(m, n)) real, descending). With k = min(m, n),
// the routines of several results write out, out2 (and out3): kQr Q
// (..., m, k) and R (..., k, n), or with `full` (mode='complete') Q
// (..., m, m) and R (..., m, n), R zero below its diagonal; kSvd U (..., m,
// k), S (..., k) real, descending, Vh (..., k, n), or with `full`
// (full_matrices) U (..., m, m) and Vh (..., n, n); kEigh (square) the
// eigenvalues (..., n) real, ascending, and the eigenvectors as columns of
// (..., n, n), of the lower triangle as kEigvalsh; kSlogdet (square) the
// sign (..., ) of a's dtype (complex: of modulus 1; 0 for a singular
// matrix) and log|det| (..., ) real (-inf when singular). A matrix the
// library cannot factor is INVALID_ARGUMENT beginning "LinAlgError: "
// (NumPy's messages: "Singular matrix", "Matrix is not positive definite",
// ...).
enum class LinalgKind : uint8_t {
  kCholesky,
  kSolve,
  kInv,
  kDet,
  kEigvalsh,
  kSvdvals,
  kQr,
  kSvd,
  kEigh,
  kSlogdet,
};
struct LinalgOp {
  LinalgKind kind = LinalgKind::kCholesky;
  const DeviceArray* a = nullptr;
  const DeviceArray* b = nullptr;  // kSolve only
  const DeviceArray* out = nullptr;
  const DeviceArray* out2 = nullptr;  // kQr, kSvd, kEigh, kSlogdet
  const DeviceArray* out3 = nullptr;  // kSvd
  bool full = false;                  // kQr: complete; kSvd: full_matrices
};

// The number of results of a LinalgKind: 1, 2 (qr, eigh, slogdet) or 3 (svd).
int LinalgResults(LinalgKind kind);

// OK when a LinalgOp's arrays fit its kind as above; else INVALID_ARGUMENT.
// Both backends check with it.
absl::Status CheckLinalgOp(const LinalgOp& op);

// numpy.random.Generator's draws over PCG64 (kernels/pcg64.h): out (any
// shape; float64, float32, an integer dtype or bool, which picks the draw)
// = NumPy's fill from the generator state `state` (uint64
// (kRandomStateWords,): state hi, lo, inc hi, lo, has_uint32, uinteger,
// NumPy's state dict), and next_state (the same type, another buffer) the
// state after it. float64: low + range * next_double; float32:
// next_float; integers and bool: off + a bounded draw of the inclusive
// span rng (NumPy's Lemire rejection), wrapping in the dtype's width.
inline constexpr int64_t kRandomStateWords = 6;
// The distribution of a RandomOp's values: the dtype's uniform or bounded
// draw, or a ziggurat one (float64: low + range * z; float32: z).
enum class RandomDistribution : uint8_t { kUniform, kNormal, kExponential };

struct RandomOp {
  const DeviceArray* state = nullptr;
  const DeviceArray* out = nullptr;
  const DeviceArray* next_state = nullptr;
  double low = 0.0, range = 1.0;
  uint64_t off = 0, rng = 0;
  RandomDistribution distribution = RandomDistribution::kUniform;
};

// OK when a RandomOp's arrays fit as above; else INVALID_ARGUMENT.
absl::Status CheckRandomOp(const RandomOp& op);

using DeviceOp = std::variant<FillOp, ArangeOp, ElementwiseOp, CastOp, MatmulOp, ReduceOp,
                              TransposeOp, FusedLoopOp, ReduceAxesOp, SliceOp, ConcatOp, ArgsortOp,
                              TakeAlongAxisOp, ScanOp, ExtractOp, FftOp, LinalgOp, RandomOp>;

// The kind of a DeviceOp, for Backend::Supports: the variant's index.
enum class DeviceOpKind : uint8_t {
  kFill,
  kArange,
  kElementwise,
  kCast,
  kMatmul,
  kReduce,
  kTranspose,
  kFusedLoop,
  kReduceAxes,
  kSlice,
  kConcat,
  kArgsort,
  kTakeAlongAxis,
  kScan,
  kExtract,
  kFft,
  kLinalg,
  kRandom,
};
inline constexpr int kNumDeviceOpKinds = 18;

namespace device_op_internal {
template <DeviceOpKind K, typename Op>
inline constexpr bool kIs =
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(K), DeviceOp>, Op>;
}  // namespace device_op_internal
static_assert(std::variant_size_v<DeviceOp> == kNumDeviceOpKinds);
static_assert(device_op_internal::kIs<DeviceOpKind::kFill, FillOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kArange, ArangeOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kElementwise, ElementwiseOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kCast, CastOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kMatmul, MatmulOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kReduce, ReduceOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kTranspose, TransposeOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kFusedLoop, FusedLoopOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kReduceAxes, ReduceAxesOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kSlice, SliceOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kConcat, ConcatOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kArgsort, ArgsortOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kTakeAlongAxis, TakeAlongAxisOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kScan, ScanOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kExtract, ExtractOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kFft, FftOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kLinalg, LinalgOp>);
static_assert(device_op_internal::kIs<DeviceOpKind::kRandom, RandomOp>);

inline DeviceOpKind KindOf(const DeviceOp& op) { return static_cast<DeviceOpKind>(op.index()); }

// Whether ops of `kind` exist for `dtype` at all (arange has no bool; the
// rest take every dtype; which elementwise kinds a dtype allows is
// ElementwiseAccepts). Backends' Supports build on it.
bool DefinedFor(DeviceOpKind kind, DType dtype);

// "fill", "arange", "elementwise", "cast", "matmul", "reduce", "transpose",
// "fused loop", "reduce axes", "slice", "concatenate", "argsort",
// "take_along_axis", "scan", "extract", "fft", "linalg", "random".
const char* DeviceOpName(DeviceOpKind kind);
// The op's name for messages: ElementwiseName for elementwise ops ("add"),
// "sum" for a sum, ReduceKindName for a ReduceAxesOp, else DeviceOpName.
const char* OpLabel(const DeviceOp& op);

// One array an op reads or writes, with its role for messages.
struct OpOperand {
  const DeviceArray* array;
  const char* role;  // "operand a", "operand b", "output", "param", "out"
};
// Every array of `op`, inputs first (an elementwise op lists Arity(kind)
// inputs). Pointers are as the caller set them: CheckOperands refuses null
// ones, so after it every entry may be dereferenced.
absl::InlinedVector<OpOperand, 4> Operands(const DeviceOp& op);

// What every backend checks before running `op`: no array pointer is null,
// an elementwise op has exactly Arity(kind) inputs, a fused loop its spec,
// and each array passes CheckHeld. INVALID_ARGUMENT naming the op and role
// ("add operand b: ...") otherwise.
absl::Status CheckOperands(const DeviceOp& op);

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_DEVICE_OP_H_
