// Which resource bounds a blk-poll row (VariantResult::bound), classified
// from the simulated busy shares: the 128k rows by the device's bandwidth,
// the 4k rows by per-I/O latency (with hipri=1 the vCPUs are busy, but
// polling). The same rows with a resource changed by --set move to another
// class, so the classification follows the counters, not the row's name.
// And the device's latency spread: with it, completion latencies spread out
// (clat p99 above the mean); with latency_exp_mean 0 they collapse into
// one histogram bucket as they did before it.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/builder.h"
#include "scenarios/fio_builder.h"
#include "scenarios/loader.h"

namespace viosim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

VariantResult RunRow(const std::string& variant, const std::vector<std::string>& overrides = {}) {
  absl::StatusOr<ScenarioFile> file = LoadScenarioFile("scenarios/virtio_blk_poll.textproto");
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return {};
  absl::StatusOr<Scenario> s = ResolveVariant(*file, variant, overrides);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return {};
  RunOptions options;
  options.base_dir = "scenarios";
  absl::StatusOr<VariantResult> r = RunScenario(*s, variant, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : VariantResult{};
}

double Metric(const VariantResult& r, const std::string& name) {
  for (const auto& m : r.metrics) {
    if (m.name == name) return m.value;
  }
  ADD_FAILURE() << "no metric " << name;
  return 0;
}

TEST(BlkPollSpreadTest, ClatP99IsAboveTheMeanWithTheDeviceSpread) {
  const VariantResult r = RunRow("randread-4k-hipri0");
  EXPECT_GT(Metric(r, "clat_p99_us"), Metric(r, "clat_mean_us"));
  // Without the spread every I/O takes the same path: p99 is the mean's
  // own histogram bucket, no higher than the mean.
  const VariantResult fixed = RunRow("randread-4k-hipri0", {"stack.virtio_blk_mq.latency_exp_mean.value=0ns"});
  EXPECT_LE(Metric(fixed, "clat_p99_us"), Metric(fixed, "clat_mean_us") + 0.1);
}

TEST(BlkPollBoundTest, Row128kIsBoundByDeviceBandwidth) {
  const VariantResult r = RunRow("read-128k-hipri0");
  EXPECT_EQ(r.bound, "device_bandwidth") << r.bound_detail;
  EXPECT_GE(Metric(r, "device_util_pct"), kSaturatedPct);
  EXPECT_THAT(r.bound_detail, HasSubstr("device bandwidth busy"));
}

TEST(BlkPollBoundTest, Row4kIsBoundByPerIoLatency) {
  const VariantResult r = RunRow("randread-4k-hipri0");
  EXPECT_EQ(r.bound, "per_io_latency") << r.bound_detail;
  EXPECT_THAT(r.bound_detail, Not(HasSubstr("polling")));
  EXPECT_LT(Metric(r, "device_util_pct"), kSaturatedPct);
  EXPECT_LT(Metric(r, "iothread_util_pct"), kSaturatedPct);
}

TEST(BlkPollBoundTest, PolledRow4kIsLatencyBoundWithBusyPollingVcpus) {
  const VariantResult r = RunRow("randread-4k-hipri1");
  EXPECT_EQ(r.bound, "per_io_latency") << r.bound_detail;
  EXPECT_THAT(r.bound_detail, HasSubstr("vCPUs busy polling"));
  EXPECT_GE(Metric(r, "vcpu_util_pct"), kSaturatedPct);
  EXPECT_LT(Metric(r, "vcpu_util_pct") - Metric(r, "vcpu_poll_pct"), kSaturatedPct);
}

TEST(BlkPollBoundTest, ClassificationFollowsTheCounters) {
  // Ten times the bandwidth: the 128k row is no longer bandwidth-bound.
  const VariantResult fast = RunRow("read-128k-hipri0", {"stack.virtio_blk_mq.read_bandwidth=2.315e10"});
  EXPECT_EQ(fast.bound, "per_io_latency") << fast.bound_detail;
  // A slow IOThread (100us per submission) saturates it on the 4k row.
  const VariantResult slow = RunRow("randread-4k-hipri0", {"stack.virtio_blk_mq.iothread_submit.value=100us"});
  EXPECT_EQ(slow.bound, "iothread") << slow.bound_detail;
}

TEST(BlkPollBoundTest, ThresholdAndBusiestResource) {
  EXPECT_EQ(ClassifyBound({94.9, 10, 10, 0}).resource, "per_io_latency");
  EXPECT_EQ(ClassifyBound({95, 10, 10, 0}).resource, "device_bandwidth");
  EXPECT_EQ(ClassifyBound({96, 99, 10, 0}).resource, "iothread");
  EXPECT_EQ(ClassifyBound({10, 10, 97, 3}).resource, "vcpu");
  const Bound polling = ClassifyBound({30, 40, 20, 80});
  EXPECT_EQ(polling.resource, "per_io_latency");
  EXPECT_THAT(polling.detail, HasSubstr("vCPUs busy polling"));
}

// Does polling pay? Per I/O it costs more CPU: the polling vCPU spins where
// the interrupt path would idle. The host's time is the guest's plus the
// IOThread's; the rates are the inverses of the per-I/O times.
TEST(BlkPollEfficiencyTest, PollingCostsMoreCpuPerIo) {
  const VariantResult irq = RunRow("randread-4k-hipri0");
  const VariantResult poll = RunRow("randread-4k-hipri1");
  for (const VariantResult* r : {&irq, &poll}) {
    const double host = Metric(*r, "host_cpu_us_per_io"), guest = Metric(*r, "guest_cpu_us_per_io");
    EXPECT_GT(host, guest);
    EXPECT_NEAR(Metric(*r, "iops_per_host_cpu_s") * host, 1e6, 1e6 * 1e-6);
    EXPECT_NEAR(Metric(*r, "iops_per_guest_cpu_s") * guest, 1e6, 1e6 * 1e-6);
    EXPECT_NEAR(Metric(*r, "usr_cpu_us_per_io") + Metric(*r, "sys_cpu_us_per_io"), guest, guest * 1e-9);
  }
  EXPECT_GT(Metric(poll, "guest_cpu_us_per_io"), 2 * Metric(irq, "guest_cpu_us_per_io"));
  EXPECT_LT(Metric(poll, "iops_per_host_cpu_s"), Metric(irq, "iops_per_host_cpu_s"));
}

}  // namespace
}  // namespace viosim
