#include "scenarios/units.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/time.h"

namespace viosim {
namespace {

using ::testing::HasSubstr;

int64_t Picos(const std::string& text) {
  absl::StatusOr<sim::Time> t = ParseDuration(text);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status();
  return t.ok() ? t->ps() : -1;
}

// The message of the error for `text`, which must be rejected.
std::string Rejection(const std::string& text) {
  absl::StatusOr<sim::Time> t = ParseDuration(text);
  EXPECT_FALSE(t.ok()) << text << " was accepted as " << t->ps() << "ps";
  if (t.ok()) return "";
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr(text)) << "quotes the input";
  return std::string(t.status().message());
}

TEST(ParseDurationTest, IsExactInPicoseconds) {
  EXPECT_EQ(Picos("6.648s"), 6648000000000);
  EXPECT_EQ(Picos("1.5ms"), 1500000000);
  EXPECT_EQ(Picos("35us"), 35000000);
  EXPECT_EQ(Picos("0ns"), 0);
  EXPECT_EQ(Picos("100ps"), 100);
  EXPECT_EQ(Picos("2.5ns"), 2500);
  EXPECT_EQ(Picos("0.000000000001s"), 1);
  EXPECT_EQ(Picos("2.50ns"), 2500) << "trailing zeros carry no precision";
  EXPECT_EQ(Picos("1.0000ps"), 1);
}

TEST(ParseDurationTest, AcceptsSpacesBetweenNumberAndUnitAndAround) {
  EXPECT_EQ(Picos("35 us"), 35000000);
  EXPECT_EQ(Picos("  7ms  "), 7000000000);
}

TEST(ParseDurationTest, ParsesNegativeValuesForTheCallerToJudge) {
  EXPECT_EQ(Picos("-5us"), -5000000);
  EXPECT_EQ(Picos("-0.5ns"), -500);
}

TEST(ParseDurationTest, ReachesTheLimitsOfInt64) {
  EXPECT_EQ(Picos("9223372.036854775807s"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Picos("-9223372.036854775808s"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Picos("9223372036854775807ps"), std::numeric_limits<int64_t>::max());
}

TEST(ParseDurationTest, RejectsMissingUnitAndListsTheUnits) {
  EXPECT_THAT(Rejection("10"), HasSubstr("missing unit; expected one of ps, ns, us, ms, s"));
}

TEST(ParseDurationTest, RejectsUnknownUnitAndListsTheUnits) {
  const std::string message = Rejection("10 min");
  EXPECT_THAT(message, HasSubstr("unknown unit 'min'"));
  EXPECT_THAT(message, HasSubstr("ps, ns, us, ms, s"));
  EXPECT_THAT(Rejection("10US"), HasSubstr("unknown unit 'US'"));
}

TEST(ParseDurationTest, RejectsMissingNumber) {
  EXPECT_THAT(Rejection("us"), HasSubstr("expected a number"));
  EXPECT_THAT(Rejection("-"), HasSubstr("expected a number"));
  EXPECT_THAT(Rejection(""), HasSubstr("empty"));
  EXPECT_THAT(Rejection(".5us"), HasSubstr("digit before the decimal point"));
  EXPECT_THAT(Rejection("5.us"), HasSubstr("digits after the decimal point"));
  EXPECT_THAT(Rejection("--5us"), HasSubstr("expected a number"));
}

TEST(ParseDurationTest, RejectsFractionsOfAPicosecond) {
  EXPECT_THAT(Rejection("1.2345ps"), HasSubstr("finer than the resolution of 1ps"));
  EXPECT_THAT(Rejection("0.5ps"), HasSubstr("finer"));
  EXPECT_THAT(Rejection("1.0000001us"), HasSubstr("finer"));
}

TEST(ParseDurationTest, RejectsExponents) {
  EXPECT_THAT(Rejection("1e3us"), HasSubstr("exponent notation is not supported"));
  EXPECT_THAT(Rejection("1.5E-3s"), HasSubstr("exponent"));
}

TEST(ParseDurationTest, RejectsOverflow) {
  EXPECT_THAT(Rejection("99999999999999999999s"), HasSubstr("out of range"));
  EXPECT_THAT(Rejection("9223372.036854775808s"), HasSubstr("out of range"));
  EXPECT_THAT(Rejection("9223373s"), HasSubstr("out of range"));
  EXPECT_THAT(Rejection("100000000000000000000000000000000000000000ps"),
              HasSubstr("out of range"));
}

TEST(ParseDurationTest, RejectsTrailingGarbage) {
  EXPECT_THAT(Rejection("5us5"), HasSubstr("unknown unit 'us5'"));
  EXPECT_THAT(Rejection("5 us x"), HasSubstr("unknown unit"));
  EXPECT_THAT(Rejection("1,5us"), HasSubstr("unknown unit"));
}

TEST(TimeOfTest, AcceptsNonNegativeAndRejectsTheRest) {
  absl::StatusOr<sim::Time> t = TimeOf("35us");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, sim::Time::Micros(35));
  EXPECT_TRUE(TimeOf("0ns").ok());
  EXPECT_THAT(std::string(TimeOf("-1ns").status().message()),
              HasSubstr("must not be negative"));
  EXPECT_EQ(TimeOf("").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FormatDurationForInputTest, UsesTheLargestUnitExactly) {
  EXPECT_EQ(FormatDurationForInput(sim::Time::Picos(6648000000000)), "6.648s");
  EXPECT_EQ(FormatDurationForInput(sim::Time::Picos(1500)), "1.5ns");
  EXPECT_EQ(FormatDurationForInput(sim::Time::Micros(35)), "35us");
  EXPECT_EQ(FormatDurationForInput(sim::Time::Millis(-2)), "-2ms");
  EXPECT_EQ(FormatDurationForInput(sim::Time::Picos(999)), "999ps");
  EXPECT_EQ(FormatDurationForInput(sim::Time::Picos(1000000000001)), "1.000000000001s");
  EXPECT_EQ(FormatDurationForInput(sim::Time::Zero()), "0s");
}

TEST(FormatDurationForInputTest, RoundTripsThroughParseDuration) {
  const int64_t values[] = {0,
                            1,
                            -1,
                            999,
                            1000,
                            123456789,
                            6648000000000,
                            std::numeric_limits<int64_t>::max(),
                            std::numeric_limits<int64_t>::min()};
  for (int64_t ps : values) {
    const std::string text = FormatDurationForInput(sim::Time::Picos(ps));
    EXPECT_EQ(Picos(text), ps) << text;
  }
}

}  // namespace
}  // namespace viosim
