#include "server/device/cpu/fused_loop.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/elementwise.h"

namespace resident::cpu {
namespace {

// Elements per block: a tile call per block and step costs little, and the
// slots of a block stay in L1/L2, so each trip's arithmetic never goes out
// to memory.
constexpr int64_t kBlock = int64_t{1} << 10;

// A loop of one binary op on its one carried value (what chain folding
// makes of x = x + x, x = x * c, ...): the operand pattern for
// ElementwiseChain, or nullopt for any other body.
std::optional<ChainSide> OneOpChain(const FusedLoopSpec& spec) {
  const int np = static_cast<int>(spec.param_dtypes.size());
  if (spec.num_carried != 1 || spec.steps.size() != 1 || spec.yields[0] != np) return std::nullopt;
  const FusedLoopSpec::Step& st = spec.steps[0];
  if (!st.op || Arity(*st.op) != 2 || st.dtype != spec.param_dtypes[0]) return std::nullopt;
  // ElementwiseChain runs a bool-valued kind in bool only.
  if (FindElementwise(*st.op)->rule == ElementwiseRule::kBoolResult && st.dtype != DType::kBool) {
    return std::nullopt;
  }
  if (st.a == 0 && st.b == 0) return ChainSide::kBoth;
  const int other = st.a == 0 ? st.b : st.a;
  if ((st.a != 0 && st.b != 0) || other <= 0 || other >= np ||
      spec.param_dtypes[other] != st.dtype ||
      (!spec.param_broadcast.empty() && spec.param_broadcast[other] > 0)) {
    return std::nullopt;
  }
  return st.a == 0 ? ChainSide::kFirst : ChainSide::kSecond;
}

// out[e] = cond[e] ? a[e] : b[e] over `count` elements of `item` bytes, on
// the bit patterns (NaN payloads and -0.0 pass); a `*_one` operand is one
// element broadcast.
template <typename U>
void SelectAs(const char* cond, bool cond_one, const U* a, bool a_one, const U* b, bool b_one,
              U* out, int64_t count) {
  for (int64_t e = 0; e < count; ++e) {
    out[e] = cond[cond_one ? 0 : e] != 0 ? a[a_one ? 0 : e] : b[b_one ? 0 : e];
  }
}

void SelectTile(const char* cond, bool cond_one, const void* a, bool a_one, const void* b,
                bool b_one, void* out, int64_t count, int64_t item) {
  switch (item) {
    case 1:
      return SelectAs(cond, cond_one, static_cast<const uint8_t*>(a), a_one,
                      static_cast<const uint8_t*>(b), b_one, static_cast<uint8_t*>(out), count);
    case 2:
      return SelectAs(cond, cond_one, static_cast<const uint16_t*>(a), a_one,
                      static_cast<const uint16_t*>(b), b_one, static_cast<uint16_t*>(out), count);
    case 4:
      return SelectAs(cond, cond_one, static_cast<const uint32_t*>(a), a_one,
                      static_cast<const uint32_t*>(b), b_one, static_cast<uint32_t*>(out), count);
    default:
      return SelectAs(cond, cond_one, static_cast<const uint64_t*>(a), a_one,
                      static_cast<const uint64_t*>(b), b_one, static_cast<uint64_t*>(out), count);
  }
}

// dst[e] = the element of a broadcast param (`base`, layout `l`) read at
// flat index begin + e, for e < count: an odometer over the layout's digits,
// so no division per element.
template <typename U>
void GatherAs(const U* base, const FusedBroadcastLayout& l, int64_t begin, int64_t count, U* dst) {
  int64_t digit[kMaxFusedBroadcastRank] = {};
  int64_t off = 0, rest = begin;
  for (int d = l.rank - 1; d >= 0; --d) {
    digit[d] = rest % l.dim[d];
    rest /= l.dim[d];
    off += digit[d] * l.stride[d];
  }
  const int inner = l.rank - 1;
  for (int64_t e = 0; e < count;) {
    // The rest of the innermost run in one go.
    const int64_t run = std::min(count - e, l.dim[inner] - digit[inner]);
    const int64_t s = l.stride[inner];
    for (int64_t k = 0; k < run; ++k) dst[e + k] = base[off + k * s];
    e += run;
    off += run * s;
    digit[inner] += run;
    for (int d = inner; d > 0 && digit[d] == l.dim[d]; --d) {
      off += l.stride[d - 1] - l.dim[d] * l.stride[d];
      digit[d] = 0;
      ++digit[d - 1];
    }
  }
}

void GatherBroadcast(const void* base, int64_t item, const FusedBroadcastLayout& l, int64_t begin,
                     int64_t count, void* dst) {
  switch (item) {
    case 1:
      return GatherAs(static_cast<const uint8_t*>(base), l, begin, count,
                      static_cast<uint8_t*>(dst));
    case 2:
      return GatherAs(static_cast<const uint16_t*>(base), l, begin, count,
                      static_cast<uint16_t*>(dst));
    case 4:
      return GatherAs(static_cast<const uint32_t*>(base), l, begin, count,
                      static_cast<uint32_t*>(dst));
    default:
      return GatherAs(static_cast<const uint64_t*>(base), l, begin, count,
                      static_cast<uint64_t*>(dst));
  }
}

// A region's trailing reduction (FusedReductionFits's kinds) as 64 bits:
// sums and products wrapping, max/min compared with the element's
// signedness, any/all as 0/1. The kinds are order-free, so each thread's
// blocks reduce apart and merge in any order, as the reduction kernels'
// results do not depend on theirs.
// acc folded with conv(p[e]) for e < count (p[0] each time if `one`).
template <typename A, typename T, typename Conv, typename Op>
A Fold(const T* p, bool one, int64_t count, A acc, Conv conv, Op op) {
  if (one) {
    const A v = static_cast<A>(conv(p[0]));
    for (int64_t e = 0; e < count; ++e) acc = op(acc, v);
    return acc;
  }
  for (int64_t e = 0; e < count; ++e) acc = op(acc, static_cast<A>(conv(p[e])));
  return acc;
}

class Reducer {
 public:
  Reducer(ReduceKind kind, DType dtype)
      : kind_(kind), dtype_(dtype), signed_(IsSignedInteger(dtype) || dtype == DType::kBool) {
    switch (kind) {
      case ReduceKind::kProd:
      case ReduceKind::kAll:
        acc_ = 1;
        break;
      case ReduceKind::kMax:
        acc_ = signed_ ? static_cast<uint64_t>(std::numeric_limits<int64_t>::min()) : 0;
        break;
      case ReduceKind::kMin:
        acc_ = signed_ ? static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                       : std::numeric_limits<uint64_t>::max();
        break;
      default:
        acc_ = 0;
    }
  }

