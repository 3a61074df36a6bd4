// SplitDataField against messages protobuf serialised, cut into pieces at
// every position, and against malformed bytes (truncated, oversized).
#include "core/proto/split_message.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "resident/v1/resident.pb.h"

namespace resident {
namespace {

using ::testing::HasSubstr;

constexpr int kData = v1::UploadRequest::kDataFieldNumber;

std::string Joined(const SplitMessage& m) {
  std::string s;
  for (std::string_view p : m.data) s.append(p);
  return s;
}

v1::UploadRequest Sample() {
  v1::UploadRequest r;
  r.set_session(std::string(16, '\x07'));
  r.set_dtype(v1::DTYPE_FLOAT64);
  r.add_shape(3);
  r.add_shape(300);
  std::string data(2500, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  r.set_data(data);
  return r;
}

absl::Status SplitOne(const std::string& bytes, SplitMessage* out) {
  std::vector<std::string_view> pieces = {bytes};
  return SplitDataField(pieces, kData, out);
}

TEST(SplitMessageTest, SeparatesDataFromHeaderAtEveryCut) {
  const v1::UploadRequest want = Sample();
  const std::string bytes = want.SerializeAsString();
  for (size_t a = 0; a <= bytes.size(); a += 7) {
    for (size_t b = a; b <= bytes.size(); b += 97) {
      // Three pieces, with an empty one in the middle when a == b.
      std::string_view all(bytes);
      std::vector<std::string_view> pieces = {all.substr(0, a), all.substr(a, b - a),
                                              all.substr(b)};
      SplitMessage m;
      ASSERT_TRUE(SplitDataField(pieces, kData, &m).ok()) << a << " " << b;
      v1::UploadRequest head;
      ASSERT_TRUE(head.ParseFromString(m.rest));
      EXPECT_EQ(head.session(), want.session());
      EXPECT_EQ(head.dtype(), want.dtype());
      EXPECT_THAT(head.shape(), ::testing::ElementsAre(3, 300));
      EXPECT_TRUE(head.data().empty());
      EXPECT_EQ(m.data_size, want.data().size());
      EXPECT_TRUE(Joined(m) == want.data()) << a << " " << b;
    }
  }
}

TEST(SplitMessageTest, EmptyMessageAndNoDataField) {
  SplitMessage m;
  ASSERT_TRUE(SplitDataField({}, kData, &m).ok());
  EXPECT_TRUE(m.rest.empty());
  EXPECT_EQ(m.data_size, 0u);
  v1::UploadRequest head;
  head.set_dtype(v1::DTYPE_INT32);
  ASSERT_TRUE(SplitOne(head.SerializeAsString(), &m).ok());
  EXPECT_EQ(m.rest, head.SerializeAsString());
  EXPECT_TRUE(m.data.empty());
}

TEST(SplitMessageTest, ARepeatedDataFieldKeepsTheLastLikeProtobuf) {
  const std::string bytes = std::string(
      "\x22\x02"
      "ab"
      "\x22\x03"
      "xyz",
      9);
  v1::UploadRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  SplitMessage m;
  ASSERT_TRUE(SplitOne(bytes, &m).ok());
  EXPECT_EQ(Joined(m), parsed.data());
  EXPECT_EQ(m.data_size, 3u);
}

TEST(SplitMessageTest, UnknownFieldsOfEveryWireTypeGoToTheRest) {
  // field 9 varint, field 10 fixed64, field 11 bytes, field 12 fixed32.
  const std::string unknown(
      "\x48\x96\x01"
      "\x51"
      "12345678"
      "\x5a\x01"
      "q"
      "\x65"
      "abcd",
      20);
  const std::string bytes = unknown + std::string(
                                          "\x22\x01"
                                          "D",
                                          3);
  SplitMessage m;
  ASSERT_TRUE(SplitOne(bytes, &m).ok());
  EXPECT_EQ(m.rest, unknown);
  EXPECT_EQ(Joined(m), "D");
}

struct Bad {
  std::string bytes;
  const char* why;
};

TEST(SplitMessageTest, MalformedBytesAreInvalidArgumentNeverAnOverRead) {
  const Bad cases[] = {
      {std::string("\x22\x64\x01\x02", 4), "claims 100 bytes but only 2 are left"},
      {std::string("\x22", 1), "cut off"},      // no length
      {std::string("\x22\x80", 2), "cut off"},  // length varint truncated
      {std::string("\x0a\x05"
                   "abc",
                   5),
       "claims 5 bytes"},
      {std::string("\x10", 1), "cut off"},  // varint field without value
      {std::string("\x10\xff\xff", 3), "cut off"},
      {std::string("\x11"
                   "1234",
                   5),
       "claims 8 bytes"},  // fixed64 truncated
      {std::string("\x15"
                   "12",
                   3),
       "claims 4 bytes"},  // fixed32 truncated
      {std::string("\x22\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11), "claims"},  // 2^64-1
      {std::string("\x22\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11), "does not fit 64 bits"},
      {std::string("\x22\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12), "does not fit 64 bits"},
      {std::string("\x02\x00", 2), "field number 0"},
      {std::string("\x0b", 1), "wire type 3"},  // group start
      {std::string("\x0c", 1), "wire type 4"},  // group end
      {std::string("\x0e", 1), "wire type 6"},
      {std::string("\x20\x01", 2), "the data field 4 has wire type 0"},
  };
  for (const Bad& c : cases) {
    SplitMessage m;
    absl::Status s = SplitOne(c.bytes, &m);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.why;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.why));
    // Split across one-byte pieces, the same answer.
    std::vector<std::string_view> bytes_apart;
    for (size_t i = 0; i < c.bytes.size(); ++i) bytes_apart.push_back({&c.bytes[i], 1});
    EXPECT_EQ(SplitDataField(bytes_apart, kData, &m).message(), s.message());
  }
}

TEST(SplitMessageTest, EveryTruncationOfAValidMessageIsRefusedOrAPrefix) {
  const std::string bytes = Sample().SerializeAsString();
  for (size_t n = 0; n < bytes.size(); ++n) {
    SplitMessage m;
    absl::Status s = SplitOne(bytes.substr(0, n), &m);
    // A cut between fields is a valid (shorter) message; a cut inside one
    // is refused. Either way nothing is read past n.
    v1::UploadRequest parsed;
    EXPECT_EQ(s.ok(), parsed.ParseFromString(bytes.substr(0, n))) << n;
    if (!s.ok()) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    }
  }
}

// ForEachField, as the health listener and client read grpc.health.v1.
TEST(ForEachFieldTest, ReadsEachFieldOfAHealthMessage) {
  std::string bytes("\x0a", 1);  // field 1, bytes: "resident.v1.Resident"
  const std::string service = "resident.v1.Resident";
  AppendVarint(service.size(), &bytes);
  bytes += service;
  bytes += std::string("\x10\xac\x02", 3);          // field 2, varint 300
  bytes += std::string("\x1d\x01\x02\x03\x04", 5);  // field 3, fixed32
  std::vector<WireField> seen;
  ASSERT_TRUE(ForEachField(bytes, [&](const WireField& f) {
                seen.push_back(f);
                return absl::OkStatus();
              }).ok());
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].number, 1u);
  EXPECT_EQ(seen[0].wire_type, 2);
  EXPECT_EQ(seen[0].bytes, service);
  EXPECT_EQ(seen[1].number, 2u);
  EXPECT_EQ(seen[1].varint, 300u);
  EXPECT_EQ(seen[2].wire_type, 5);
  EXPECT_EQ(seen[2].bytes, std::string_view("\x01\x02\x03\x04", 4));
}

TEST(ForEachFieldTest, RefusesMalformedBytesAndStopsAtTheCallbacksError) {
  const auto ok = [](const WireField&) { return absl::OkStatus(); };
  EXPECT_THAT(std::string(ForEachField(std::string("\x0a\x05"
                                                   "ab",
                                                   4),
                                       ok)
                              .message()),
              HasSubstr("claims 5 bytes"));
  EXPECT_THAT(std::string(ForEachField(std::string("\x08\xff", 2), ok).message()),
              HasSubstr("cut off"));
  int calls = 0;
  const absl::Status s = ForEachField(std::string("\x08\x01\x08\x02", 4), [&](const WireField&) {
    ++calls;
    return absl::NotFoundError("stop");
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace resident
