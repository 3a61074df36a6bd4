// ReadNpy / ParseNpy / WriteNpy / SerializeNpy, checked against files that
// real NumPy wrote (tests/client/data, made by data/gen_fixtures.py).
#include "core/npy.h"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace resident {
namespace {

using ::testing::HasSubstr;

std::string DataPath(std::string_view name) {
  return std::string(NPY_TEST_DATA_DIR) + "/" + std::string(name);
}

std::string TempPath(std::string_view name) {
  return absl::StrCat(::testing::TempDir(), "/npy_test_", getpid(), "_", std::string(name));
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The little-endian bytes of `values`.
template <typename T>
std::string Bytes(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

// A .npy file with the given header dict text, padded as NumPy pads it.
std::string MakeNpy(std::string_view dict, std::string_view data, int major = 1) {
  const size_t preamble = major == 1 ? 10 : 12;
  std::string header(dict);
  while ((preamble + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  for (size_t i = 0; i < preamble - 8; ++i) {
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
  }
  return out + header + std::string(data);
}

// Expects `result` to be INVALID_ARGUMENT with a message containing each of
// `parts`.
template <typename T>
void ExpectInvalid(const absl::StatusOr<T>& result, std::initializer_list<std::string_view> parts) {
  ASSERT_FALSE(result.ok()) << "unexpectedly parsed";
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
  for (std::string_view part : parts) {
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(std::string(part)));
  }
}

// --- Files NumPy wrote -------------------------------------------------------

struct Fixture {
  std::string_view file;
  DType dtype;
  Shape shape;
  std::string bytes;
};

std::vector<Fixture> NumPyFixtures() {
  std::vector<double> f64;
  f64.reserve(24);
  for (int i = 0; i < 24; ++i) f64.push_back(i / 4.0 - 1);
  std::string f64_bytes(f64.size() * sizeof(double), '\0');
  std::memcpy(f64_bytes.data(), f64.data(), f64_bytes.size());
  return {
      {"bool.npy", DType::kBool, {4}, std::string("\1\0\1\1", 4)},
      {"int32.npy",
       DType::kInt32,
       {2, 3},
       Bytes<int32_t>({1, -2, 3, 2147483647, -2147483647 - 1, 0})},
      {"int64.npy",
       DType::kInt64,
       {5},
       Bytes<int64_t>({0, -1, int64_t{1} << 40, -(int64_t{1} << 62), INT64_MAX})},
      {"uint8.npy", DType::kUint8, {3}, std::string("\1\2\3", 3)},
      {"float32.npy", DType::kFloat32, {4}, Bytes<float>({1.5f, -0.25f, 3.0e38f, 0.0f})},
      {"float64.npy", DType::kFloat64, {2, 3, 4}, f64_bytes},
      {"scalar_f64.npy", DType::kFloat64, {}, Bytes<double>({3.25})},
      {"empty_f32.npy", DType::kFloat32, {0}, ""},
      {"empty_2x0x3_i64.npy", DType::kInt64, {2, 0, 3}, ""},
  };
}

TEST(ReadNpyTest, ReadsWhatNumPyWrote) {
  for (const Fixture& want : NumPyFixtures()) {
    SCOPED_TRACE(want.file);
    absl::StatusOr<HostArray> got = ReadNpy(DataPath(want.file));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->dtype, want.dtype);
    EXPECT_EQ(got->shape, want.shape);
    EXPECT_EQ(got->bytes, want.bytes);
  }
}

TEST(ReadNpyTest, ParseNpyAgreesWithReadNpy) {
  for (const Fixture& want : NumPyFixtures()) {
    SCOPED_TRACE(want.file);
    absl::StatusOr<HostArray> got = ParseNpy(ReadFileBytes(DataPath(want.file)));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->dtype, want.dtype);
    EXPECT_EQ(got->shape, want.shape);
    EXPECT_EQ(got->bytes, want.bytes);
  }
}

TEST(ReadNpyTest, FormatVersion2And3) {
  absl::StatusOr<HostArray> v2 = ReadNpy(DataPath("v2_int64.npy"));
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ(v2->dtype, DType::kInt64);
  EXPECT_EQ(v2->shape, Shape({3}));
  EXPECT_EQ(v2->bytes, Bytes<int64_t>({7, 8, 9}));

  absl::StatusOr<HostArray> v3 = ReadNpy(DataPath("v3_f32.npy"));
  ASSERT_TRUE(v3.ok()) << v3.status();
  EXPECT_EQ(v3->dtype, DType::kFloat32);
  EXPECT_EQ(v3->shape, Shape({2, 2}));
  EXPECT_EQ(v3->bytes, Bytes<float>({1, 2, 3, 4}));
}

// --- Our writer matches np.save byte for byte ---------------------------------

TEST(SerializeNpyTest, ByteIdenticalToNumPy) {
  for (const Fixture& f : NumPyFixtures()) {
    SCOPED_TRACE(f.file);
    EXPECT_EQ(SerializeNpy(f.dtype, f.shape, f.bytes), ReadFileBytes(DataPath(f.file)));
  }
}

TEST(WriteNpyTest, FileByteIdenticalToNumPy) {
  for (const Fixture& f : NumPyFixtures()) {
    SCOPED_TRACE(f.file);
    const std::string path = TempPath(f.file);
    ASSERT_TRUE(WriteNpy(path, f.dtype, f.shape, f.bytes).ok());
    EXPECT_EQ(ReadFileBytes(path), ReadFileBytes(DataPath(f.file)));
    std::remove(path.c_str());
  }
}

// --- Round trips --------------------------------------------------------------

// Deterministic contents for any dtype; bools are 0 or 1.
std::string TestBytes(DType dtype, int64_t num_elements) {
  std::string out(num_elements * ItemSize(dtype), '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = dtype == DType::kBool ? static_cast<char>(i % 3 == 0) : static_cast<char>(i * 37 + 11);
  }
  return out;
}

TEST(RoundTripTest, EveryDTypeAndShape) {
  const Shape shapes[] = {{}, {0}, {5}, {2, 3, 4}};
  for (DType dtype : kEveryDType) {
    for (const Shape& shape : shapes) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeString(shape));
      const std::string bytes = TestBytes(dtype, NumElements(shape));
      const std::string file = SerializeNpy(dtype, shape, bytes);
      // Data starts 64-byte aligned, right after the header's '\n'.
      ASSERT_EQ((file.size() - bytes.size()) % 64, 0u);
      EXPECT_EQ(file[file.size() - bytes.size() - 1], '\n');
      EXPECT_EQ(file[6], '\1');  // version 1.0

      absl::StatusOr<HostArray> parsed = ParseNpy(file);
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      EXPECT_EQ(parsed->dtype, dtype);
      EXPECT_EQ(parsed->shape, shape);
      EXPECT_EQ(parsed->bytes, bytes);

      const std::string path = TempPath("roundtrip.npy");
      ASSERT_TRUE(WriteNpy(path, dtype, shape, bytes).ok());
      absl::StatusOr<HostArray> read = ReadNpy(path);
      ASSERT_TRUE(read.ok()) << read.status();
      EXPECT_EQ(read->dtype, dtype);
      EXPECT_EQ(read->shape, shape);
      EXPECT_EQ(read->bytes, bytes);
      std::remove(path.c_str());
    }
  }
}

