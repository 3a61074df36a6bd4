// The CUDA backend's argsort (kernels/cuda/sort.cu: one stable CUB radix
// sort of ordered keys), take_along_axis (a gather whose bad indices are
// read back, so the op synchronises its stream), scans (block scans per
// row) and extract (a checked count and a CUB select; the count is read
// back, so it synchronises too). Like cuda_ops.cc, each Do() checks what the program layer should
// already have made right.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "kernels/cuda/select.h"
#include "kernels/cuda/sort.h"
#include "server/device/cuda/cuda_backend_internal.h"

namespace resident::cuda_internal {
namespace {

namespace k = cuda_kernels;

absl::Status Require(bool ok, const char* what, const char* why) {
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", why));
}

int64_t LastDim(const Shape& s) { return s.empty() ? 1 : s.back(); }
int64_t Rows(const Shape& s) {
  const int64_t n = LastDim(s);
  return n == 0 ? 0 : NumElements(s) / n;
}
bool SameRows(const Shape& a, const Shape& b) {
  return a.size() == b.size() && !a.empty() && std::equal(a.begin(), a.end() - 1, b.begin());
}

}  // namespace

// NumPy's complex order: three stable radix argsorts over the keys of
// k::ComplexSortKeys, least significant first, each of the next key
// gathered into the order so far (an LSD sort of the (cls, k1, k2) tuples).
absl::Status CudaBackend::ComplexArgsort(const StreamRef& s, const ArgsortOp& op) {
  const DeviceArray &in = *op.in, &out = *op.out;
  const k::LaunchContext ctx = Launch(*s);
  const DType f = ComplexComponent(in.dtype);
  const int64_t n = LastDim(in.shape), rows = Rows(in.shape), count = rows * n;
  const int64_t fb = count * ItemSize(f);
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> keys, AllocateOn(s, 4 * fb));
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> orders, AllocateOn(s, 3 * count * 8 + 8));
  const size_t temp_bytes = k::ArgsortTempBytes(rows, n);
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> temp,
                   AllocateOn(s, static_cast<int64_t>(temp_bytes)));
  char* kb = static_cast<char*>(keys->data());
  void *cls = kb, *k1 = kb + fb, *k2 = kb + 2 * fb, *gathered = kb + 3 * fb;
  auto* order = static_cast<int64_t*>(orders->data());
  int64_t* pass = order + count;
  int64_t* next = pass + count;
  // Every index is in range; TakeAlongRows still wants its flag set.
  auto* bad = reinterpret_cast<unsigned long long*>(next + count);
  RETURN_IF_ERROR(Check(cudaMemsetAsync(bad, 0xff, 8, s->stream()), "cudaMemsetAsync"));
  RETURN_IF_ERROR(
      Check(k::ComplexSortKeys(ctx, in.dtype, in.data(), count, cls, k1, k2), "argsort"));
  RETURN_IF_ERROR(
      Check(k::ArgsortRows(ctx, f, k2, rows, n, op.descending, order, temp->data(), temp_bytes),
            "argsort"));
  for (void* key : {k1, cls}) {
    RETURN_IF_ERROR(
        Check(k::TakeAlongRows(ctx, f, key, n, order, rows, n, gathered, bad), "argsort"));
    RETURN_IF_ERROR(Check(
        k::ArgsortRows(ctx, f, gathered, rows, n, op.descending, pass, temp->data(), temp_bytes),
        "argsort"));
    RETURN_IF_ERROR(
        Check(k::TakeAlongRows(ctx, DType::kInt64, order, n, pass, rows, n, next, bad), "argsort"));
    std::swap(order, next);
  }
  if (op.values) {
    return Check(k::TakeAlongRows(ctx, in.dtype, in.data(), n, order, rows, n, out.data(), bad),
                 "sort");
  }
  return Check(cudaMemcpyAsync(out.data(), order, static_cast<size_t>(count * 8),
                               cudaMemcpyDeviceToDevice, s->stream()),
               "cudaMemcpyAsync");
}

