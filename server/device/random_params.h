// A RandomOp (device_op.h) as the random kernels' parameters
// (kernels/pcg64.h): the drawn dtype picks the draw. Both backends use it.
#ifndef RESIDENT_SERVER_DEVICE_RANDOM_PARAMS_H_
#define RESIDENT_SERVER_DEVICE_RANDOM_PARAMS_H_

#include "kernels/pcg64.h"
#include "server/device/device_op.h"

namespace resident {

static_assert(kRandomStateWords == kPcg64StateWords);

inline RandomParams RandomParamsOf(const RandomOp& op) {
  RandomParams p;
  p.low = op.low;
  p.range = op.range;
  p.off = op.off;
  p.rng = op.rng;
  const DType d = op.out->dtype;
  const bool f32 = d == DType::kFloat32;
  if (op.distribution == RandomDistribution::kNormal) {
    p.draw = f32 ? RandomDraw::kNormalFloat : RandomDraw::kNormalDouble;
  } else if (op.distribution == RandomDistribution::kExponential) {
    p.draw = f32 ? RandomDraw::kExponentialFloat : RandomDraw::kExponentialDouble;
  } else if (d == DType::kFloat64) {
    p.draw = RandomDraw::kDouble;
  } else if (d == DType::kFloat32) {
    p.draw = RandomDraw::kFloat;
  } else if (d == DType::kBool) {
    p.draw = RandomDraw::kBool;
  } else {
    switch (ItemSize(d)) {
      case 8:
        p.draw = RandomDraw::kBounded64;
        break;
      case 4:
        p.draw = RandomDraw::kBounded32;
        break;
      case 2:
        p.draw = RandomDraw::kBounded16;
        break;
      default:
        p.draw = RandomDraw::kBounded8;
        break;
    }
  }
  return p;
}

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_RANDOM_PARAMS_H_