TEST(SerializeNpyTest, HeaderOver64KiBUsesVersion2) {
  // Only a shape of absurd rank makes the header this long.
  const Shape shape(30000, 1);
  const std::string file = SerializeNpy(DType::kFloat32, shape, "abcd");
  EXPECT_EQ(file.substr(0, 8), std::string("\x93NUMPY\x02\x00", 8));
  uint32_t header_len = 0;
  std::memcpy(&header_len, file.data() + 8, 4);
  EXPECT_EQ(12 + header_len + 4, file.size());
  EXPECT_EQ(file.size() % 64, 4u);
  EXPECT_EQ(file[12 + header_len - 1], '\n');
}

// --- Lenient parsing of what NumPy (or other writers) may produce -------------

TEST(ParseNpyTest, AcceptsHeaderVariations) {
  const std::string data = Bytes<double>({1, 2});
  for (std::string_view dict : {
           "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
           "{'shape': (2,), 'descr': '<f8', 'fortran_order': False}",
           "{\"fortran_order\":False,\"shape\":(2,),\"descr\":\"<f8\"}",
           // NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one header in two pieces
           "  {  'descr' : '=f8' ,\n 'fortran_order' : False , 'shape' : ( 2 , ) , }  ",
           "{'descr': 'f8', 'fortran_order': False, 'shape': (2L,), }",
           // Fortran order is the same layout when at most one dim exceeds 1.
           "{'descr': '<f8', 'fortran_order': True, 'shape': (1, 2), }",
       }) {
    SCOPED_TRACE(dict);
    absl::StatusOr<HostArray> got = ParseNpy(MakeNpy(dict, data));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->dtype, DType::kFloat64);
    EXPECT_EQ(NumElements(got->shape), 2);
    EXPECT_EQ(got->bytes, data);
  }
  // One-byte types may carry any byte order.
  absl::StatusOr<HostArray> b =
      ParseNpy(MakeNpy("{'descr': '>b1', 'fortran_order': False, 'shape': (), }", "\1"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->dtype, DType::kBool);
  // Hand-made version 2.0 and 3.0 headers.
  for (int major : {2, 3}) {
    absl::StatusOr<HostArray> v = ParseNpy(MakeNpy(
        "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", Bytes<int32_t>({-5}), major));
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->bytes, Bytes<int32_t>({-5}));
  }
}

