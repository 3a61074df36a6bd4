// The seed job: the tutorial's workload (x = add(x, x), 1024 times, on a
// (1024, 512, 4, 4) float64 array of ones) run three ways through the server
// and once locally, every time waiting for the result.
#ifndef RESIDENT_CLIENT_CLI_SEED_H_
#define RESIDENT_CLIENT_CLI_SEED_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "client/client.h"
#include "core/shape.h"

namespace resident::cli {

struct SeedOptions {
  std::string server;
  client::ClientOptions connection;  // token and TLS files
  int64_t iterations = 1024;
  Shape shape = {1024, 512, 4, 4};
};

// Runs the job and prints its table to stdout. Fails (non-OK) if any
// mode's result differs from NumPy's.
absl::Status RunSeed(const SeedOptions& options);

}  // namespace resident::cli

#endif  // RESIDENT_CLIENT_CLI_SEED_H_
