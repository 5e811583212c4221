// The raid10-unplug case's acceptance, run on its scenario: with one fio
// job the wake-up call makes no difference; without the shared lines'
// costs neither does it with 400 jobs (the mechanism is the lock and its
// line, nothing else); every run reads 70% of its I/Os.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/calibrate.h"
#include "analysis/runner.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"

namespace analysis {
namespace {

constexpr char kScenario[] = "scenarios/raid10_unplug.textproto";

double Metric(const viosim::VariantResult& r, const std::string& name) {
  for (const sim::MetricEstimate& m : r.metrics) {
    if (m.name == name) return m.value;
  }
  ADD_FAILURE() << "no metric " << name;
  return 0;
}

// before and after of the scenario with `overrides`; each run's read share
// is checked.
std::vector<viosim::VariantResult> RunBoth(const std::vector<std::string>& overrides) {
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(kScenario);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return {};
  RunRequest req;
  req.overrides = overrides;
  req.jobs = 2;
  absl::StatusOr<std::vector<viosim::VariantResult>> r = RunVariants(*file, {"before", "after"}, req);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  for (const viosim::VariantResult& v : *r) {
    const double share = Metric(v, "read_iops") / Metric(v, "iops");
    EXPECT_NEAR(share, 0.70, 0.01) << v.variant;
  }
  return *r;
}

double RelDiff(double a, double b) { return std::fabs(a - b) / b; }

TEST(Raid10ScenarioTest, WithOneJobBothWakeUpsGiveTheSameIops) {
  // The post's job with numjobs=1: nobody else ever wants the lock.
  const std::string dir = std::getenv("TEST_TMPDIR") != nullptr ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string job = absl::StrCat(dir, "/one-job.fio");
  std::ofstream(job) << "[global]\nioengine=libaio\ndirect=1\nreadwrite=randrw\nrwmixread=70\niodepth=64\n"
                        "size=1G\nruntime=30\ntime_based\nbs=4k\nnumjobs=1\n[job1]\n";
  const std::vector<viosim::VariantResult> r =
      RunBoth({absl::StrCat("workload.fio.job_file=", job), "run.warmup=1ms", "run.duration=300ms"});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_LT(RelDiff(Metric(r[1], "iops"), Metric(r[0], "iops")), 0.01);
  EXPECT_EQ(Metric(r[0], "wait_barrier_contention_pct"), 0);
}

// A service ratio only has a meaning for lines that queue: with the
// unqueued policy it is refused, naming both fields, not silently ignored.
TEST(Raid10ScenarioTest, AServiceRatioOfUnqueuedLinesIsRefused) {
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(kScenario);
  ASSERT_TRUE(file.ok()) << file.status();
  RunRequest req;
  req.overrides = {"platform.cache_lines.arbitration=unqueued"};
  absl::StatusOr<std::vector<viosim::VariantResult>> r = RunVariants(*file, {"after"}, req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("platform.cache_lines.service_ratio"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("platform.cache_lines.arbitration"), std::string::npos) << r.status();
}

TEST(Raid10ScenarioTest, WithoutSharedLineCostsBothWakeUpsGiveTheSameIops) {
  const std::vector<viosim::VariantResult> r = RunBoth({"platform.cache_lines.preset=none"});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_LT(RelDiff(Metric(r[1], "iops"), Metric(r[0], "iops")), 0.02);
}

// As built: before is bound by the wait queue's lock, after by a hot line
// (the lock gone, conf->mirrors' line serves nearly all the time), and the
// lines' transactions per I/O are what the path's accesses give: three on
// conf+192 (the seqcount's read, the increment's upgrade, allow_barrier's
// decrement), one on conf+256 in before only (wake_up_barrier's read after
// a write's lock) and none in after.
TEST(Raid10ScenarioTest, TheLockBoundsBeforeAndAHotLineBoundsAfter) {
  const std::vector<viosim::VariantResult> r = RunBoth({});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].bound, "wait_barrier_lock");
  EXPECT_EQ(r[1].bound.rfind("line_", 0), 0u) << r[1].bound;
  EXPECT_GT(Metric(r[1], "iops"), 1.5 * Metric(r[0], "iops"));
  for (const viosim::VariantResult& v : r) EXPECT_NEAR(Metric(v, "xfer_per_io_nr_pending"), 3.0, 0.02) << v.variant;
  EXPECT_NEAR(Metric(r[0], "xfer_per_io_wait_barrier"), 1.0, 0.02);
  EXPECT_EQ(Metric(r[1], "xfer_per_io_wait_barrier"), 0);
  EXPECT_GT(Metric(r[1], "line_util_pct_mirrors"), 95);
  EXPECT_LE(Metric(r[1], "line_util_pct_mirrors"), 100);
}

// FIFO arbitration at the ratio fitted for nearest-first: the line moves
// between random owners (~200 ns apart) and caps the array below even the
// before column. That says only that FIFO needs a ratio of its own: with the
// service ratio refitted to before's spin share under FIFO (lock_word_
// transfers as written), before's cells land near their published values
// and after comes out far below its own, near half: the before column alone
// cannot tell the arbitrations apart (docs/raid10_unplug.md). The refitted
// ratio, before's errors and after's are printed.
TEST(Raid10ScenarioTest, FifoRefittedToBeforeCarriesItAndPredictsAfterFarLower) {
  const std::vector<viosim::VariantResult> r = RunBoth({"platform.cache_lines.arbitration=fifo"});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].bound.rfind("line_", 0), 0u) << r[0].bound;
  EXPECT_LT(Metric(r[0], "write_iops"), 871000 * 0.95);

  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile("scenarios/raid10_unplug.textproto");
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<viosim::ScenarioFile> fifo = viosim::UnderAlternative(*file, "fifo");
  ASSERT_TRUE(fifo.ok()) << fifo.status();
  CalibrateSpec spec;
  spec.field = "platform.cache_lines.service_ratio";
  spec.variant = "before";
  spec.metric = "spin_cpu_pct";
  spec.lo = "0.5";
  spec.hi = "1";
  absl::StatusOr<Calibration> c = Calibrate(*fifo, spec, RunRequest{});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->search.outcome, BisectionOutcome::kFitted);
  const std::string ratio = c->values[static_cast<size_t>(c->search.best)];
  RunRequest at;
  at.overrides = {absl::StrCat(spec.field, "=", ratio)};
  absl::StatusOr<Reproduction> rep = Reproduce(*fifo, at);
  ASSERT_TRUE(rep.ok()) << rep.status();
  std::string said = absl::StrCat("FIFO, service_ratio refitted to ", ratio, ":");
  for (const Cell& cell : rep->cells) {
    absl::StrAppend(&said, " ", cell.variant, "/", cell.metric, " ", cell.modeled, " (", cell.error_pct, "%)");
    if (cell.role == "calibration") {
      EXPECT_LT(std::fabs(cell.error_pct), 6) << cell.metric;
    }
    if (cell.variant == "after") {
      EXPECT_LT(cell.error_pct, -30) << cell.metric;
    }
  }
  std::cout << said << "\n";
}

