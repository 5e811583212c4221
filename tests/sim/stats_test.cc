#include "sim/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "sim/distribution.h"
#include "sim/rng.h"
#include "sim/time.h"

namespace sim {
namespace {

using ::sim::literals::operator""_us;
using ::sim::literals::operator""_ms;

TEST(CounterTest, AddAndReset) {
  Counter c;
  EXPECT_EQ(c.value(), 0);
  c.Add();
  c.Add(41);
  EXPECT_EQ(c.value(), 42);
  c.Reset();
  EXPECT_EQ(c.value(), 0);
}

// ---------------------------------------------------------------- Histogram

TEST(HistogramTest, EmptyIsZero) {
  Histogram h;
  EXPECT_EQ(h.count(), 0);
  EXPECT_EQ(h.sum(), 0);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.Mean(), 0);
  EXPECT_EQ(h.Percentile(50), 0);
}

TEST(HistogramTest, BucketLayout) {
  Histogram h(7);  // M = 128
  EXPECT_EQ(h.num_buckets(), 57 * 128);
  // Values below 2M = 256 are exact.
  for (int64_t v = 0; v < 256; ++v) {
    ASSERT_EQ(h.BucketOf(v), v);
    ASSERT_EQ(h.BucketLow(static_cast<int>(v)), v);
    ASSERT_EQ(h.BucketWidth(static_cast<int>(v)), 1);
  }
  EXPECT_EQ(h.BucketOf(256), 256);
  EXPECT_EQ(h.BucketOf(257), 256);
  EXPECT_EQ(h.BucketOf(258), 257);
  EXPECT_EQ(h.BucketLow(256), 256);
  EXPECT_EQ(h.BucketWidth(256), 2);
  EXPECT_EQ(h.BucketOf(INT64_MAX), h.num_buckets() - 1);
  // Every bucket's range maps back to it, buckets tile the line, and a
  // bucket holding several values is at most 1/128 as wide as they are.
  for (int b = 0; b + 1 < h.num_buckets(); ++b) {
    const int64_t low = h.BucketLow(b), width = h.BucketWidth(b);
    ASSERT_EQ(h.BucketOf(low), b);
    ASSERT_EQ(h.BucketOf(low + width - 1), b);
    ASSERT_EQ(h.BucketLow(b + 1), low + width) << b;
    if (width > 1) {
      ASSERT_LE(static_cast<double>(width) / low, 1.0 / 128) << b;
    }
  }
}

TEST(HistogramTest, UniformIntegersPercentiles) {
  Histogram h;
  for (int64_t v = 1; v <= 100000; ++v) h.Record(v);
  EXPECT_EQ(h.count(), 100000);
  EXPECT_EQ(h.min(), 1);
  EXPECT_EQ(h.max(), 100000);
  EXPECT_EQ(h.sum(), 5000050000.0);
  EXPECT_DOUBLE_EQ(h.Mean(), 50000.5);
  // Nearest rank: the p-th percentile of 1..100000 is 1000 p. The answer is
  // a bucket midpoint: within half a bucket (< 0.4%) of it.
  for (double p : {1.0, 10.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99}) {
    const double exact = 1000.0 * p;
    EXPECT_NEAR(h.Percentile(p), exact, exact * 0.004) << "p" << p;
  }
  EXPECT_EQ(h.Percentile(0), 1);
  EXPECT_EQ(h.Percentile(100), 100000);
  EXPECT_EQ(h.Percentile(-5), 1);
  EXPECT_EQ(h.Percentile(250), 100000);
  // Small values are exact: rank 100 of 100000 at p = 0.1.
  EXPECT_EQ(h.Percentile(0.1), 100);
  EXPECT_EQ(h.Percentile(0.001), 1);
}

TEST(HistogramTest, RankRuleOnSmallData) {
  Histogram h;
  for (int64_t v : {10, 20, 30, 40}) h.Record(v);
  // r = ceil(p/100 * 4).
  EXPECT_EQ(h.Percentile(25), 10);
  EXPECT_EQ(h.Percentile(25.1), 20);
  EXPECT_EQ(h.Percentile(50), 20);
  EXPECT_EQ(h.Percentile(75), 30);
  EXPECT_EQ(h.Percentile(76), 40);
  // Integral p over 100 values: rank exactly p, for every p.
  Histogram hundred;
  for (int64_t v = 1; v <= 100; ++v) hundred.Record(v);
  for (int p = 1; p <= 100; ++p) EXPECT_EQ(hundred.Percentile(p), p);
}

TEST(HistogramTest, PicosecondLatenciesAndClamping) {
  Histogram h;
  h.Record(35_us);
  EXPECT_EQ(h.count(), 1);
  // Bucket midpoint is clamped to [min, max]: a single value is exact.
  EXPECT_EQ(h.Percentile(50), (35_us).ps());
  EXPECT_EQ(h.Percentile(99.9), (35_us).ps());
  h.Record(-7);  // recorded as 0
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.count(), 2);
}

