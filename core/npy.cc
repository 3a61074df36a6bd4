#include "core/npy.h"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/status_macros.h"

// Internally absl::string_view: Abseil may be built with its own string_view
// type, and StrCat accepts only that one.
//
// HostArray::bytes is little-endian and '=' in a descr means the writer's
// native order; both are taken as-is, which is right only on little-endian
// hosts.
static_assert(std::endian::native == std::endian::little, "npy.cc assumes a little-endian host");

namespace resident {
namespace {

constexpr absl::string_view kMagic("\x93NUMPY", 6);
// Magic plus the two version bytes.
constexpr size_t kVersionedMagicBytes = 8;
// Data starts at a multiple of this (numpy.lib.format.ARRAY_ALIGN).
constexpr int64_t kArrayAlign = 64;
// NumPy pads the header so that the first dimension can grow to this many
// digits in place (numpy.lib.format.GROWTH_AXIS_MAX_DIGITS).
constexpr int64_t kGrowthAxisMaxDigits = 21;
// Largest header we accept. Real ones are under 2 KiB even at 64 dimensions
// (NumPy's own reader stops at 10000 bytes); the cap keeps a corrupt length
// field from making us allocate gigabytes.
constexpr int64_t kMaxHeaderBytes = int64_t{1} << 20;
// File I/O moves at most this much per fread/fwrite call.
constexpr size_t kIoChunkBytes = size_t{64} << 20;

constexpr absl::string_view kSupportedDTypes =
    "supported: bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, "
    "float64, "
    "complex64, complex128, bfloat16 (as '<V2', which numpy.save writes for ml_dtypes.bfloat16)";

// --- Preamble: magic, version, header length ---------------------------------

struct Preamble {
  int64_t header_offset = 0;  // 10 for version 1.0, 12 for 2.0 and 3.0
  int64_t header_len = 0;
  int64_t data_offset() const { return header_offset + header_len; }
};

// Checks the magic string and the version in the first bytes of a file and
// returns the size of the whole preamble (magic, version and length field).
absl::StatusOr<int64_t> PreambleSize(absl::string_view start) {
  const size_t n = std::min(start.size(), kMagic.size());
  if (start.substr(0, n) != kMagic.substr(0, n)) {
    return absl::InvalidArgumentError(
        "not a .npy file: it does not start with the magic string "
        "\"\\x93NUMPY\"");
  }
  if (start.size() < kVersionedMagicBytes) {
    return absl::InvalidArgumentError(absl::StrCat("truncated .npy file: it ends after ",
                                                   start.size(),
                                                   " bytes, inside the magic string and version"));
  }
  const int major = static_cast<unsigned char>(start[6]);
  const int minor = static_cast<unsigned char>(start[7]);
  if (major == 1 && minor == 0) return 10;                  // uint16 header length
  if ((major == 2 || major == 3) && minor == 0) return 12;  // uint32
  return absl::InvalidArgumentError(absl::StrCat("unsupported .npy format version ", major, ".",
                                                 minor, "; supported: 1.0, 2.0, 3.0"));
}

absl::StatusOr<Preamble> ParsePreamble(absl::string_view start) {
  ASSIGN_OR_RETURN(const int64_t size, PreambleSize(start));
  if (static_cast<int64_t>(start.size()) < size) {
    return absl::InvalidArgumentError(absl::StrCat("truncated .npy file: it ends after ",
                                                   start.size(),
                                                   " bytes, inside the header length field"));
  }
  int64_t header_len = 0;
  for (int64_t i = size - 1; i >= static_cast<int64_t>(kVersionedMagicBytes); --i) {
    header_len = header_len * 256 + static_cast<unsigned char>(start[i]);
  }
  if (header_len > kMaxHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat("the .npy header length field says ", header_len,
                                                   " bytes; this reader accepts at most ",
                                                   kMaxHeaderBytes));
  }
  return Preamble{size, header_len};
}

absl::Status TruncatedHeaderError(const Preamble& pre, int64_t header_bytes) {
  return absl::InvalidArgumentError(absl::StrCat("truncated .npy header: it should be ",
                                                 pre.header_len, " bytes but the file ends after ",
                                                 header_bytes, " of them"));
}

// --- Header: the Python dict literal ----------------------------------------

struct HeaderFields {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

// Parses the subset of Python literal syntax NumPy headers use:
//   {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
// with keys in any order, any whitespace, optional trailing commas, either
// quote character and Python 2's "3L" integers.
class HeaderParser {
 public:
  explicit HeaderParser(absl::string_view text) : text_(text) {}

