// A CPU shared by tasks and interrupt handlers, as the block and virtio
// stacks rely on it, beyond what sched_test.cc covers: work runs back to
// back and the CPU idles otherwise; interrupts raised meanwhile run one
// after the other, in order, before the task's work resumes; interrupts wait
// for the outermost local_irq_restore(); a running task keeps its CPU
// between its works; a polling task keeps its CPU busy while interrupts
// preempt the poll; a sleep and its wake-up are charged on the CPUs they
// run on; a wake-up that comes before schedule() keeps the task running.
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"
#include "tests/cpu/machine.h"

namespace models {
namespace {

using sim::Time;
using testbed::Machine;
using namespace sim::literals;  // NOLINT
using Log = std::vector<std::pair<std::string, Time>>;

// wake_up_new_task() of `t` at `at`.
sim::Task StartAt(Machine& m, Time at, Task& t, sim::Task body) {
  co_await m.sim.Delay(at - m.sim.Now());
  m.sched.Start(t, std::move(body));
}

// A hard interrupt raised on `cpu` at `at`.
sim::Task RaiseAt(Cpu& cpu, Time at, sim::Task handler) {
  co_await cpu.sim().Delay(at - cpu.sim().Now());
  cpu.RaiseIrq(std::move(handler));
}

// Work of `cost` in the caller's context, logged as `name` when it ends.
sim::Task Logged(Cpu& cpu, Time cost, std::string name, Log* log) {
  co_await cpu.Run(cost);
  log->push_back({std::move(name), cpu.sim().Now()});
}

// Kernel work, then user work, each logged.
sim::Task KernelThenUser(Task& t, Time kernel, Time user, Log* log) {
  co_await t.Run(kernel);
  log->push_back({"kernel", t.cpu()->sim().Now()});
  co_await t.RunUser(user);
  log->push_back({"user", t.cpu()->sim().Now()});
}

TEST(CpuTest, WorkRunsBackToBackAndTheCpuIdlesOtherwise) {
  Machine m(1);
  Task t("t", {0});
  Log log;
  m.sim.Spawn(StartAt(m, 2_us, t, KernelThenUser(t, 3_us, 4_us, &log)));
  m.sim.RunUntil(20_us);
  const Log want = {{"kernel", 5_us}, {"user", 9_us}};
  EXPECT_EQ(log, want);
  Cpu& cpu = m.cpu(0);
  EXPECT_EQ(cpu.TimeIn(CpuTime::kSystem), 3_us);
  EXPECT_EQ(cpu.TimeIn(CpuTime::kUser), 4_us);
  EXPECT_EQ(cpu.BusyTime(), 7_us);
  EXPECT_EQ(cpu.TimeIn(CpuTime::kIdle), 13_us);
  EXPECT_DOUBLE_EQ(cpu.BusyShare(), 7.0 / 20.0);
  // The task has exited: nothing runs.
  EXPECT_TRUE(cpu.idle());
  EXPECT_EQ(t.state(), Task::State::kDead);
  EXPECT_EQ(t.runtime(), 7_us);
}

// Handlers do not nest: `b` and `c`, raised while `a` runs, wait for it and
// run in the order they were raised; the task's work, frozen at `a`'s
// start, goes on after the last.
TEST(CpuTest, InterruptsRaisedMeanwhileRunInOrderBeforeTheTaskResumes) {
  Machine m(1);
  Task t("t", {0});
  Log log;
  m.sched.Start(t, Logged(m.cpu(0), 10_us, "t", &log));
  m.sim.Spawn(RaiseAt(m.cpu(0), 3_us, Logged(m.cpu(0), 2_us, "a", &log)));
  m.sim.Spawn(RaiseAt(m.cpu(0), 4_us, Logged(m.cpu(0), 1_us, "b", &log)));
  m.sim.Spawn(RaiseAt(m.cpu(0), 4_us, Logged(m.cpu(0), 1_us, "c", &log)));
  m.sim.RunUntil(50_us);
  const Log want = {{"a", 5_us}, {"b", 6_us}, {"c", 7_us}, {"t", 14_us}};
  EXPECT_EQ(log, want);
  EXPECT_EQ(m.cpu(0).irqs_taken(), 3u);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kIrq), 4_us);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSystem), 10_us);
}

// local_irq_save() nests: the interrupt waits for the outermost restore.
sim::Task NestedIrqsOff(Task& t, Log* log) {
  Cpu& cpu = *t.cpu();
  cpu.LocalIrqSave();
  co_await cpu.Run(5_us);
  cpu.LocalIrqSave();
  co_await cpu.Run(5_us);
  cpu.LocalIrqRestore();
  log->push_back({"inner restore", cpu.sim().Now()});
  co_await cpu.Run(5_us);
  log->push_back({"outer restore", cpu.sim().Now()});
  cpu.LocalIrqRestore();
  co_await cpu.Run(1_us);
  log->push_back({"after", cpu.sim().Now()});
}

