// The spinlock's contract, for both kinds (ticket and queued), in tasks on
// CPUs of the core: FIFO order among waiters that spin meanwhile, the
// hand-off cost, interrupts held off under spin_lock_irqsave, and
// statistics that reset without touching ownership.
#include "models/sync/spinlock.h"

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "tests/sync/holder.h"
#include "tests/sync/machine.h"

namespace models {
namespace {

using sim::Time;
using namespace sim::literals;  // NOLINT

class SpinlockTest : public testing::TestWithParam<SpinlockKind> {
 protected:
  // A lock of the kind under test whose every hand-off costs `handoff`.
  Spinlock MakeLock(Machine& m, Time handoff) {
    return Spinlock(m.sim, "l", GetParam(), LockHandoffCosts::Uniform(handoff));
  }
};

TEST_P(SpinlockTest, UncontendedAcquisitionCostsNoEventAndNoWait) {
  Machine m(1);
  Spinlock lock = MakeLock(m, 0_ns);
  Got got;
  StartHolder(m, &lock, 0, 1_us, 2_us, &got);
  m.sim.RunUntil(1_ms);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second, 1_us);
  EXPECT_EQ(lock.stat().acquisitions, 1u);
  EXPECT_EQ(lock.stat().contentions, 0u);
  EXPECT_EQ(lock.stat().hold.sum(), (2_us).ps());
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSpin), 0_ns);
  // The same task without the lock runs on exactly as many events.
  Machine bare(1);
  Got bare_got;
  StartHolder(bare, nullptr, 0, 1_us, 2_us, &bare_got);
  bare.sim.RunUntil(1_ms);
  EXPECT_EQ(m.sim.events(), bare.sim.events());
}

TEST_P(SpinlockTest, WaitersAreServedInArrivalOrderAndSpinMeanwhile) {
  Machine m(4);
  Spinlock lock = MakeLock(m, 0_ns);
  Got got;
  // cpu0 holds from 0 to 10us; cpu3, cpu1, cpu2 arrive at 1, 2, 3us.
  const std::pair<int, Time> arrivals[] = {{0, 0_ns}, {3, 1_us}, {1, 2_us}, {2, 3_us}};
  for (const auto& [cpu, at] : arrivals) StartHolder(m, &lock, cpu, at, 10_us, &got);
  m.sim.RunUntil(1_ms);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[1], std::make_pair(3, 10_us));
  EXPECT_EQ(got[2], std::make_pair(1, 20_us));
  EXPECT_EQ(got[3], std::make_pair(2, 30_us));
  EXPECT_EQ(lock.stat().contentions, 3u);
  // Waits 9, 18 and 27us.
  EXPECT_EQ(lock.stat().wait.sum(), (54_us).ps());
  EXPECT_EQ(m.cpu(3).TimeIn(CpuTime::kSpin), 9_us);
  EXPECT_EQ(m.cpu(2).TimeIn(CpuTime::kSpin), 27_us);
  EXPECT_EQ(m.cpu(2).TimeIn(CpuTime::kSystem), 10_us);
  // A flat hand-off cost never looks at the topology.
  EXPECT_EQ(lock.stat().contentions_by, (std::array<uint64_t, kCpuDistances>{}));
}

TEST_P(SpinlockTest, HandoffDelaysTheNextOwner) {
  Machine m(2);
  Spinlock lock = MakeLock(m, 100_ns);
  Got got;
  StartHolder(m, &lock, 0, 0_ns, 5_us, &got);
  StartHolder(m, &lock, 1, 1_us, 5_us, &got);
  m.sim.RunUntil(1_ms);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].second, 5100_ns);
  // The waiter spins through the hand-off too.
  EXPECT_EQ(m.cpu(1).TimeIn(CpuTime::kSpin), 4100_ns);
  EXPECT_EQ(lock.stat().acq_bounces, 1u);
  EXPECT_EQ(lock.stat().con_bounces, 1u);
}

sim::Task IrqSaveHolder(Task& t, Spinlock& lock, Time hold) {
  Cpu& cpu = *t.cpu();
  co_await lock.LockIrqSave(cpu);
  co_await cpu.Run(hold);
  lock.UnlockIrqRestore(cpu);
}

sim::Task Handler(Cpu& cpu, Time* handled) {
  *handled = cpu.sim().Now();
  co_return;
}

sim::Task RaiseAt(Cpu& cpu, Time at, Time* handled) {
  co_await cpu.sim().Delay(at - cpu.sim().Now());
  cpu.RaiseIrq(Handler(cpu, handled));
}

TEST_P(SpinlockTest, InterruptsWaitWhileSpinLockIrqSaveIsHeld) {
  Machine m(1);
  Spinlock lock = MakeLock(m, 0_ns);
  Time handled = Time::Zero();
  Task& t = m.NewTask(0);
  m.sched.Start(t, IrqSaveHolder(t, lock, 7_us));
  m.sim.Spawn(RaiseAt(m.cpu(0), 2_us, &handled));
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(handled, 7_us);
  EXPECT_EQ(m.cpu(0).IrqOffTime(), 7_us);
  EXPECT_FALSE(m.cpu(0).irqs_disabled());
}

TEST_P(SpinlockTest, ResetClearsCountersButNotOwnership) {
  Machine m(1);
  Spinlock lock = MakeLock(m, 0_ns);
  Got got;
  StartHolder(m, &lock, 0, 0_ns, 10_us, &got);
  m.sim.RunUntil(5_us);
  EXPECT_TRUE(lock.locked());
  lock.ResetStats();
  EXPECT_EQ(lock.stat().acquisitions, 0u);
  m.sim.RunUntil(1_ms);
  EXPECT_FALSE(lock.locked());
  EXPECT_EQ(lock.stat().hold.count(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Kinds, SpinlockTest, testing::Values(SpinlockKind::kTicket, SpinlockKind::kQueued),
                         [](const testing::TestParamInfo<SpinlockKind>& i) {
                           return std::string(SpinlockKindName(i.param));
                         });

}  // namespace
}  // namespace models
