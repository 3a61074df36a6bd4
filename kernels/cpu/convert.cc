#include "kernels/cpu/convert.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "core/shape.h"
#include "kernels/cpu/broadcast.h"

namespace resident::cpu {
namespace {

template <typename To, typename From>
absl::Status CastTyped(ThreadPool* pool, const ConstView& a, const MutView& out) {
  const absl::Span<const int64_t> shapes[] = {a.shape, out.shape};
  absl::StatusOr<BroadcastLayout> made = MakeBroadcastLayout(out.shape, shapes);
  if (!made.ok()) return made.status();
  const BroadcastLayout& layout = *made;
  const From* pa = static_cast<const From*>(a.data);
  To* po = static_cast<To*>(out.data);
  const int last = static_cast<int>(layout.dims.size()) - 1;
  const int64_t sa = last < 0 ? 0 : layout.strides[0][last];
  ParallelFor(pool, out.size(), kParallelGrain, [&](int64_t begin, int64_t end) {
    ForEachRow(layout, begin, end, [&](const int64_t* off, int64_t count) {
      const From* src = pa + off[0];
      To* dst = po + off[1];
      if (sa == 1) {
        for (int64_t i = 0; i < count; ++i) {
          dst[i] = ConvertElement<To, From>(src[i]);
        }
      } else if (sa == 0) {
        std::fill(dst, dst + count, ConvertElement<To, From>(*src));
      } else {
        for (int64_t i = 0; i < count; ++i) {
          dst[i] = ConvertElement<To, From>(src[i * sa]);
        }
      }
    });
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status Cast(ThreadPool* pool, const ConstView& a, const MutView& out) {
  return DispatchAnyDType(out.dtype, [&](auto to) {
    return DispatchAnyDType(
        a.dtype, [&](auto from) { return CastTyped<decltype(to), decltype(from)>(pool, a, out); });
  });
}

absl::Status CastTile(DType from, const void* a, bool one, DType to, void* out, int64_t count) {
  if (IsComplex(from) || IsComplex(to)) {
    return absl::InvalidArgumentError("CastTile: complex dtypes never fuse");
  }
  return DispatchDType(to, [&](auto to_zero) {
    using To = decltype(to_zero);
    return DispatchDType(from, [&](auto from_zero) {
      using From = decltype(from_zero);
      const From* src = static_cast<const From*>(a);
      To* dst = static_cast<To*>(out);
      if (one) {
        std::fill(dst, dst + count, ConvertElement<To, From>(*src));
      } else {
        for (int64_t i = 0; i < count; ++i) dst[i] = ConvertElement<To, From>(src[i]);
      }
      return absl::OkStatus();
    });
  });
}

absl::Status Fill(ThreadPool* pool, const Scalar& value, const MutView& out) {
  return DispatchAnyDType(out.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T v = ScalarAs<T>(value);
    T* p = static_cast<T*>(out.data);
    ParallelFor(pool, out.size(), kParallelGrain,
                [&](int64_t begin, int64_t end) { std::fill(p + begin, p + end, v); });
    return absl::OkStatus();
  });
}

absl::Status Arange(ThreadPool* pool, const Scalar& start, const Scalar& delta,
                    const Scalar& second, const MutView& out) {
  if (out.shape.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("arange output must be 1-D, got shape ", ShapeString(out.shape)));
  }
  if (out.dtype == DType::kBool) {
    return absl::InvalidArgumentError("arange does not fill bool arrays");
  }
  if (IsComplex(out.dtype)) {
    return absl::InvalidArgumentError("arange does not fill complex arrays");
  }
  return DispatchDType(out.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = static_cast<T*>(out.data);
    if constexpr (kIsHalfStorage<T>) {
      // NumPy's HALF_fill: start and delta in float, each element rounded.
      const float s = static_cast<float>(start.as_double());
      const float d = static_cast<float>(delta.as_double());
      ParallelFor(pool, out.size(), kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          p[i] = resident_store<T>(s + static_cast<float>(i) * d);
        }
      });
    } else if constexpr (std::is_floating_point_v<T>) {
      const T s = static_cast<T>(start.as_double());
      const T d = static_cast<T>(delta.as_double());
      ParallelFor(pool, out.size(), kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          p[i] = s + static_cast<T>(i) * d;
        }
      });
    } else {
      // Wrapping in 64 bits and truncating equals wrapping in T.
      const uint64_t s = static_cast<uint64_t>(start.as_int64());
      const uint64_t d = static_cast<uint64_t>(delta.as_int64());
      ParallelFor(pool, out.size(), kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          p[i] = static_cast<T>(s + static_cast<uint64_t>(i) * d);
        }
      });
    }
    // The two elements NumPy stores rather than fills (-0.0 stays -0.0;
    // float start + step is rounded once, from double).
    if (out.size() > 0) p[0] = ScalarAs<T>(start);
    if (out.size() > 1) p[1] = ScalarAs<T>(second);
    return absl::OkStatus();
  });
}

}  // namespace resident::cpu
