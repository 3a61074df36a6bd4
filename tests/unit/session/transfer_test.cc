// Transfers on their own: the slots per tenant, an Upload's bytes, its
// quota hold and its finisher, a Download's reads.
#include "server/session/transfer.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/session/device_arrays.h"

namespace resident {
namespace {

using ::testing::HasSubstr;
using testing_session::DeviceArrays;

TEST(TransferSlotsTest, TransfersPerTenantAreBoundedAndGivenBack) {
  TransferSlots slots(2);
  auto a = slots.Take("alice");
  auto b = slots.Take("alice");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(slots.InFlight("alice"), 2);
  auto c = slots.Take("alice");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(c.status().message(),
            "tenant 'alice' has 2 uploads and downloads in flight, the server's limit "
            "(--max-transfers-per-tenant); finish some first");
  EXPECT_TRUE(slots.Take("bob").ok()) << "the limit is per tenant";
  // A slot is given back when its last copy goes.
  std::shared_ptr<void> copy = *a;
  a->reset();
  EXPECT_EQ(slots.InFlight("alice"), 2);
  copy.reset();
  EXPECT_EQ(slots.InFlight("alice"), 1);
  EXPECT_TRUE(slots.Take("alice").ok());
}

class UploadTest : public ::testing::Test {
 protected:
  // An upload of `n` float64s holding its bytes in alice's quota; Finish
  // registers through `finish`.
  std::unique_ptr<Upload> Begin(int64_t n, Upload::Finisher finish) {
    DeviceArray a = arrays_.F64(n);
    std::unique_ptr<QuotaHold> hold;
    {
      std::lock_guard<std::mutex> lock(mu_);
      hold = *ledger_.Hold("alice", a.nbytes(), 1);
    }
    return std::make_unique<Upload>(arrays_.device(), arrays_.stream(), std::move(a),
                                    std::move(hold), *slots_.Take("alice"), std::move(finish));
  }
  int64_t Reserved() {
    std::lock_guard<std::mutex> lock(mu_);
    return ledger_.Usage("alice").reserved_bytes;
  }