  absl::StatusOr<HeaderFields> Parse() {
    HeaderFields fields;
    bool have_descr = false, have_fortran = false, have_shape = false;
    RETURN_IF_ERROR(Expect('{', "the header to start with '{'"));
    while (!Consume('}')) {
      ASSIGN_OR_RETURN(const std::string key, ParseString("a key"));
      RETURN_IF_ERROR(Expect(':', "':' after a key"));
      if (key == "descr") {
        RETURN_IF_ERROR(CheckDuplicate(key, have_descr));
        if (Peek() == '[') {
          return absl::InvalidArgumentError(
              absl::StrCat("structured dtypes (a descr that lists fields) are not "
                           "supported; ",
                           kSupportedDTypes));
        }
        ASSIGN_OR_RETURN(fields.descr, ParseString("the descr string"));
      } else if (key == "fortran_order") {
        RETURN_IF_ERROR(CheckDuplicate(key, have_fortran));
        ASSIGN_OR_RETURN(fields.fortran_order, ParseBool());
      } else if (key == "shape") {
        RETURN_IF_ERROR(CheckDuplicate(key, have_shape));
        ASSIGN_OR_RETURN(fields.shape, ParseShape());
      } else {
        return Error(absl::StrCat("unexpected key '", key,
                                  "'; a .npy header has exactly 'descr', "
                                  "'fortran_order' and 'shape'"));
      }
      if (!Consume(',') && Peek() != '}') {
        return Error("expected ',' or '}' after a value");
      }
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the dict");
    if (!have_descr || !have_fortran || !have_shape) {
      return Error(absl::StrCat("missing key '",
                                !have_descr     ? "descr"
                                : !have_fortran ? "fortran_order"
                                                : "shape",
                                "'"));
    }
    return fields;
  }

 private:
  static bool IsSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  }
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

  void SkipSpace() {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  }
  // The next non-space character, or '\0' at the end.
  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  absl::Status Expect(char c, absl::string_view what) {
    if (Consume(c)) return absl::OkStatus();
    return Error(absl::StrCat("expected ", what));
  }
  absl::Status CheckDuplicate(absl::string_view key, bool& seen) {
    if (seen) return Error(absl::StrCat("key '", key, "' appears twice"));
    seen = true;
    return absl::OkStatus();
  }

  absl::Status Error(absl::string_view what) const {
    constexpr size_t kShown = 200;
    absl::string_view shown = text_.substr(0, kShown);
    while (!shown.empty() && IsSpace(shown.back())) shown.remove_suffix(1);
    return absl::InvalidArgumentError(absl::StrCat("cannot parse the .npy header at byte ", pos_,
                                                   ": ", what, "; header: ", shown,
                                                   text_.size() > kShown ? "..." : ""));
  }

  absl::StatusOr<std::string> ParseString(absl::string_view what) {
    const char quote = Peek();
    if (quote != '\'' && quote != '"') {
      return Error(absl::StrCat("expected ", what, " in quotes"));
    }
    const size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' || text_[pos_] == '\n') {
        return Error(
            "escape sequences and line breaks in strings are not "
            "supported");
      }
      ++pos_;
    }
    if (pos_ == text_.size()) return Error("unterminated string");
    return std::string(text_.substr(start, pos_++ - start));
  }

  absl::StatusOr<bool> ParseBool() {
    SkipSpace();
    for (const auto& [word, value] :
         {std::pair<absl::string_view, bool>{"True", true}, {"False", false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    return Error("expected True or False for 'fortran_order'");
  }

  absl::StatusOr<int64_t> ParseInt() {
    SkipSpace();
    bool negative = false;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) {
      negative = text_[pos_++] == '-';
    }
    if (pos_ == text_.size() || !IsDigit(text_[pos_])) {
      return Error("expected an integer dimension in 'shape'");
    }
    const size_t start = pos_;
    int64_t value = 0;
    for (; pos_ < text_.size() && IsDigit(text_[pos_]); ++pos_) {
      const int digit = text_[pos_] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        return Error(absl::StrCat("dimension ", text_.substr(start, pos_ + 1 - start),
                                  "... does not fit in 64 bits"));
      }
      value = value * 10 + digit;
    }
    // Python 2 wrote long integers as "3L".
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) {
      ++pos_;
    }
    return negative ? -value : value;
  }

