#include "core/status.h"

#include <gtest/gtest.h>

#include "core/clock.h"

namespace apollo {
namespace {

Result<int> Half(int x) {
  if (x % 2) return Status::InvalidArgument("odd");
  return x / 2;
}

Status Chain(int x) {
  APOLLO_RETURN_IF_ERROR(Half(x).status());
  return Status::Ok();
}

TEST(StatusTest, CodesAndMessages) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().ToString(), "OK");
  Status s = Status::Unavailable("store down");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(static_cast<int>(s.code()), 14);  // gRPC's number
  EXPECT_EQ(s.ToString(), "UNAVAILABLE: store down");
  EXPECT_EQ(s.WithPrefix("apply").message(), "apply: store down");
  EXPECT_EQ(StatusCodeName(StatusCode::kDataLoss), "DATA_LOSS");
}

TEST(StatusTest, ResultHoldsValueOrError) {
  auto ok = Half(8);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 4);
  auto bad = Half(3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Chain(4).ok());
  EXPECT_EQ(Chain(5).message(), "odd");
}

TEST(ClockTest, ManualClockMovesOnlyWhenTold) {
  ManualClock c(FromUnixMicros(1'000'000));
  EXPECT_EQ(ToUnixMicros(c.Now()), 1'000'000);
  c.Advance(std::chrono::seconds(2));
  EXPECT_EQ(ToUnixSeconds(c.Now()), 3);
  c.Set(FromUnixMicros(5));
  EXPECT_EQ(ToUnixMicros(c.Now()), 5);
  RealClock real;
  EXPECT_GT(ToUnixSeconds(real.Now()), 1'700'000'000);
}

}  // namespace
}  // namespace apollo