TEST(HistogramTest, ExponentialPercentiles) {
  // Exp(mean 10us): p-th percentile is -10us ln(1 - p/100).
  Histogram h;
  Rng rng(11);
  const Distribution d = Distribution::Exponential(10_us);
  for (int i = 0; i < 1000000; ++i) h.Record(d.Sample(rng));
  for (double p : {50.0, 90.0, 99.0}) {
    const double exact = -1e7 * std::log(1 - p / 100);
    // Bucket width 0.8% plus sampling error (a few tenths of a percent).
    EXPECT_NEAR(h.Percentile(p), exact, exact * 0.012) << "p" << p;
  }
  EXPECT_NEAR(h.Mean(), 1e7, 4e4);
}

TEST(HistogramTest, HugeSumsDoNotOverflow) {
  Histogram h;
  // 100 values of ~9.2e18: the sum exceeds int64.
  h.RecordN(INT64_MAX, 100);
  EXPECT_EQ(h.count(), 100);
  EXPECT_DOUBLE_EQ(h.sum(), 100.0 * static_cast<double>(INT64_MAX));
  EXPECT_DOUBLE_EQ(h.Mean(), static_cast<double>(INT64_MAX));
  EXPECT_EQ(h.Percentile(50), INT64_MAX);
}

TEST(HistogramTest, MergeEqualsRecordingEverything) {
  Histogram a, b, all;
  Rng rng(5);
  for (int i = 0; i < 10000; ++i) {
    const int64_t v = static_cast<int64_t>(rng.Below(1000000));
    ((i % 3 == 0) ? a : b).Record(v);
    all.Record(v);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.sum(), all.sum());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  for (int bucket = 0; bucket < a.num_buckets(); ++bucket) {
    ASSERT_EQ(a.bucket_count(bucket), all.bucket_count(bucket));
  }
  for (double p : {1.0, 50.0, 99.0}) EXPECT_EQ(a.Percentile(p), all.Percentile(p));

  // Merging an empty histogram changes nothing; merging into an empty one
  // copies.
  Histogram empty;
  a.Merge(empty);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  empty.Merge(all);
  EXPECT_EQ(empty.Percentile(50), all.Percentile(50));
}

TEST(HistogramTest, MergeDifferentResolution) {
  Histogram fine(7), coarse(3);
  for (int64_t v = 1000; v < 2000; ++v) coarse.Record(v);
  fine.Merge(coarse);
  EXPECT_EQ(fine.count(), 1000);
  EXPECT_EQ(fine.min(), 1000);
  EXPECT_EQ(fine.max(), 1999);
  EXPECT_EQ(fine.sum(), coarse.sum());
  // Coarse buckets of width 128 re-recorded at their midpoints.
  EXPECT_NEAR(fine.Percentile(50), 1500, 80);
}

TEST(HistogramTest, Reset) {
  Histogram h;
  h.Record(5);
  h.Record(500000);
  h.Reset();
  EXPECT_EQ(h.count(), 0);
  EXPECT_EQ(h.max(), 0);
  h.Record(7);
  EXPECT_EQ(h.min(), 7);
  EXPECT_EQ(h.max(), 7);
  EXPECT_EQ(h.Percentile(50), 7);
}

// ----------------------------------------------------------- StateOccupancy

TEST(StateOccupancyTest, SharesAndOpenInterval) {
  enum { kIdle, kBusy, kBlocked };
  StateOccupancy occ(3, Time::Zero(), kIdle);
  occ.Set(kBusy, 10_us);     // idle 10
  occ.Set(kBlocked, 25_us);  // busy 15
  occ.Set(kBusy, 30_us);     // blocked 5
  occ.Set(kBusy, 35_us);     // no-op change
  // At 50: busy 15 + 20 (open).
  const Time now = 50_us;
  EXPECT_EQ(occ.current(), kBusy);
  EXPECT_EQ(occ.TimeIn(kIdle, now), 10_us);
  EXPECT_EQ(occ.TimeIn(kBusy, now), 35_us);
  EXPECT_EQ(occ.TimeIn(kBlocked, now), 5_us);
  EXPECT_DOUBLE_EQ(occ.Share(kIdle, now), 0.2);
  EXPECT_DOUBLE_EQ(occ.Share(kBusy, now), 0.7);
  EXPECT_DOUBLE_EQ(occ.Share(kBlocked, now), 0.1);
  EXPECT_DOUBLE_EQ(occ.Share(kIdle, now) + occ.Share(kBusy, now) +
                       occ.Share(kBlocked, now),
                   1.0);
}

