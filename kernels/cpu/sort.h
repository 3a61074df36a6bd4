// Sorting along the last axis and what builds on it, for the CPU backend:
// a stable argsort in NumPy's order, a gather along the last axis
// (numpy.take_along_axis), inclusive scans (numpy.cumsum, cumprod) and
// the selection of a mask's elements (numpy.extract, flatnonzero).
// Arrays are C-contiguous and seen as rows x n (the last axis); the
// program layer moves another axis last first.
#ifndef RESIDENT_KERNELS_CPU_SORT_H_
#define RESIDENT_KERNELS_CPU_SORT_H_

#include "absl/status/status.h"
#include "core/reduce_kind.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

// out (int64, a's shape) = the stable argsort of each row of a, NumPy's
// order: ascending, NaNs last (any sign or payload), -0.0 equal to +0.0,
// equal elements in their order (std::stable_sort). descending sorts as
// the Array API's descending=True: the reverse order, equal elements still
// in their order, NaNs first. A stable LSD radix sort of ordered keys
// (radix_sort.h; short rows by comparisons): many rows in parallel, or one
// long row's passes split over the threads. Complex rows sort by
// comparisons in NumPy's lexicographic order: NaN-free numbers first, then
// R + nanj, nan + Rj and nan + nanj.
absl::Status ArgsortRows(ThreadPool* pool, const ConstView& a, bool descending, const MutView& out);

// out (a's dtype and shape) = each row of a in ArgsortRows' order, each
// element's bits moved as they are (NaN payloads, -0.0 among +0.0).
absl::Status SortRows(ThreadPool* pool, const ConstView& a, bool descending, const MutView& out);

// out[r, j] = a[r, idx[r, j]] (a: rows x n; idx, out: rows x m, idx int64,
// a negative index counting from the end as NumPy's). An index outside
// [-n, n) is INVALID_ARGUMENT (NumPy's IndexError), out then undefined.
absl::Status TakeAlongRows(ThreadPool* pool, const ConstView& a, const ConstView& idx,
                           const MutView& out);

// out[r, j] = a[r, 0] + ... + a[r, j] (kSum) or the product (kProd), in
// out's dtype (NumPy's: SumResultType of a's), accumulated left to right
// as numpy.cumsum does, so float results are NumPy's bit for bit; integers
// wrap. float16/bfloat16 accumulate in float32 and round each element.
// Complex adds and multiplies as NumPy's complex loops.
absl::Status ScanRows(ThreadPool* pool, ReduceKind kind, const ConstView& a, const MutView& out);

// out (1-D) = the elements of *values (cond's element count) where cond
// (bool, read flat, nonzero bytes true) is true, in order (numpy.extract);
// with values null, their flat positions as int64 (numpy.flatnonzero).
// Counts first, in parallel: a cond whose true elements are not out's
// length is INVALID_ARGUMENT with out unwritten.
absl::Status Extract(ThreadPool* pool, const ConstView& cond, const ConstView* values,
                     const MutView& out);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_SORT_H_
