#include "kernels/cpu/matmul.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/array_view.h"

namespace resident::cpu {
namespace {

// Multiplies with overflow detection; false on overflow.
bool MulOk(int64_t x, int64_t y, int64_t* r) { return !__builtin_mul_overflow(x, y, r); }

// Rows of j processed per pass so a strip of out and of b stays in cache.
constexpr int64_t kColumnBlock = 256;

// out row i of one batch: sum over p of a[i, p] * b[p, :], in i-k-j order
// so the innermost loop runs along contiguous rows of b and out.
template <typename T>
void IntegerRow(const T* a_row, const T* b, T* out_row, int64_t k, int64_t n) {
  // U stores, W computes: at least 32 bits, so narrow types never promote
  // to int and overflow.
  using U = std::conditional_t<kIsBoolStorage<T>, uint8_t, std::make_unsigned_t<T>>;
  using W = std::conditional_t<(sizeof(U) < 4), uint32_t, U>;
  U* o = reinterpret_cast<U*>(out_row);
  std::fill(o, o + n, U{0});
  for (int64_t j0 = 0; j0 < n; j0 += kColumnBlock) {
    const int64_t j1 = std::min(n, j0 + kColumnBlock);
    for (int64_t p = 0; p < k; ++p) {
      const U x = static_cast<U>(a_row[p]);
      if (x == 0) continue;
      const T* b_row = b + p * n;
      if constexpr (kIsBoolStorage<T>) {
        for (int64_t j = j0; j < j1; ++j) o[j] |= static_cast<U>(b_row[j] != 0);
      } else {
        for (int64_t j = j0; j < j1; ++j) {
          o[j] = static_cast<U>(static_cast<W>(o[j]) +
                                static_cast<W>(x) * static_cast<W>(static_cast<U>(b_row[j])));
        }
      }
    }
  }
}

template <typename T>
void IntegerMatmul(ThreadPool* pool, const MatmulDims& d, const T* a, const T* b, T* out) {
  const int64_t rows = d.batch * d.m;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, d.k * d.n));
  ParallelFor(pool, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t bi = r / d.m, i = r % d.m;
      IntegerRow<T>(a + bi * d.a_batch_stride + i * d.k, b + bi * d.b_batch_stride, out + r * d.n,
                    d.k, d.n);
    }
  });
}

// Multiply-adds of one block of rows between `stop` checks: a fraction of
// a second of OpenBLAS on a few cores, and still large enough for it.
constexpr int64_t kBlockWork = int64_t{1} << 30;

template <typename T>
bool BlasMatmul(const MatmulDims& d, const T* a, const T* b, T* out,
                const std::function<bool()>& stop) {
  const blasint n = static_cast<blasint>(d.n), k = static_cast<blasint>(d.k);
  const int64_t row_work = std::max<int64_t>(1, d.n * d.k);
  const int64_t block = std::max<int64_t>(1, kBlockWork / row_work);
  for (int64_t i = 0; i < d.batch; ++i) {
    for (int64_t r = 0; r < d.m; r += block) {
      if (stop && stop()) return false;
      const blasint m = static_cast<blasint>(std::min(block, d.m - r));
      const T* ai = a + i * d.a_batch_stride + r * d.k;
      const T* bi = b + i * d.b_batch_stride;
      T* oi = out + i * d.m * d.n + r * d.n;
      if constexpr (std::is_same_v<T, float>) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, ai, k, bi, n, 0.0f,
                    oi, n);
      } else {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, ai, k, bi, n, 0.0, oi,
                    n);
      }
    }
  }
  return true;
}

// complex64 / complex128: OpenBLAS's cgemm / zgemm (NumPy's matmul calls
// the same BLAS routines).
template <typename T>
void ComplexBlasMatmul(const MatmulDims& d, const T* a, const T* b, T* out) {
  const blasint m = static_cast<blasint>(d.m), n = static_cast<blasint>(d.n),
                k = static_cast<blasint>(d.k);
  const T one{1, 0}, zero{0, 0};
  for (int64_t i = 0; i < d.batch; ++i) {
    const T* ai = a + i * d.a_batch_stride;
    const T* bi = b + i * d.b_batch_stride;
    T* oi = out + i * d.m * d.n;
    if constexpr (std::is_same_v<T, Complex64>) {
      cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, &one, ai, k, bi, n, &zero, oi,
                  n);
    } else {
      cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, &one, ai, k, bi, n, &zero, oi,
                  n);
    }
  }
}

