// Lets command lines spell flags with dashes (--max-memory) as well as
// Abseil's underscores (--max_memory).
#ifndef RESIDENT_CORE_FLAGS_UTIL_H_
#define RESIDENT_CORE_FLAGS_UTIL_H_

#include <algorithm>
#include <string>
#include <vector>

namespace resident {

// Rewrites "--a-b[=v]" to "--a_b[=v]" in place (names only, never values
// or positional arguments). `storage` keeps the rewritten strings alive.
inline void DashesToUnderscores(int argc, char** argv, std::vector<std::string>& storage) {
  storage.reserve(static_cast<size_t>(argc));
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 3 || arg[0] != '-' || arg[1] != '-') continue;
    const size_t end = arg.find('=');
    for (size_t j = 2; j < std::min(end, arg.size()); ++j) {
      if (arg[j] == '-') arg[j] = '_';
    }
    storage.push_back(std::move(arg));
    argv[i] = storage.back().data();
  }
}

}  // namespace resident

#endif  // RESIDENT_CORE_FLAGS_UTIL_H_
