// Elementwise kinds over complex64 / complex128 (core/complex.h holds each
// operation's scalar arithmetic, shared with the CUDA kernels).
#ifndef RESIDENT_KERNELS_CPU_COMPLEX_OPS_H_
#define RESIDENT_KERNELS_CPU_COMPLEX_OPS_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/elementwise_kind.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

// out = kind(in...) with every view of one complex dtype, inputs broadcast
// to out.shape (out may be an input). ComplexKernelKind(kind) must hold
// (INVALID_ARGUMENT otherwise). absolute writes (|z|, 0); the bool-valued
// kinds write (1, 0) or (0, 0): the program layer casts those to their
// real result dtype.
absl::Status ComplexElementwise(ThreadPool* pool, ElementwiseKind kind,
                                absl::Span<const ConstView> in, const MutView& out);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_COMPLEX_OPS_H_
