// Writes npy_fuzzer's seed files into the directory named on the command
// line: what SerializeNpy writes for every dtype and a few shapes (format
// 1.0, the only one it writes for headers under 64 KiB), and the same arrays
// with the preamble of formats 2.0 and 3.0 (a 4-byte header length, the
// header padded again so the data stays 64-byte aligned).
//
//   npy_seeds tests/fuzz/corpus/npy
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/npy.h"
#include "tests/fuzz/fuzz_inputs.h"

namespace resident::fuzz {
namespace {

// `v1` (a format 1.0 file) with the preamble of format `major`.0.
std::string AsVersion(const std::string& v1, int major) {
  const size_t header_len = static_cast<uint8_t>(v1[8]) | (static_cast<uint8_t>(v1[9]) << 8);
  std::string header = v1.substr(10, header_len);
  header.pop_back();           // the '\n'
  header.append(64 - 2, ' ');  // 12-byte preamble: two more bytes to align
  header.push_back('\n');
  const uint32_t len = static_cast<uint32_t>(header.size());
  std::string out = v1.substr(0, 6);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xFF));
  return out + header + v1.substr(10 + header_len);
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: npy_seeds DIR\n");
    return 2;
  }
  const std::vector<Shape> shapes = {{}, {3}, {2, 0, 3}, {2, 3}, {1, 1, 1, 1, 2}};
  int written = 0;
  for (DType dtype : kAllDTypes) {
    for (size_t s = 0; s < shapes.size(); ++s) {
      const std::string v1 =
          SerializeNpy(dtype, shapes[s], EdgeValues(dtype, NumElements(shapes[s])));
      for (int major : {1, 2, 3}) {
        const std::string path =
            absl::StrCat(argv[1], "/", DTypeName(dtype), "-shape", s, "-v", major, ".npy");
        std::ofstream f(path, std::ios::binary);
        f << (major == 1 ? v1 : AsVersion(v1, major));
        if (!f.flush()) {
          std::fprintf(stderr, "npy_seeds: cannot write %s\n", path.c_str());
          return 1;
        }
        ++written;
      }
    }
  }
  std::printf("wrote %d files to %s\n", written, argv[1]);
  return 0;
}

}  // namespace
}  // namespace resident::fuzz

int main(int argc, char** argv) { return resident::fuzz::Main(argc, argv); }
