// QEMU 2.0's side of a userspace exit: kvm_cpu_exec's own path runs under
// the BQL, so exits of different vCPU threads serialize on it together
// with the device emulation they lead to (here virtio-mmio's register
// accesses, models/qemu/virtio_transport.h). (The BQL is a models::Mutex of
// QEMU's threads on host CPUs; its own semantics are tests/sync/mutex_test.)
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/kvm/kvm.h"
#include "models/qemu/virtio_blk_device.h"
#include "models/qemu/virtio_transport.h"
#include "models/virtio/virtqueue.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {
namespace {

using sim::Time;

QemuCosts Costs(Time exit_userspace) {
  QemuCosts c;
  c.exit_userspace.value = exit_userspace;
  c.notify_dispatch.value = Time::Micros(2);
  c.pop_submit.value = Time::Micros(12);
  c.main_wakeup.value = Time::Micros(5);
  c.complete.value = Time::Micros(8);
  c.mmio_register.value = Time::Micros(1);
  c.irq_line.value = Time::Micros(2);
  c.disk_latency.value = Time::Micros(100);
  return c;
}

// QEMU's host: one CPU per vCPU thread and one for the main loop, free
// scheduling (no switch or wake-up costs).
struct Host {
  Host(sim::Simulator& sim, int vcpus) : sched(sim) {
    for (int i = 0; i <= vcpus; ++i) {
      cpus.push_back(std::make_unique<Cpu>(sim, i, "host" + std::to_string(i)));
      sched.AddCpu(*cpus.back());
      ptrs.push_back(cpus.back().get());
    }
  }
  PinnedFifoScheduler sched;
  std::vector<std::unique_ptr<Cpu>> cpus;
  std::vector<Cpu*> ptrs;
};

// `n` vCPU threads read InterruptStatus at the same instant; returns when
// each one's handler finished.
std::vector<Time> ConcurrentStatusReads(Time exit_userspace, int n) {
  sim::Simulator sim;
  Virtqueue vq(128, VirtqueueFeatures{.event_idx = true});
  Host host(sim, n);
  VirtioBlkDevice dev(sim, vq, host.sched, host.ptrs, static_cast<int>(host.ptrs.size()) - 1, Costs(exit_userspace));
  Kvm kvm(sim, KvmCosts{});
  VirtioMmio mmio(sim, kvm, dev);
  dev.Start();
  sim.RunUntil(Time::Zero());  // QEMU's threads are on their CPUs
  std::vector<Time> done(n);
  for (int i = 0; i < n; ++i) {
    sim.Spawn([](sim::Simulator& s, VirtioMmio& t, int vcpu, Time& at) -> sim::Task {
      uint32_t isr = 0;
      co_await t.ReadInterruptStatus(vcpu, &isr);
      at = s.Now();
    }(sim, mmio, i, done[i]));
  }
  sim.RunUntil(Time::Millis(1));
  EXPECT_EQ(dev.bql().stat().acquisitions, static_cast<uint64_t>(n));
  EXPECT_EQ(dev.bql().stat().contentions, static_cast<uint64_t>(n - 1));
  return done;
}

TEST(QemuExit, ExitPathRunsUnderTheBql) {
  // Each exit holds the BQL for exit_userspace + the register access
  // (10 + 1 us), so the k-th of three finishes at 11k us.
  const std::vector<Time> done = ConcurrentStatusReads(Time::Micros(10), 3);
  EXPECT_EQ(done[0], Time::Micros(11));
  EXPECT_EQ(done[1], Time::Micros(22));
  EXPECT_EQ(done[2], Time::Micros(33));
}

TEST(QemuExit, WithoutTheExitPathOnlyTheRegisterAccessSerializes) {
  const std::vector<Time> done = ConcurrentStatusReads(Time(), 3);
  EXPECT_EQ(done[0], Time::Micros(1));
  EXPECT_EQ(done[1], Time::Micros(2));
  EXPECT_EQ(done[2], Time::Micros(3));
}

// One request at a time through the device (add, QueueNotify, wait for the
// used entry): returns each request's time from the notify to its push.
std::vector<Time> OneAtATime(Time disk_spread, int n) {
  sim::Simulator sim;
  Virtqueue vq(128, VirtqueueFeatures{.event_idx = true});
  Host host(sim, 1);
  QemuCosts c = Costs(Time::Micros(1));
  c.disk_latency_exp_mean.value = disk_spread;
  VirtioBlkDevice dev(sim, vq, host.sched, host.ptrs, static_cast<int>(host.ptrs.size()) - 1, c, QemuAio::kNative, {}, /*seed=*/7);
  Kvm kvm(sim, KvmCosts{});
  VirtioMmio mmio(sim, kvm, dev);  // the line is raised with no guest to take it
  dev.Start();
  sim.RunUntil(Time::Zero());
  std::vector<Time> took;
  sim.Spawn([](sim::Simulator& s, Virtqueue& q, VirtioBlkDevice& d, int count, std::vector<Time>& out) -> sim::Task {
    for (int i = 0; i < count; ++i) {
      if (!q.AddSgs(static_cast<uint64_t>(i), 1, 2).ok()) std::abort();
      q.KickPrepare();
      const Time start = s.Now();
      co_await d.QueueNotify(0);
      while (!q.MoreUsed()) co_await s.Delay(Time::Nanos(100));
      out.push_back(s.Now() - start);
      q.GetBuf();
    }
  }(sim, vq, dev, n, took));
  sim.RunUntil(Time::Seconds(10));
  EXPECT_EQ(static_cast<int>(took.size()), n);
  return took;
}

// The host disk's latency spread keeps its mean: one request at a time
// takes the same time on average with and without it, and without it every
// request takes exactly the same time.
TEST(QemuDisk, LatencySpreadKeepsTheMean) {
  // (Only the first push notifies -- one KVM_IRQ_LINE more: the test never
  // moves used_event, so EVENT_IDX suppresses the later ones.)
  const std::vector<Time> fixed = OneAtATime(Time(), 2000);
  const Time steady = fixed.back();
  for (size_t i = 1; i < fixed.size(); ++i) EXPECT_EQ(fixed[i], steady);
  const std::vector<Time> spread = OneAtATime(Time::Micros(30), 20000);
  double sum = 0;
  Time lo = spread.front(), hi = spread.front();
  for (Time t : spread) {
    sum += t.ToSeconds();
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  }
  const double mean_us = sum / static_cast<double>(spread.size()) * 1e6;
  // Standard error 30us / sqrt(20000) = 0.21us; allow five.
  EXPECT_NEAR(mean_us, steady.ToSeconds() * 1e6, 1.1);
  EXPECT_GE(lo, steady - Time::Micros(30));  // the fixed part is disk_latency - 30us
  EXPECT_GT(hi - lo, Time::Micros(60));
}

// One request through the device with the backend `aio`, a main-loop pass
// of 3us, the pool's bottom half 2us per request and a 1us system call, on
// a host whose scheduling is free: returns the time from the notify to the
// push, and the device's counters.
struct OneRequest {
  Time took;
  QemuDeviceStats stats;
};
OneRequest OneThrough(QemuAio aio) {
  sim::Simulator sim;
  Virtqueue vq(128, VirtqueueFeatures{.event_idx = true});
  Host host(sim, 1);
  QemuCosts c = Costs(Time::Micros(1));
  c.main_loop_pass.value = Time::Micros(3);
  c.pool_complete.value = Time::Micros(2);
  std::vector<Cpu*> cpus = host.ptrs;
  std::unique_ptr<Cpu> pool;
  if (aio == QemuAio::kThreads) {
    pool = std::make_unique<Cpu>(sim, 2, "pool");
    host.sched.AddCpu(*pool);
    cpus.push_back(pool.get());
  }
  VirtioBlkDevice dev(sim, vq, host.sched, cpus, 1, c, aio, QemuHostCosts{Time::Micros(1)}, /*seed=*/7);
  Kvm kvm(sim, KvmCosts{});
  VirtioMmio mmio(sim, kvm, dev);
  dev.Start();
  sim.RunUntil(Time::Zero());
  OneRequest out;
  sim.Spawn([](sim::Simulator& s, Virtqueue& q, VirtioBlkDevice& d, Time& took) -> sim::Task {
    if (!q.AddSgs(0, 1, 2).ok()) std::abort();
    q.KickPrepare();
    co_await d.QueueNotify(0);
    while (!q.MoreUsed()) co_await s.Delay(Time::Nanos(100));
    took = s.Now();
  }(sim, vq, dev, out.took));
  sim.RunUntil(Time::Millis(10));
  out.stats = dev.stats();
  return out;
}

// One request's path, per backend. aio=native: the exit's path (1),
// dispatch (2) and pop + io_submit (12) in the vCPU thread, the disk (100),
// the main loop's wake-up (5), a pass finding the completion (3) and the
// next, with the BQL kept, running its bdrv_co_em_bh (3 + complete 8): the
// push at 134us. aio=threads: after the pop, qemu_sem_post's futex wake in
// the vCPU thread (1); the worker's preadv (1), the disk (100), its eventfd
// write (1); the wake-up (5), the pass running the pool's bottom half
// (3 + 2) and the next running bdrv_co_em_bh (3 + 8): 139us. Either way one
// wake-up, two passes, one completion.
TEST(QemuBackend, ACompletionTakesTwoPassesOfOneWakeUpAndThePoolAWorkersWake) {
  const struct {
    QemuAio aio;
    Time took;
    uint64_t pool_wakes;
  } cases[] = {{QemuAio::kNative, Time::Micros(134), 0}, {QemuAio::kThreads, Time::Micros(139), 1}};
  for (const auto& c : cases) {
    const OneRequest r = OneThrough(c.aio);
    EXPECT_EQ(r.took, c.took);
    EXPECT_EQ(r.stats.main_wakeups, 1u);
    EXPECT_EQ(r.stats.main_passes, 2u);
    EXPECT_EQ(r.stats.pool_wakes, c.pool_wakes);
    EXPECT_EQ(r.stats.completions, 1u);
  }
}

}  // namespace
}  // namespace models
