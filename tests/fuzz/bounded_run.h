// Resolving the fuzzers' handles (fuzz_handles.h) and running a plan with
// exactly its memory bound, shared by program_fuzzer and the regression
// tests of what it found (tests/unit/fuzz_regression_test.cc).
#ifndef RESIDENT_TESTS_FUZZ_BOUNDED_RUN_H_
#define RESIDENT_TESTS_FUZZ_BOUNDED_RUN_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/device/device.h"
#include "server/program/executor.h"
#include "server/program/planner.h"
#include "tests/fuzz/fuzz_handles.h"
#include "tests/fuzz/fuzz_inputs.h"

namespace resident::fuzz {

// For planning: the type a handle names, without a buffer; NOT_FOUND (as
// the server words it) for a handle that names none.
inline absl::StatusOr<DeviceArray> ResolveType(const HandleId& h) {
  std::optional<HandleType> t = DecodeHandle(h);
  if (!t) return absl::NotFoundError("array handle not found");
  return DeviceArray{nullptr, t->dtype, t->shape};
}

// For running: arrays of at most max_bytes get a buffer of EdgeValues on
// `device`, allocated outside its budget; larger ones stay without.
inline HandleResolver ResolveWithBuffers(Device& device, Stream& stream, int64_t max_bytes) {
  return [&device, &stream, max_bytes](const HandleId& h) -> absl::StatusOr<DeviceArray> {
    ASSIGN_OR_RETURN(DeviceArray a, ResolveType(h));
    if (a.nbytes() > max_bytes) return a;
    ASSIGN_OR_RETURN(a.buffer, device.backend().Allocate(a.nbytes(), stream));
    const std::string bytes = EdgeValues(a.dtype, a.num_elements());
    RETURN_IF_ERROR(stream.CopyToDevice(bytes.data(), *a.buffer, 0, a.nbytes()));
    return a;
  };
}

// Runs `plan` with exactly plan.peak_bytes of the budget free, so that an
// allocation beyond the planner's bound fails with RESOURCE_EXHAUSTED, and
// checks that each result has the planned type and a buffer that large;
// returns each result's bytes (reading them lets ASan see an undersized
// buffer). Errors: the executor's (`options` may stop it), or INTERNAL for
// a result other than planned. The budget must be unused on entry; it is
// again on return.
inline absl::StatusOr<std::vector<std::string>> RunWithinBound(const Plan& plan, Device& device,
                                                               Stream& stream,
                                                               const ExecOptions& options = {}) {
  MemoryBudget& budget = device.budget();
  ASSIGN_OR_RETURN(MemoryBudget::Reservation mine, budget.Reserve(plan.peak_bytes));
  ASSIGN_OR_RETURN(MemoryBudget::Reservation rest,
                   budget.Reserve(budget.limit() - budget.used() - budget.reserved()));
  ASSIGN_OR_RETURN(std::vector<DeviceArray> results, Execute(plan, device, stream, &mine, options));
  if (results.size() != plan.output_types.size()) {
    return absl::InternalError(
        absl::StrCat(results.size(), " results for ", plan.output_types.size(), " outputs"));
  }
  std::vector<std::string> bytes;
  for (size_t i = 0; i < results.size(); ++i) {
    const DeviceArray& a = results[i];
    const ValueType& want = plan.output_types[i];
    if (a.dtype != want.dtype || a.shape != want.shape) {
      return absl::InternalError(absl::StrCat("result ", i, " is ", TypeString({a.dtype, a.shape}),
                                              ", planned ", TypeString(want)));
    }
    if (a.buffer == nullptr || a.buffer->size() < a.nbytes()) {
      return absl::InternalError(absl::StrCat("result ", i, " has a buffer under its size"));
    }
    std::string host(static_cast<size_t>(a.nbytes()), '\0');
    if (!host.empty()) {
      RETURN_IF_ERROR(stream.CopyToHost(*a.buffer, 0, host.data(), a.nbytes()));
    }
    bytes.push_back(std::move(host));
  }
  return bytes;
}

}  // namespace resident::fuzz

#endif  // RESIDENT_TESTS_FUZZ_BOUNDED_RUN_H_