TEST(CpuTest, InterruptWaitsForTheOutermostRestore) {
  Machine m(1);
  Task t("t", {0});
  Log log;
  m.sched.Start(t, NestedIrqsOff(t, &log));
  m.sim.Spawn(RaiseAt(m.cpu(0), 1_us, Logged(m.cpu(0), 2_us, "irq", &log)));
  m.sim.RunUntil(50_us);
  // Taken as soon as interrupts are on again, before the task goes on.
  const Log want = {{"inner restore", 10_us}, {"outer restore", 15_us}, {"irq", 17_us}, {"after", 18_us}};
  EXPECT_EQ(log, want);
  EXPECT_FALSE(m.cpu(0).irqs_disabled());
  EXPECT_EQ(m.cpu(0).IrqOffTime(), 17_us);  // 15us irqsave + 2us in the handler
}

sim::Task TwoWorks(Task& t, Time each, std::string name, Log* log) {
  co_await t.Run(each);
  log->push_back({name + "0", t.cpu()->sim().Now()});
  co_await t.Run(each);
  log->push_back({name + "1", t.cpu()->sim().Now()});
}

// A task made runnable while another runs waits for it to sleep or exit:
// the end of one Run is no preemption point.
TEST(CpuTest, ARunningTaskKeepsItsCpuBetweenItsWorks) {
  Machine m(1);
  Task a("a", {0}), b("b", {0});
  Log log;
  m.sched.Start(a, TwoWorks(a, 5_us, "a", &log));
  m.sim.Spawn(StartAt(m, 1_us, b, Logged(m.cpu(0), 1_us, "b", &log)));
  m.sim.RunUntil(50_us);
  const Log want = {{"a0", 5_us}, {"a1", 10_us}, {"b", 11_us}};
  EXPECT_EQ(log, want);
  EXPECT_EQ(a.nivcsw(), 0u);
  EXPECT_EQ(b.run_delay(), 9_us);  // runnable at 1us, on the CPU at 10us
}

// Polls until `ready` is notified, then reaps for 1us.
sim::Task Poller(Task& t, sim::Signal& ready, Log* log) {
  Cpu& cpu = *t.cpu();
  co_await cpu.SpinUntil(ready.Wait(), CpuTime::kPoll);
  log->push_back({"woke", cpu.sim().Now()});
  co_await cpu.Run(1_us);
  log->push_back({"reaped", cpu.sim().Now()});
}

sim::Task NotifyAt(sim::Simulator& sim, sim::Signal& s, Time at) {
  co_await sim.Delay(at - sim.Now());
  s.NotifyAll();
}

TEST(CpuTest, PollingKeepsTheCpuBusyAndInterruptsPreemptIt) {
  Machine m(1);
  Task poller("poller", {0}), other("other", {0});
  sim::Signal ready(m.sim);
  Log log;
  m.sched.Start(poller, Poller(poller, ready, &log));
  m.sim.Spawn(RaiseAt(m.cpu(0), 3_us, Logged(m.cpu(0), 2_us, "irq", &log)));
  m.sim.Spawn(StartAt(m, 4_us, other, Logged(m.cpu(0), 1_us, "other", &log)));
  m.sim.Spawn(NotifyAt(m.sim, ready, 10_us));
  m.sim.RunUntil(12_us);
  // The interrupt runs at once, not after the poll; the other task waits
  // until the poller has exited.
  const Log want = {{"irq", 5_us}, {"woke", 10_us}, {"reaped", 11_us}, {"other", 12_us}};
  EXPECT_EQ(log, want);
  const Cpu& cpu = m.cpu(0);
  EXPECT_EQ(cpu.TimeIn(CpuTime::kIdle), 0_us);
  EXPECT_DOUBLE_EQ(cpu.BusyShare(), 1.0);
  EXPECT_EQ(cpu.TimeIn(CpuTime::kPoll), 8_us);  // 0-3us and 5-10us
  EXPECT_EQ(cpu.TimeIn(CpuTime::kIrq), 2_us);
  EXPECT_EQ(cpu.TimeIn(CpuTime::kSystem), 2_us);
}

// The condition a task polls for comes true while a handler runs on its
// CPU: the poll ends when the handler returns, not inside it.
TEST(CpuTest, APollWhoseConditionComesTrueDuringAnInterruptEndsWhenTheHandlerReturns) {
  Machine m(1);
  Task poller("poller", {0});
  sim::Signal ready(m.sim);
  Log log;
  m.sched.Start(poller, Poller(poller, ready, &log));
  m.sim.Spawn(RaiseAt(m.cpu(0), 3_us, Logged(m.cpu(0), 2_us, "irq", &log)));
  m.sim.Spawn(NotifyAt(m.sim, ready, 4_us));
  m.sim.RunUntil(50_us);
  const Log want = {{"irq", 5_us}, {"woke", 5_us}, {"reaped", 6_us}};
  EXPECT_EQ(log, want);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kPoll), 3_us);
}

