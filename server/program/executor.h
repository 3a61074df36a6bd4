// Runs a planned program on a device stream.
//
//   ASSIGN_OR_RETURN(Plan plan, PlanProgram(program, outputs, resolve, limits));
//   ASSIGN_OR_RETURN(auto reservation, device.budget().Reserve(plan.peak_bytes));
//   ASSIGN_OR_RETURN(std::vector<DeviceArray> results,
//                    Execute(plan, device, stream, &reservation, {}));
#ifndef RESIDENT_SERVER_PROGRAM_EXECUTOR_H_
#define RESIDENT_SERVER_PROGRAM_EXECUTOR_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "server/device/device.h"
#include "server/program/planner.h"

namespace resident {

struct ExecOptions {
  // Called before every op; a non-OK status (deadline passed, cancelled,
  // server draining) stops the program there and is returned.
  std::function<absl::Status()> check_continue;
};

// The arrays of plan.outputs, in order, once the device has finished them.
// Intermediates are freed as soon as they die and their buffers reused in
// place where no one else holds them. On error every intermediate is freed
// and nothing else changes.
absl::StatusOr<std::vector<DeviceArray>> Execute(const Plan& plan, Device& device, Stream& stream,
                                                 MemoryBudget::Reservation* reservation,
                                                 const ExecOptions& options);

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_EXECUTOR_H_