  absl::StatusOr<Shape> ParseShape() {
    if (!Consume('(')) {
      return Error("'shape' must be a tuple such as (3, 4), (5,) or ()");
    }
    Shape shape;
    if (Consume(')')) return shape;
    while (true) {
      ASSIGN_OR_RETURN(const int64_t dim, ParseInt());
      shape.push_back(dim);
      if (Consume(',')) {
        if (Consume(')')) return shape;
        continue;
      }
      if (Consume(')')) {
        if (shape.size() == 1) {
          return Error(absl::StrCat("'shape' (", dim,
                                    ") is not a tuple; a one-dimensional "
                                    "shape is written (",
                                    dim, ",)"));
        }
        return shape;
      }
      return Error("expected ',' or ')' in 'shape'");
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

// NumPy's name for a descr's type code, for error messages.
absl::string_view NumPyTypeName(absl::string_view code) {
  static constexpr std::pair<absl::string_view, absl::string_view> kNames[] = {
      {"b1", "bool"},        {"i1", "int8"},        {"i2", "int16"},     {"i4", "int32"},
      {"i8", "int64"},       {"u1", "uint8"},       {"u2", "uint16"},    {"u4", "uint32"},
      {"u8", "uint64"},      {"f2", "float16"},     {"f4", "float32"},   {"f8", "float64"},
      {"f12", "float96"},    {"f16", "float128"},   {"c8", "complex64"}, {"c16", "complex128"},
      {"c24", "complex192"}, {"c32", "complex256"},
  };
  for (const auto& [c, name] : kNames) {
    if (c == code) return name;
  }
  switch (code.empty() ? '\0' : code[0]) {
    case 'U':
      return "str";
    case 'S':
    case 'a':
      return "bytes";
    case 'V':
      return "void";
    case 'M':
      return "datetime64";
    case 'm':
      return "timedelta64";
    default:
      return "unknown type";
  }
}

absl::string_view Descr(DType dtype);  // below, with the header writing

absl::StatusOr<DType> DTypeFromDescr(absl::string_view descr) {
  char order = '=';
  absl::string_view code = descr;
  if (!code.empty() && absl::string_view("<>|=").find(code[0]) != absl::string_view::npos) {
    order = code[0];
    code.remove_prefix(1);
  }
  if (code == "O" || code == "O8" || code == "O4") {
    return absl::InvalidArgumentError(absl::StrCat(
        "object arrays (dtype '", descr,
        "') are not supported: their data is pickled Python objects; ", kSupportedDTypes));
  }
  std::optional<DType> dtype;
  // The table's descrs less their byte-order mark: b1, i1, ..., c16.
  for (DType d : kEveryDType) {
    const absl::string_view own = Descr(d).substr(1);
    if (code == own && own != "V2") dtype = d;
  }
  if (code == "V2" && order != '|') dtype = DType::kBFloat16;
  if (!dtype) {
    return absl::InvalidArgumentError(absl::StrCat("dtype '", descr, "' (", NumPyTypeName(code),
                                                   ") is not supported; ", kSupportedDTypes));
  }
  // Byte order means nothing for one-byte types.
  if (ItemSize(*dtype) > 1) {
    if (order == '>') {
      return absl::InvalidArgumentError(absl::StrCat("big-endian dtype '", descr,
                                                     "' is not supported; convert with "
                                                     "a.astype('<",
                                                     code, "')"));
    }
    if (order == '|') {
      return absl::InvalidArgumentError(
          absl::StrCat("dtype '", descr,
                       "' has no byte order ('|'), which a multi-byte "
                       "type needs; write '<",
                       code, "'"));
    }
  }
  return *dtype;
}

// What a header describes, validated.
struct ArrayInfo {
  DType dtype = DType::kFloat64;
  Shape shape;
  int64_t num_bytes = 0;
};

absl::StatusOr<ArrayInfo> ParseHeader(absl::string_view header) {
  ASSIGN_OR_RETURN(HeaderFields fields, HeaderParser(header).Parse());
  ArrayInfo info;
  ASSIGN_OR_RETURN(info.dtype, DTypeFromDescr(fields.descr));
  ASSIGN_OR_RETURN(const int64_t n, CheckedNumElements(fields.shape));
  ASSIGN_OR_RETURN(info.num_bytes, CheckedNumBytes(n, ItemSize(info.dtype)));
  // Fortran order differs from C order only when two dimensions exceed 1.
  if (fields.fortran_order && n > 0 &&
      std::count_if(fields.shape.begin(), fields.shape.end(), [](int64_t d) { return d > 1; }) >
          1) {
    return absl::InvalidArgumentError(
        "Fortran-ordered arrays are not supported; save with "
        "np.ascontiguousarray");
  }
  info.shape = std::move(fields.shape);
  return info;
}

std::string Describe(const ArrayInfo& info) {
  return absl::StrCat("shape ", ShapeString(info.shape), " of ", std::string(DTypeName(info.dtype)),
                      " needs ", info.num_bytes, " bytes");
}

// `have` bytes follow the header where info.num_bytes should.
absl::Status DataSizeError(const ArrayInfo& info, int64_t have) {
  if (have < info.num_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("truncated .npy data: ", Describe(info),
                                                   " but the file has only ", have,
                                                   " after the header"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(".npy data is longer than its shape says: ", Describe(info),
                   " but the file has ", have, " after the header"));
}

// --- Header writing ----------------------------------------------------------

absl::string_view Descr(DType dtype) {
  switch (dtype) {
#define RESIDENT_DTYPE_DESCR(K, name, S, W, descr, ctype) \
  case DType::K:                                          \
    return descr;
    RESIDENT_DTYPES(RESIDENT_DTYPE_DESCR)
#undef RESIDENT_DTYPE_DESCR
  }
  return "";
}

// numpy.lib.format._write_array_header and _wrap_header, NumPy >= 1.23.
std::string SerializeHeader(DType dtype, absl::Span<const int64_t> shape) {
  std::string dict = absl::StrCat("{'descr': '", Descr(dtype), "', 'fortran_order': False, ",
                                  "'shape': ", ShapeString(shape), ", }");
  if (!shape.empty()) {
    const int64_t digits = absl::StrCat(shape[0]).size();
    dict.append(std::max<int64_t>(0, kGrowthAxisMaxDigits - digits), ' ');
  }
  // The header ends in '\n' and is padded with spaces to align the data;
  // like NumPy, pad a whole kArrayAlign when it is already aligned.
  const int64_t hlen = static_cast<int64_t>(dict.size()) + 1;
  int64_t preamble = 10;
  int64_t padlen = kArrayAlign - (preamble + hlen) % kArrayAlign;
  int major = 1;
  if (hlen + padlen > std::numeric_limits<uint16_t>::max()) {
    preamble = 12;
    padlen = kArrayAlign - (preamble + hlen) % kArrayAlign;
    major = 2;
  }
  const uint64_t total = static_cast<uint64_t>(hlen + padlen);
  std::string out(kMagic);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  for (int64_t i = 0; i < preamble - static_cast<int64_t>(kVersionedMagicBytes); ++i) {
    out.push_back(static_cast<char>((total >> (8 * i)) & 0xFF));
  }
  out += dict;
  out.append(padlen, ' ');
  out.push_back('\n');
  return out;
}

// --- File I/O ----------------------------------------------------------------

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

absl::Status IoError(absl::string_view what, const std::string& path) {
  const int e = errno != 0 ? errno : EIO;
  return absl::ErrnoToStatus(e, absl::StrCat(what, " ", path));
}

// Reads up to n bytes into dst, stopping early only at end of file; returns
// how many were read.
absl::StatusOr<int64_t> ReadUpTo(std::FILE* f, char* dst, int64_t n, const std::string& path) {
  int64_t done = 0;
  while (done < n) {
    const size_t want = std::min<uint64_t>(n - done, kIoChunkBytes);
    errno = 0;
    const size_t got = std::fread(dst + done, 1, want, f);
    done += static_cast<int64_t>(got);
    if (got < want) {
      if (std::ferror(f)) return IoError("error reading", path);
      break;  // end of file
    }
  }
  return done;
}

absl::Status WriteAll(std::FILE* f, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    const size_t chunk = std::min(data.size(), kIoChunkBytes);
    errno = 0;
    if (std::fwrite(data.data(), 1, chunk, f) != chunk) {
      return IoError("error writing", path);
    }
    data.remove_prefix(chunk);
  }
  return absl::OkStatus();
}

absl::StatusOr<HostArray> ReadNpyFile(std::FILE* f, const std::string& path) {
  std::optional<int64_t> file_size;
  struct stat st;
  if (fstat(fileno(f), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return absl::ErrnoToStatus(EISDIR, absl::StrCat("cannot read ", path));
    }
    if (S_ISREG(st.st_mode)) file_size = st.st_size;
  }

  // Magic and version, then the length field whose size the version sets.
  std::string start(12, '\0');
  ASSIGN_OR_RETURN(int64_t got, ReadUpTo(f, start.data(), kVersionedMagicBytes, path));
  start.resize(got);
  ASSIGN_OR_RETURN(const int64_t preamble_size, PreambleSize(start));
  start.resize(preamble_size);
  ASSIGN_OR_RETURN(got, ReadUpTo(f, start.data() + kVersionedMagicBytes,
                                 preamble_size - kVersionedMagicBytes, path));
  start.resize(kVersionedMagicBytes + got);
  ASSIGN_OR_RETURN(const Preamble pre, ParsePreamble(start));

  std::string header(pre.header_len, '\0');
  ASSIGN_OR_RETURN(got, ReadUpTo(f, header.data(), pre.header_len, path));
  if (got < pre.header_len) return TruncatedHeaderError(pre, got);
  ASSIGN_OR_RETURN(const ArrayInfo info, ParseHeader(header));

  // A regular file's size tells a bad length before the allocation.
  if (file_size && *file_size - pre.data_offset() != info.num_bytes) {
    return DataSizeError(info, *file_size - pre.data_offset());
  }
  HostArray array{info.dtype, info.shape, {}};
  try {
    array.bytes.resize(info.num_bytes);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", info.num_bytes, " bytes for the data of ", path));
  }
  ASSIGN_OR_RETURN(got, ReadUpTo(f, array.bytes.data(), info.num_bytes, path));
  if (got < info.num_bytes) return DataSizeError(info, got);
  if (std::fgetc(f) != EOF) {
    return absl::InvalidArgumentError(absl::StrCat(
        ".npy data is longer than its shape says: ", Describe(info), " but the file has more"));
  }
  return array;
}

}  // namespace

absl::StatusOr<HostArray> ParseNpy(std::string_view contents) {
  const absl::string_view file_contents(contents.data(), contents.size());
  ASSIGN_OR_RETURN(const Preamble pre, ParsePreamble(file_contents));
  const int64_t size = static_cast<int64_t>(file_contents.size());
  if (size < pre.data_offset()) {
    return TruncatedHeaderError(pre, size - pre.header_offset);
  }
  ASSIGN_OR_RETURN(ArrayInfo info,
                   ParseHeader(file_contents.substr(pre.header_offset, pre.header_len)));
  if (size - pre.data_offset() != info.num_bytes) {
    return DataSizeError(info, size - pre.data_offset());
  }
  return HostArray{info.dtype, std::move(info.shape),
                   std::string(file_contents.substr(pre.data_offset()))};
}

absl::StatusOr<HostArray> ReadNpy(const std::string& path) {
  errno = 0;
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (f == nullptr) return IoError("cannot open", path);
  absl::StatusOr<HostArray> array = ReadNpyFile(f.get(), path);
  // I/O errors already name the path; format errors get it here.
  if (array.status().code() == absl::StatusCode::kInvalidArgument) {
    return Annotate(array.status(), path);
  }
  return array;
}

absl::Status WriteNpy(const std::string& path, DType dtype, absl::Span<const int64_t> shape,
                      std::string_view bytes) {
  absl::StatusOr<int64_t> n = CheckedNumElements(shape);
  if (!n.ok()) return Annotate(n.status(), absl::StrCat("cannot write ", path));
  absl::StatusOr<int64_t> num_bytes = CheckedNumBytes(*n, ItemSize(dtype));
  if (!num_bytes.ok()) {
    return Annotate(num_bytes.status(), absl::StrCat("cannot write ", path));
  }
  if (static_cast<int64_t>(bytes.size()) != *num_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write ", path, ": shape ", ShapeString(shape), " of ",
                     std::string(DTypeName(dtype)), " needs ", *num_bytes, " bytes but ",
                     bytes.size(), " were given"));
  }
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return IoError("cannot create", path);
  struct stat st;
  const bool is_regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
  absl::Status status = WriteAll(f, SerializeHeader(dtype, shape), path);
  if (status.ok()) {
    status = WriteAll(f, absl::string_view(bytes.data(), bytes.size()), path);
  }
  errno = 0;
  // fclose flushes the buffer, so it can fail for want of space.
  if (std::fclose(f) != 0 && status.ok()) {
    status = IoError("error writing", path);
  }
  // Remove a partly written regular file, never a device such as /dev/full.
  if (!status.ok() && is_regular) std::remove(path.c_str());
  return status;
}

std::string SerializeNpy(DType dtype, absl::Span<const int64_t> shape, std::string_view bytes) {
  std::string out = SerializeHeader(dtype, shape);
  out.reserve(out.size() + bytes.size());
  out += bytes;
  return out;
}

}  // namespace resident
