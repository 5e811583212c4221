#include "sim/distribution.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/rng.h"
#include "sim/time.h"

namespace sim {
namespace {

using ::sim::literals::operator""_ps;
using ::sim::literals::operator""_ns;
using ::sim::literals::operator""_us;
using ::testing::HasSubstr;

constexpr int kSamples = 1000000;

struct Moments {
  double mean = 0;      // picoseconds
  double variance = 0;  // picoseconds^2
  int64_t min = 0;
  int64_t max = 0;
};

Moments Measure(const Distribution& d, uint64_t seed, int n = kSamples) {
  Rng rng(seed);
  double sum = 0, sum2 = 0;
  Moments m;
  m.min = INT64_MAX;
  m.max = INT64_MIN;
  for (int i = 0; i < n; ++i) {
    const int64_t ps = d.Sample(rng).ps();
    const double x = static_cast<double>(ps);
    sum += x;
    sum2 += x * x;
    m.min = std::min(m.min, ps);
    m.max = std::max(m.max, ps);
  }
  m.mean = sum / n;
  m.variance = (sum2 - sum * sum / n) / (n - 1);
  return m;
}

// ------------------------------------------------------------ own exp/log

TEST(InternalMathTest, ExpMatchesLibm) {
  Rng rng(3);
  for (int i = 0; i < 200000; ++i) {
    const double x = -745.0 + 1454.0 * rng.Uniform01();
    const double ref = std::exp(x);
    if (ref < 1e-300) continue;  // subnormal results: relative error grows
    // Within 2 ulp (measured: 1).
    ASSERT_NEAR(internal::Exp(x) / ref, 1.0, 4.5e-16) << x;
  }
  for (double x : {-1e-300, 0.0, 1e-10, 0.5, 1.0, -1.0, 0.34657359, 700.0}) {
    EXPECT_NEAR(internal::Exp(x) / std::exp(x), 1.0, 4.5e-16) << x;
  }
  EXPECT_EQ(internal::Exp(0.0), 1.0);
  EXPECT_EQ(internal::Exp(-800.0), 0.0);
  EXPECT_TRUE(std::isinf(internal::Exp(710.0)));
  EXPECT_GT(internal::Exp(-740.0), 0.0);  // subnormal, not flushed
}

TEST(InternalMathTest, LogMatchesLibm) {
  Rng rng(4);
  for (int i = 0; i < 200000; ++i) {
    // Log-uniform over the whole normal range, plus values near 1.
    const double x = std::exp(-700.0 + 1400.0 * rng.Uniform01());
    // Within 3 ulp (measured: 2).
    ASSERT_NEAR(internal::Log(x), std::log(x), 6.7e-16 * std::fabs(std::log(x)))
        << x;
    const double y = 0.5 + rng.Uniform01();
    ASSERT_NEAR(internal::Log(y), std::log(y), 6.7e-16 * std::fabs(std::log(y)))
        << y;
  }
  EXPECT_EQ(internal::Log(1.0), 0.0);
  EXPECT_NEAR(internal::Log(2.0), 0.69314718055994530942, 1e-16);
  EXPECT_NEAR(internal::Log(5e-324), std::log(5e-324), 1e-12);  // subnormal
  EXPECT_TRUE(std::isinf(internal::Log(0.0)));
  EXPECT_LT(internal::Log(0.0), 0.0);
  EXPECT_TRUE(std::isnan(internal::Log(-1.0)));
}

// ------------------------------------------------------------- ziggurat

TEST(ZigguratTest, TableIsConsistent) {
  const internal::ExpZigguratTable& z = internal::kExpZiggurat;
  const double r = internal::kExpZigR;
  const double v = std::exp(-r) * (r + 1);
  EXPECT_DOUBLE_EQ(z.x[1], r);
  EXPECT_NEAR(z.x[0] * z.f[1], v, 1e-15);  // base box stretched over the tail
  for (int i = 1; i < 256; ++i) {
    ASSERT_GT(z.x[i], z.x[i + 1]) << i;
    ASSERT_LT(z.f[i], z.f[i + 1]) << i;
    ASSERT_NEAR(z.f[i], std::exp(-z.x[i]), 1e-15) << i;
    // Every box has area v; the last one (up to f = 1) closes the ziggurat.
    ASSERT_NEAR(z.x[i] * (z.f[i + 1] - z.f[i]) / v, 1.0, 1e-10) << i;
  }
  EXPECT_EQ(z.x[256], 0.0);
  EXPECT_EQ(z.f[256], 1.0);
}

// The wedge decision (chord and tangent shortcuts, then e^-x) agrees with
// the plain definition y < e^-x for every box, except for points within
// rounding distance of the curve.
TEST(ZigguratTest, WedgeDecisionMatchesDefinition) {
  const internal::ExpZigguratTable& z = internal::kExpZiggurat;
  Rng rng(12);
  int accepted = 0, rejected = 0;
  for (int i = 1; i < 256; ++i) {
    for (int k = 0; k < 4000; ++k) {
      const double x = z.x[i + 1] + (z.x[i] - z.x[i + 1]) * rng.Uniform01();
      const double u = rng.Uniform01();
      const double y = z.f[i] + (z.f[i + 1] - z.f[i]) * u;
      const double curve = std::exp(-x);
      if (std::fabs(y - curve) <= 1e-14 * curve) continue;
      const bool want = y < curve;
      ASSERT_EQ(internal::ExpWedgeAccepts(i, x, u), want)
          << "box " << i << " x " << x << " u " << u;
      (want ? accepted : rejected) += 1;
    }
  }
  // Both outcomes are common: roughly half the wedge lies under the curve.
  EXPECT_GT(accepted, 255 * 4000 / 4);
  EXPECT_GT(rejected, 255 * 4000 / 4);
}

// Exactness of the exponential sampler: its CDF at many points, including
// the wedges and the tail beyond r ~ 7.7, against 1 - e^-x.
TEST(ZigguratTest, StandardExponentialCdf) {
  const int n = 4000000;
  const std::vector<double> qs = {0.01, 0.1,  0.3, 0.5, 0.75, 1.0, 1.5,
                                  2.0,  3.0,  4.0, 5.0, 6.0,  7.0, 7.69,
                                  7.70, 8.0,  9.0, 10.0, 12.0};
  std::vector<int64_t> below(qs.size(), 0);
  Rng rng(99);
  double sum = 0, sum2 = 0, max = 0;
  for (int i = 0; i < n; ++i) {
    const double x = internal::StandardExponential(rng);
    ASSERT_GE(x, 0.0);
    sum += x;
    sum2 += x * x;
    max = std::max(max, x);
    for (size_t k = 0; k < qs.size(); ++k) below[k] += x <= qs[k];
  }
  for (size_t k = 0; k < qs.size(); ++k) {
    const double p = 1 - std::exp(-qs[k]);
    const double sd = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(below[k], n * p, 5 * sd + 1) << "x <= " << qs[k];
  }
  // Tail counts are what checks the tail path: P(X > 10) = 4.54e-5.
  EXPECT_NEAR(n - below[17], n * std::exp(-10.0), 5 * std::sqrt(n * std::exp(-10.0)));
  EXPECT_GT(max, 12.0);
  const double mean = sum / n;
  EXPECT_NEAR(mean, 1.0, 5.0 / std::sqrt(n));
  EXPECT_NEAR(sum2 / n - mean * mean, 1.0, 5 * std::sqrt(8.0 / n));
}

TEST(NormalSamplerTest, StandardNormalMoments) {
  const int n = 2000000;
  Rng rng(5);
  double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  int64_t below_m1 = 0, below_2 = 0;
  for (int i = 0; i < n; ++i) {
    const double z = internal::StandardNormal(rng);
    s1 += z;
    s2 += z * z;
    s3 += z * z * z;
    s4 += z * z * z * z;
    below_m1 += z <= -1.0;
    below_2 += z <= 2.0;
  }
  EXPECT_NEAR(s1 / n, 0.0, 5 / std::sqrt(n));
  EXPECT_NEAR(s2 / n, 1.0, 5 * std::sqrt(2.0 / n));
  EXPECT_NEAR(s3 / n, 0.0, 5 * std::sqrt(15.0 / n));
  EXPECT_NEAR(s4 / n, 3.0, 5 * std::sqrt(96.0 / n));
  const double p1 = 0.15865525393145705, p2 = 0.9772498680518208;
  EXPECT_NEAR(below_m1, n * p1, 5 * std::sqrt(n * p1 * (1 - p1)));
  EXPECT_NEAR(below_2, n * p2, 5 * std::sqrt(n * p2 * (1 - p2)));
}

// ---------------------------------------------------------------- kinds

TEST(DistributionTest, DefaultIsConstantZero) {
  Distribution d;
  Rng rng(1);
  EXPECT_EQ(d.kind(), Distribution::Kind::kConstant);
  EXPECT_EQ(d.Sample(rng), Time::Zero());
  EXPECT_EQ(d.Mean(), Time::Zero());
}

TEST(DistributionTest, Constant) {
  const Distribution d = Distribution::Constant(35_us);
  Rng rng(1);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(d.Sample(rng), 35_us);
  EXPECT_EQ(d.Mean(), 35_us);
  EXPECT_EQ(d.kind(), Distribution::Kind::kConstant);
  EXPECT_EQ(d.Describe(), "Const(35us)");
  EXPECT_EQ(Distribution::Constant(Time::Zero() - 5_us).Mean(), Time::Zero());
}

TEST(DistributionTest, ExponentialMeanAndVariance) {
  const Distribution d = Distribution::Exponential(10_us);
  EXPECT_EQ(d.kind(), Distribution::Kind::kExponential);
  EXPECT_EQ(d.Mean(), 10_us);
  EXPECT_EQ(d.Describe(), "Exp(mean 10us)");
  const Moments m = Measure(d, 42);
  const double mu = 1e7;  // ps
  // Standard error of the mean: mu / sqrt(n) = 0.1% of mu.
  EXPECT_NEAR(m.mean, mu, 4 * mu / std::sqrt(kSamples));
  // Variance mu^2; the sample variance has relative sd sqrt(8 / n).
  EXPECT_NEAR(m.variance / (mu * mu), 1.0, 5 * std::sqrt(8.0 / kSamples));
  EXPECT_GE(m.min, 0);
  EXPECT_LT(m.min, 100);  // P(X < 10ns) = 1e-3 per sample
  EXPECT_GT(m.max, 12 * mu);
}

TEST(DistributionTest, ExponentialPinnedSamples) {
  // A change of the sampling algorithm changes every run: pin it. (Values
  // checked against an independent implementation of the ziggurat.)
  const Distribution d = Distribution::Exponential(10_us);
  Rng rng(1);
  std::vector<int64_t> got;
  for (int i = 0; i < 4; ++i) got.push_back(d.Sample(rng).ps());
  EXPECT_THAT(got, ::testing::ElementsAre(6300781, 2447297, 24131464, 4768625));
}

TEST(DistributionTest, ExponentialEdgeCases) {
  Rng rng(8);
  const Distribution zero = Distribution::Exponential(Time::Zero());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(zero.Sample(rng), Time::Zero());
  const Distribution negative = Distribution::Exponential(Time::Zero() - 1_us);
  EXPECT_EQ(negative.Mean(), Time::Zero());
  // A huge mean saturates instead of overflowing.
  const Distribution huge = Distribution::Exponential(Time::Max() / 4);
  for (int i = 0; i < 1000; ++i) EXPECT_GE(huge.Sample(rng), Time::Zero());
  // Tiny means show the rounding to whole picoseconds: for Exp(mean 1ps),
  // E[round(X)] = sum_{k>=1} P(X >= k - 1/2) = e^-0.5 / (1 - e^-1) = 0.9595.
  const Moments m = Measure(Distribution::Exponential(1_ps), 3, 200000);
  EXPECT_NEAR(m.mean, std::exp(-0.5) / (1 - std::exp(-1.0)), 0.01);
}

TEST(DistributionTest, Uniform) {
  absl::StatusOr<Distribution> d = Distribution::Uniform(2_us, 6_us);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->kind(), Distribution::Kind::kUniform);
  EXPECT_EQ(d->Mean(), 4_us);
  EXPECT_EQ(d->Describe(), "Uniform(2us, 6us)");
  const Moments m = Measure(*d, 17);
  const double width = 4e6;
  const double sd = width / std::sqrt(12.0);
  EXPECT_NEAR(m.mean, 4e6, 4 * sd / std::sqrt(kSamples));
  EXPECT_NEAR(m.variance / (sd * sd), 1.0, 0.01);
  EXPECT_GE(m.min, 2000000);
  EXPECT_LE(m.max, 6000000);
  EXPECT_LT(m.min, 2000100);
  EXPECT_GT(m.max, 5999900);

