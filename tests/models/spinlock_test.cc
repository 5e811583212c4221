#include "models/sync/spinlock.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "sim/simulator.h"
#include "sim/task.h"

namespace models {
namespace {

using namespace sim::literals;

// Takes the lock at `start`, holds it for `hold`, records when it got it.
sim::Task HoldOnce(sim::Simulator& sim, Cpu& cpu, Spinlock& lock, sim::Time start, sim::Time hold,
                   std::vector<std::pair<int, sim::Time>>* got) {
  co_await sim.Delay(start);
  co_await lock.Lock(cpu);
  got->push_back({cpu.id(), sim.Now()});
  co_await cpu.Run(hold);
  lock.Unlock(cpu);
  cpu.SetState(CpuState::kIdle);
}

TEST(SpinlockTest, UncontendedAcquisitionCostsNoEventAndNoWait) {
  sim::Simulator sim;
  Cpu cpu(sim, 0, "cpu0");
  Spinlock lock(sim, "l", 0_ns);
  std::vector<std::pair<int, sim::Time>> got;
  sim.Spawn(HoldOnce(sim, cpu, lock, 1_us, 2_us, &got));
  sim.RunUntil(1_ms);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second, 1_us);
  EXPECT_EQ(lock.stat().acquisitions, 1u);
  EXPECT_EQ(lock.stat().contentions, 0u);
  EXPECT_EQ(lock.stat().hold.sum(), (2_us).ps());
  EXPECT_EQ(cpu.TimeIn(CpuState::kSpinning), 0_ns);
  // Spawn start, the start delay and the hold: three events.
  EXPECT_EQ(sim.events(), 3u);
}

TEST(SpinlockTest, WaitersAreServedInArrivalOrderAndSpinMeanwhile) {
  sim::Simulator sim;
  std::vector<std::unique_ptr<Cpu>> cpus;
  for (int i = 0; i < 4; ++i) cpus.push_back(std::make_unique<Cpu>(sim, i, "cpu" + std::to_string(i)));
  Spinlock lock(sim, "l", 0_ns);
  std::vector<std::pair<int, sim::Time>> got;
  // cpu0 holds from 0 to 10us; cpu3, cpu1, cpu2 arrive at 1, 2, 3us.
  sim.Spawn(HoldOnce(sim, *cpus[0], lock, 0_ns, 10_us, &got));
  sim.Spawn(HoldOnce(sim, *cpus[3], lock, 1_us, 10_us, &got));
  sim.Spawn(HoldOnce(sim, *cpus[1], lock, 2_us, 10_us, &got));
  sim.Spawn(HoldOnce(sim, *cpus[2], lock, 3_us, 10_us, &got));
  sim.RunUntil(1_ms);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[1], std::make_pair(3, 10_us));
  EXPECT_EQ(got[2], std::make_pair(1, 20_us));
  EXPECT_EQ(got[3], std::make_pair(2, 30_us));
  EXPECT_EQ(lock.stat().contentions, 3u);
  // Waits 9, 18 and 27us.
  EXPECT_EQ(lock.stat().wait.sum(), (54_us).ps());
  EXPECT_EQ(cpus[3]->TimeIn(CpuState::kSpinning), 9_us);
  EXPECT_EQ(cpus[2]->TimeIn(CpuState::kSpinning), 27_us);
  EXPECT_EQ(cpus[2]->TimeIn(CpuState::kRunning), 10_us);
}

TEST(SpinlockTest, HandoffDelaysTheNextOwner) {
  sim::Simulator sim;
  Cpu a(sim, 0, "a"), b(sim, 1, "b");
  Spinlock lock(sim, "l", 100_ns);
  std::vector<std::pair<int, sim::Time>> got;
  sim.Spawn(HoldOnce(sim, a, lock, 0_ns, 5_us, &got));
  sim.Spawn(HoldOnce(sim, b, lock, 1_us, 5_us, &got));
  sim.RunUntil(1_ms);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].second, 5100_ns);
  // The waiter spins through the hand-off too.
  EXPECT_EQ(b.TimeIn(CpuState::kSpinning), 4100_ns);
  EXPECT_EQ(lock.stat().acq_bounces, 1u);
  EXPECT_EQ(lock.stat().con_bounces, 1u);
}

sim::Task IrqSaveHolder(sim::Simulator& sim, Cpu& cpu, Spinlock& lock, sim::Time hold) {
  co_await lock.LockIrqSave(cpu);
  co_await cpu.Run(hold);
  lock.UnlockIrqRestore(cpu);
}

sim::Task Interrupt(sim::Simulator& sim, Cpu& cpu, sim::Time at, sim::Time* handled) {
  co_await sim.Delay(at);
  co_await cpu.IrqsEnabled();
  *handled = sim.Now();
}

TEST(SpinlockTest, InterruptsWaitWhileSpinLockIrqSaveIsHeld) {
  sim::Simulator sim;
  Cpu cpu(sim, 0, "cpu0");
  Spinlock lock(sim, "l", 0_ns);
  sim::Time handled = sim::Time::Zero();
  sim.Spawn(IrqSaveHolder(sim, cpu, lock, 7_us));
  sim.Spawn(Interrupt(sim, cpu, 2_us, &handled));
  sim.RunUntil(1_ms);
  EXPECT_EQ(handled, 7_us);
  EXPECT_EQ(cpu.IrqOffTime(), 7_us);
  EXPECT_FALSE(cpu.irqs_disabled());
}

TEST(SpinlockTest, ResetClearsCountersButNotOwnership) {
  sim::Simulator sim;
  Cpu cpu(sim, 0, "cpu0");
  Spinlock lock(sim, "l", 0_ns);
  std::vector<std::pair<int, sim::Time>> got;
  sim.Spawn(HoldOnce(sim, cpu, lock, 0_ns, 10_us, &got));
  sim.RunUntil(5_us);
  EXPECT_TRUE(lock.locked());
  lock.ResetStats();
  EXPECT_EQ(lock.stat().acquisitions, 0u);
  sim.RunUntil(1_ms);
  EXPECT_FALSE(lock.locked());
  EXPECT_EQ(lock.stat().hold.count(), 1u);
}

}  // namespace
}  // namespace models