TEST(StateOccupancyTest, ResetKeepsCurrentState) {
  StateOccupancy occ(2, 5_us, 1);
  occ.Set(0, 10_us);
  occ.Set(1, 20_us);
  occ.Reset(30_us);  // warm-up over; still in state 1
  EXPECT_EQ(occ.interval_start(), 30_us);
  EXPECT_EQ(occ.current(), 1);
  EXPECT_EQ(occ.TimeIn(0, 30_us), Time::Zero());
  EXPECT_EQ(occ.Share(1, 30_us), 0.0);  // no time since reset
  occ.Set(0, 40_us);
  EXPECT_EQ(occ.TimeIn(1, 70_us), 10_us);
  EXPECT_EQ(occ.TimeIn(0, 70_us), 30_us);
  EXPECT_DOUBLE_EQ(occ.Share(0, 70_us), 0.75);
}

TEST(StateOccupancyTest, RandomSwitchingMatchesBruteForce) {
  StateOccupancy occ(4, Time::Zero(), 0);
  Rng rng(3);
  Time now;
  int state = 0;
  std::vector<Time> expected(4);
  for (int i = 0; i < 10000; ++i) {
    const Time step = Time::Picos(static_cast<int64_t>(rng.Below(1000000)));
    expected[state] += step;
    now += step;
    state = static_cast<int>(rng.Below(4));
    occ.Set(state, now);
  }
  for (int s = 0; s < 4; ++s) EXPECT_EQ(occ.TimeIn(s, now), expected[s]);
}

// ------------------------------------------------------------- Student's t

TEST(StudentTTest, KnownQuantiles) {
  struct Case {
    int64_t dof;
    double t;
  };
  // Reference values of t(0.975, dof).
  for (const Case& c : std::vector<Case>{{1, 12.7062047},
                                         {2, 4.30265273},
                                         {4, 2.77644511},
                                         {10, 2.22813885},
                                         {19, 2.09302405},
                                         {29, 2.04522964},
                                         {30, 2.04227246},
                                         {31, 2.03951345},
                                         {40, 2.02107539},
                                         {60, 2.00029782},
                                         {100, 1.98397152},
                                         {120, 1.97993041},
                                         {1000, 1.96233908}}) {
    EXPECT_NEAR(StudentT975(c.dof), c.t, c.t * 1e-6) << "dof " << c.dof;
  }
  // The values quoted to 3 decimals in textbooks.
  EXPECT_NEAR(StudentT975(1), 12.706, 1e-3);
  EXPECT_NEAR(StudentT975(4), 2.776, 1e-3);
  EXPECT_NEAR(StudentT975(19), 2.093, 1e-3);
  EXPECT_NEAR(StudentT975(100), 1.984, 1e-3);
  // Converges to the normal quantile, monotonically.
  EXPECT_NEAR(StudentT975(100000000), 1.959964, 1e-6);
  for (int64_t d = 1; d < 500; ++d) {
    ASSERT_GT(StudentT975(d), StudentT975(d + 1)) << d;
  }
  EXPECT_TRUE(std::isinf(StudentT975(0)));
}

// ------------------------------------------------------------- BatchMeans

TEST(BatchMeansTest, MeanStdDevHalfWidth) {
  BatchMeans bm;
  EXPECT_TRUE(std::isinf(bm.HalfWidth95()));
  for (double v : {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}) bm.Add(v);
  EXPECT_EQ(bm.count(), 8);
  EXPECT_DOUBLE_EQ(bm.Mean(), 5.0);
  // Sum of squared deviations 32, divisor 7.
  EXPECT_DOUBLE_EQ(bm.StdDev(), std::sqrt(32.0 / 7.0));
  EXPECT_NEAR(bm.HalfWidth95(), 2.36462425 * std::sqrt(32.0 / 7.0) / std::sqrt(8.0),
              1e-8);
  bm.Reset();
  EXPECT_EQ(bm.count(), 0);
  bm.Add(3);
  EXPECT_EQ(bm.Mean(), 3);
  EXPECT_EQ(bm.StdDev(), 0);
  EXPECT_TRUE(std::isinf(bm.HalfWidth95()));
}

