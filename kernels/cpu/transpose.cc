#include "kernels/cpu/transpose.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/shape.h"

namespace resident::cpu {
namespace {

// Tile edge for the blocked case: a 32 x 32 tile of 8-byte elements is 8 KiB
// read and 8 KiB written, well inside L1.
constexpr int64_t kTileEdge = 32;

// The permutation reduced to what matters: output dims (none of size 1,
// adjacent ones merged when they are adjacent in the input too) with the
// input's element stride along each.
struct Plan {
  std::vector<int64_t> dims;
  std::vector<int64_t> in_strides;
};

Plan MakePlan(absl::Span<const int64_t> in_shape, absl::Span<const int> perm) {
  const std::vector<int64_t> in_strides = ContiguousStrides(in_shape);
  Plan plan;
  for (size_t i = 0; i < perm.size(); ++i) {
    const int64_t dim = in_shape[perm[i]];
    const int64_t stride = in_strides[perm[i]];
    if (dim == 1) continue;
    if (!plan.dims.empty() && plan.in_strides.back() == stride * dim) {
      plan.dims.back() *= dim;
      plan.in_strides.back() = stride;
    } else {
      plan.dims.push_back(dim);
      plan.in_strides.push_back(stride);
    }
  }
  return plan;
}

// Element type by size: transposing only moves bytes.
template <typename E>
void TransposeTyped(ThreadPool* pool, const Plan& plan, const E* in, E* out) {
  const int rank = static_cast<int>(plan.dims.size());
  const std::vector<int64_t> out_strides = ContiguousStrides(plan.dims);
  const int last = rank - 1;
  // The output dim along which the input is contiguous.
  int contiguous = last;
  for (int d = 0; d < rank; ++d) {
    if (plan.in_strides[d] == 1) contiguous = d;
  }
  // Work units: one per (outer index, tile row). Outer dims are all but
  // `contiguous` and `last`; each unit covers a kTileEdge strip of the
  // contiguous dim (or one whole row when contiguous == last).
  std::vector<int> outer_dims;
  for (int d = 0; d < rank; ++d) {
    if (d != contiguous && d != last) outer_dims.push_back(d);
  }
  const int64_t strip = contiguous == last ? 1 : kTileEdge;
  const int64_t strips = contiguous == last ? 1 : (plan.dims[contiguous] + strip - 1) / strip;
  int64_t outer = 1;
  for (int d : outer_dims) outer *= plan.dims[d];
  const int64_t units = outer * strips;
  const int64_t unit_elems = strip * plan.dims[last];
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, unit_elems));
  ParallelFor(pool, units, grain, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      int64_t o = u / strips;
      const int64_t s = u % strips;
      int64_t in_base = 0, out_base = 0;
      for (int i = static_cast<int>(outer_dims.size()) - 1; i >= 0; --i) {
        const int d = outer_dims[i];
        const int64_t idx = o % plan.dims[d];
        o /= plan.dims[d];
        in_base += idx * plan.in_strides[d];
        out_base += idx * out_strides[d];
      }
      if (contiguous == last) {  // rows are contiguous in both
        std::memcpy(out + out_base, in + in_base, static_cast<size_t>(plan.dims[last]) * sizeof(E));
        continue;
      }
      // A strip of tiles: i along `contiguous`, j along `last`.
      const int64_t i0 = s * strip;
      const int64_t i1 = std::min(plan.dims[contiguous], i0 + strip);
      const int64_t in_js = plan.in_strides[last];
      const int64_t out_is = out_strides[contiguous];
      for (int64_t j0 = 0; j0 < plan.dims[last]; j0 += kTileEdge) {
        const int64_t j1 = std::min(plan.dims[last], j0 + kTileEdge);
        for (int64_t i = i0; i < i1; ++i) {
          const E* src = in + in_base + i;
          E* dst = out + out_base + i * out_is;
          for (int64_t j = j0; j < j1; ++j) dst[j] = src[j * in_js];
        }
      }
    }
  });
}

}  // namespace

absl::Status Transpose(ThreadPool* pool, const ConstView& a, absl::Span<const int> perm,
                       const MutView& out) {
  const int rank = static_cast<int>(a.shape.size());
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("transpose of ", ShapeString(a.shape), " by (",
                                                   absl::StrJoin(perm, ", "), ") to ",
                                                   ShapeString(out.shape), ": ", why));
  };
  if (a.dtype != out.dtype) return bad("dtypes differ");
  if (static_cast<int>(perm.size()) != rank) return bad("perm length != rank");
  std::vector<bool> seen(rank, false);
  for (int p : perm) {
    if (p < 0 || p >= rank || seen[p]) return bad("not a permutation");
    seen[p] = true;
  }
  if (static_cast<int>(out.shape.size()) != rank) return bad("rank differs");
  for (int i = 0; i < rank; ++i) {
    if (out.shape[i] != a.shape[perm[i]]) return bad("out shape mismatch");
  }
  if (a.size() == 0) return absl::OkStatus();
  const Plan plan = MakePlan(a.shape, perm);
  if (plan.dims.size() <= 1) {  // nothing actually moves
    std::memcpy(out.data, a.data, static_cast<size_t>(a.size() * ItemSize(a.dtype)));
    return absl::OkStatus();
  }
  switch (ItemSize(a.dtype)) {
    case 1:
      TransposeTyped(pool, plan, static_cast<const uint8_t*>(a.data),
                     static_cast<uint8_t*>(out.data));
      break;
    case 2:
      TransposeTyped(pool, plan, static_cast<const uint16_t*>(a.data),
                     static_cast<uint16_t*>(out.data));
      break;
    case 4:
      TransposeTyped(pool, plan, static_cast<const uint32_t*>(a.data),
                     static_cast<uint32_t*>(out.data));
      break;
    case 8:
      TransposeTyped(pool, plan, static_cast<const uint64_t*>(a.data),
                     static_cast<uint64_t*>(out.data));
      break;
    case 16: {  // complex128
      struct Word16 {
        uint64_t lo, hi;
      };
      TransposeTyped(pool, plan, static_cast<const Word16*>(a.data),
                     static_cast<Word16*>(out.data));
      break;
    }
    default:  // never a silent wrong width: a new item size needs its word
      return absl::InvalidArgumentError(
          absl::StrCat("transpose has no kernel for ", ItemSize(a.dtype), "-byte elements"));
  }
  return absl::OkStatus();
}

}  // namespace resident::cpu
