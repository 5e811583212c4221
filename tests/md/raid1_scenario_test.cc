// The raid1 scenario itself (scenarios/raid1_unplug.textproto) with a
// light fio job (16 jobs: many I/Os in a short run): every run reads 70%
// of its I/Os, no I/O leaves the barrier's fast path, and at v6.4 the wait
// queue's lock is taken once per read and three times per write while the
// guarded wake-ups take it never.
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

constexpr char kScenario[] = "scenarios/raid1_unplug.textproto";

double Metric(const viosim::VariantResult& r, const std::string& name) {
  for (const sim::MetricEstimate& m : r.metrics) {
    if (m.name == name) return m.value;
  }
  ADD_FAILURE() << "no metric " << name;
  return 0;
}

std::vector<viosim::VariantResult> RunBoth() {
  const std::string dir = std::getenv("TEST_TMPDIR") != nullptr ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string job = absl::StrCat(dir, "/sixteen-jobs.fio");
  std::ofstream(job) << "[global]\nioengine=libaio\ndirect=1\nreadwrite=randrw\nrwmixread=70\niodepth=64\n"
                        "size=1G\nruntime=30\ntime_based\nbs=4k\nnumjobs=16\n[job1]\n";
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(kScenario);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return {};
  RunRequest req;
  req.overrides = {absl::StrCat("workload.fio.job_file=", job), "run.warmup=2ms", "run.duration=10ms"};
  req.jobs = 2;
  absl::StatusOr<std::vector<viosim::VariantResult>> r = RunVariants(*file, {"before", "after"}, req);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<viosim::VariantResult>{};
}

TEST(Raid1ScenarioTest, ReadShareFastPathAndWakeUpsPerIo) {
  const std::vector<viosim::VariantResult> r = RunBoth();
  ASSERT_EQ(r.size(), 2u);
  for (const viosim::VariantResult& v : r) {
    SCOPED_TRACE(v.variant);
    const double reads = Metric(v, "read_iops"), iops = Metric(v, "iops");
    ASSERT_GT(iops, 100000);
    EXPECT_NEAR(reads / iops, 0.70, 0.01);
    EXPECT_EQ(Metric(v, "barrier_slow_paths_per_io"), 0);
  }
  // before: 1 acquisition per read, 3 per write. The share here is of fio's
  // reaped completions, the acquisitions per md request: the window's edges
  // and the 16 x 64 requests in flight leave them ~1% apart (the exact
  // counts are raid1_test's).
  const double share = Metric(r[0], "read_iops") / Metric(r[0], "iops");
  EXPECT_NEAR(Metric(r[0], "wait_barrier_lock_per_io"), share + 3 * (1 - share), 0.02);
  EXPECT_EQ(Metric(r[1], "wait_barrier_lock_per_io"), 0);
}

}  // namespace
}  // namespace analysis
