// DeviceArrays of the CPU backend as kernels/cpu views (host pointers).
#ifndef RESIDENT_SERVER_DEVICE_CPU_VIEWS_H_
#define RESIDENT_SERVER_DEVICE_CPU_VIEWS_H_

#include "kernels/cpu/array_view.h"
#include "server/device/buffer.h"

namespace resident {

inline cpu::ConstView View(const DeviceArray& a) { return {a.data(), a.dtype, a.shape}; }
inline cpu::MutView MutableView(const DeviceArray& a) { return {a.data(), a.dtype, a.shape}; }

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_CPU_VIEWS_H_