  absl::StatusOr<Distribution> point = Distribution::Uniform(3_us, 3_us);
  ASSERT_TRUE(point.ok());
  Rng rng(1);
  EXPECT_EQ(point->Sample(rng), 3_us);
}

TEST(DistributionTest, NormalBarelyTruncated) {
  absl::StatusOr<Distribution> d = Distribution::Normal(10_us, 2_us);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->kind(), Distribution::Kind::kNormal);
  EXPECT_EQ(d->Describe(), "Normal(mean 10us, sd 2us)");
  // Truncation at 5 sd moves the mean up by sd phi(5) / Phi(5) = 1.487e-6
  // sd = 3ps.
  EXPECT_EQ(d->Mean(), 10_us + 3_ps);
  const Moments m = Measure(*d, 23);
  EXPECT_NEAR(m.mean, 1e7, 4 * 2e6 / std::sqrt(kSamples));
  EXPECT_NEAR(m.variance / 4e12, 1.0, 5 * std::sqrt(2.0 / kSamples));
}

TEST(DistributionTest, NormalHeavilyTruncated) {
  // mean 1us, sd 2us: a = 0.5; E[X | X >= 0] = mu + sigma phi(a) / Phi(a)
  // = 1us + 2us * 0.35206533 / 0.69146246 = 2.01832087us.
  absl::StatusOr<Distribution> d = Distribution::Normal(1_us, 2_us);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->Mean().ps(), 2018321, 1);
  const Moments m = Measure(*d, 29);
  EXPECT_GE(m.min, 0);
  // The truncated sd is below 2us; 4 * 2us / 1000 = 8ns.
  EXPECT_NEAR(m.mean, static_cast<double>(d->Mean().ps()), 8000);
}

