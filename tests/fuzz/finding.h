// How a fuzz target reports a finding: one line libFuzzer keeps in its log,
// then abort() so the input is saved as a crash.
#ifndef RESIDENT_TESTS_FUZZ_FINDING_H_
#define RESIDENT_TESTS_FUZZ_FINDING_H_

#include <cstdio>
#include <cstdlib>
#include <string>

namespace resident::fuzz {

[[noreturn]] inline void Finding(const std::string& what) {
  std::fprintf(stderr, "FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace resident::fuzz

#endif  // RESIDENT_TESTS_FUZZ_FINDING_H_
