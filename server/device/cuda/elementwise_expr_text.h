// The text of core/half.h and core/elementwise_expr.h, for the NVRTC
// fused-loop generator:
// the fused kernels call the same expressions as every other kernel. CMake
// writes it into a generated .cc (elementwise_expr_text.cc.in).
#ifndef RESIDENT_SERVER_DEVICE_CUDA_ELEMENTWISE_EXPR_TEXT_H_
#define RESIDENT_SERVER_DEVICE_CUDA_ELEMENTWISE_EXPR_TEXT_H_

namespace resident::cuda_internal {

const char* ElementwiseExprText();

}  // namespace resident::cuda_internal

#endif  // RESIDENT_SERVER_DEVICE_CUDA_ELEMENTWISE_EXPR_TEXT_H_
