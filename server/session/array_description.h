// What a caller learns of an array: the answer of uploads, programs, keeps,
// attaches and listings.
//
// Thread-safety: a plain value.
//
//   ArrayDescription d = Describe(handle, array);
//   d.name = "weights";
#ifndef RESIDENT_SERVER_SESSION_ARRAY_DESCRIPTION_H_
#define RESIDENT_SERVER_SESSION_ARRAY_DESCRIPTION_H_

#include <cstdint>
#include <string>

#include "core/handle_id.h"
#include "server/device/backend.h"
#include "server/device/device.h"

namespace resident {

struct ArrayDescription {
  HandleId handle;  // zero when not kept
  DType dtype = DType::kFloat64;
  Shape shape;
  int64_t nbytes = 0;
  std::string name;    // set for a named array (or a handle attached to one)
  std::string device;  // the device holding it ("cpu", "cuda:1"); empty: unknown
};

// The description of `array` under `handle`, with no name.
inline ArrayDescription Describe(const HandleId& handle, const DeviceArray& array) {
  const Device* d = array.buffer != nullptr ? DeviceOf(*array.buffer) : nullptr;
  return ArrayDescription{handle, array.dtype, array.shape, array.nbytes(), "", d ? d->name() : ""};
}

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_ARRAY_DESCRIPTION_H_