  // Adds `count` elements (one element `count` times if `one`): one typed
  // loop per kind, so the compiler can vectorise it.
  absl::Status Add(const void* tile, bool one, int64_t count) {
    return DispatchDType(dtype_, [&](auto zero) -> absl::Status {
      using T = decltype(zero);
      if constexpr (!kIsHalfStorage<T> && !std::is_arithmetic_v<T>) {
        return absl::InvalidArgumentError("FusedLoop: a reduction of an unfused dtype");
      } else {
        const T* p = static_cast<const T*>(tile);
        // Truth for any/all (a float's NaN is true); the integer widened to
        // 64 bits (bool as 0/1) for the rest.
        auto truth = [](const T& v) -> uint64_t {
          if constexpr (kIsHalfStorage<T>) {
            return resident_load(v) != 0.0f;
          } else {
            return v != 0;
          }
        };
        auto widen = [](const T& v) -> uint64_t {
          if constexpr (kIsHalfStorage<T>) {
            return resident_load(v) != 0.0f;  // never reached: no half sums fuse
          } else if constexpr (kIsBoolStorage<T>) {
            return v != 0;
          } else if constexpr (std::is_signed_v<T>) {
            return static_cast<uint64_t>(static_cast<int64_t>(v));
          } else {
            return static_cast<uint64_t>(v);
          }
        };
        auto as_signed = [&](const T& v) { return static_cast<int64_t>(widen(v)); };
        switch (kind_) {
          case ReduceKind::kAny:
            acc_ = Fold(p, one, count, acc_, truth, [](uint64_t a, uint64_t b) { return a | b; });
            break;
          case ReduceKind::kAll:
            acc_ = Fold(p, one, count, acc_, truth, [](uint64_t a, uint64_t b) { return a & b; });
            break;
          case ReduceKind::kSum:
            acc_ = Fold(p, one, count, acc_, widen, [](uint64_t a, uint64_t b) { return a + b; });
            break;
          case ReduceKind::kProd:
            acc_ = Fold(p, one, count, acc_, widen, [](uint64_t a, uint64_t b) { return a * b; });
            break;
          case ReduceKind::kMax:
          case ReduceKind::kMin: {
            const bool max = kind_ == ReduceKind::kMax;
            if (signed_) {
              const int64_t a = Fold(
                  p, one, count, static_cast<int64_t>(acc_), as_signed,
                  [max](int64_t x, int64_t y) { return max ? std::max(x, y) : std::min(x, y); });
              acc_ = static_cast<uint64_t>(a);
            } else {
              acc_ = Fold(p, one, count, acc_, widen, [max](uint64_t x, uint64_t y) {
                return max ? std::max(x, y) : std::min(x, y);
              });
            }
            break;
          }
          default:
            return absl::InvalidArgumentError("FusedLoop: a reduction kind that does not fuse");
        }
        return absl::OkStatus();
      }
    });
  }