// --- Errors -------------------------------------------------------------------

TEST(ReadNpyTest, UnsupportedFilesNameFileAndReason) {
  struct Case {
    std::string_view file;
    std::vector<std::string_view> reason;
  };
  const Case cases[] = {
      {"fortran_f64.npy", {"Fortran-ordered arrays are not supported", "np.ascontiguousarray"}},
      {"bigendian_f64.npy", {"big-endian dtype '>f8'", "astype('<f8')"}},
      {"object.npy", {"object arrays", "'|O'"}},
      {"structured.npy", {"structured dtypes"}},
      {"truncated_data.npy", {"truncated .npy data", "needs 32 bytes", "only 28"}},
      {"trailing_data.npy", {"longer than its shape says", "has 40"}},
      {"truncated_header.npy", {"truncated .npy header"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string path = DataPath(c.file);
    absl::StatusOr<HostArray> read = ReadNpy(path);
    ExpectInvalid(read, {path});
    for (std::string_view part : c.reason) ExpectInvalid(read, {part});
    // ParseNpy gives the same reason.
    absl::StatusOr<HostArray> parsed = ParseNpy(ReadFileBytes(path));
    for (std::string_view part : c.reason) ExpectInvalid(parsed, {part});
  }
}

TEST(ParseNpyTest, BadMagic) {
  ExpectInvalid(ParseNpy(""), {"truncated"});
  ExpectInvalid(ParseNpy("PK\3\4 this is a zip"), {"magic string"});
  ExpectInvalid(ParseNpy("\x93NUMPZ\1\0"), {"magic string"});
  ExpectInvalid(ParseNpy(std::string("\x93NUM", 4)), {"truncated"});
}

TEST(ParseNpyTest, TruncatedPreambleOrHeader) {
  ExpectInvalid(ParseNpy(std::string("\x93NUMPY\1", 7)), {"truncated"});
  ExpectInvalid(ParseNpy(std::string("\x93NUMPY\1\0\x76", 9)), {"truncated", "header length"});
  const std::string file = MakeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", "");
  ExpectInvalid(ParseNpy(file.substr(0, 30)), {"truncated .npy header", "118 bytes", "after 20"});
}

TEST(ParseNpyTest, UnsupportedVersion) {
  std::string file =
      MakeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", Bytes<double>({1}), 2);
  file[6] = '\4';
  ExpectInvalid(ParseNpy(file), {"unsupported .npy format version 4.0", "1.0, 2.0, 3.0"});
  file[6] = '\1';
  file[7] = '\1';
  ExpectInvalid(ParseNpy(file), {"version 1.1"});
}

TEST(ParseNpyTest, BadDTypes) {
  auto with_descr = [](std::string_view descr) {
    return ParseNpy(MakeNpy(absl::StrCat("{'descr': '", std::string(descr),
                                         "', 'fortran_order': False, "
                                         "'shape': (0,), }"),
                            ""));
  };
  ExpectInvalid(with_descr(">i8"), {"big-endian dtype '>i8'"});
  ExpectInvalid(with_descr(">f4"), {"big-endian"});
  ExpectInvalid(with_descr("|f8"), {"no byte order"});
  ExpectInvalid(with_descr("<c32"), {"'<c32' (complex256) is not supported; supported: bool, "
                                     "int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
                                     "float16, float32, float64, complex64, complex128, bfloat16"});
  ExpectInvalid(with_descr(">c16"), {"big-endian dtype '>c16'"});
  ExpectInvalid(with_descr("<V4"), {"is not supported"});
  ExpectInvalid(with_descr("<U5"), {"'<U5' (str) is not supported"});
  ExpectInvalid(with_descr("|O"), {"object arrays"});
  ExpectInvalid(with_descr("<M8[ns]"), {"datetime64"});
  ExpectInvalid(with_descr(""), {"is not supported"});
}

// numpy.save(f, np.zeros(0, np.float16)) and (..., ml_dtypes.bfloat16).
TEST(ParseNpyTest, HalfDTypes) {
  auto with_descr = [](std::string_view descr) {
    return ParseNpy(MakeNpy(absl::StrCat("{'descr': '", std::string(descr),
                                         "', 'fortran_order': False, "
                                         "'shape': (0,), }"),
                            ""));
  };
  auto f16 = with_descr("<f2");
  ASSERT_TRUE(f16.ok()) << f16.status();
  EXPECT_EQ(f16->dtype, DType::kFloat16);
  auto bf16 = with_descr("<V2");
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  EXPECT_EQ(bf16->dtype, DType::kBFloat16);
}

// numpy.save(f, np.zeros(0, np.complex64)) and np.save("complex128.npy",
// np.array([1 + 2j])) (tests/client/data/gen_fixtures.py).
TEST(ParseNpyTest, ComplexDTypes) {
  absl::StatusOr<HostArray> c8 =
      ParseNpy(MakeNpy("{'descr': '<c8', 'fortran_order': False, 'shape': (0,), }", ""));
  ASSERT_TRUE(c8.ok()) << c8.status();
  EXPECT_EQ(c8->dtype, DType::kComplex64);
  absl::StatusOr<HostArray> c16 = ReadNpy(DataPath("complex128.npy"));
  ASSERT_TRUE(c16.ok()) << c16.status();
  EXPECT_EQ(c16->dtype, DType::kComplex128);
  EXPECT_EQ(c16->bytes, Bytes<double>({1, 2}));
  // What we write is what NumPy wrote, byte for byte.
  EXPECT_EQ(SerializeNpy(DType::kComplex128, {1}, c16->bytes),
            ReadFileBytes(DataPath("complex128.npy")));
}

TEST(ParseNpyTest, BadShapes) {
  auto with_shape = [](std::string_view shape, std::string_view data = "") {
    return ParseNpy(MakeNpy(absl::StrCat("{'descr': '<f8', "
                                         "'fortran_order': False, 'shape': ",
                                         std::string(shape), ", }"),
                            data));
  };
  ExpectInvalid(with_shape("(-1,)"), {"negative dimension -1"});
  ExpectInvalid(with_shape("(3, -2)"), {"negative dimension -2"});
  // Element count overflows int64.
  ExpectInvalid(with_shape("(4294967296, 4294967296)"), {"64 bits"});
  // Element count fits but the byte count does not.
  ExpectInvalid(with_shape("(2305843009213693952,)"), {"overflow 64 bits"});
  ExpectInvalid(with_shape("(99999999999999999999,)"), {"does not fit"});
  ExpectInvalid(with_shape("(5)", std::string(40, '\0')), {"(5,)"});
  ExpectInvalid(with_shape("[5]"), {"must be a tuple"});
  ExpectInvalid(with_shape("(5,,)"), {"expected an integer"});
  ExpectInvalid(with_shape("(1.5,)"), {"expected ',' or ')'"});
  ExpectInvalid(with_shape(absl::StrCat("(", std::string(65 * 3, '1'), ")")), {"does not fit"});
  std::string rank65 = "(";
  for (int i = 0; i < 65; ++i) rank65 += "1, ";
  ExpectInvalid(with_shape(rank65 + ")", Bytes<double>({0})), {"65 dimensions"});
}

TEST(ParseNpyTest, BadHeaderDicts) {
  auto parse = [](std::string_view dict) { return ParseNpy(MakeNpy(dict, Bytes<double>({0}))); };
  ExpectInvalid(parse("{'descr': '<f8', 'fortran_order': False}"), {"missing key 'shape'"});
  ExpectInvalid(parse("{'descr': '<f8', 'shape': (1,)}"), {"missing key 'fortran_order'"});
  ExpectInvalid(parse("{'descr': '<f8', 'fortran_order': False, "
                      "'shape': (1,), 'extra': 1}"),
                {"unexpected key 'extra'"});
  ExpectInvalid(parse("{'descr': '<f8', 'descr': '<f8', "
                      "'fortran_order': False, 'shape': (1,)}"),
                {"'descr' appears twice"});
  ExpectInvalid(parse("{'descr': '<f8' 'fortran_order': False, "
                      "'shape': (1,)}"),
                {"expected ',' or '}'"});
  ExpectInvalid(parse("{'descr': '<f8', 'fortran_order': 0, 'shape': (1,)}"), {"True or False"});
  ExpectInvalid(parse("['descr', '<f8']"), {"start with '{'"});
  ExpectInvalid(parse("{'descr': '<f8, 'fortran_order': False, "
                      "'shape': (1,)}"),
                {"cannot parse the .npy header"});
  ExpectInvalid(parse("{'descr': '<f8', 'fortran_order': False, "
                      "'shape': (1,)} x"),
                {"unexpected text after the dict"});
  ExpectInvalid(parse("{'descr': '<f8', 'fortran_order': False, "
                      "'shape': (1,)"),
                {"cannot parse"});
}

TEST(ParseNpyTest, FortranOrder) {
  ExpectInvalid(ParseNpy(MakeNpy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }",
                                 std::string(48, '\0'))),
                {"Fortran-ordered arrays are not supported; save with "
                 "np.ascontiguousarray"});
}

