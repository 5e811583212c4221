// NvmeDevice service times: fixed latency per operation, transfer at the
// direction's bandwidth, parallel units, shared FIFO transfer, queue-depth
// limit; and the P4800X profile's figures and sources.
#include "models/nvme/nvme_device.h"

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

TEST(NvmeDeviceTest, OptaneP4800XProfileFiguresAndSources) {
  const NvmeProfile p = OptaneP4800X();
  EXPECT_EQ(p.read_latency.value, 4600_ns);
  EXPECT_EQ(p.read_latency.source.kind, SourceKind::kDerived);
  EXPECT_EQ(p.read_bandwidth.source.kind, SourceKind::kMeasured);
  EXPECT_EQ(p.write_bandwidth.source.kind, SourceKind::kMeasured);
  for (const Source* s : {&p.units.source, &p.read_latency.source, &p.write_latency.source,
                          &p.read_bandwidth.source, &p.write_bandwidth.source, &p.max_queue_depth.source}) {
    EXPECT_FALSE(s->ref.empty());
  }
  sim::Simulator sim;
  NvmeDevice dev(sim, p);
  // 4 KiB read alone: 4.6 us + 4096 B / 2.32 GB/s = 6.366 us.
  EXPECT_NEAR(dev.ServiceTime(false, 4096).ToMicros(), 4.6 + 4096 / 2.32e3, 1e-6);
  // Bandwidth-bound 4 KiB ceilings near the QD16 spec: 566k read, 520k write.
  EXPECT_NEAR(2.32e9 / 4096, 566e3, 1e3);
  EXPECT_NEAR(2.13e9 / 4096, 520e3, 1e3);
}

}  // namespace
}  // namespace models
