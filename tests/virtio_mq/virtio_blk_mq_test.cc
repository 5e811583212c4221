// The blk-poll stack's two completion paths: a polled request never takes
// the interrupt path, and a vq's interrupts are off exactly while it has
// polled requests in flight. Its device's access latency: the configured
// mean and exponential tail with latency_exp_mean, exact without it.
#include "models/virtio/guest/virtio_blk_mq.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/block/block_stack.h"
#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "models/kvm/kvm.h"
#include "models/nvme/link_device.h"
#include "models/qemu/iothread_blk.h"
#include "models/qemu/virtio_transport.h"
#include "models/virtio/mq/shared_vq.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "tests/cpu/machine.h"

namespace models {
namespace {

using sim::Time;

// The stack's costs, by the part that pays them.
struct Costs {
  VirtioBlkMqCosts guest;
  IoThreadBlkCosts iothread;
  NvmeLinkCosts device;
};

Costs TestCosts() {
  Costs c;
  c.guest.submit.value = Time::Nanos(1000);
  c.guest.per_page.value = Time::Nanos(100);
  c.guest.add_sgs.value = Time::Nanos(300);
  c.guest.kick_prepare.value = Time::Nanos(100);
  c.guest.irq_entry.value = Time::Nanos(500);
  c.guest.complete.value = Time::Nanos(500);
  c.guest.poll_detect.value = Time::Nanos(100);
  c.guest.lock_handoff.value = Time::Nanos(50);
  c.iothread.iothread_wakeup.value = Time::Micros(2);
  c.iothread.iothread_submit.value = Time::Micros(1);
  c.iothread.iothread_complete.value = Time::Micros(1);
  c.iothread.host_irq.value = Time::Micros(1);
  c.iothread.poll_window.value = Time::Micros(32);
  c.device.read_latency.value = Time::Micros(6);
  c.device.write_latency.value = Time::Micros(8);
  c.device.read_bandwidth.value = 2.3e9;
  c.device.write_bandwidth.value = 2.1e9;
  return c;
}

// A task issuing requests, and whether it sleeps for a completion.
struct Issuer {
  Issuer(const std::string& name, int vcpu) : task(name, {vcpu}) {}
  Task task;
  bool sleeping = false;
};

// Counts completions and wakes the issuer when it sleeps.
struct Sink : CompletionSink {
  int completions = 0;
  sim::Task Complete(BlockRequest& rq, Cpu& cpu) override {
    ++completions;
    Issuer& issuer = *static_cast<Issuer*>(rq.issuer);
    if (issuer.sleeping) co_await cpu.scheduler()->TryToWakeUp(issuer.task, cpu);
  }
};

// The stack as scenarios/stacks/virtio_blk_mq.cc wires it: a ring per
// vCPU shared by the driver and the IOThread, the device's latency streams
// seeded with 1, virtio-pci between them.
struct Rig {
  explicit Rig(const Costs& costs = TestCosts())
      : m(4, SchedCosts(), "vcpu"), sim(m.sim), ptrs(m.ptrs()), kvm(sim, KvmCostsOf()) {
    VirtqueueFeatures f;
    f.event_idx = true;
    f.indirect_desc = true;
    std::vector<SharedVq*> vqs;
    for (size_t i = 0; i < ptrs.size(); ++i) {
      rings.push_back(std::make_unique<SharedVq>(sim, 256, f));
      vqs.push_back(rings.back().get());
    }
    device = std::make_unique<NvmeLinkDevice>(sim, costs.device, static_cast<int>(ptrs.size()), /*seed=*/1,
                                              "virtio_blk_mq.device.vq");
    iothread = std::make_unique<IoThreadBlk>(sim, vqs, *device, costs.iothread);
    pci = std::make_unique<VirtioPciMq>(sim, kvm, *iothread);
    blk = std::make_unique<VirtioBlkMq>(sim, ptrs, vqs, *pci, costs.guest);
    iothread->Start();
  }
  static KvmCosts KvmCostsOf() {
    KvmCosts k;
    k.ioeventfd = true;
    k.mmio_exit_kernel.value = Time::Nanos(1200);
    k.irq_inject.value = Time::Nanos(1500);
    k.irq_kick_exit.value = Time::Nanos(1000);
    return k;
  }
  testbed::Machine m;
  sim::Simulator& sim;
  std::vector<Cpu*> ptrs;
  Kvm kvm;
  std::vector<std::unique_ptr<SharedVq>> rings;
  std::unique_ptr<NvmeLinkDevice> device;
  std::unique_ptr<IoThreadBlk> iothread;
  std::unique_ptr<VirtioPciMq> pci;
  std::unique_ptr<VirtioBlkMq> blk;
  Sink sink;
  std::vector<std::unique_ptr<Issuer>> issuers;
};

sim::Task IssueBody(Rig& rig, Issuer& issuer, BlockRequest& rq, int n, bool polled) {
  for (int i = 0; i < n; ++i) {
    Cpu& cpu = *issuer.task.cpu();
    rq.polled = polled;
    co_await rig.blk->Submit(cpu, rq, true);
    if (polled) {
      co_await rig.blk->Poll(cpu, rq);
    } else {
      issuer.sleeping = true;
      co_await testbed::SleepUntil(issuer.task, [&rq] { return rq.done; });
      issuer.sleeping = false;
    }
  }
}

// Submits `n` requests one after the other from a task on vCPU `vcpu`
// (sync: each completes before the next), polling or sleeping until the
// interrupt's completion wakes it.
void Issue(Rig& rig, int vcpu, BlockRequest& rq, int n, bool polled) {
  rig.issuers.push_back(std::make_unique<Issuer>("issuer" + std::to_string(rig.issuers.size()), vcpu));
  Issuer& issuer = *rig.issuers.back();
  rq.issuer = &issuer;
  rig.m.sched.Start(issuer.task, IssueBody(rig, issuer, rq, n, polled));
}

// Samples vq `q`'s callback state every 100ns while `rq` is in flight.
sim::Task Watch(Rig& rig, int q, BlockRequest& rq, int* off_in_flight, int* on_in_flight) {
  for (int i = 0; i < 2000; ++i) {
    co_await rig.sim.Delay(Time::Nanos(100));
    if (rig.blk->num_hipri(q) > 0) {
      if (rig.blk->cb_enabled(q)) {
        ++*on_in_flight;
      } else {
        ++*off_in_flight;
      }
    }
    (void)rq;
  }
}

TEST(VirtioBlkMqTest, PolledCompletionNeverTakesTheInterruptPath) {
  Rig rig;
  BlockRequest rq;
  rq.bytes = 4096;
  rq.sink = &rig.sink;
  Issue(rig, 0, rq, 20, /*polled=*/true);
  rig.sim.RunUntil(Time::Millis(5));
  EXPECT_EQ(rig.sink.completions, 20);
  EXPECT_EQ(rig.blk->stats().polled_completions, 20u);
  EXPECT_EQ(rig.blk->stats().irq_completions, 0u);
  EXPECT_EQ(rig.blk->stats().interrupts, 0u);
  EXPECT_EQ(rig.blk->stats().spurious_interrupts, 0u);
  EXPECT_EQ(rig.kvm.stats().exits[static_cast<int>(ExitKind::kIrqKick)], 0u);
  // The issuing vCPU polled, and took no interrupt.
  EXPECT_GT(rig.m.cpu(0).TimeIn(CpuTime::kPoll), Time::Zero());
  EXPECT_EQ(rig.m.cpu(0).TimeIn(CpuTime::kIrq), Time::Zero());
  EXPECT_EQ(rig.m.cpu(0).irqs_taken(), 0u);
}

TEST(VirtioBlkMqTest, InterruptCompletionTakesOneInterruptPerRequest) {
  Rig rig;
  BlockRequest rq;
  rq.bytes = 4096;
  rq.sink = &rig.sink;
  Issue(rig, 1, rq, 20, /*polled=*/false);
  rig.sim.RunUntil(Time::Millis(5));
  EXPECT_EQ(rig.sink.completions, 20);
  EXPECT_EQ(rig.blk->stats().irq_completions, 20u);
  EXPECT_EQ(rig.blk->stats().polled_completions, 0u);
  EXPECT_EQ(rig.blk->stats().interrupts, 20u);
  EXPECT_EQ(rig.m.cpu(1).irqs_taken(), 20u);
  // The task slept for each: the vCPU never polled.
  EXPECT_EQ(rig.m.cpu(1).TimeIn(CpuTime::kPoll), Time::Zero());
  EXPECT_EQ(rig.issuers[0]->task.nvcsw(), 20u);
  // Without a latency spread (TestCosts) each request's device time is
  // exactly the read latency plus its transfer at the read bandwidth: one
  // request at a time never waits for the link.
  const Costs c = TestCosts();
  const double device_ns =
      c.device.read_latency.value.ToSeconds() * 1e9 + rq.bytes / c.device.read_bandwidth.value * 1e9;
  EXPECT_NEAR(rig.blk->stats().device_ns / 20, device_ns, 0.01);
}

// QEMU's adaptive polling: with short waits the IOThread's poll time grows
// (0, 4, 8, 16 ... up to 32us) and then catches every event without an eventfd
// wakeup; when every wait is longer than poll-max-ns the poll time keeps
// falling back to 0 and each wait ends in a wakeup.
TEST(VirtioBlkMqTest, IothreadPollTimeGrowsOnShortWaitsAndResetsOnLongOnes) {
  for (const bool slow : {false, true}) {
    Costs c = TestCosts();
    if (slow) c.device.read_latency.value = Time::Micros(100);  // every device wait > 32us
    Rig rig(c);
    BlockRequest rq;
    rq.bytes = 4096;
    rq.sink = &rig.sink;
    Issue(rig, 0, rq, 50, /*polled=*/true);
    rig.sim.RunUntil(Time::Millis(20));
    ASSERT_EQ(rig.sink.completions, 50) << slow;
    if (slow) {
      EXPECT_GE(rig.iothread->stats().wakeups, 50u);
    } else {
      EXPECT_LE(rig.iothread->stats().wakeups, 5u);
      // It grows only while waits outlast it: here to 16us, as no wait
      // between events is longer.
      EXPECT_GE(rig.iothread->stats().poll_grows, 1u);
      EXPECT_LE(rig.iothread->stats().poll_grows, 4u);
    }
  }
}

TEST(VirtioBlkMqTest, InterruptsOffWhilePolledRequestsInFlightAndBackOnAfter) {
  Rig rig;
  BlockRequest rq;
  rq.bytes = 4096;
  rq.sink = &rig.sink;
  int off = 0, on = 0;
  EXPECT_TRUE(rig.blk->cb_enabled(2));
  Issue(rig, 2, rq, 5, /*polled=*/true);
  rig.sim.Spawn(Watch(rig, 2, rq, &off, &on));
  rig.sim.RunUntil(Time::Millis(1));
  EXPECT_EQ(rig.sink.completions, 5);
  EXPECT_GT(off, 0);
  EXPECT_EQ(on, 0);
  // Every polled request has been reaped: interrupts are on again, and the
  // other vqs were never touched.
  EXPECT_EQ(rig.blk->num_hipri(2), 0);
  EXPECT_TRUE(rig.blk->cb_enabled(2));
  EXPECT_EQ(rig.blk->stats().cb_disables, 5u);
  EXPECT_EQ(rig.blk->stats().cb_enables, 5u);
  for (int q : {0, 1, 3}) EXPECT_TRUE(rig.blk->cb_enabled(q));
  // A request without HIPRI afterwards completes by interrupt.
  BlockRequest lo;
  lo.bytes = 4096;
  lo.sink = &rig.sink;
  Issue(rig, 2, lo, 1, /*polled=*/false);
  rig.sim.RunUntil(Time::Millis(2));
  EXPECT_EQ(rig.blk->stats().interrupts, 1u);
  EXPECT_EQ(rig.blk->stats().irq_completions, 1u);
}

TEST(VirtioBlkMqTest, DeviceLatencySpreadKeepsTheMeanAndPutsP99WhereTheExponentialDoes) {
  Costs c = TestCosts();
  c.device.latency_exp_mean.value = Time::Nanos(300);
  const double spread_us = c.device.latency_exp_mean.value.ToMicros();
  Rig rig(c);
  const int n = 100000;
  for (bool write : {false, true}) {
    SCOPED_TRACE(write ? "write" : "read");
    const Time latency = write ? c.device.write_latency.value : c.device.read_latency.value;
    std::vector<Time> t;
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      t.push_back(rig.device->Access(i % 4, write));
      sum += t.back().ToMicros();
    }
    // The mean within 5 standard errors (spread / sqrt(n)).
    EXPECT_NEAR(sum / n, latency.ToMicros(), 5 * spread_us / std::sqrt(n));
    std::sort(t.begin(), t.end());
    EXPECT_GE(t.front(), latency - c.device.latency_exp_mean.value);
    // p99 - mean of an exponential = (ln 100 - 1) x its mean, within 40 ns.
    EXPECT_NEAR(t[static_cast<size_t>(0.99 * n) - 1].ToMicros() - sum / n, (std::log(100.0) - 1) * spread_us, 0.04);
  }
}

TEST(VirtioBlkMqTest, WithoutSpreadEveryDeviceAccessTakesExactlyTheLatency) {
  const Costs c = TestCosts();  // latency_exp_mean 0
  Rig rig(c);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(rig.device->Access(i % 4, false), c.device.read_latency.value);
    ASSERT_EQ(rig.device->Access(i % 4, true), c.device.write_latency.value);
  }
}

TEST(VirtioBlkMqTest, EachVqDrawsDeviceLatenciesFromItsOwnStream) {
  Costs c = TestCosts();
  c.device.latency_exp_mean.value = Time::Nanos(300);
  Rig alone(c), mixed(c);
  for (int i = 0; i < 100; ++i) {
    const Time a = alone.device->Access(0, false);
    (void)mixed.device->Access(1, false);
    ASSERT_EQ(mixed.device->Access(0, false), a) << i;
  }
}

}  // namespace
}  // namespace models
