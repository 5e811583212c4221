// The CPU/task/scheduler core: one way to charge time, interrupts that
// preempt task work, irqs-off and preempt-off as counters, schedule() and
// try_to_wake_up() with the kernel's cases, under the pinned FIFO policy.
#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
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

sim::Task Work(Task& t, Time cost, Time* done, sim::Simulator& sim) {
  co_await t.Run(cost);
  *done = sim.Now();
}

// A task's cpus_mask: exactly the CPUs listed, at any id; none listed, all.
TEST(SchedTest, ATaskRunsOnExactlyTheCpusItsMaskLists) {
  const Task some("some", {3, 64, 200, 3});
  for (int c = 0; c < 300; ++c) EXPECT_EQ(some.AllowedOn(c), c == 3 || c == 64 || c == 200) << c;
  EXPECT_FALSE(some.AllowedOn(-1));
  const Task any("any");
  for (int c : {0, 63, 64, 1000}) EXPECT_TRUE(any.AllowedOn(c)) << c;
}

TEST(SchedTest, TaskWorkEndsAfterItsCost) {
  Machine m(1);
  Task t("t", {0});
  Time done = Time::Max();
  m.sched.Start(t, Work(t, 10_us, &done, m.sim));
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(done, 10_us);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSystem), 10_us);
}

TEST(SchedTest, InterruptPreemptsTaskWorkWhichResumesWhereItStopped) {
  Machine m(1);
  Task t("t", {0});
  Time task_done = Time::Max(), irq_done = Time::Max();
  m.sched.Start(t, Work(t, 10_us, &task_done, m.sim));
  m.sim.Spawn(RaiseIrqAt(m.cpu(0), 3_us, 2_us, &irq_done));
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(irq_done, 5_us);
  EXPECT_EQ(task_done, 12_us);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kIrq), 2_us);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSystem), 10_us);
}

sim::Task IrqsOffWork(Task& t, Time off_for, Time* done, sim::Simulator& sim) {
  Cpu& cpu = *t.cpu();
  cpu.LocalIrqSave();
  co_await cpu.Run(off_for);
  cpu.LocalIrqRestore();
  co_await cpu.Run(1_us);
  *done = sim.Now();
}

TEST(SchedTest, InterruptWaitsWhileInterruptsAreOffAndIsTakenAtRestore) {
  Machine m(1);
  Task t("t", {0});
  Time task_done = Time::Max(), irq_done = Time::Max();
  m.sched.Start(t, IrqsOffWork(t, 10_us, &task_done, m.sim));
  m.sim.Spawn(RaiseIrqAt(m.cpu(0), 3_us, 2_us, &irq_done));
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(irq_done, 12_us);   // taken at the restore (10us), runs 2us
  EXPECT_EQ(task_done, 13_us);  // then the task's last 1us
  EXPECT_EQ(m.cpu(0).IrqOffTime(), 12_us);  // 10us irqsave + 2us in the handler
}

TEST(SchedTest, InterruptOnAnIdleCpuRunsAtOnce) {
  Machine m(1);
  Time irq_done = Time::Max();
  m.sim.Spawn(RaiseIrqAt(m.cpu(0), 3_us, 2_us, &irq_done));
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(irq_done, 5_us);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kIdle), 1_ms - 2_us);
}

sim::Task Sleeper(Task& t, bool* flag, Time* woke, sim::Simulator& sim) {
  co_await testbed::SleepUntil(t, [flag] { return *flag; });
  *woke = sim.Now();
}

sim::Task WakeFromIrq(Cpu& cpu, Scheduler& s, Task& t, bool* flag, Time* done) {
  co_await cpu.Run(1_us);
  *flag = true;
  co_await s.TryToWakeUp(t, cpu);
  *done = cpu.sim().Now();
}

sim::Task RaiseWake(Cpu& cpu, Time at, Scheduler& s, Task& t, bool* flag, Time* done) {
  co_await cpu.sim().Delay(at - cpu.sim().Now());
  cpu.RaiseIrq(WakeFromIrq(cpu, s, t, flag, done));
}

TEST(SchedTest, SleeperWokenFromAnInterruptRunsAfterTheHandlerAndAContextSwitch) {
  SchedCosts costs;
  costs.context_switch = 500_ns;
  costs.try_to_wake_up = 300_ns;
  Machine m(1, costs);
  Task t("t", {0});
  bool flag = false;
  Time woke = Time::Max(), irq_done = Time::Max();
  m.sched.Start(t, Sleeper(t, &flag, &woke, m.sim));
  m.sim.Spawn(RaiseWake(m.cpu(0), 10_us, m.sched, t, &flag, &irq_done));
  m.sim.RunUntil(1_ms);
  // Start: switch in (0.5us), sleep: switch out (0.5us, done at 1us).
  // At 10us: handler 1us + try_to_wake_up 0.3us, then the switch in.
  EXPECT_EQ(irq_done, 11300_ns);
  EXPECT_EQ(woke, 11800_ns);
  EXPECT_EQ(t.nvcsw(), 1u);
  EXPECT_EQ(t.wakeups(), 1u);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kIrq), 1300_ns);
}

