// The bare-metal blk-mq + NVMe stack against what must hold of it:
//   (a) a synchronous issuer at depth 1 gets 1 / (device time + CPU path);
//   (b) large blocks at depth saturate at bandwidth / block size;
//   (c) Little's law at depths 1, 4, 16, 64;
//   (d) never more requests at the device than tags;
//   (e) polled completion never takes the interrupt path and keeps its CPU
//       100% busy;
//   (f) two runs are identical.
#include "models/block/blk_mq.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/block/host_costs.h"
#include "models/block/nvme_queue.h"
#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "models/nvme/nvme_device.h"
#include "models/nvme/profile.h"
#include "sim/simulator.h"
#include "tests/block/test_issuer.h"
#include "tests/cpu/machine.h"

namespace models {
namespace {

using namespace sim::literals;
using testing_issuer::Issuer;
using testing_issuer::IssuerConfig;

struct Rig {
  explicit Rig(int ncpus, const BlkMqParams& params = BlkMqParams(), const NvmeProfile& profile = OptaneP4800X())
      : costs(XeonHostCosts()), m(ncpus, costs.sched()), sim(m.sim), cpus(m.cpus), device(sim, profile) {
    stack = std::make_unique<BlkMq>(sim, m.ptrs(), device, costs, params);
  }
  Issuer& AddIssuer(int cpu, const IssuerConfig& cfg) {
    issuers.push_back(std::make_unique<Issuer>(sim, m.sched, m.cpu(cpu), *stack, costs.syscall.value, cfg,
                                               "issuer" + std::to_string(issuers.size())));
    issuers.back()->Start();
    return *issuers.back();
  }
  // Warm-up, reset, then the measurement window.
  void Measure(sim::Time warmup, sim::Time window) {
    sim.RunUntil(sim.Now() + warmup);
    stack->ResetStats();
    for (auto& c : cpus) c->ResetStats();
    for (auto& i : issuers) i->ResetStats();
    sim.RunUntil(sim.Now() + window);
  }

