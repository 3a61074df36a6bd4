// Random fills for the CPU backend: numpy.random.default_rng's random,
// uniform and integers (Generator over PCG64), bit for bit, split over the
// pool. The generator, the draws and the state layout are kernels/pcg64.h's.
//
// Draws that never reject (floats, full-width and constant integers, bool)
// are cut into ranges, each jumping ahead to its first element. Bounded
// integers (Lemire rejection) read a variable number of units: fixed runs
// of units are drawn and tested in parallel, and each run's accepted values
// go to the output in run order once the runs before it have said how many
// they accepted, until n are placed; the state then advances by exactly the
// units NumPy's loop would have read. Normal draws (kernels/normal.h) go
// in the same runs; a run whose predecessor's last draw read into it is
// drawn again from where that draw ended.
#ifndef RESIDENT_KERNELS_CPU_RANDOM_H_
#define RESIDENT_KERNELS_CPU_RANDOM_H_

#include <cstdint>

#include "kernels/cpu/thread_pool.h"
#include "kernels/pcg64.h"

namespace resident::cpu {

// out (n elements of p.draw's type, RandomItemSize bytes each) = what
// NumPy's fill for `p` (random_standard_uniform_fill[_f], random_uniform,
// random_bounded_uint{64,32,16,8}_fill, random_bounded_bool_fill with
// use_masked = false) writes from the generator state_in (kPcg64StateWords
// words, NumPy's state dict); state_out = its state after that fill, so
// successive calls continue NumPy's successive calls. state_in and
// state_out may alias. n == 0 leaves the state as it is.
void RandomFill(const RandomParams& p, const uint64_t state_in[kPcg64StateWords],
                uint64_t state_out[kPcg64StateWords], void* out, int64_t n, ThreadPool& pool);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_RANDOM_H_