// Works 1us, then sleeps until `*flag`.
sim::Task WorkThenSleep(Task& t, bool* flag, Log* log) {
  co_await t.Run(1_us);
  co_await testbed::SleepUntil(t, [flag] { return *flag; });
  log->push_back({"back", t.cpu()->sim().Now()});
}

// An interrupt handler: 1us of work, then the condition and the wake-up.
sim::Task WakeHandler(Cpu& cpu, Task& t, bool* flag) {
  co_await cpu.Run(1_us);
  *flag = true;
  co_await cpu.scheduler()->TryToWakeUp(t, cpu);
}

// The sleeper on CPU 0 is woken at 10us by an interrupt handler on the
// waker's CPU. The sleeper's CPU pays the switches, the waker's CPU the
// handler and try_to_wake_up; the reschedule IPI's latency delays only a
// wake-up from another CPU.
TEST(CpuTest, SleepAndWakeUpAreChargedOnTheCpusTheyRunOn) {
  SchedCosts costs;
  costs.context_switch = 500_ns;
  costs.try_to_wake_up = 300_ns;
  costs.wakeup_latency = 2_us;
  for (const int waker : {0, 1}) {
    SCOPED_TRACE(waker);
    Machine m(2, costs);
    Task t("t", {0});
    bool flag = false;
    Log log;
    m.sched.Start(t, WorkThenSleep(t, &flag, &log));
    m.sim.Spawn(RaiseAt(m.cpu(waker), 10_us, WakeHandler(m.cpu(waker), t, &flag)));
    m.sim.RunUntil(20_us);
    // Handler 10-11us, try_to_wake_up 11-11.3us; the IPI when remote; the
    // switch in.
    const Time ipi = waker == 0 ? Time::Zero() : costs.wakeup_latency;
    const Log want = {{"back", 11_us + costs.try_to_wake_up + ipi + costs.context_switch}};
    EXPECT_EQ(log, want);
    EXPECT_EQ(t.nvcsw(), 1u);
    EXPECT_EQ(t.wakeups(), 1u);
    EXPECT_EQ(t.cpu(), &m.cpu(0));
    // CPU 0: in at the start, out to sleep, in on the wake-up, out at the
    // exit; and the task's 1us.
    EXPECT_EQ(m.cpu(0).switches(), 4u);
    EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSystem), costs.context_switch * 4 + 1_us);
    EXPECT_EQ(m.cpu(waker).TimeIn(CpuTime::kIrq), 1_us + costs.try_to_wake_up);
    EXPECT_EQ(m.cpu(1 - waker).TimeIn(CpuTime::kIrq), Time::Zero());
  }
}

// The sleep loop with the way from the check into __schedule() costing
// `to_schedule` (as io_schedule()'s plug flush does): a wake-up in that
// window finds the task still on its runqueue.
sim::Task SleepWithWindow(Task& t, bool* flag, Time to_schedule, Log* log) {
  for (;;) {
    t.SetState(Task::State::kUninterruptible);
    if (*flag) break;
    co_await t.Run(to_schedule);
    co_await t.Schedule();
  }
  t.SetState(Task::State::kRunning);
  log->push_back({"back", t.cpu()->sim().Now()});
}

TEST(CpuTest, AWakeUpBeforeScheduleCostsOnlyTheFastPathAndTheTaskDoesNotSleep) {
  SchedCosts costs;
  costs.context_switch = 500_ns;
  costs.try_to_wake_up = 300_ns;
  costs.try_to_wake_up_fast = 20_ns;
  Machine m(1, costs);
  Task t("t", {0});
  bool flag = false;
  Log log;
  m.sched.Start(t, SleepWithWindow(t, &flag, 1_us, &log));
  // The window runs 0.5-1.5us (after the switch in); the handler preempts
  // it at 1us.
  m.sim.Spawn(RaiseAt(m.cpu(0), 1_us, WakeHandler(m.cpu(0), t, &flag)));
  m.sim.RunUntil(20_us);
  // Handler 1-2us, ttwu_runnable 2-2.02us, the window's last 0.5us; then
  // schedule() returns at once and the loop finds the flag.
  const Log want = {{"back", costs.context_switch + 1_us + 1_us + costs.try_to_wake_up_fast}};
  EXPECT_EQ(log, want);
  EXPECT_EQ(t.nvcsw(), 0u);
  EXPECT_EQ(t.wakeups(), 0u);
  EXPECT_EQ(m.sched.wakeups(), 0u);
  EXPECT_EQ(m.sched.fast_wakeups(), 1u);
  EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kIrq), 1_us + costs.try_to_wake_up_fast);
  EXPECT_EQ(m.cpu(0).switches(), 2u);  // in at the start, out at the exit
}

}  // namespace
}  // namespace models
