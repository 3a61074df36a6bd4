// Sorting along the last axis for the CUDA backend, behind plain C++
// launch functions (kernels.h's conventions): a stable argsort in NumPy's
// order on cub::DeviceRadixSort, a gather along the last axis and inclusive
// scans. Arrays are C-contiguous rows x n; the program layer moves another
// axis last first.
//
// Argsort: each element becomes an unsigned key whose order is NumPy's
// (the sign bit flipped for signed integers; floats by their bits, negative
// ones inverted, every NaN the largest key, -0.0 made +0.0; descending
// inverts the key), with its row in the bits above it, and one stable radix
// sort of (key, flat index) pairs orders every row at once. 64-bit dtypes
// over several rows take two sorts: by key, then stably by row.
#ifndef RESIDENT_KERNELS_CUDA_SORT_H_
#define RESIDENT_KERNELS_CUDA_SORT_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"
#include "core/reduce_kind.h"
#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels {

// Device scratch bytes ArgsortRows needs for rows x n elements.
size_t ArgsortTempBytes(int64_t rows, int64_t n);
// out (int64, rows x n) = the stable argsort of each row of `in` (a real
// dtype t), as kernels/cpu/sort.h's ArgsortRows. `temp` holds
// ArgsortTempBytes and must stay allocated until the work is done.
cudaError_t ArgsortRows(const LaunchContext& ctx, DType t, const void* in, int64_t rows, int64_t n,
                        bool descending, void* out, void* temp, size_t temp_bytes);

// Whether SortRows takes rows of dtype t: the key and the row number fit
// one 64-bit radix key (always for one row).
bool SortRowsFits(DType t, int64_t rows);
// out (t, rows x n) = each row of `in` in its stable argsort's order: one
// radix sort of (key, element) pairs that carries the elements' bits, so
// NaN payloads and signed zeros come back as they were. `temp` holds
// ArgsortTempBytes. Only where SortRowsFits.
cudaError_t SortRows(const LaunchContext& ctx, DType t, const void* in, int64_t rows, int64_t n,
                     bool descending, void* out, void* temp, size_t temp_bytes);

// One row sorted by CUB as plain keys (its elements themselves): much less
// traffic than SortRows' pairs. Whether dtype t over `rows` rows can be:
// one row of an integer dtype (not bool), or of float32/float64 when
// KeysOnlyExact says so after NaNBits.
bool SortKeysOnlyFits(DType t, int64_t rows);
// Whether t needs the NaN check (floats: CUB orders NaNs by their bits).
bool SortKeysOnlyNeedsNaNCheck(DType t);
// nan_bits (device, 2 words) = the least and greatest bits of in's NaNs
// (~0 and 0 without one), for a float32/float64 `in` of n elements.
cudaError_t NaNBits(const LaunchContext& ctx, DType t, const void* in, int64_t n,
                    unsigned long long* nan_bits);
// Whether the keys-only sort gives NumPy's order given nan_bits read back:
// no NaN, or all NaNs of one positive bit pattern (NumPy keeps NaNs in
// their order, last; CUB orders them by their bits).
bool KeysOnlyExact(DType t, const unsigned long long nan_bits[2]);
size_t SortKeysOnlyTempBytes(DType t, int64_t n);
// out (n elements of t) = in sorted (descending: the reverse order, equal
// keys still in their order); stable, -0.0 ranked as +0.0.
cudaError_t SortKeysOnly(const LaunchContext& ctx, DType t, const void* in, int64_t n,
                         bool descending, void* out, void* temp, size_t temp_bytes);

// out[r, j] = in[r, idx[r, j]] for in rows x n and idx, out rows x m (any
// dtype, moved by its item size); a negative index counts from the end. An
// index outside [-n, n) leaves its element unwritten and sets *bad (device
// memory the caller set to all ones) to the smallest such flat position.
cudaError_t TakeAlongRows(const LaunchContext& ctx, DType t, const void* in, int64_t n,
                          const int64_t* idx, int64_t rows, int64_t m, void* out,
                          unsigned long long* bad);

// cls, k1, k2 (count elements each, of the component type) = each element's
// resident_cx_sort_keys (core/complex.h): sorting stably by k2, then k1,
// then cls gives NumPy's lexicographic order with its NaN placement. t is
// complex64 or complex128.
cudaError_t ComplexSortKeys(const LaunchContext& ctx, DType t, const void* in, int64_t count,
                            void* cls, void* k1, void* k2);

// Device scratch bytes ScanRows needs (0: none; pass nullptr).
size_t ScanTempBytes(const LaunchContext& ctx, DType t, int64_t rows, int64_t n);
// out = the inclusive scan (kSum: running sums, kProd: running products)
// of each row of `in`, both of dtype t (the accumulation dtype: the caller
// converts first). A block scans a row (or, for rows too long and too few
// to fill the GPU, a chunk of 8192, the chunks then offset by the scan of
// their totals) in pieces of 256 with cub::BlockScan, so float results
// agree with NumPy's left-to-right sums within rounding (not bit for bit).
// Halves accumulate in float32 and round once per element (and chunk
// total). `temp` holds ScanTempBytes until the work is done.
cudaError_t ScanRows(const LaunchContext& ctx, ReduceKind kind, DType t, const void* in,
                     int64_t rows, int64_t n, void* out, void* temp);

}  // namespace resident::cuda_kernels

#endif  // RESIDENT_KERNELS_CUDA_SORT_H_