  HostCosts costs;
  testbed::Machine m;
  sim::Simulator& sim;
  std::vector<std::unique_ptr<Cpu>>& cpus;
  NvmeDevice device;
  std::unique_ptr<BlkMq> stack;
  std::vector<std::unique_ptr<Issuer>> issuers;
};

// ---- (a) ----

struct SyncCase {
  bool write;
  bool polled;
};

class SyncDepthOne : public ::testing::TestWithParam<SyncCase> {};

TEST_P(SyncDepthOne, IopsIsOneOverDeviceLatencyPlusPerIoCpuCosts) {
  const SyncCase c = GetParam();
  // The profile as it is (random access latency, mean unchanged), and with
  // its spread off (every access takes exactly the latency).
  NvmeProfile fixed = OptaneP4800X();
  fixed.latency_exp_mean.value = sim::Time::Zero();
  for (const NvmeProfile& profile : {OptaneP4800X(), fixed}) {
    SCOPED_TRACE(profile.latency_exp_mean.value.ToMicros());
    Rig rig(1, BlkMqParams(), profile);
    IssuerConfig cfg;
    cfg.write = c.write;
    cfg.polled = c.polled;
    Issuer& io = rig.AddIssuer(0, cfg);
    rig.Measure(1_ms, 50_ms);

    const HostCosts& k = rig.costs;
    // The critical path of one I/O, step by step. The switch out to idle
    // runs while the device works, off the path.
    sim::Time t = k.syscall.value + k.blk_mq_submit_bio.value + k.nvme_queue_rq.value + k.doorbell_write.value +
                  rig.device.ServiceTime(c.write, 4096);
    if (c.polled) {
      t += k.poll_reap.value + k.complete_request.value;
    } else {
      t += k.irq_entry_exit.value + k.nvme_irq.value + k.complete_request.value + k.try_to_wake_up.value +
           k.context_switch.value;
    }
    const double expected = 1.0 / t.ToSeconds();
    EXPECT_NEAR(io.Iops(), expected, 0.005 * expected) << "per-I/O time " << t.ToMicros() << " us";
    // Latency runs from the submission to the CompletionSink: the critical
    // path less the syscall and, with interrupts, less the wakeup and the
    // switch back, which follow the sink. Without the spread every I/O takes
    // exactly that; with it, the mean of n I/Os is within 5 standard errors
    // (latency_exp_mean / sqrt(n)) of it.
    sim::Time latency = t - k.syscall.value;
    if (!c.polled) latency -= k.try_to_wake_up.value + k.context_switch.value;
    const double n = io.Iops() * 0.050;
    const double tolerance = 1e-12 + 5 * profile.latency_exp_mean.value.ToSeconds() / std::sqrt(n);
    EXPECT_NEAR(io.MeanLatencySeconds(), latency.ToSeconds(), tolerance);
    RecordProperty("iops", std::to_string(io.Iops()));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, SyncDepthOne,
                         ::testing::Values(SyncCase{false, false}, SyncCase{true, false}, SyncCase{false, true},
                                           SyncCase{true, true}),
                         [](const ::testing::TestParamInfo<SyncCase>& info) {
                           return std::string(info.param.write ? "Write" : "Read") +
                                  (info.param.polled ? "Polled" : "Irq");
                         });

// ---- (b) ----

class LargeBlocks : public ::testing::TestWithParam<bool> {};

TEST_P(LargeBlocks, SaturateAtBandwidthOverBlockSize) {
  const bool write = GetParam();
  Rig rig(1);
  IssuerConfig cfg;
  cfg.sync = false;
  cfg.depth = 32;
  cfg.bytes = 128 * 1024;
  cfg.write = write;
  Issuer& io = rig.AddIssuer(0, cfg);
  rig.Measure(2_ms, 100_ms);
  const NvmeProfile& p = rig.device.profile();
  const double bw = write ? p.write_bandwidth.value : p.read_bandwidth.value;
  const double expected = bw / cfg.bytes;
  EXPECT_NEAR(io.Iops(), expected, 0.01 * expected);
  EXPECT_NEAR(io.Iops() * cfg.bytes, bw, 0.01 * bw);
}

INSTANTIATE_TEST_SUITE_P(Directions, LargeBlocks, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "Write" : "Read");
                         });

// ---- (c) ----

class LittlesLaw : public ::testing::TestWithParam<int> {};

TEST_P(LittlesLaw, IopsTimesMeanLatencyIsIosInFlight) {
  const int depth = GetParam();
  Rig rig(1);
  IssuerConfig cfg;
  cfg.sync = false;
  cfg.depth = depth;
  Issuer& io = rig.AddIssuer(0, cfg);
  rig.Measure(2_ms, 100_ms);
  const double l = io.MeanInFlight();
  const double lambda_w = io.Iops() * io.MeanLatencySeconds();
  EXPECT_NEAR(lambda_w, l, 0.01 * l) << "IOPS " << io.Iops() << ", mean latency "
                                     << io.MeanLatencySeconds() * 1e6 << " us";
  EXPECT_LE(l, depth);
  EXPECT_LE(io.max_in_flight(), depth);
}

INSTANTIATE_TEST_SUITE_P(Depths, LittlesLaw, ::testing::Values(1, 4, 16, 64));

// ---- (d) ----

TEST(BlkMqTest, NeverMoreRequestsAtTheDeviceThanTags) {
  BlkMqParams params;
  params.queue_depth = 4;
  Rig rig(1, params);
  IssuerConfig cfg;
  cfg.sync = false;
  cfg.depth = 16;
  Issuer& io = rig.AddIssuer(0, cfg);
  rig.sim.RunUntil(20_ms);
  EXPECT_GT(io.completions(), 1000u);
  // The tags do fill, and never overflow.
  EXPECT_EQ(rig.device.stats().max_outstanding, params.queue_depth);
  EXPECT_EQ(rig.stack->stats().max_in_flight, params.queue_depth);
  EXPECT_GT(rig.stack->stats().tag_waits, 0u);
  // The issuer's one task sleeps in blk_mq_get_tag with the I/O after the
  // last tag: every tag is held, one more I/O waits for one.
  EXPECT_EQ(io.max_in_flight(), params.queue_depth + 1);
}

TEST(BlkMqTest, PluggedBatchRingsOneDoorbellForAllItsCommands) {
  Rig rig(1);
  std::vector<BlockRequest> rqs(4);
  struct Sink : CompletionSink {
    int n = 0;
    sim::Task Complete(BlockRequest&, Cpu&) override {
      ++n;
      co_return;
    }
  } sink;
  for (auto& rq : rqs) {
    rq.bytes = 4096;
    rq.sink = &sink;
  }
  // One task submits the batch; it exits without waiting for completions.
  auto batch = [](Rig& r, std::vector<BlockRequest>& v, sim::Time* start) -> sim::Task {
    *start = r.sim.Now();
    for (size_t i = 0; i < v.size(); ++i) co_await r.stack->Submit(r.m.cpu(0), v[i], i + 1 == v.size());
  };
  Task submitter("submitter", {0});
  sim::Time start = sim::Time::Max();
  rig.m.sched.Start(submitter, batch(rig, rqs, &start));
  rig.sim.RunUntil(1_ms);
  EXPECT_EQ(sink.n, static_cast<int>(rqs.size()));
  EXPECT_EQ(rig.stack->stats().doorbells, 1u);
  // The device saw every command at the doorbell: after one submit path
  // each and one doorbell write.
  const HostCosts& k = rig.costs;
  const sim::Time ring =
      (k.blk_mq_submit_bio.value + k.nvme_queue_rq.value) * static_cast<int64_t>(rqs.size()) + k.doorbell_write.value;
  for (auto& rq : rqs) EXPECT_EQ(rq.device_start, start + ring);
  EXPECT_EQ(rig.stack->stats().irq_completions, rqs.size());
}

TEST(BlkMqTest, InterruptsRunOnTheSubmittingCpu) {
  Rig rig(3);
  IssuerConfig cfg;
  rig.AddIssuer(0, cfg);
  cfg.seed = 2;
  rig.AddIssuer(1, cfg);
  rig.Measure(1_ms, 10_ms);
  EXPECT_GT(rig.cpus[0]->TimeIn(CpuTime::kIrq), sim::Time::Zero());
  EXPECT_GT(rig.cpus[1]->TimeIn(CpuTime::kIrq), sim::Time::Zero());
  EXPECT_EQ(rig.cpus[2]->BusyTime(), sim::Time::Zero());
  // Two QD1 issuers do not contend for the device: each gets the QD1 rate.
  EXPECT_NEAR(rig.issuers[0]->Iops(), rig.issuers[1]->Iops(), 0.002 * rig.issuers[0]->Iops());
}

// ---- (e) ----

TEST(BlkMqTest, PolledCompletionNeverTakesTheInterruptPathAndKeepsTheCpuBusy) {
  Rig rig(2);
  IssuerConfig sync_cfg;
  sync_cfg.polled = true;
  rig.AddIssuer(0, sync_cfg);
  IssuerConfig async_cfg;
  async_cfg.polled = true;
  async_cfg.sync = false;
  async_cfg.depth = 8;
  async_cfg.seed = 3;
  rig.AddIssuer(1, async_cfg);
  rig.Measure(1_ms, 20_ms);
  const BlkMqStats& s = rig.stack->stats();
  EXPECT_GT(s.completed, 10000u);
  EXPECT_EQ(s.irqs, 0u);
  EXPECT_EQ(s.irq_completions, 0u);
  EXPECT_EQ(s.polled_completions, s.completed);
  for (auto& cpu : rig.cpus) {
    EXPECT_EQ(cpu->TimeIn(CpuTime::kIrq), sim::Time::Zero());
    EXPECT_EQ(cpu->TimeIn(CpuTime::kIdle), sim::Time::Zero());
    EXPECT_DOUBLE_EQ(cpu->BusyShare(), 1.0);
    EXPECT_GT(cpu->TimeIn(CpuTime::kPoll), sim::Time::Zero());
  }
  // Neither issuer ever sleeps.
  for (auto& issuer : rig.issuers) EXPECT_EQ(issuer->task().nvcsw(), 0u);
}

// Runs on to the first instant at which `cpu` is idle: at QD1 with
// interrupts, the I/O is at the device and no handler is half done.
void RunToIdle(Rig& rig, const Cpu& cpu) {
  while (!cpu.idle()) rig.sim.RunUntil(rig.sim.Now() + 100_ns);
}

TEST(BlkMqTest, InterruptCompletionLeavesTheCpuIdleWhileTheDeviceWorks) {
  Rig rig(1);
  rig.AddIssuer(0, IssuerConfig());
  // The window starts and ends with the CPU idle, so that it cuts no
  // handler between its interrupt and its completion.
  rig.sim.RunUntil(1_ms);
  RunToIdle(rig, *rig.cpus[0]);
  rig.stack->ResetStats();
  rig.cpus[0]->ResetStats();
  rig.sim.RunUntil(rig.sim.Now() + 20_ms);
  RunToIdle(rig, *rig.cpus[0]);
  const BlkMqStats& s = rig.stack->stats();
  EXPECT_GT(s.completed, 1000u);
  EXPECT_EQ(s.polled_completions, 0u);
  EXPECT_EQ(s.irq_completions, s.completed);
  EXPECT_EQ(s.irqs, s.completed);  // QD1: one interrupt per I/O
  EXPECT_LT(rig.cpus[0]->BusyShare(), 0.5);
  EXPECT_EQ(rig.cpus[0]->TimeIn(CpuTime::kPoll), sim::Time::Zero());
}

TEST(BlkMqTest, PollingWithoutPollQueuesSpinsUntilTheInterruptCompletes) {
  BlkMqParams params;
  params.poll_queues = false;
  Rig rig(1, params);
  IssuerConfig cfg;
  cfg.polled = true;
  rig.AddIssuer(0, cfg);
  rig.Measure(1_ms, 10_ms);
  const BlkMqStats& s = rig.stack->stats();
  EXPECT_GT(s.completed, 0u);
  EXPECT_EQ(s.irq_completions, s.completed);
  EXPECT_DOUBLE_EQ(rig.cpus[0]->BusyShare(), 1.0);
}

// ---- (f) ----

struct Fingerprint {
  uint64_t events;
  uint64_t completed;
  uint64_t irqs;
  uint64_t doorbells;
  double latency_sum0;
  double latency_sum1;
  int64_t busy0;
  int64_t busy1;
  uint64_t bytes_written;
  bool operator==(const Fingerprint&) const = default;
};

Fingerprint RunMixed() {
  Rig rig(2);
  IssuerConfig writer;
  writer.sync = false;
  writer.depth = 8;
  writer.bytes = 16384;
  writer.write = true;
  rig.AddIssuer(0, writer);
  IssuerConfig reader;
  reader.polled = true;
  reader.seed = 7;
  rig.AddIssuer(1, reader);
  rig.Measure(1_ms, 20_ms);
  return Fingerprint{rig.sim.events(),
                     rig.stack->stats().completed,
                     rig.stack->stats().irqs,
                     rig.stack->stats().doorbells,
                     rig.issuers[0]->latency_sum_ps(),
                     rig.issuers[1]->latency_sum_ps(),
                     rig.cpus[0]->BusyTime().ps(),
                     rig.cpus[1]->BusyTime().ps(),
                     rig.device.stats().bytes_written};
}

TEST(BlkMqTest, TwoRunsAreIdentical) {
  const Fingerprint a = RunMixed();
  const Fingerprint b = RunMixed();
  EXPECT_GT(a.completed, 1000u);
  EXPECT_TRUE(a == b);
}

}  // namespace
}  // namespace models
