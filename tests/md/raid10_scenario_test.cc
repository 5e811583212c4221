// The raid10-unplug case's acceptance, run on its scenario: with one fio
// job the wake-up call makes no difference; without the shared lines'
// costs neither does it with 400 jobs (the mechanism is the lock and its
// line, nothing else); every run reads 70% of its I/Os.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

// The what-if's scale only has a meaning for serialized lines: alone it is
// refused, naming the field, rather than silently ignored.
TEST(Raid10ScenarioTest, ATransferScaleWithoutSerializedLinesIsRefused) {
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(kScenario);
  ASSERT_TRUE(file.ok()) << file.status();
  RunRequest req;
  req.overrides = {"stack.raid10.serialized_transfer_scale=0.5"};
  absl::StatusOr<std::vector<viosim::VariantResult>> r = RunVariants(*file, {"after"}, req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("stack.raid10.serialized_transfer_scale"), std::string::npos)
      << r.status();
}

TEST(Raid10ScenarioTest, WithoutSharedLineCostsBothWakeUpsGiveTheSameIops) {
  const std::vector<viosim::VariantResult> r = RunBoth({"stack.raid10.line_costs=none"});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_LT(RelDiff(Metric(r[1], "iops"), Metric(r[0], "iops")), 0.02);
}

TEST(Raid10ScenarioTest, WithTheSharedLineCostsTheLockBoundsBefore) {
  const std::vector<viosim::VariantResult> r = RunBoth({});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].bound, "wait_barrier_lock");
  EXPECT_EQ(r[1].bound, "cpu");
  EXPECT_GT(Metric(r[1], "iops"), 1.5 * Metric(r[0], "iops"));
}

}  // namespace
}  // namespace analysis