  DeviceArrays arrays_;
  std::mutex mu_;
  TenantLedger ledger_{QuotaConfig(), mu_};
  TransferSlots slots_{8};
};

TEST_F(UploadTest, BytesArriveInOrderAndFinishRegisters) {
  const HandleId id = HandleId::Random();
  DeviceArray registered;
  auto up = Begin(2, [&](const DeviceArray& a) -> absl::StatusOr<HandleId> {
    registered = a;
    return id;
  });
  EXPECT_EQ(Reserved(), 16);
  EXPECT_EQ(slots_.InFlight("alice"), 1);
  const double values[2] = {1.5, -2.0};
  const std::string bytes(reinterpret_cast<const char*>(values), sizeof(values));
  ASSERT_TRUE(up->Append(bytes.substr(0, 5)).ok());
  ASSERT_TRUE(up->Append("").ok());
  ASSERT_TRUE(up->Append(bytes.substr(5)).ok());
  EXPECT_EQ(up->received(), 16);
  absl::StatusOr<ArrayDescription> d = up->Finish();
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->handle, id);
  EXPECT_EQ(d->nbytes, 16);
  EXPECT_EQ(d->shape, (Shape{2}));
  EXPECT_EQ(Reserved(), 0) << "the array is the tenant's own now: the hold is given back";
  // The bytes as sent, compared as bytes (the upload stores them unchanged).
  EXPECT_EQ(std::string(static_cast<const char*>(registered.data()), sizeof(values)),
            std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  up.reset();
  EXPECT_EQ(slots_.InFlight("alice"), 0);
}

TEST_F(UploadTest, PiecesArriveInOrderAndAnOversizedSetIsRefusedWhole) {
  DeviceArray registered;
  auto up = Begin(2, [&](const DeviceArray& a) -> absl::StatusOr<HandleId> {
    registered = a;
    return HandleId::Random();
  });
  const std::string bytes = "0123456789abcdef";
  const std::string_view all(bytes);
  const std::string_view first[] = {all.substr(0, 3), all.substr(3, 0), all.substr(3, 6)};
  ASSERT_TRUE(up->Append(first).ok());
  EXPECT_EQ(up->received(), 9);
  const std::string_view too_many[] = {all.substr(9), "x"};
  absl::Status over = up->Append(too_many);
  EXPECT_EQ(over.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(over.message()), HasSubstr("more than the 16 bytes"));
  EXPECT_EQ(up->received(), 9) << "nothing of a refused set is taken";
  const std::string_view rest[] = {all.substr(9, 2), all.substr(11)};
  ASSERT_TRUE(up->Append(rest).ok());
  ASSERT_TRUE(up->Finish().ok());
  EXPECT_EQ(std::string(static_cast<const char*>(registered.data()), 16), bytes);
}

TEST_F(UploadTest, TooManyOrTooFewBytesAreRefused) {
  auto up = Begin(1, [](const DeviceArray&) -> absl::StatusOr<HandleId> {
    ADD_FAILURE() << "an incomplete upload registers nothing";
    return HandleId();
  });
  absl::Status over = up->Append(std::string(9, 'x'));
  EXPECT_EQ(over.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(over.message()), HasSubstr("more than the 8 bytes"));
  ASSERT_TRUE(up->Append(std::string(4, 'x')).ok());
  absl::StatusOr<ArrayDescription> early = up->Finish();
  EXPECT_EQ(early.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(early.status().message()), HasSubstr("ended after 4 of the 8 bytes"));
}

TEST_F(UploadTest, AnAbandonedUploadGivesEverythingBack) {
  const int64_t before = arrays_.device().budget().used();
  auto up = Begin(1000, [](const DeviceArray&) -> absl::StatusOr<HandleId> { return HandleId(); });
  EXPECT_GE(arrays_.device().budget().used(), before + 8000);
  ASSERT_TRUE(up->Append(std::string(100, 'x')).ok());
  up.reset();
  EXPECT_EQ(Reserved(), 0);
  EXPECT_EQ(slots_.InFlight("alice"), 0);
  EXPECT_EQ(arrays_.device().budget().used(), before) << "its buffer is freed";
}

TEST_F(UploadTest, AFailedRegistrationFailsTheUpload) {
  auto up = Begin(1, [](const DeviceArray&) -> absl::StatusOr<HandleId> {
    return absl::NotFoundError("session gone");
  });
  ASSERT_TRUE(up->Append(std::string(8, 'x')).ok());
  EXPECT_EQ(up->Finish().status().code(), absl::StatusCode::kNotFound);
  up.reset();
  EXPECT_EQ(Reserved(), 0);
}

TEST(DownloadTest, ReadsPiecesAndNothingPastTheEnd) {
  DeviceArrays arrays;
  DeviceArray a = arrays.F64(4);
  const double values[4] = {1, 2, 3, 4};
  std::memcpy(a.data(), values, sizeof(values));  // the CPU device's memory is the host's
  TransferSlots slots(1);
  Download d(arrays.device(), arrays.stream(), a, Describe(HandleId(), a), *slots.Take("alice"));
  EXPECT_EQ(d.description().nbytes, 32);
  double got[4] = {0, 0, 0, 0};
  ASSERT_TRUE(d.Read(8, 16, &got[1]).ok());
  EXPECT_EQ(got[1], 2);
  EXPECT_EQ(got[2], 3);
  EXPECT_EQ(got[0], 0);
  EXPECT_TRUE(d.Read(32, 0, got).ok());
  for (auto [offset, size] : {std::pair<int64_t, int64_t>{0, 33}, {-1, 1}, {31, 2}, {0, -1}}) {
    EXPECT_EQ(d.Read(offset, size, got).code(), absl::StatusCode::kOutOfRange)
        << offset << " " << size;
  }
  EXPECT_EQ(slots.Take("alice").status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace resident