// Linux 3.0's TTWU_QUEUE: a wake-up onto another CPU is not enqueued by
// the waker; the target's scheduler_ipi does it, after the IPI's flight,
// in its interrupt context.
struct RemoteWake {
  Time irq_done = Time::Max();
  Time woke = Time::Max();
  Time target_irq;
  uint64_t queued = 0, ipis = 0;
};
RemoteWake WakeOnCpu1From0(bool queue) {
  SchedCosts costs;
  costs.context_switch = 500_ns;
  costs.try_to_wake_up = 300_ns;
  costs.wakeup_latency = 2_us;
  Machine m(2, costs);
  if (queue) {
    m.sched.set_ttwu_spins_on_cpu(true);
    m.sched.set_ttwu_queue(true, 200_ns, 700_ns);
  }
  Task t("t", {1});
  bool flag = false;
  RemoteWake r;
  m.sched.Start(t, Sleeper(t, &flag, &r.woke, m.sim));
  m.sim.Spawn(RaiseWake(m.cpu(0), 10_us, m.sched, t, &flag, &r.irq_done));
  m.sim.RunUntil(1_ms);
  r.target_irq = m.cpu(1).TimeIn(CpuTime::kIrq);
  r.queued = m.sched.queued_wakeups();
  r.ipis = m.sched.wake_ipis();
  return r;
}

// Off: enqueued at 11.3us by the waker (try_to_wake_up 0.3us), the idle
// target told after the 2us IPI, its switch 0.5us. On: the waker's share
// is 0.2us, the task listed at 11.2us, the IPI at 13.2us, scheduler_ipi
// 0.7us there, then the switch.
TEST(SchedTest, TtwuQueueEnqueuesOnTheTargetAfterTheIpi) {
  const RemoteWake off = WakeOnCpu1From0(false);
  EXPECT_EQ(off.irq_done, 11300_ns);
  EXPECT_EQ(off.woke, 13800_ns);
  EXPECT_EQ(off.target_irq, Time::Zero());
  EXPECT_EQ(off.queued, 0u);
  const RemoteWake on = WakeOnCpu1From0(true);
  EXPECT_EQ(on.irq_done, 11200_ns);
  EXPECT_EQ(on.woke, 14400_ns);
  EXPECT_EQ(on.target_irq, 700_ns);
  EXPECT_EQ(on.queued, 1u);
  EXPECT_EQ(on.ipis, 1u);
}

sim::Task WakeBoth(Cpu& cpu, Scheduler& s, Task& a, Task& b, bool* flag) {
  *flag = true;
  co_await s.TryToWakeUp(a, cpu);
  co_await s.TryToWakeUp(b, cpu);
}

// Two wake-ups onto one CPU before its IPI arrives share it; the IPI's
// handler interrupts the task running there, which pays for it, and
// enqueues the newest first (3.0's wake list is a stack).
TEST(SchedTest, TtwuQueueSendsOneIpiForAListAndChargesTheTargetsCurrentTask) {
  SchedCosts costs;
  costs.context_switch = 500_ns;
  costs.try_to_wake_up = 300_ns;
  costs.wakeup_latency = 1_us;
  Machine m(2, costs);
  m.sched.set_ttwu_spins_on_cpu(true);
  m.sched.set_ttwu_queue(true, 200_ns, 700_ns);
  Task busy("busy", {1}), a("a", {1}), b("b", {1}), waker("waker", {0});
  bool flag = false;
  Time a_woke = Time::Max(), b_woke = Time::Max(), busy_done = Time::Max();
  m.sched.Start(a, Sleeper(a, &flag, &a_woke, m.sim));
  m.sched.Start(b, Sleeper(b, &flag, &b_woke, m.sim));
  m.sim.RunUntil(5_us);
  m.sched.Start(busy, Work(busy, 100_us, &busy_done, m.sim));
  m.sim.RunUntil(10_us);
  m.sched.Start(waker, WakeBoth(m.cpu(0), m.sched, a, b, &flag));
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(m.sched.queued_wakeups(), 2u);
  EXPECT_EQ(m.sched.wake_ipis(), 1u);
  EXPECT_EQ(m.cpu(1).TimeIn(CpuTime::kIrq), 700_ns);
  // The pinned FIFO policy does not preempt: busy, switched in at 5.5us,
  // ends 0.7us late; then b and a run, the list taken newest first.
  EXPECT_EQ(busy_done, 5500_ns + 100_us + 700_ns);
  EXPECT_LT(b_woke, a_woke);
  EXPECT_GT(b_woke, busy_done);
}