TEST(ParseNpyTest, DataLengthMismatch) {
  const std::string_view dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }";
  ExpectInvalid(ParseNpy(MakeNpy(dict, std::string(15, 'x'))),
                {"truncated .npy data", "(2, 2) of int32 needs 16 bytes", "only 15"});
  ExpectInvalid(ParseNpy(MakeNpy(dict, std::string(17, 'x'))),
                {"longer than its shape says", "has 17"});
}

TEST(ReadNpyTest, MissingFileIsNotFound) {
  const std::string path = DataPath("no_such_file.npy");
  absl::StatusOr<HostArray> got = ReadNpy(path);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound) << got.status();
  EXPECT_THAT(std::string(got.status().message()), HasSubstr(path));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("No such file"));
}

TEST(ReadNpyTest, DirectoryIsAnError) {
  absl::StatusOr<HostArray> got = ReadNpy(NPY_TEST_DATA_DIR);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()), HasSubstr(NPY_TEST_DATA_DIR));
}

TEST(WriteNpyTest, MissingDirectoryIsNotFound) {
  const std::string path = TempPath("no_such_dir/x.npy");
  absl::Status st = WriteNpy(path, DType::kInt32, {1}, Bytes<int32_t>({1}));
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr(path));
  EXPECT_THAT(std::string(st.message()), HasSubstr("No such file"));
}