// The thread's earlier patch changes only flush_pending_writes, on
// raid10d's path. No job sleeps holding its plug, so raid10d never runs and
// the variant is `before` to the event: a prediction from the mechanism,
// with no cell to compare (docs/raid10_unplug.md).
TEST(Raid10ScenarioTest, TheFlushPendingWritesFixRunsAsBefore) {
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(kScenario);
  ASSERT_TRUE(file.ok()) << file.status();
  RunRequest req;
  req.overrides = {"run.warmup=5ms", "run.duration=2ms", "run.batches=2"};
  req.jobs = 2;
  absl::StatusOr<std::vector<viosim::VariantResult>> r = RunVariants(*file, {"before", "flush_wake_up_barrier"}, req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  for (const viosim::VariantResult& v : *r) {
    EXPECT_EQ(Metric(v, "unplugs_from_schedule_per_write"), 0) << v.variant;
    EXPECT_EQ(Metric(v, "raid10d_flushes_per_write"), 0) << v.variant;
  }
  EXPECT_GT(Metric((*r)[0], "write_iops"), 0);
  EXPECT_EQ((*r)[1].events, (*r)[0].events);
  for (const char* m : {"read_iops", "write_iops", "spin_cpu_pct"}) EXPECT_EQ(Metric((*r)[1], m), Metric((*r)[0], m)) << m;
}

}  // namespace
}  // namespace analysis
