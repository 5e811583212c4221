// NvmeDevice service times: latency per operation (fixed, or with its
// exponential spread: the mean kept, the p99 where the spread puts it, one
// stream per submission queue), transfer at the direction's bandwidth,
// parallel units, shared FIFO transfer, queue-depth limit; and the P4800X
// profile's figures and sources.
#include "models/nvme/nvme_device.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "models/nvme/profile.h"
#include "sim/simulator.h"

namespace models {
namespace {

using namespace sim::literals;

NvmeProfile TestProfile(int units, sim::Time read_latency, sim::Time write_latency, double read_bw,
                        double write_bw, int max_qd) {
  NvmeProfile p;
  p.name = "test";
  p.units.value = units;
  p.read_latency.value = read_latency;
  p.write_latency.value = write_latency;
  p.read_bandwidth.value = read_bw;
  p.write_bandwidth.value = write_bw;
  p.max_queue_depth.value = max_qd;
  return p;
}

struct Harness {
  explicit Harness(const NvmeProfile& p) : dev(sim, p), cq(sim) {}
  NvmeCommand& Add(bool write, uint32_t bytes) {
    cmds.push_back(std::make_unique<NvmeCommand>());
    NvmeCommand& c = *cmds.back();
    c.write = write;
    c.bytes = bytes;
    c.cq = &cq;
    return c;
  }
  // Pops every posted entry, in posting order.
  std::vector<NvmeCommand*> Drain() {
    std::vector<NvmeCommand*> out;
    while (NvmeCommand* c = cq.Pop()) out.push_back(c);
    return out;
  }
  sim::Simulator sim;
  NvmeDevice dev;
  NvmeCompletionQueue cq;
  std::vector<std::unique_ptr<NvmeCommand>> cmds;
};

TEST(NvmeDeviceTest, ServiceTimeIsFixedLatencyPlusSizeOverBandwidth) {
  // 1 GB/s read, 0.5 GB/s write: 1 ns per byte read, 2 ns per byte written.
  Harness h(TestProfile(4, 5_us, 7_us, 1e9, 0.5e9, 64));
  EXPECT_EQ(h.dev.TransferTime(false, 4096), 4096_ns);
  EXPECT_EQ(h.dev.TransferTime(true, 4096), 8192_ns);
  EXPECT_EQ(h.dev.ServiceTime(false, 4096), 5_us + 4096_ns);
  EXPECT_EQ(h.dev.ServiceTime(true, 4096), 7_us + 8192_ns);
  NvmeCommand& r = h.Add(false, 4096);
  NvmeCommand& w = h.Add(true, 4096);
  h.dev.Submit(r);
  h.dev.Submit(w);
  h.sim.RunUntil(1_ms);
  EXPECT_EQ(r.started, 0_ns);
  EXPECT_EQ(r.completed, 5_us + 4096_ns);
  EXPECT_EQ(w.completed, 7_us + 8192_ns);  // its own unit and channel
  EXPECT_EQ(h.dev.stats().reads, 1u);
  EXPECT_EQ(h.dev.stats().writes, 1u);
  EXPECT_EQ(h.dev.stats().bytes_read, 4096u);
  EXPECT_EQ(h.dev.stats().bytes_written, 4096u);
  EXPECT_EQ(h.cq.posted(), 2u);
}

TEST(NvmeDeviceTest, UnitsServeInParallelThenQueue) {
  // Transfers take ~nothing: only the units matter.
  Harness h(TestProfile(2, 10_us, 10_us, 1e18, 1e18, 64));
  NvmeCommand& a = h.Add(false, 512);
  NvmeCommand& b = h.Add(false, 512);
  NvmeCommand& c = h.Add(false, 512);
  h.dev.Submit(a);
  h.dev.Submit(b);
  h.dev.Submit(c);
  h.sim.RunUntil(1_ms);
  EXPECT_EQ(a.completed, 10_us);
  EXPECT_EQ(b.completed, 10_us);
  EXPECT_EQ(c.completed, 20_us);
  std::vector<NvmeCommand*> order = h.Drain();
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[2], &c);
}

TEST(NvmeDeviceTest, TransfersShareTheDirectionsBandwidthInOrder) {
  Harness h(TestProfile(8, 1_us, 1_us, 1e9, 1e9, 64));
  NvmeCommand& a = h.Add(false, 1 << 20);
  NvmeCommand& b = h.Add(false, 1 << 20);
  NvmeCommand& w = h.Add(true, 1 << 20);
  h.dev.Submit(a);
  h.dev.Submit(b);
  h.dev.Submit(w);
  h.sim.RunUntil(1_s);
  const sim::Time x = sim::Time::Picos(int64_t{1 << 20} * 1000);  // 1 MiB at 1 GB/s
  EXPECT_EQ(a.completed, 1_us + x);
  EXPECT_EQ(b.completed, 1_us + x + x);
  // Writes have their own ceiling: transfer first, then the unit.
  EXPECT_EQ(w.completed, x + 1_us);
}

TEST(NvmeDeviceTest, SaturatedReadsRunAtTheBandwidthCeiling) {
  Harness h(TestProfile(4, 4_us, 4_us, 2e9, 2e9, 64));
  const int n = 100;
  for (int i = 0; i < n; ++i) h.dev.Submit(h.Add(false, 128 * 1024));
  h.sim.RunUntil(1_s);
  sim::Time last;
  for (auto& c : h.cmds) last = std::max(last, c->completed);
  // The first transfer starts after one unit latency; then back to back.
  EXPECT_EQ(last, 4_us + h.dev.TransferTime(false, 128 * 1024) * n);
}

TEST(NvmeDeviceTest, QueueDepthLimitHoldsCommandsBack) {
  Harness h(TestProfile(8, 10_us, 10_us, 1e18, 1e18, 2));
  for (int i = 0; i < 5; ++i) h.dev.Submit(h.Add(false, 512));
  EXPECT_EQ(h.dev.outstanding(), 5);
  h.sim.RunUntil(1_ms);
  EXPECT_EQ(h.dev.stats().max_in_device, 2);
  EXPECT_EQ(h.dev.stats().max_outstanding, 5);
  EXPECT_EQ(h.cmds[0]->completed, 10_us);
  EXPECT_EQ(h.cmds[1]->completed, 10_us);
  EXPECT_EQ(h.cmds[2]->started, 10_us);
  EXPECT_EQ(h.cmds[2]->completed, 20_us);
  EXPECT_EQ(h.cmds[4]->completed, 30_us);
  EXPECT_EQ(h.dev.outstanding(), 0);
  EXPECT_EQ(h.Drain().size(), 5u);
}

// The access time (completion - start) of every command when `n` of them,
// on the submission queues `sqs` in turn, arrive at once at a device with
// a unit for each and a link too fast to count (512 B at 1e18 B/s: 0 ps).
std::vector<sim::Time> AccessTimes(NvmeProfile p, int n, bool write, std::vector<int> sqs = {1},
                                   uint64_t seed = 1) {
  p.units.value = n;
  p.max_queue_depth.value = n;
  p.read_bandwidth.value = 1e18;
  p.write_bandwidth.value = 1e18;
  sim::Simulator sim;
  NvmeDevice dev(sim, p, seed);
  NvmeCompletionQueue cq(sim);
  std::vector<NvmeCommand> cmds(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    NvmeCommand& c = cmds[static_cast<size_t>(i)];
    c.write = write;
    c.bytes = 512;
    c.sq = sqs[static_cast<size_t>(i) % sqs.size()];
    c.cq = &cq;
    dev.Submit(c);
  }
  sim.RunUntil(1_s);
  std::vector<sim::Time> out;
  for (const NvmeCommand& c : cmds) out.push_back(c.completed - c.started);
  return out;
}

TEST(NvmeDeviceTest, LatencySpreadKeepsTheMeanAndPutsP99WhereTheExponentialDoes) {
  NvmeProfile p = TestProfile(1, 5_us, 7_us, 1e9, 1e9, 1);
  p.latency_exp_mean.value = 300_ns;
  const int n = 100000;
  for (bool write : {false, true}) {
    SCOPED_TRACE(write ? "write" : "read");
    const double mean_us = write ? 7.0 : 5.0;
    std::vector<sim::Time> t = AccessTimes(p, n, write);
    double sum = 0;
    for (sim::Time x : t) sum += x.ToMicros();
    // The mean is the configured latency: the standard error of the mean of
    // n draws is 0.3 us / sqrt(n) = 0.95 ns; 5 ns is 5 of them.
    EXPECT_NEAR(sum / n, mean_us, 0.005);
    std::sort(t.begin(), t.end());
    // Never below the fixed part, latency - latency_exp_mean.
    EXPECT_GE(t.front(), (write ? 7_us : 5_us) - 300_ns);
    // p99 - mean = (ln 100 - 1) x 0.3 us = 1.0816 us (the derivation of
    // the P4800X profile's spread), within 40 ns (~4 standard errors of
    // the sample p99).
    const double p99_us = t[static_cast<size_t>(0.99 * n) - 1].ToMicros();
    EXPECT_NEAR(p99_us - sum / n, (std::log(100.0) - 1) * 0.3, 0.04);
  }
}

TEST(NvmeDeviceTest, WithoutSpreadEveryAccessTakesExactlyTheLatency) {
  const NvmeProfile p = TestProfile(1, 5_us, 7_us, 1e9, 1e9, 1);  // latency_exp_mean 0
  for (sim::Time x : AccessTimes(p, 1000, false)) ASSERT_EQ(x, 5_us);
  for (sim::Time x : AccessTimes(p, 1000, true)) ASSERT_EQ(x, 7_us);
}

TEST(NvmeDeviceTest, EachSubmissionQueueDrawsFromItsOwnStream) {
  NvmeProfile p = TestProfile(1, 5_us, 5_us, 1e9, 1e9, 1);
  p.latency_exp_mean.value = 300_ns;
  // Queue 1 alone, then interleaved with queue 2: queue 1's commands take
  // the same times in the same order.
  const std::vector<sim::Time> alone = AccessTimes(p, 100, false, {1});
  const std::vector<sim::Time> mixed = AccessTimes(p, 200, false, {1, 2});
  for (size_t i = 0; i < alone.size(); ++i) ASSERT_EQ(alone[i], mixed[2 * i]) << i;
  // Queue 2's stream is another one; so is queue 1's under another seed.
  EXPECT_NE(mixed[0], mixed[1]);
  EXPECT_NE(AccessTimes(p, 100, false, {1}, 2), alone);
  EXPECT_EQ(AccessTimes(p, 100, false, {1}, 1), alone);
}

TEST(NvmeDeviceTest, OptaneP4800XProfileFiguresAndSources) {
  const NvmeProfile p = OptaneP4800X();
  EXPECT_EQ(p.read_latency.value, 4600_ns);
  EXPECT_EQ(p.read_latency.source.kind, SourceKind::kDerived);
  EXPECT_EQ(p.read_bandwidth.source.kind, SourceKind::kMeasured);
  EXPECT_EQ(p.write_bandwidth.source.kind, SourceKind::kMeasured);
  // The spread from AnandTech 11209's QD1 mean 8.9 us and p99 10 us:
  // (10 - 8.9) / (ln 100 - 1) = 0.305 us, taken as 0.3 us.
  EXPECT_EQ(p.latency_exp_mean.value, 300_ns);
  EXPECT_NEAR(p.latency_exp_mean.value.ToMicros(), (10 - 8.9) / (std::log(100.0) - 1), 0.01);
  EXPECT_EQ(p.latency_exp_mean.source.kind, SourceKind::kDerived);
  EXPECT_LE(p.latency_exp_mean.value, std::min(p.read_latency.value, p.write_latency.value));
  for (const Source* s : {&p.units.source, &p.read_latency.source, &p.write_latency.source,
                          &p.latency_exp_mean.source, &p.read_bandwidth.source, &p.write_bandwidth.source,
                          &p.max_queue_depth.source}) {
    EXPECT_FALSE(s->ref.empty());
  }
  sim::Simulator sim;
  NvmeDevice dev(sim, p);
  // 4 KiB read alone, on average: 4.6 us + 4096 B / 2.32 GB/s = 6.366 us.
  EXPECT_NEAR(dev.ServiceTime(false, 4096).ToMicros(), 4.6 + 4096 / 2.32e3, 1e-6);
  // The device's bandwidth-bound 4 KiB ceilings (one 4 KiB transfer at a
  // time on the link) near the QD16 spec: 566k read, 520k write.
  EXPECT_NEAR(1 / dev.TransferTime(false, 4096).ToSeconds(), 566e3, 1e3);
  EXPECT_NEAR(1 / dev.TransferTime(true, 4096).ToSeconds(), 520e3, 1e3);
}

}  // namespace
}  // namespace models
