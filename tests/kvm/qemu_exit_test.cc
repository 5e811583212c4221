// QEMU 2.0's side of a userspace exit: kvm_cpu_exec's own path runs under
// the BQL, so exits of different vCPU threads serialize on it together
// with the device emulation they lead to.
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "models/qemu/bql.h"
#include "models/qemu/virtio_blk_device.h"
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

// `n` vCPU threads read InterruptStatus at the same instant; returns when
// each one's handler finished.
std::vector<Time> ConcurrentStatusReads(Time exit_userspace, int n) {
  sim::Simulator sim;
  Virtqueue vq(128, VirtqueueFeatures{.event_idx = true});
  Bql bql(sim);
  VirtioBlkDevice dev(sim, vq, bql, Costs(exit_userspace));
  std::vector<Time> done(n);
  for (int i = 0; i < n; ++i) {
    sim.Spawn([](sim::Simulator& s, VirtioBlkDevice& d, Time& at) -> sim::Task {
      uint32_t isr = 0;
      co_await d.ReadInterruptStatus(&isr);
      at = s.Now();
    }(sim, dev, done[i]));
  }
  sim.RunUntil(Time::Millis(1));
  EXPECT_EQ(bql.stats().acquisitions, static_cast<uint64_t>(n));
  EXPECT_EQ(bql.stats().contentions, static_cast<uint64_t>(n - 1));
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

}  // namespace
}  // namespace models