absl::Status CudaBackend::Do(const StreamRef& s, const ArgsortOp& op) {
  const DeviceArray &in = *op.in, &out = *op.out;
  const DType want = op.values ? in.dtype : DType::kInt64;
  RETURN_IF_ERROR(Require(
      !in.shape.empty() && out.shape == in.shape && out.dtype == want && in.buffer != out.buffer,
      "argsort",
      "needs an array of rank >= 1 and a new output (int64 indices, or "
      "its dtype for the values)"));
  const int64_t n = LastDim(in.shape), rows = Rows(in.shape);
  if (rows * n == 0) return absl::OkStatus();
  if (IsComplex(in.dtype)) return ComplexArgsort(s, op);
  if (op.values && k::SortKeysOnlyFits(in.dtype, rows)) {
    // One row sorted as plain keys, when that is NumPy's order: for floats,
    // the NaNs' bits read back first (a synchronisation, as take's).
    bool exact = true;
    if (k::SortKeysOnlyNeedsNaNCheck(in.dtype)) {
      ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> bits, AllocateOn(s, 16));
      auto* d_bits = static_cast<unsigned long long*>(bits->data());
      unsigned long long host[2] = {0, 0};
      RETURN_IF_ERROR(Check(k::NaNBits(Launch(*s), in.dtype, in.data(), n, d_bits), "sort"));
      RETURN_IF_ERROR(
          Check(cudaMemcpyAsync(host, d_bits, sizeof host, cudaMemcpyDeviceToHost, s->stream()),
                "cudaMemcpyAsync"));
      RETURN_IF_ERROR(Check(cudaStreamSynchronize(s->stream()), "cudaStreamSynchronize"));
      exact = k::KeysOnlyExact(in.dtype, host);
    }
    if (exact) {
      const size_t bytes = k::SortKeysOnlyTempBytes(in.dtype, n);
      ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> temp,
                       AllocateOn(s, static_cast<int64_t>(bytes)));
      return Check(k::SortKeysOnly(Launch(*s), in.dtype, in.data(), n, op.descending, out.data(),
                                   temp->data(), bytes),
                   "sort");
    }
  }
  const size_t temp_bytes = k::ArgsortTempBytes(rows, n);
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> temp,
                   AllocateOn(s, static_cast<int64_t>(temp_bytes)));
  // `temp` is freed (stream-ordered, after the sort) when it goes out of scope.
  if (op.values && k::SortRowsFits(in.dtype, rows)) {
    return Check(k::SortRows(Launch(*s), in.dtype, in.data(), rows, n, op.descending, out.data(),
                             temp->data(), temp_bytes),
                 "sort");
  }
  if (!op.values) {
    return Check(k::ArgsortRows(Launch(*s), in.dtype, in.data(), rows, n, op.descending, out.data(),
                                temp->data(), temp_bytes),
                 "argsort");
  }
  // Values of 8-byte dtypes over many rows (key and row beyond 64 bits):
  // the argsort, then a gather.
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> idx, AllocateOn(s, rows * n * 8));
  RETURN_IF_ERROR(Check(k::ArgsortRows(Launch(*s), in.dtype, in.data(), rows, n, op.descending,
                                       idx->data(), temp->data(), temp_bytes),
                        "sort"));
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> flag, AllocateOn(s, 8));
  RETURN_IF_ERROR(Check(cudaMemsetAsync(flag->data(), 0xff, 8, s->stream()), "sort"));
  return Check(
      k::TakeAlongRows(Launch(*s), in.dtype, in.data(), n, static_cast<const int64_t*>(idx->data()),
                       rows, n, out.data(), static_cast<unsigned long long*>(flag->data())),
      "sort");
}

