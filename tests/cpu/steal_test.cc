// Steal: a vCPU stands still while its host thread is off its host CPU
// (Cpu::BeginSteal/EndSteal), and a host task set as a vCPU's thread
// (Task::set_vcpu) begins and ends those steals as its host CPU preempts
// it or takes an interrupt.
#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/sched_fair.h"
#include "models/cpu/task.h"
#include "models/sync/spinlock.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"
#include "tests/cpu/machine.h"

namespace models {
namespace {

using sim::Time;
using testbed::Machine;
using testbed::RaiseIrqAt;
using namespace sim::literals;  // NOLINT

sim::Task Work(Task& t, Time start, Time cost, Time* done, sim::Simulator& sim) {
  co_await sim.Delay(start);
  co_await t.Run(cost);
  *done = sim.Now();
}

sim::Task StealAt(Cpu& vcpu, Time at, Time len) {
  co_await vcpu.sim().Delay(at - vcpu.sim().Now());
  vcpu.BeginSteal();
  co_await vcpu.sim().Delay(len);
  vcpu.EndSteal();
}

TEST(StealTest, StolenTimeStretchesTheTasksWork) {
  Machine m(1);
  Task t("t", {0});
  Time done = Time::Max();
  m.sched.Start(t, Work(t, 0_us, 100_us, &done, m.sim));
  m.sim.Spawn(StealAt(m.cpu(0), 20_us, 30_us));
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(done, 130_us);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSteal), 30_us);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSystem), 100_us);
  EXPECT_FALSE(m.cpu(0).stolen());
}

TEST(StealTest, StealsNestAndTheVcpuRunsAgainAtTheLastEnd) {
  Machine m(1);
  Task t("t", {0});
  Time done = Time::Max();
  m.sched.Start(t, Work(t, 0_us, 100_us, &done, m.sim));
  m.sim.Spawn(StealAt(m.cpu(0), 20_us, 30_us));  // 20-50
  m.sim.Spawn(StealAt(m.cpu(0), 40_us, 20_us));  // 40-60
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(done, 140_us);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSteal), 40_us);
}

TEST(StealTest, AnInterruptRaisedWhileStolenIsTakenWhenTheVcpuRunsAgain) {
  Machine m(1);
  Time irq_done = Time::Max();
  m.sim.Spawn(StealAt(m.cpu(0), 10_us, 30_us));  // 10-40
  m.sim.Spawn(RaiseIrqAt(m.cpu(0), 20_us, 2_us, &irq_done));
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(irq_done, 42_us);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSteal), 30_us);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kIrq), 2_us);
}

TEST(StealTest, AStealBegunUnderAHandlerStartsWhenTheHandlerReturns) {
  Machine m(1);
  Task t("t", {0});
  Time done = Time::Max(), irq_done = Time::Max();
  m.sched.Start(t, Work(t, 0_us, 100_us, &done, m.sim));
  m.sim.Spawn(RaiseIrqAt(m.cpu(0), 10_us, 5_us, &irq_done));  // 10-15
  m.sim.Spawn(StealAt(m.cpu(0), 12_us, 20_us));            // asked 12-32, stands still 15-32
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(irq_done, 15_us);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSteal), 17_us);
  EXPECT_EQ(done, 100_us + 5_us + 17_us);
}

TEST(StealTest, AStealThatEndsUnderTheHandlerThatDeferredItNeverStarts) {
  Machine m(1);
  Task t("t", {0});
  Time done = Time::Max(), irq_done = Time::Max();
  m.sched.Start(t, Work(t, 0_us, 100_us, &done, m.sim));
  m.sim.Spawn(RaiseIrqAt(m.cpu(0), 10_us, 5_us, &irq_done));  // 10-15
  m.sim.Spawn(StealAt(m.cpu(0), 11_us, 2_us));             // 11-13, under the handler
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSteal), 0_us);
  EXPECT_EQ(done, 105_us);
}

sim::Task LockFor(Cpu& cpu, Spinlock& lock, Time start, Time hold, Time* got) {
  co_await cpu.sim().Delay(start);
  co_await lock.Lock(cpu);
  *got = cpu.sim().Now();
  co_await cpu.Run(hold);
  lock.Unlock(cpu);
}

TEST(StealTest, ALockHandedToAStolenSpinnerIsTakenOnlyWhenItRunsAgain) {
  Machine m(2);
  Spinlock lock(m.sim, "l", 0_us);
  Task a("a", {0}), b("b", {1});
  Time a_got = Time::Max(), b_got = Time::Max();
  m.sched.Start(a, LockFor(m.cpu(0), lock, 0_us, 10_us, &a_got));
  m.sched.Start(b, LockFor(m.cpu(1), lock, 1_us, 1_us, &b_got));
  m.sim.Spawn(StealAt(m.cpu(1), 5_us, 20_us));  // the spinner stands still 5-25
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(a_got, 0_us);
  EXPECT_EQ(b_got, 25_us);
  EXPECT_EQ(m.cpu(1).TimeIn(CpuTime::kSpin), 4_us + 0_us);  // 1-5 (handed over at 10, taken at 25)
  EXPECT_EQ(m.cpu(1).TimeIn(CpuTime::kSteal), 20_us);
}

sim::Task RunThenSleep(Task& t, Time cost, Time* done) {
  co_await t.Run(cost);
  *done = t.cpu()->sim().Now();
  t.SetState(Task::State::kInterruptible);
  co_await t.Schedule();
}