  void Merge(const Reducer& other) { acc_ = Combine(acc_, other.acc_); }

  // The result into `out` (ReduceResultType(kind, dtype), one element).
  void Write(void* out) const {
    const DType type = ReduceResultType(kind_, dtype_);
    uint64_t v = acc_;
    if (type == DType::kBool) v = v != 0 ? 1 : 0;
    // Little-endian: a value that fits the narrower type is its low bytes.
    std::memcpy(out, &v, static_cast<size_t>(ItemSize(type)));
  }

 private:
  uint64_t Combine(uint64_t a, uint64_t b) const {
    switch (kind_) {
      case ReduceKind::kSum:
        return a + b;
      case ReduceKind::kProd:
        return a * b;
      case ReduceKind::kMax:
        return signed_ ? (static_cast<int64_t>(a) < static_cast<int64_t>(b) ? b : a)
                       : std::max(a, b);
      case ReduceKind::kMin:
        return signed_ ? (static_cast<int64_t>(b) < static_cast<int64_t>(a) ? b : a)
                       : std::min(a, b);
      case ReduceKind::kAny:
        return a | b;
      default:  // kAll
        return a & b;
    }
  }

  ReduceKind kind_;
  DType dtype_;
  bool signed_;
  uint64_t acc_ = 0;
};

}  // namespace

absl::Status RunFusedLoop(ThreadPool* pool, const FusedLoopOp& op) {
  ASSIGN_OR_RETURN(const Shape shape, CheckFusedLoopOp(op));
  const FusedLoopSpec& spec = *op.spec;
  const absl::Span<const DeviceArray> params = op.params, outs = op.outs;
  const int np = static_cast<int>(spec.param_dtypes.size());
  const bool region = spec.num_carried == 0;  // a straight-line region
  const int slots = np + static_cast<int>(spec.steps.size());
  const int64_t n = NumElements(shape);
  if (std::optional<ChainSide> side = region ? std::nullopt : OneOpChain(spec)) {
    const FusedLoopSpec::Step& st = spec.steps[0];
    const int other = *side == ChainSide::kSecond ? st.a : st.b;
    const bool one = *side != ChainSide::kBoth && spec.param_scalar[other];
    return ElementwiseChain(pool, *st.op, st.dtype, *side, params[0].data(),
                            *side == ChainSide::kBoth ? nullptr : params[other].data(), one,
                            outs[0].data(), n, spec.trip_count);
  }
  std::vector<DType> dtype(spec.param_dtypes);
  for (const auto& st : spec.steps) dtype.push_back(st.dtype);
  // Broadcast params, gathered a block at a time into their slot's scratch.
  std::vector<std::optional<FusedBroadcastLayout>> broadcast(np);
  for (int p = 0; p < np && !spec.param_broadcast.empty(); ++p) {
    if (spec.param_broadcast[p] > 0) broadcast[p] = FusedBroadcast(params[p].shape, shape);
  }

  bool swap_yields = true;
  for (int c = 0; c < spec.num_carried; ++c) {
    const int y = spec.yields[c];
    swap_yields &= y >= np && y < slots && ItemSize(dtype[y]) == ItemSize(dtype[c]);
    for (int d = 0; d < c; ++d) swap_yields &= spec.yields[d] != y;
  }
  absl::Status first_error;
  std::mutex error_mu;
  const std::optional<FusedLoopSpec::Reduction>& reduction = spec.reduction;
  std::optional<Reducer> reduced;
  if (reduction) reduced.emplace(reduction->kind, dtype[reduction->slot]);
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  ParallelFor(pool, blocks, 1, [&](int64_t b0, int64_t b1) {
    std::optional<Reducer> part;
    if (reduction) part.emplace(reduction->kind, dtype[reduction->slot]);
    // Per-thread scratch: one block of every slot (carried slots hold the
    // running values; invariant slots point at the params).
    std::vector<std::unique_ptr<char[]>> mem(slots);
    for (int s = 0; s < slots; ++s) {
      mem[s].reset(new char[static_cast<size_t>(kBlock * ItemSize(dtype[s]))]);
    }
    std::vector<std::unique_ptr<char[]>> next(spec.num_carried);
    for (int c = 0; c < spec.num_carried; ++c) {
      next[c].reset(new char[static_cast<size_t>(kBlock * ItemSize(dtype[c]))]);
    }
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t begin = blk * kBlock, count = std::min(kBlock, n - begin);
      const int64_t shape_full[1] = {count};
      auto view_of = [&](int s, const void** data, absl::Span<const int64_t>* shape) {
        if (s < np && s >= spec.num_carried && !broadcast[s]) {  // invariant: read in place
          const char* base = static_cast<const char*>(params[s].data());
          if (spec.param_scalar[s]) {
            *data = base;
            *shape = {};
          } else {
            *data = base + begin * ItemSize(dtype[s]);
            *shape = absl::MakeConstSpan(shape_full);
          }
          return;
        }
        *data = mem[s].get();
        *shape = absl::MakeConstSpan(shape_full);
      };
      for (int c = 0; c < spec.num_carried; ++c) {
        std::memcpy(mem[c].get(),
                    static_cast<const char*>(params[c].data()) + begin * ItemSize(dtype[c]),
                    static_cast<size_t>(count * ItemSize(dtype[c])));
      }
      for (int p = 0; p < np; ++p) {
        if (broadcast[p]) {
          GatherBroadcast(params[p].data(), ItemSize(dtype[p]), *broadcast[p], begin, count,
                          mem[p].get());
        }
      }
      absl::Status status;
      for (int64_t t = 0; t < spec.trip_count && status.ok(); ++t) {
        for (size_t i = 0; i < spec.steps.size() && status.ok(); ++i) {
          const auto& st = spec.steps[i];
          const int out_slot = np + static_cast<int>(i);
          MutView out{mem[out_slot].get(), st.dtype, absl::MakeConstSpan(shape_full)};
          const void* da = nullptr;
          absl::Span<const int64_t> sa;
          view_of(st.a, &da, &sa);
          if (st.select) {
            const void* db = nullptr;
            const void* dc = nullptr;
            absl::Span<const int64_t> sb, sc;
            view_of(st.b, &db, &sb);
            view_of(st.c, &dc, &sc);
            SelectTile(static_cast<const char*>(da), sa.empty(), db, sb.empty(), dc, sc.empty(),
                       out.data, count, ItemSize(st.dtype));
          } else if (!st.op.has_value()) {
            status = CastTile(dtype[st.a], da, sa.empty(), st.dtype, out.data, count);
          } else {
            // Operands of an op step have its dtype (casts are steps).
            const void* db = da;
            absl::Span<const int64_t> sb = sa;
            if (Arity(*st.op) == 2) view_of(st.b, &db, &sb);
            const DType db_type = Arity(*st.op) == 2 ? dtype[st.b] : st.dtype;
            status = dtype[st.a] != st.dtype || db_type != st.dtype
                         ? absl::InternalError("FusedLoop: an op step's operands differ in dtype")
                         : ElementwiseTile(*st.op, st.dtype, da, sa.empty(), db, sb.empty(),
                                           out.data, count);
          }
        }
        // Next carried values. Yields that are distinct step results swap
        // their block with the carried one (no copy); otherwise (yields may
        // name each other) copy via scratch.
        if (status.ok() && swap_yields) {
          for (int c = 0; c < spec.num_carried; ++c) mem[c].swap(mem[spec.yields[c]]);
          continue;
        }
        for (int c = 0; c < spec.num_carried && status.ok(); ++c) {
          const int y = spec.yields[c];
          if (y == c) continue;
          const void* dy = nullptr;
          absl::Span<const int64_t> sy;
          view_of(y, &dy, &sy);
          const int64_t bytes = count * ItemSize(dtype[c]);
          if (sy.empty()) {
            for (int64_t k = 0; k < count; ++k) {
              std::memcpy(next[c].get() + k * ItemSize(dtype[c]), dy, ItemSize(dtype[c]));
            }
          } else {
            std::memcpy(next[c].get(), dy, static_cast<size_t>(bytes));
          }
        }
        for (int c = 0; c < spec.num_carried && status.ok(); ++c) {
          if (spec.yields[c] == c) continue;
          std::memcpy(mem[c].get(), next[c].get(), static_cast<size_t>(count * ItemSize(dtype[c])));
        }
      }
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (first_error.ok()) first_error = status;
        return;
      }
      for (int c = 0; c < spec.num_carried; ++c) {
        std::memcpy(static_cast<char*>(outs[c].data()) + begin * ItemSize(dtype[c]), mem[c].get(),
                    static_cast<size_t>(count * ItemSize(dtype[c])));
      }
      if (part) {
        const void* dr = nullptr;
        absl::Span<const int64_t> sr;
        view_of(reduction->slot, &dr, &sr);
        if (absl::Status st = part->Add(dr, sr.empty(), count); !st.ok()) {
          std::lock_guard<std::mutex> lock(error_mu);
          if (first_error.ok()) first_error = st;
          return;
        }
      }
      for (size_t k = 0; region && k < spec.yields.size(); ++k) {
        const int y = spec.yields[k];
        const int64_t item = ItemSize(dtype[y]);
        const void* dy = nullptr;
        absl::Span<const int64_t> sy;
        view_of(y, &dy, &sy);
        char* dst = static_cast<char*>(outs[k].data()) + begin * item;
        if (sy.empty()) {  // a one-element param, broadcast
          for (int64_t e = 0; e < count; ++e) std::memcpy(dst + e * item, dy, item);
        } else {
          std::memcpy(dst, dy, static_cast<size_t>(count * item));
        }
      }
    }
    if (part) {
      std::lock_guard<std::mutex> lock(error_mu);
      reduced->Merge(*part);
    }
  });
  RETURN_IF_ERROR(first_error);
  if (reduced) reduced->Write(outs.back().data());
  return absl::OkStatus();
}

}  // namespace resident::cpu