absl::Status CudaBackend::Do(const StreamRef& s, const TakeAlongAxisOp& op) {
  const DeviceArray &in = *op.in, &idx = *op.idx, &out = *op.out;
  RETURN_IF_ERROR(Require(
      idx.dtype == DType::kInt64 && out.dtype == in.dtype && out.shape == idx.shape &&
          SameRows(in.shape, idx.shape) && out.buffer != in.buffer && out.buffer != idx.buffer,
      "take_along_axis", "needs int64 indices of the output's shape and the input's rows"));
  const int64_t n = LastDim(in.shape), m = LastDim(idx.shape), rows = Rows(idx.shape);
  if (rows * m == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> flag, AllocateOn(s, 8));
  RETURN_IF_ERROR(Check(cudaMemsetAsync(flag->data(), 0xff, 8, s->stream()), "cudaMemsetAsync"));
  RETURN_IF_ERROR(Check(
      k::TakeAlongRows(Launch(*s), in.dtype, in.data(), n, static_cast<const int64_t*>(idx.data()),
                       rows, m, out.data(), static_cast<unsigned long long*>(flag->data())),
      "take_along_axis"));
  unsigned long long bad = 0;
  RETURN_IF_ERROR(Check(cudaMemcpyAsync(&bad, flag->data(), 8, cudaMemcpyDeviceToHost, s->stream()),
                        "cudaMemcpyAsync"));
  RETURN_IF_ERROR(Check(cudaStreamSynchronize(s->stream()), "cudaStreamSynchronize"));
  if (bad != ~0ULL) {
    int64_t value = 0;
    RETURN_IF_ERROR(Check(cudaMemcpyAsync(&value, static_cast<const int64_t*>(idx.data()) + bad, 8,
                                          cudaMemcpyDeviceToHost, s->stream()),
                          "cudaMemcpyAsync"));
    RETURN_IF_ERROR(Check(cudaStreamSynchronize(s->stream()), "cudaStreamSynchronize"));
    return absl::InvalidArgumentError(
        absl::StrCat("index ", value, " is out of bounds for axis of size ", n));
  }
  return absl::OkStatus();
}

absl::Status CudaBackend::Do(const StreamRef& s, const ScanOp& op) {
  const DeviceArray &in = *op.in, &out = *op.out;
  RETURN_IF_ERROR(Require(!in.shape.empty() && out.shape == in.shape && out.dtype == in.dtype &&
                              DefinedFor(DeviceOpKind::kScan, in.dtype),
                          "scan", "needs a non-bool array of rank >= 1 and an output like it"));
  const k::LaunchContext ctx = Launch(*s);
  const int64_t rows = Rows(in.shape), n = LastDim(in.shape);
  const size_t temp_bytes = k::ScanTempBytes(ctx, in.dtype, rows, n);
  std::shared_ptr<CudaBuffer> temp;
  if (temp_bytes > 0) {
    ASSIGN_OR_RETURN(temp, AllocateOn(s, static_cast<int64_t>(temp_bytes)));
  }
  return Check(k::ScanRows(ctx, op.kind, in.dtype, in.data(), rows, n, out.data(),
                           temp ? temp->data() : nullptr),
               "scan");
}

absl::Status CudaBackend::Do(const StreamRef& s, const ExtractOp& op) {
  const DeviceArray &cond = *op.cond, &out = *op.out;
  const DType want = op.values != nullptr ? op.values->dtype : DType::kInt64;
  const int64_t n = cond.num_elements();
  RETURN_IF_ERROR(Require(
      cond.dtype == DType::kBool && out.shape.size() == 1 && out.dtype == want &&
          (op.values == nullptr || op.values->num_elements() == n) && out.buffer != cond.buffer &&
          (op.values == nullptr || out.buffer != op.values->buffer),
      "extract",
      "needs a bool condition, values of its size and a new 1-D output of the values' dtype"));
  const int64_t count = out.shape[0];
  if (n == 0 && count == 0) return absl::OkStatus();
  const size_t temp_bytes = k::ExtractTempBytes(n);
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> temp,
                   AllocateOn(s, static_cast<int64_t>(temp_bytes) + 256));
  // The true count goes after CUB's scratch, in the same allocation.
  auto* true_count = reinterpret_cast<int64_t*>(static_cast<char*>(temp->data()) + temp_bytes);
  RETURN_IF_ERROR(Check(k::Extract(Launch(*s), static_cast<const uint8_t*>(cond.data()),
                                   op.values != nullptr ? op.values->data() : nullptr,
                                   static_cast<int>(ItemSize(want)), n, count, out.data(),
                                   true_count, temp->data(), temp_bytes),
                        "extract"));
  int64_t got = 0;
  RETURN_IF_ERROR(Check(cudaMemcpyAsync(&got, true_count, 8, cudaMemcpyDeviceToHost, s->stream()),
                        "cudaMemcpyAsync"));
  RETURN_IF_ERROR(Check(cudaStreamSynchronize(s->stream()), "cudaStreamSynchronize"));
  if (got != count) {
    return absl::InvalidArgumentError(absl::StrCat("extract: the condition has ", got,
                                                   " true elements, not the ", count,
                                                   " the program declared"));
  }
  return absl::OkStatus();
}

}  // namespace resident::cuda_internal