TEST(DistributionTest, Lognormal) {
  absl::StatusOr<Distribution> d = Distribution::Lognormal(10_us, 5_us);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->kind(), Distribution::Kind::kLognormal);
  EXPECT_EQ(d->Mean(), 10_us);
  EXPECT_EQ(d->Describe(), "Lognormal(mean 10us, sd 5us)");
  const Moments m = Measure(*d, 31);
  EXPECT_NEAR(m.mean, 1e7, 4 * 5e6 / std::sqrt(kSamples));
  EXPECT_NEAR(std::sqrt(m.variance), 5e6, 5e6 * 0.01);
  EXPECT_GT(m.min, 0);
  // Median is exp(mu) = mean / sqrt(1 + cv^2) = 10us / sqrt(1.25).
  Rng rng(37);
  int below_median = 0;
  const int64_t median = static_cast<int64_t>(1e7 / std::sqrt(1.25));
  for (int i = 0; i < 100000; ++i) below_median += d->Sample(rng).ps() <= median;
  EXPECT_NEAR(below_median, 50000, 5 * 158);

  absl::StatusOr<Distribution> degenerate = Distribution::Lognormal(3_us, Time::Zero());
  ASSERT_TRUE(degenerate.ok());
  EXPECT_NEAR(degenerate->Sample(rng).ps(), 3000000, 1);
}

