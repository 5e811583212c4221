#include "sim/time.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace sim {
namespace {

using namespace ::sim::literals;  // NOLINT

TEST(TimeTest, LiteralsAndFactories) {
  EXPECT_EQ((1_ps).ps(), 1);
  EXPECT_EQ((1_ns).ps(), 1000);
  EXPECT_EQ((1_us).ps(), 1000000);
  EXPECT_EQ((1_ms).ps(), 1000000000);
  EXPECT_EQ((1_s).ps(), 1000000000000);
  EXPECT_EQ(Time::Nanos(7), 7000_ps);
  EXPECT_EQ(Time::Micros(3), 3000_ns);
  EXPECT_EQ(Time::Millis(2), 2000_us);
  EXPECT_EQ(Time::Seconds(1), 1000_ms);
  EXPECT_EQ(Time(), Time::Zero());
  EXPECT_EQ(Time::Max().ps(), INT64_MAX);
  // Large literals do not overflow within the int64 range (~106 days).
  EXPECT_EQ((9000000_s).ps(), 9000000LL * 1000000000000LL);
}

TEST(TimeTest, Arithmetic) {
  Time t = 10_us;
  t += 5_us;
  EXPECT_EQ(t, 15_us);
  t -= 1_us;
  EXPECT_EQ(t, 14_us);
  EXPECT_EQ(3_us + 2_us, 5_us);
  EXPECT_EQ(3_us - 5_us, Time::Zero() - 2_us);
  EXPECT_EQ(3_us * 4, 12_us);
  EXPECT_EQ(12_us / 5, 2400_ns);
  EXPECT_EQ(10_us / 3_us, 3);
  EXPECT_LT(999_ns, 1_us);
  EXPECT_GT(1_us, 999999_ps);
  EXPECT_LE(1_us, 1000_ns);
  EXPECT_NE(1_us, 1001_ns);
}

// A delay or a total too large to count stays at the largest time (an
// event there never comes) instead of wrapping into the past.
TEST(TimeTest, SumsAndMultiplesSaturate) {
  const Time max = Time::Max();
  const Time min = Time::Picos(std::numeric_limits<int64_t>::min());
  EXPECT_EQ(max + 1_ps, max);
  EXPECT_EQ(Time::Seconds(9000000) + Time::Seconds(1000000), max);
  Time total = Time::Seconds(9000000);
  total += Time::Seconds(1000000);
  EXPECT_EQ(total, max);
  EXPECT_EQ(min + Time::Picos(-1), min);
  EXPECT_EQ(Time::Seconds(1000000) * 262143, max);
  EXPECT_EQ(Time::Seconds(1000000) * -262143, min);
  EXPECT_EQ(Time::Picos(-5) * -3, 15_ps);
  static_assert(Time::Max() + Time::Picos(1) == Time::Max());
}

TEST(TimeTest, Conversions) {
  EXPECT_DOUBLE_EQ((1500_ms).ToSeconds(), 1.5);
  EXPECT_DOUBLE_EQ((2500_ns).ToMicros(), 2.5);
  EXPECT_DOUBLE_EQ((1500_ps).ToNanos(), 1.5);
}

TEST(TimeTest, CyclesRoundToNearestPicosecond) {
  EXPECT_EQ(Cycles(2200, 2200000000), 1_us);
  EXPECT_EQ(Cycles(1, 1000000000), 1_ns);
  EXPECT_EQ(Cycles(0, 3000000000), Time::Zero());
  // One cycle at 3 GHz is 333.33ps -> 333ps; two are 666.67ps -> 667ps.
  EXPECT_EQ(Cycles(1, 3000000000), 333_ps);
  EXPECT_EQ(Cycles(2, 3000000000), 667_ps);
  // 1.5ps rounds up (half rounds away from zero for positive values).
  EXPECT_EQ(Cycles(3, 2000000000000), 2_ps);
  // No overflow for a long run: 1e12 cycles at 2.2 GHz = 454.545...s.
  EXPECT_EQ(Cycles(1000000000000, 2200000000), Time::Picos(454545454545455));
}

TEST(TimeTest, FromSecondsDoubleRounds) {
  EXPECT_EQ(Time::FromSecondsDouble(0.0), Time::Zero());
  EXPECT_EQ(Time::FromSecondsDouble(1.5e-6), 1500_ns);
  EXPECT_EQ(Time::FromSecondsDouble(2.0), 2_s);
  EXPECT_EQ(Time::FromSecondsDouble(0.4e-12), Time::Zero());
  EXPECT_EQ(Time::FromSecondsDouble(0.6e-12), 1_ps);
  EXPECT_EQ(Time::FromSecondsDouble(1.4e-12), 1_ps);
  EXPECT_EQ(Time::FromSecondsDouble(-1.4e-12), Time::Zero() - 1_ps);
  EXPECT_EQ(Time::FromSecondsDouble(-0.6e-12), Time::Zero() - 1_ps);
  EXPECT_EQ(Time::FromSecondsDouble(1e-9 / 3), 333_ps);
  EXPECT_EQ(Time::FromMicrosDouble(2.5), 2500_ns);
  EXPECT_EQ(Time::FromMicrosDouble(0.0000015), 2_ps);  // 1.5ps -> 2ps
}

TEST(TimeTest, FormatTime) {
  EXPECT_EQ(FormatTime(35_us), "35us");
  EXPECT_EQ(FormatTime(1500_us), "1.5ms");
  EXPECT_EQ(FormatTime(1500_ns), "1.5us");
  EXPECT_EQ(FormatTime(2_ms), "2ms");
  EXPECT_EQ(FormatTime(6648_ms), "6.648s");
  EXPECT_EQ(FormatTime(100_ps), "100ps");
  EXPECT_EQ(FormatTime(1_s), "1s");
  EXPECT_EQ(FormatTime(999_ps), "999ps");
  EXPECT_EQ(FormatTime(1000_ps), "1ns");
  // Zero is printed in picoseconds (the header comment's "0ns" example is
  // not what the implementation does).
  EXPECT_EQ(FormatTime(Time::Zero()), "0ps");
  // Up to four decimals, trailing zeros dropped, rounded.
  EXPECT_EQ(FormatTime(Time::Picos(1234567)), "1.2346us");
  EXPECT_EQ(FormatTime(Time::Picos(1000001)), "1us");  // 1.000001 -> 1.0000
  EXPECT_EQ(FormatTime(Time::Picos(1050000)), "1.05us");
  // Negative spans keep their sign and choose the unit by magnitude.
  EXPECT_EQ(FormatTime(Time::Zero() - 1500_ns), "-1.5us");
  EXPECT_EQ(FormatTime(Time::Zero() - 3_ms), "-3ms");
  // Large values stay in seconds.
  EXPECT_EQ(FormatTime(Time::Seconds(86400)), "86400s");
}

}  // namespace
}  // namespace sim