TEST(WriteNpyTest, WrongByteCountOrShapeIsInvalid) {
  const std::string path = TempPath("wrong.npy");
  absl::Status st = WriteNpy(path, DType::kInt32, {2}, Bytes<int32_t>({1}));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("needs 8 bytes but 4 were given"));
  EXPECT_FALSE(std::ifstream(path).good()) << "no file should be created";

  st = WriteNpy(path, DType::kInt32, {-1}, "");
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("negative dimension"));
}

TEST(WriteNpyTest, UnwritablePathIsAnError) {
  absl::Status st = WriteNpy(NPY_TEST_DATA_DIR, DType::kInt32, {1}, Bytes<int32_t>({1}));
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr(NPY_TEST_DATA_DIR));
}

TEST(WriteNpyTest, FullDeviceIsReported) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full";
  absl::Status st = WriteNpy("/dev/full", DType::kFloat64, {1000}, std::string(8000, '\0'));
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("/dev/full"));
  EXPECT_EQ(access("/dev/full", F_OK), 0) << "a device must not be removed";
}

// Every prefix of a file, and every header byte changed, parses or gives
// INVALID_ARGUMENT; nothing crashes (run under -DRESIDENT_SANITIZE=ON).
TEST(ParseNpyTest, CorruptInputNeverCrashes) {
  for (std::string_view name : {"float64.npy", "v2_int64.npy"}) {
    const std::string good = ReadFileBytes(DataPath(name));
    for (size_t len = 0; len < good.size(); ++len) {
      absl::StatusOr<HostArray> got = ParseNpy(good.substr(0, len));
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument)
          << name << " cut to " << len;
    }
    for (size_t i = 0; i < 128; ++i) {
      for (char c : {'\0', '(', ')', ',', '-', '9', '\'', '\xff', ' '}) {
        std::string bad = good;
        bad[i] = c;
        absl::StatusOr<HostArray> got = ParseNpy(bad);
        if (!got.ok()) {
          EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
        }
      }
    }
  }
}

// Arrays over 2 GiB (sizes that overflow int32 and exceed one I/O chunk).
// Needs ~5 GiB of memory and disk, so it runs only when asked for.
TEST(LargeNpyTest, Over2GiBRoundTrips) {
  if (std::getenv("RESIDENT_LARGE_TESTS") == nullptr) {
    GTEST_SKIP() << "set RESIDENT_LARGE_TESTS=1 to run";
  }
  const Shape shape = {3, (int64_t{1} << 31) / 8 + 7};  // ~2.25 GiB of f32
  const int64_t n = NumElements(shape);
  std::string bytes(n * 4, '\0');
  for (int64_t i = 0; i < n; i += 4099) {
    const float v = static_cast<float>(i);
    std::memcpy(bytes.data() + i * 4, &v, 4);
  }
  const std::string path = TempPath("large.npy");
  ASSERT_TRUE(WriteNpy(path, DType::kFloat32, shape, bytes).ok());
  absl::StatusOr<HostArray> got = ReadNpy(path);
  std::remove(path.c_str());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->shape, shape);
  EXPECT_TRUE(got->bytes == bytes);
}

}  // namespace
}  // namespace resident
