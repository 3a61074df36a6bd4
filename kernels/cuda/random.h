// Random fills for the CUDA backend, behind plain C++ launch functions
// (kernels.h's conventions): numpy.random.default_rng's random, uniform and
// integers (Generator over PCG64), bit for bit, as kernels/cpu/random.h's
// RandomFill. The generator, the draws and the state layout are
// kernels/pcg64.h's; the state lives in device memory.
//
// Draws that never reject: one grid-stride kernel. Thread t takes 64-bit
// draws t, t + G, t + 2G, ... (G threads in the grid), so a warp writes
// consecutive elements; it jumps once to draw t (host-made tables of 2^i
// steps) and then walks with stride G, itself one LCG step with the
// multiplier M^G and increment (1 + M + ... + M^(G-1)) * inc.
//
// Bounded integers (Lemire rejection) read a variable number of units:
// rounds of two passes over the same units, each block taking a run of
// consecutive draws. The first pass counts each block's accepted units
// (nothing written), a scan of those counts (cub::DeviceScan) gives every
// block its output offset, and the second pass draws the units again and
// writes the accepted values in place, ranked within each tile of 256
// draws by a block scan: the output is written once, and compute, not
// memory, pays for the rejection. A round draws exactly as many units as
// values are still missing, so no round reads a unit NumPy would not;
// its accepted count is read back, and a round that accepts all its units
// ends the fill. Spans with rejection odds of 2^-25 (integers(0, 1000))
// take two rounds, the worst spans (about half rejected) about log2(n).
// Scratch is fixed (RandomTempBytes), not proportional to n.
//
// Normal draws (standard_normal, normal) read one unit 99.3 % of the time
// and more otherwise; random_normal.cu finds the few longer draws first
// and places the rest around them (its comment says how). Their scratch
// grows with n: about 1.2 bytes per value.
#ifndef RESIDENT_KERNELS_CUDA_RANDOM_H_
#define RESIDENT_KERNELS_CUDA_RANDOM_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/kernels.h"
#include "kernels/pcg64.h"

namespace resident::cuda_kernels {

// Device scratch bytes RandomFill needs for n elements of p: 0 unless p's
// draws can reject, then about 256 KiB whatever n (normal draws: about
// 1.2 bytes per value).
size_t RandomTempBytes(const RandomParams& p, int64_t n);

// out (device, n elements of p.draw's type, RandomItemSize bytes each) =
// kernels/cpu/random.h's RandomFill from the generator state at state_in
// (device, kPcg64StateWords words); state_out (device; may alias
// state_in) = the state after. `temp` holds RandomTempBytes(p, n) bytes
// until the work is done. Draws that reject synchronise ctx.stream once a
// round to read back how many values it placed (a cudaMemcpyAsync of 8
// bytes); the rest only queues work. Returns the first launch or CUDA
// error.
cudaError_t RandomFill(const LaunchContext& ctx, const RandomParams& p, const uint64_t* state_in,
                       uint64_t* state_out, void* out, int64_t n, void* temp, size_t temp_bytes);

}  // namespace resident::cuda_kernels

#endif  // RESIDENT_KERNELS_CUDA_RANDOM_H_
