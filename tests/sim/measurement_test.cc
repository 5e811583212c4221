// Sequential stopping (MeasurementPlan::precision): a run goes on until
// every measured interval is within the precision, merging adjacent batches
// as their number doubles, or stops at the cap and says which metrics
// missed.
#include "sim/measurement.h"

#include <cmath>

#include "gtest/gtest.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace sim {
namespace {

// A process that completes "I/Os" at random: gaps exponential of mean 10us.
struct Arrivals {
  Simulator sim;
  Rng rng{7};
  double count = 0;
  Task Run() {
    for (;;) {
      co_await sim.Delay(Time::Nanos(static_cast<int64_t>(10000 * -std::log(1 - rng.Uniform01()))));
      count += 1;
    }
  }
  // The completion rate, started.
  std::vector<RatioMetric> Started() {
    sim.Spawn(Run());
    return {{"rate", [this] { return count; }, [this] { return sim.Now().ToSeconds(); }, 1}};
  }
};

TEST(MeasurementTest, GoesOnUntilEveryIntervalIsWithinThePrecision) {
  Arrivals a;
  const std::vector<RatioMetric> metrics = a.Started();
  MeasurementPlan plan{Time::Micros(100), Time::Millis(1), 10};
  plan.precision = 0.02;
  plan.max_factor = 1000;
  MeasureOutcome out;
  const std::vector<MetricEstimate> e = MeasureBatches(a.sim, plan, [] {}, metrics, &out);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(out.reached);
  EXPECT_TRUE(out.missed.empty());
  EXPECT_LE(*e[0].ci95, 0.02 * e[0].value);
  EXPECT_NEAR(e[0].value, 100000, 3000);
  // It ran on by doubling: the window a power of two of the planned one,
  // in as many batches, each that much longer.
  EXPECT_GT(out.measured, Time::Millis(1));
  const int64_t factor = out.measured.ps() / Time::Millis(1).ps();
  EXPECT_EQ(out.measured, Time::Millis(factor));
  EXPECT_EQ(factor & (factor - 1), 0) << factor;
  EXPECT_EQ(out.batches, 10);
  EXPECT_EQ(out.batch_length, Time::Micros(100) * factor);
  EXPECT_EQ(e[0].batch_length, out.batch_length);
  EXPECT_EQ(static_cast<int>(e[0].batch_numerators.size()), out.batches);
  EXPECT_GT(out.batch_length, Time::Micros(100));
}

TEST(MeasurementTest, StopsAtTheCapAndSaysWhichMetricMissed) {
  Arrivals a;
  const std::vector<RatioMetric> metrics = a.Started();
  MeasurementPlan plan{Time::Micros(100), Time::Millis(1), 10};
  plan.precision = 0.0001;  // far beyond what 4 ms can give
  plan.max_factor = 4;
  MeasureOutcome out;
  MeasureBatches(a.sim, plan, [] {}, metrics, &out);
  EXPECT_FALSE(out.reached);
  ASSERT_EQ(out.missed.size(), 1u);
  EXPECT_EQ(out.missed[0], "rate");
  EXPECT_LE(out.measured, Time::Millis(4));
}

TEST(MeasurementTest, WithoutAPrecisionTheWindowIsAsPlanned) {
  Arrivals a;
  const std::vector<RatioMetric> metrics = a.Started();
  MeasureOutcome out;
  MeasureBatches(a.sim, MeasurementPlan{Time::Micros(100), Time::Millis(1), 10}, [] {}, metrics, &out);
  EXPECT_EQ(out.measured, Time::Millis(1));
  EXPECT_EQ(out.batches, 10);
  EXPECT_TRUE(out.reached);
}

}  // namespace
}  // namespace sim