// float16 / bfloat16: a and b widened to float32 (exactly), OpenBLAS's
// sgemm, each result rounded back once, as NumPy's float16 matmul does.
template <typename T>
void HalfMatmul(ThreadPool* pool, const MatmulDims& d, const MatmulExtent& extent, const T* a,
                const T* b, T* out) {
  auto widen = [&](const T* src, int64_t n) {
    std::vector<float> w(n);
    ParallelFor(pool, n, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) w[i] = resident_load(src[i]);
    });
    return w;
  };
  const std::vector<float> wa = widen(a, extent.a), wb = widen(b, extent.b);
  std::vector<float> wo(extent.out);
  BlasMatmul(d, wa.data(), wb.data(), wo.data(), {});
  ParallelFor(pool, extent.out, kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = resident_store<T>(wo[i]);
  });
}

}  // namespace

absl::Status CheckMatmulDims(const MatmulDims& d, MatmulExtent* extent) {
  if (d.batch < 0 || d.m < 0 || d.k < 0 || d.n < 0 || d.a_batch_stride < 0 ||
      d.b_batch_stride < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("matmul dims must be non-negative: batch=", d.batch, " m=", d.m, " k=", d.k,
                     " n=", d.n, " strides=", d.a_batch_stride, ",", d.b_batch_stride));
  }
  *extent = MatmulExtent{};
  int64_t mk, kn, mn, t;
  if (!MulOk(d.m, d.k, &mk) || !MulOk(d.k, d.n, &kn) || !MulOk(d.m, d.n, &mn) ||
      !MulOk(d.batch, mn, &extent->out)) {
    return absl::InvalidArgumentError("matmul dims overflow int64");
  }
  if (d.batch == 0) return absl::OkStatus();
  // The last matrix ends at (batch - 1) * stride + its size.
  if (!MulOk(d.batch - 1, d.a_batch_stride, &t) || __builtin_add_overflow(t, mk, &extent->a) ||
      !MulOk(d.batch - 1, d.b_batch_stride, &t) || __builtin_add_overflow(t, kn, &extent->b)) {
    return absl::InvalidArgumentError("matmul batch strides overflow int64");
  }
  return absl::OkStatus();
}

absl::Status Matmul(ThreadPool* pool, DType dtype, const MatmulDims& d, const void* a,
                    const void* b, void* out, const std::function<bool()>& stop) {
  MatmulExtent extent;
  if (absl::Status s = CheckMatmulDims(d, &extent); !s.ok()) return s;
  if (extent.out == 0) return absl::OkStatus();
  if (d.k == 0) {  // empty sums; BLAS would also refuse lda = 0
    std::memset(out, 0, static_cast<size_t>(extent.out * ItemSize(dtype)));
    return absl::OkStatus();
  }
  if ((IsFloating(dtype) || IsComplex(dtype)) &&
      (d.m > INT_MAX || d.n > INT_MAX || d.k > INT_MAX)) {
    return absl::UnimplementedError(
        absl::StrCat("matmul dimension over BLAS's int range: m=", d.m, " k=", d.k, " n=", d.n));
  }
  return DispatchAnyDType(dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* ta = static_cast<const T*>(a);
    const T* tb = static_cast<const T*>(b);
    if constexpr (kIsComplexStorage<T>) {
      ComplexBlasMatmul(d, ta, tb, static_cast<T*>(out));
    } else if constexpr (kIsHalfStorage<T>) {
      HalfMatmul(pool, d, extent, ta, tb, static_cast<T*>(out));
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!BlasMatmul(d, ta, tb, static_cast<T*>(out), stop)) {
        return absl::CancelledError("stopped");
      }
    } else {  // bool (or of ands) and integers (wrapping)
      IntegerMatmul(pool, d, ta, tb, static_cast<T*>(out));
    }
    return absl::OkStatus();
  });
}

}  // namespace resident::cpu