TEST(StealTest, AContextSwitchUnderWayWaitsForTheVcpu) {
  SchedCosts costs;
  costs.context_switch = 2_us;
  Machine m(1, costs);
  Task a("a", {0}), b("b", {0});
  Time a_done = Time::Max(), b_done = Time::Max();
  m.sched.Start(a, RunThenSleep(a, 10_us, &a_done));
  m.sched.Start(b, Work(b, 0_us, 1_us, &b_done, m.sim));
  m.sim.Spawn(StealAt(m.cpu(0), 13_us, 5_us));  // 1 us into the switch from a to b
  m.sim.RunUntil(1_ms);
  // a switched in 0-2, ran 2-12; the switch to b 12-14 stood still 13-18;
  // b ran 19-20.
  EXPECT_EQ(a_done, 12_us);
  EXPECT_EQ(b_done, 20_us);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSteal), 5_us);
}

// ---- A host task as the vCPU's thread ----

// The thread in the guest: on its host CPU, busy, until the run ends.
sim::Task InGuest(Task& thread, sim::Signal& never) {
  co_await thread.cpu()->SpinUntil(never.Wait(), CpuTime::kUser);
}

// Sleeps until woken, runs `cost`, sleeps again.
sim::Task Burst(Task& t, Time cost, bool* woken, Time* done) {
  while (!*woken) {
    t.SetState(Task::State::kInterruptible);
    if (*woken) break;
    co_await t.Schedule();
  }
  t.SetState(Task::State::kRunning);
  co_await t.Run(cost);
  *done = t.cpu()->sim().Now();
  t.SetState(Task::State::kInterruptible);
  co_await t.Schedule();
}

// A host interrupt that wakes `t` (a timer's).
sim::Task WakeHandler(Scheduler& sched, Task& t, Cpu& cpu, bool* woken) {
  *woken = true;
  co_await sched.TryToWakeUp(t, cpu);
}

sim::Task WakeAt(Scheduler& sched, Task& t, Cpu& cpu, Time at, bool* woken) {
  co_await cpu.sim().Delay(at - cpu.sim().Now());
  cpu.RaiseIrq(WakeHandler(sched, t, cpu, woken));
}

TEST(StealTest, AVcpuThreadPreemptedOnItsHostCpuStandsItsVcpuStill) {
  sim::Simulator sim;
  FairParams params;
  params.wakeup_granularity = 0_us;  // a woken sleeper preempts at once
  FairScheduler host(sim, params);
  Cpu host0(sim, 0, "host0");
  SchedCosts costs;
  costs.context_switch = 1_us;
  host0.set_sched_costs(costs);
  host.AddCpu(host0);
  PinnedFifoScheduler guest_sched(sim);
  Cpu vcpu(sim, 100, "vcpu0");
  guest_sched.AddCpu(vcpu);

  sim::Signal never(sim);
  Task other("other", {0}), thread("qemu/vcpu0", {0});
  thread.set_vcpu(&vcpu);
  bool woken = false;
  Time other_done = Time::Max();
  host.Start(other, Burst(other, 20_us, &woken, &other_done));  // asleep at once
  host.Start(thread, InGuest(thread, never));
  Task guest_task("guest", {100});
  Time done = Time::Max();
  guest_sched.Start(guest_task, Work(guest_task, 10_us, 100_us, &done, sim));
  sim.Spawn(WakeAt(host, other, host0, 50_us, &woken));
  sim.RunUntil(1_ms);

  // At 50 us the timer's interrupt wakes `other`, which preempts the
  // thread: switch 50-51, `other` runs 51-71, sleeps, the switch back
  // 71-72. The vCPU stands still 50-72.
  EXPECT_EQ(other_done, 71_us);
  EXPECT_EQ(vcpu.TimeIn(CpuTime::kSteal), 22_us);
  EXPECT_EQ(done, 10_us + 100_us + 22_us);
  EXPECT_EQ(thread.nivcsw(), 1u);
  EXPECT_FALSE(vcpu.stolen());
}

// One host CPU on the pinned policy, one vCPU, and the vCPU's thread.
struct PinnedHost {
  PinnedHost() : host(sim), host0(sim, 0, "host0"), guest_sched(sim), vcpu(sim, 100, "vcpu0") {
    host.AddCpu(host0);
    guest_sched.AddCpu(vcpu);
    thread.set_vcpu(&vcpu);
  }
  sim::Simulator sim;
  PinnedFifoScheduler host;
  Cpu host0;
  PinnedFifoScheduler guest_sched;
  Cpu vcpu;
  Task thread{"qemu/vcpu0", {0}};
};

TEST(StealTest, AHostInterruptOnTheThreadsCpuStandsItsVcpuStill) {
  PinnedHost h;
  sim::Signal never(h.sim);
  h.host.Start(h.thread, InGuest(h.thread, never));
  Task guest_task("guest", {100});
  Time done = Time::Max(), irq_done = Time::Max();
  h.guest_sched.Start(guest_task, Work(guest_task, 0_us, 100_us, &done, h.sim));
  h.sim.Spawn(RaiseIrqAt(h.host0, 30_us, 4_us, &irq_done));
  h.sim.RunUntil(1_ms);
  EXPECT_EQ(irq_done, 34_us);
  EXPECT_EQ(h.vcpu.TimeIn(CpuTime::kSteal), 4_us);
  EXPECT_EQ(done, 104_us);
}

TEST(StealTest, AVcpuThreadThatSleepsDoesNotStealFromItsVcpu) {
  PinnedHost h;
  bool woken = false;
  Time thread_done = Time::Max();
  h.host.Start(h.thread, Burst(h.thread, 5_us, &woken, &thread_done));  // sleeps: a halted vCPU's thread
  h.sim.RunUntil(1_ms);
  EXPECT_EQ(h.vcpu.TimeIn(CpuTime::kSteal), 0_us);
  EXPECT_EQ(h.vcpu.TimeIn(CpuTime::kIdle), 1_ms);
}

}  // namespace
}  // namespace models
