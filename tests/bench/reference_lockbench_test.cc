// The hand-written reference loop of the lock benchmark is the same model as
// models::LockBench: same streams, same draw order, same order for events
// due at the same time, so with the same seed it counts exactly the same
// acquisitions, contentions and waits at every point of the run (not just
// within statistical noise).
#include "bench/reference_lockbench.h"

#include <ostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/lockbench/lock_bench.h"
#include "sim/simulator.h"

namespace bench {
namespace {

using namespace sim::literals;

struct Case {
  std::string name;
  int n;
  sim::Distribution think;
  sim::Distribution hold;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class ReferenceLockBenchTest : public testing::TestWithParam<Case> {};

TEST_P(ReferenceLockBenchTest, CountsExactlyWhatTheModelCounts) {
  const Case& c = GetParam();
  for (uint64_t seed : {1, 7}) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    sim::Simulator sim;
    models::LockBenchParams p;
    p.threads = c.n;
    p.think = c.think;
    p.hold = c.hold;
    models::LockBench model(sim, p, seed);
    model.Start();
    ReferenceLockBench ref(c.n, c.think, c.hold, seed);
    // A simulated second (some 300,000 to 500,000 acquisitions), compared
    // every 100ms.
    for (sim::Time t = 100_ms; t <= 1_s; t += 100_ms) {
      sim.RunUntil(t);
      ref.RunUntil(t);
      const models::LockStat& s = model.lock().stat();
      ASSERT_EQ(ref.acquisitions(), s.acquisitions) << "at " << sim::FormatTime(t);
      ASSERT_EQ(ref.contentions(), s.contentions);
      ASSERT_EQ(ref.wait().count(), s.wait.count());
      ASSERT_EQ(ref.wait().sum(), s.wait.sum());
      ASSERT_EQ(ref.wait().max(), s.wait.max());
    }
    EXPECT_EQ(ref.Now(), sim.Now());
    // The lock was contended, so the FIFO hand-over was exercised.
    EXPECT_GT(ref.contentions(), ref.acquisitions() / 10);
  }
}

INSTANTIATE_TEST_SUITE_P(
    LockBench, ReferenceLockBenchTest,
    testing::Values(
        // The benchmark's variants (scenarios/lockbench.textproto).
        Case{"N4", 4, sim::Distribution::Exponential(10_us), sim::Distribution::Exponential(2_us)},
        Case{"N64", 64, sim::Distribution::Exponential(10_us), sim::Distribution::Exponential(2_us)},
        // Exponential draws almost never tie. With think and hold equal and
        // constant, a release's two new events (the releaser's think, the
        // next holder's hold) end at the same time, and which runs first
        // decides whether the releaser finds the lock taken.
        Case{"N2_equal_constants", 2, sim::Distribution::Constant(2_us), sim::Distribution::Constant(2_us)}),
    [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace bench