TEST(DistributionTest, EmpiricalInverseCdf) {
  absl::StatusOr<Distribution> d = Distribution::Empirical(
      {{0.0, 1_us}, {0.5, 2_us}, {0.9, 4_us}, {1.0, 10_us}});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->kind(), Distribution::Kind::kEmpirical);
  EXPECT_EQ(d->Describe(), "Empirical(4 points, 1us..10us)");
  // 0.5 * 1.5us + 0.4 * 3us + 0.1 * 7us = 2.65us.
  EXPECT_EQ(d->Mean(), Time::Nanos(2650));

  Rng rng(41);
  const int n = kSamples;
  int le_1_5 = 0, le_2 = 0, le_4 = 0, le_7 = 0;
  double sum = 0;
  int64_t lo = INT64_MAX, hi = 0;
  for (int i = 0; i < n; ++i) {
    const Time t = d->Sample(rng);
    sum += static_cast<double>(t.ps());
    lo = std::min(lo, t.ps());
    hi = std::max(hi, t.ps());
    le_1_5 += t <= Time::Nanos(1500);
    le_2 += t <= 2_us;
    le_4 += t <= 4_us;
    le_7 += t <= 7_us;
  }
  auto near = [n](int count, double p) {
    return std::fabs(count - n * p) < 5 * std::sqrt(n * p * (1 - p));
  };
  EXPECT_TRUE(near(le_1_5, 0.25)) << le_1_5;
  EXPECT_TRUE(near(le_2, 0.5)) << le_2;
  EXPECT_TRUE(near(le_4, 0.9)) << le_4;
  EXPECT_TRUE(near(le_7, 0.95)) << le_7;
  EXPECT_GE(lo, 1000000);
  EXPECT_LE(hi, 10000000);
  EXPECT_NEAR(sum / n, 2.65e6, 5 * 2e6 / std::sqrt(n));
}