sim::Task WakeRunning(Cpu& cpu, Scheduler& s, Task& t, Time* done) {
  co_await s.TryToWakeUp(t, cpu);
  *done = cpu.sim().Now();
}

sim::Task Spin(Task& t, Time cost) { co_await t.Run(cost); }

TEST(SchedTest, WakingARunningTaskCostsOnlyTheFastPath) {
  SchedCosts costs;
  costs.try_to_wake_up = 300_ns;
  costs.try_to_wake_up_fast = 20_ns;
  Machine m(2, costs);
  Task runner("runner", {1});
  m.sched.Start(runner, Spin(runner, 1_ms));
  Task waker("waker", {0});
  Time done = Time::Max();
  m.sched.Start(waker, WakeRunning(m.cpu(0), m.sched, runner, &done));
  m.sim.RunUntil(2_ms);
  EXPECT_EQ(done, 20_ns);
  EXPECT_EQ(m.sched.wakeups(), 0u);
  EXPECT_EQ(m.sched.fast_wakeups(), 1u);
}

// try_to_wake_up() inside or outside a spinlock: the hold is longer by
// exactly the waker's share of the wake-up when the wake-up is inside.
sim::Task LockAndWake(Cpu& cpu, Scheduler& s, Spinlock& lock, Task& t, bool* flag, bool inside) {
  co_await lock.Lock(cpu);
  co_await cpu.Run(2_us);
  *flag = true;
  if (inside) co_await s.TryToWakeUp(t, cpu);
  lock.Unlock(cpu);
  if (!inside) co_await s.TryToWakeUp(t, cpu);
}

sim::Task Body(Cpu& cpu, Scheduler& s, Spinlock& lock, Task& t, bool* flag, bool inside) {
  co_await cpu.Run(5_us);  // the sleeper is asleep by then
  co_await LockAndWake(cpu, s, lock, t, flag, inside);
}

Time HoldWithWake(bool inside) {
  SchedCosts costs;
  costs.context_switch = 1_us;
  costs.try_to_wake_up = 777_ns;
  Machine m(2, costs);
  Spinlock lock(m.sim, "l", Time::Zero());
  Task sleeper("sleeper", {1});
  Task waker("waker", {0});
  bool flag = false;
  Time woke = Time::Max();
  m.sched.Start(sleeper, Sleeper(sleeper, &flag, &woke, m.sim));
  m.sched.Start(waker, Body(m.cpu(0), m.sched, lock, sleeper, &flag, inside));
  m.sim.RunUntil(1_ms);
  EXPECT_NE(woke, Time::Max());
  return Time::Picos(static_cast<int64_t>(lock.stat().hold.sum()));
}

TEST(SchedTest, WakeUpInsideASpinlockLengthensTheHoldByExactlyTheWakersShare) {
  EXPECT_EQ(HoldWithWake(false), 2_us);
  EXPECT_EQ(HoldWithWake(true), 2_us + 777_ns);
}

TEST(SchedTest, PinnedFifoRunsQueuedTasksInArrivalOrderUntilTheySleep) {
  SchedCosts costs;
  costs.context_switch = 1_us;
  Machine m(1, costs);
  Task a("a", {0}), b("b", {0});
  Time a_done = Time::Max(), b_done = Time::Max();
  m.sched.Start(a, Work(a, 10_us, &a_done, m.sim));
  m.sched.Start(b, Work(b, 10_us, &b_done, m.sim));
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(a_done, 11_us);  // switch in 1us, work 10us
  EXPECT_EQ(b_done, 22_us);  // a exits (switch 1us), b runs 10us
  EXPECT_EQ(m.cpu(0).switches(), 3u);
}

sim::Task ExitWithPending(Cpu& cpu, Time* after) {
  cpu.BeginExit();
  co_await cpu.sim().Delay(5_us);
  cpu.EndExit();
  co_await cpu.TakePending();
  co_await cpu.Run(1_us);
  *after = cpu.sim().Now();
}

TEST(SchedTest, NoInterruptIsTakenInsideAVmExitAndOneIsTakenRightAfter) {
  Machine m(1);
  Task t("t", {0});
  Time after = Time::Max(), irq_done = Time::Max();
  m.sched.Start(t, ExitWithPending(m.cpu(0), &after));
  m.sim.Spawn(RaiseIrqAt(m.cpu(0), 2_us, 2_us, &irq_done));
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(irq_done, 7_us);
  EXPECT_EQ(after, 8_us);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kExit), 5_us);
}

}  // namespace
}  // namespace models
