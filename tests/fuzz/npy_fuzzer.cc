// libFuzzer target: the .npy reader and writer (core/npy.h).
//
// Bytes go through ParseNpy (in memory) and, written to a file, through
// ReadNpy (chunked file I/O); the two must agree. A file that parses is
// serialized again, and that must parse to the same array and serialize to
// the same bytes, also through WriteNpy and ReadNpy. Findings (abort): a
// code other than INVALID_ARGUMENT from reading, an empty message, the two
// readers disagreeing, a round trip that changes anything, and any
// sanitizer report.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/npy.h"
#include "tests/fuzz/finding.h"

namespace resident::fuzz {
namespace {

void CheckInvalid(const absl::Status& s, const char* stage) {
  if (s.code() != absl::StatusCode::kInvalidArgument) {
    Finding(absl::StrCat(stage, " returned ", s.ToString(), "; documented: INVALID_ARGUMENT"));
  }
  if (s.message().empty()) Finding(absl::StrCat(stage, " returned an empty message"));
}

std::string Describe(const HostArray& a) {
  return absl::StrCat(DTypeName(a.dtype), " ", ShapeString(a.shape), ", ", a.bytes.size(),
                      " bytes");
}

void ExpectSame(const HostArray& a, const HostArray& b, const char* what) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.bytes != b.bytes) {
    Finding(absl::StrCat(what, ": ", Describe(a), " became ", Describe(b)));
  }
}

// One scratch file per process, rewritten for every input, removed at exit.
const std::string& ScratchPath() {
  static const std::string* path = [] {
    const char* dir = std::getenv("TMPDIR");
    auto* p = new std::string(absl::StrCat(dir != nullptr && *dir != '\0' ? dir : "/tmp",
                                           "/npy_fuzzer.", getpid(), ".npy"));
    std::atexit([] { std::remove(ScratchPath().c_str()); });
    return p;
  }();
  return *path;
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) Finding(absl::StrCat("cannot write the scratch file ", path));
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void FuzzOne(std::string_view bytes) {
  absl::StatusOr<HostArray> parsed = ParseNpy(bytes);
  WriteFile(ScratchPath(), bytes);
  absl::StatusOr<HostArray> read = ReadNpy(ScratchPath());
  if (!parsed.ok()) {
    CheckInvalid(parsed.status(), "ParseNpy");
    if (read.ok()) Finding(absl::StrCat("ReadNpy read what ParseNpy refused: ", Describe(*read)));
    CheckInvalid(read.status(), "ReadNpy");
    return;
  }
  if (!read.ok()) {
    Finding(absl::StrCat("ReadNpy refused what ParseNpy read: ", read.status().ToString()));
  }
  ExpectSame(*parsed, *read, "ReadNpy against ParseNpy");

  const std::string saved = SerializeNpy(parsed->dtype, parsed->shape, parsed->bytes);
  absl::StatusOr<HostArray> again = ParseNpy(saved);
  if (!again.ok()) {
    Finding(absl::StrCat("SerializeNpy's output is refused: ", again.status().ToString()));
  }
  ExpectSame(*parsed, *again, "SerializeNpy then ParseNpy");
  if (SerializeNpy(again->dtype, again->shape, again->bytes) != saved) {
    Finding("serializing the re-read array gives other bytes");
  }

  absl::Status written = WriteNpy(ScratchPath(), parsed->dtype, parsed->shape, parsed->bytes);
  if (!written.ok()) Finding(absl::StrCat("WriteNpy: ", written.ToString()));
  if (ReadFile(ScratchPath()) != saved) Finding("WriteNpy wrote other bytes than SerializeNpy");
  absl::StatusOr<HostArray> reread = ReadNpy(ScratchPath());
  if (!reread.ok()) {
    Finding(absl::StrCat("ReadNpy of WriteNpy's file: ", reread.status().ToString()));
  }
  ExpectSame(*parsed, *reread, "WriteNpy then ReadNpy");
}

}  // namespace
}  // namespace resident::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  resident::fuzz::FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