TEST(DistributionTest, EmpiricalWithAtoms) {
  // 30% exactly 1us, 70% exactly 5us: flat segments and a jump at p = 0.3.
  absl::StatusOr<Distribution> d = Distribution::Empirical(
      {{0.0, 1_us}, {0.3, 1_us}, {0.3, 5_us}, {1.0, 5_us}});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->Mean(), Time::Nanos(3800));
  Rng rng(43);
  int ones = 0, fives = 0;
  for (int i = 0; i < 100000; ++i) {
    const Time t = d->Sample(rng);
    ones += t == 1_us;
    fives += t == 5_us;
  }
  EXPECT_EQ(ones + fives, 100000);
  EXPECT_NEAR(ones, 30000, 5 * 145);
}

// ------------------------------------------------------------- invalid

TEST(DistributionTest, InvalidParametersRejected) {
  auto expect_invalid = [](const absl::StatusOr<Distribution>& d,
                           const char* fragment) {
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(d.status().message()), HasSubstr(fragment));
  };
  expect_invalid(Distribution::Uniform(5_us, 3_us), "low <= high");
  expect_invalid(Distribution::Uniform(Time::Zero() - 1_us, 3_us), "0 <= low");
  expect_invalid(Distribution::Normal(Time::Zero(), 1_us), "mean > 0");
  expect_invalid(Distribution::Normal(Time::Zero() - 1_us, 1_us), "mean > 0");
  expect_invalid(Distribution::Normal(1_us, Time::Zero() - 1_ns), "stddev >= 0");
  expect_invalid(Distribution::Lognormal(Time::Zero(), 1_us), "mean > 0");
  expect_invalid(Distribution::Lognormal(1_us, Time::Zero() - 1_ns), "stddev");
  expect_invalid(Distribution::Empirical({}), "at least 2");
  expect_invalid(Distribution::Empirical({{0.0, 1_us}}), "at least 2");
  expect_invalid(Distribution::Empirical({{0.1, 1_us}, {1.0, 2_us}}),
                 "start at 0");
  expect_invalid(Distribution::Empirical({{0.0, 1_us}, {0.9, 2_us}}),
                 "end at 1");
  expect_invalid(
      Distribution::Empirical({{0.0, 1_us}, {0.6, 2_us}, {0.4, 3_us}, {1.0, 4_us}}),
      "nondecreasing");
  expect_invalid(Distribution::Empirical({{0.0, 3_us}, {1.0, 2_us}}),
                 "values must be nondecreasing");
  expect_invalid(Distribution::Empirical({{0.0, 1_us}, {NAN, 2_us}, {1.0, 3_us}}),
                 "outside [0, 1]");
  expect_invalid(Distribution::Empirical({{0.0, 1_us}, {1.5, 2_us}}),
                 "outside [0, 1]");
  expect_invalid(
      Distribution::Empirical({{0.0, Time::Zero() - 1_us}, {1.0, 2_us}}),
      "negative");
}

TEST(DistributionTest, SameRngStateSameSamples) {
  absl::StatusOr<Distribution> n = Distribution::Normal(10_us, 3_us);
  ASSERT_TRUE(n.ok());
  const Distribution e = Distribution::Exponential(7_us);
  Rng a = Rng::ForStream(1, "x"), b = Rng::ForStream(1, "x");
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(n->Sample(a), n->Sample(b));
    ASSERT_EQ(e.Sample(a), e.Sample(b));
  }
  // Copies share behaviour.
  const Distribution copy = *n;
  EXPECT_EQ(copy.Describe(), n->Describe());
}

}  // namespace
}  // namespace sim