// Batches of i.i.d. exponential samples: with 10x more samples per batch,
// the half-width shrinks by ~sqrt(10); and the interval covers the truth.
TEST(BatchMeansTest, HalfWidthShrinksWithBatchLength) {
  auto run = [](int batches, int per_batch, uint64_t seed) {
    Rng rng(seed);
    const Distribution d = Distribution::Exponential(10_us);
    BatchMeans bm;
    for (int b = 0; b < batches; ++b) {
      double sum = 0;
      for (int i = 0; i < per_batch; ++i) sum += d.Sample(rng).ToMicros();
      bm.Add(sum / per_batch);
    }
    return bm;
  };
  const BatchMeans short_run = run(30, 2000, 1);
  const BatchMeans long_run = run(30, 20000, 2);
  // Exact expectation of the half-width: t(29) * (10us / sqrt(n)) / sqrt(30)
  // times E[s]/sigma ~ 0.991.
  const double ratio = short_run.HalfWidth95() / long_run.HalfWidth95();
  EXPECT_GT(ratio, std::sqrt(10.0) * 0.65);
  EXPECT_LT(ratio, std::sqrt(10.0) / 0.65);
  EXPECT_NEAR(long_run.HalfWidth95(), 2.04522964 * 10 / std::sqrt(20000.0 * 30),
              0.3 * 2.04522964 * 10 / std::sqrt(20000.0 * 30));
  EXPECT_NEAR(short_run.Mean(), 10.0, short_run.HalfWidth95() * 1.5);
  EXPECT_NEAR(long_run.Mean(), 10.0, long_run.HalfWidth95() * 1.5);
}

// Coverage: over many independent experiments, the 95% interval covers the
// true mean about 95% of the time (this checks the t factor with few
// batches, where the normal 1.96 would cover only ~88%).
TEST(BatchMeansTest, CoverageWithFewBatches) {
  Rng rng(77);
  int covered = 0;
  const int experiments = 4000;
  for (int e = 0; e < experiments; ++e) {
    BatchMeans bm;
    for (int b = 0; b < 5; ++b) {
      // Batch means of 50 exponentials are close to normal.
      double sum = 0;
      for (int i = 0; i < 50; ++i) sum += internal::StandardExponential(rng);
      bm.Add(sum / 50);
    }
    covered += std::fabs(bm.Mean() - 1.0) <= bm.HalfWidth95();
  }
  // Binomial(4000, 0.95): sd 14.
  EXPECT_NEAR(covered, 0.95 * experiments, 5 * 14 + 0.01 * experiments);
}

TEST(RatioBatchMeansTest, RatioOfTotals) {
  RatioBatchMeans r;
  EXPECT_EQ(r.Ratio(), 0);
  EXPECT_TRUE(std::isinf(r.HalfWidth95()));
  // Batches with different denominators: ratio of totals, not mean ratio.
  r.Add(10, 1);   // ratio 10
  r.Add(30, 10);  // ratio 3
  EXPECT_DOUBLE_EQ(r.Ratio(), 40.0 / 11.0);
  EXPECT_EQ(r.count(), 2);
  r.Reset();
  EXPECT_EQ(r.count(), 0);
  EXPECT_EQ(r.Ratio(), 0);
}

TEST(RatioBatchMeansTest, EqualDenominatorsMatchBatchMeans) {
  RatioBatchMeans r;
  BatchMeans bm;
  Rng rng(8);
  for (int i = 0; i < 20; ++i) {
    const double a = 100 * rng.Uniform01();
    r.Add(a, 4.0);
    bm.Add(a / 4.0);
  }
  EXPECT_NEAR(r.Ratio(), bm.Mean(), 1e-12);
  EXPECT_NEAR(r.HalfWidth95(), bm.HalfWidth95(), 1e-12);
}

TEST(RatioBatchMeansTest, MeanLatencyFromBatchTotals) {
  // Each batch: a random number of requests with Exp(mean 5) latencies;
  // a = total latency, b = count. The ratio estimates 5.
  Rng rng(9);
  RatioBatchMeans r;
  for (int b = 0; b < 40; ++b) {
    const int n = 500 + static_cast<int>(rng.Below(1000));
    double total = 0;
    for (int i = 0; i < n; ++i) total += 5 * internal::StandardExponential(rng);
    r.Add(total, n);
  }
  // Half-width ~ 2.02 * 5 / sqrt(40000) = 0.05.
  EXPECT_GT(r.HalfWidth95(), 0.03);
  EXPECT_LT(r.HalfWidth95(), 0.08);
  EXPECT_NEAR(r.Ratio(), 5.0, 1.5 * r.HalfWidth95());
}

}  // namespace
}  // namespace sim
