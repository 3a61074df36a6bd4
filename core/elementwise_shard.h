// How the kernels reach the translation unit that compiles an elementwise
// kind: each backend compiles its kernels in kElementwiseShards files
// (core/elementwise_kind.h's ElementwiseShard), and calls them through
//
//   return VisitElementwiseShard(kind, [&](auto s) {
//     return RunShard<decltype(s)::value>(...);
//   });
#ifndef RESIDENT_CORE_ELEMENTWISE_SHARD_H_
#define RESIDENT_CORE_ELEMENTWISE_SHARD_H_

#include <type_traits>

#include "core/elementwise_kind.h"

namespace resident {

// f(std::integral_constant<int, S>{}) for `kind`'s shard S.
template <typename F>
constexpr decltype(auto) VisitElementwiseShard(ElementwiseKind kind, F&& f) {
  static_assert(kElementwiseShards == 4, "a case per shard");
  switch (ElementwiseShard(kind)) {
    case 0:
      return f(std::integral_constant<int, 0>{});
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    default:
      return f(std::integral_constant<int, 3>{});
  }
}

}  // namespace resident

#endif  // RESIDENT_CORE_ELEMENTWISE_SHARD_H_
