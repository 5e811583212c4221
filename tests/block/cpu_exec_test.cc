// The CPU's shared execution (Exec/ExecIrq/SpinUntil) and Thread's sleep and
// wakeup costs: the serialization the block stack relies on.
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/thread.h"
#include "sim/simulator.h"
#include "sim/task.h"

namespace models {
namespace {

using namespace sim::literals;
using Log = std::vector<std::pair<std::string, sim::Time>>;

// Runs `chunks` task-context chunks back to back, starting at `start`,
// logging the end of each.
sim::Task TaskFlow(sim::Simulator& sim, Cpu& cpu, sim::Time start, std::vector<sim::Time> chunks,
                   std::string name, Log* log) {
  co_await sim.Delay(start);
  for (size_t i = 0; i < chunks.size(); ++i) {
    co_await cpu.Exec(chunks[i]);
    log->push_back({name + std::to_string(i), sim.Now()});
  }
}

sim::Task IrqFlow(sim::Simulator& sim, Cpu& cpu, sim::Time start, sim::Time cost, std::string name, Log* log) {
  co_await sim.Delay(start);
  co_await cpu.ExecIrq(cost);
  log->push_back({name, sim.Now()});
}

TEST(CpuExecTest, ChunksRunBackToBackAndTheCpuIdlesOtherwise) {
  sim::Simulator sim;
  Cpu cpu(sim, 0, "cpu0");
  Log log;
  sim.Spawn(TaskFlow(sim, cpu, 2_us, {3_us, 4_us}, "t", &log));
  sim.RunUntil(20_us);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].second, 5_us);
  EXPECT_EQ(log[1].second, 9_us);
  EXPECT_EQ(cpu.BusyTime(), 7_us);
  EXPECT_EQ(cpu.TimeIn(CpuState::kRunning), 7_us);
  EXPECT_EQ(cpu.TimeIn(CpuState::kIdle), 13_us);
  EXPECT_EQ(cpu.TimeInContext(ExecContext::kTask), 7_us);
  EXPECT_DOUBLE_EQ(cpu.BusyShare(), 7.0 / 20.0);
  EXPECT_EQ(cpu.state(), CpuState::kIdle);
}

TEST(CpuExecTest, InterruptWaitsForTheChunkBoundaryThenGoesFirst) {
  sim::Simulator sim;
  Cpu cpu(sim, 0, "cpu0");
  Log log;
  sim.Spawn(TaskFlow(sim, cpu, 0_us, {10_us, 10_us}, "t", &log));
  sim.Spawn(IrqFlow(sim, cpu, 3_us, 2_us, "irq", &log));
  sim.RunUntil(50_us);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0], std::make_pair(std::string("t0"), 10_us));
  EXPECT_EQ(log[1], std::make_pair(std::string("irq"), 12_us));
  EXPECT_EQ(log[2], std::make_pair(std::string("t1"), 22_us));
  EXPECT_EQ(cpu.TimeInContext(ExecContext::kIrq), 2_us);
  EXPECT_EQ(cpu.TimeInContext(ExecContext::kTask), 20_us);
}

TEST(CpuExecTest, TheRunningFlowKeepsTheCpuAheadOfAWaitingOne) {
  sim::Simulator sim;
  Cpu cpu(sim, 0, "cpu0");
  Log log;
  sim.Spawn(TaskFlow(sim, cpu, 0_us, {5_us, 5_us}, "a", &log));
  sim.Spawn(TaskFlow(sim, cpu, 1_us, {1_us}, "b", &log));
  sim.RunUntil(50_us);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0], std::make_pair(std::string("a0"), 5_us));
  EXPECT_EQ(log[1], std::make_pair(std::string("a1"), 10_us));
  EXPECT_EQ(log[2], std::make_pair(std::string("b0"), 11_us));
}

sim::Task IrqsOffFlow(sim::Simulator& sim, Cpu& cpu, Log* log) {
  cpu.LocalIrqSave();
  co_await cpu.Exec(10_us);
  co_await cpu.Exec(10_us);
  log->push_back({"restore", sim.Now()});
  cpu.LocalIrqRestore();
  co_await cpu.Exec(1_us);
  log->push_back({"after", sim.Now()});
}

TEST(CpuExecTest, InterruptsWaitWhileDisabled) {
  sim::Simulator sim;
  Cpu cpu(sim, 0, "cpu0");
  Log log;
  sim.Spawn(IrqsOffFlow(sim, cpu, &log));
  sim.Spawn(IrqFlow(sim, cpu, 1_us, 2_us, "irq", &log));
  sim.RunUntil(50_us);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0], std::make_pair(std::string("restore"), 20_us));
  // Taken as soon as interrupts are enabled again, before the task goes on.
  EXPECT_EQ(log[1], std::make_pair(std::string("irq"), 22_us));
  EXPECT_EQ(log[2], std::make_pair(std::string("after"), 23_us));
  EXPECT_EQ(cpu.IrqOffTime(), 20_us);
}

sim::Task Spinner(sim::Simulator& sim, Cpu& cpu, sim::Signal& ready, Log* log) {
  co_await cpu.SpinUntil(ready.Wait());
  log->push_back({"woke", sim.Now()});
  co_await cpu.Exec(1_us);
  log->push_back({"reaped", sim.Now()});
}

sim::Task NotifyAt(sim::Simulator& sim, sim::Signal& s, sim::Time at) {
  co_await sim.Delay(at);
  s.NotifyAll();
}

TEST(CpuExecTest, SpinningKeepsTheCpuBusyAndInterruptsPreemptIt) {
  sim::Simulator sim;
  Cpu cpu(sim, 0, "cpu0");
  sim::Signal ready(sim);
  Log log;
  sim.Spawn(Spinner(sim, cpu, ready, &log));
  sim.Spawn(IrqFlow(sim, cpu, 3_us, 2_us, "irq", &log));
  sim.Spawn(TaskFlow(sim, cpu, 4_us, {1_us}, "other", &log));
  sim.Spawn(NotifyAt(sim, ready, 10_us));
  sim.RunUntil(12_us);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0], std::make_pair(std::string("irq"), 5_us));  // at once, not after the spin
  EXPECT_EQ(log[1], std::make_pair(std::string("woke"), 10_us));
  // Another flow's task work waited for the spin to end.
  EXPECT_EQ(log[2], std::make_pair(std::string("other0"), 11_us));
  EXPECT_EQ(log[3], std::make_pair(std::string("reaped"), 12_us));
  EXPECT_EQ(cpu.TimeIn(CpuState::kIdle), 0_us);
  EXPECT_DOUBLE_EQ(cpu.BusyShare(), 1.0);
  EXPECT_EQ(cpu.TimeInContext(ExecContext::kPoll), 8_us);
  EXPECT_EQ(cpu.TimeInContext(ExecContext::kIrq), 2_us);
  EXPECT_EQ(cpu.TimeInContext(ExecContext::kTask), 2_us);
}

// A thread that works 1us, then sleeps until woken.
sim::Task Sleeper(sim::Simulator& sim, Thread& t, bool* flag, Log* log) {
  co_await t.Run(1_us);
  while (!*flag) co_await t.Schedule();
  log->push_back({"back", sim.Now()});
}

// An interrupt handler on `cpu` at `at`: 1us of work, then the wakeup.
sim::Task Waker(sim::Simulator& sim, Cpu& cpu, Thread& t, bool* flag, sim::Time at) {
  co_await sim.Delay(at);
  co_await cpu.ExecIrq(1_us);
  *flag = true;
  t.WakeUp(cpu);
}

TEST(ThreadTest, SleepAndWakeupChargeSwitchesAndTryToWakeUp) {
  sim::Simulator sim;
  Cpu cpu(sim, 0, "cpu0");
  cpu.set_sched_costs(SchedCosts{500_ns, 300_ns});
  Thread t(cpu, "t");
  bool flag = false;
  Log log;
  sim.Spawn(Sleeper(sim, t, &flag, &log));
  sim.Spawn(Waker(sim, cpu, t, &flag, 10_us));
  sim.RunUntil(20_us);
  ASSERT_EQ(log.size(), 1u);
  // Handler 10-11, try_to_wake_up 11-11.3 (interrupt context), switch in
  // 11.3-11.8.
  EXPECT_EQ(log[0].second, 11800_ns);
  EXPECT_EQ(t.voluntary_switches(), 1u);
  EXPECT_EQ(t.wakeups(), 1u);
  // 1 work + 0.5 switch out + 1 handler + 0.3 wakeup + 0.5 switch in.
  EXPECT_EQ(cpu.BusyTime(), 3300_ns);
  EXPECT_EQ(cpu.TimeInContext(ExecContext::kIrq), 1300_ns);
  EXPECT_FALSE(t.asleep());
}

TEST(ThreadTest, WakeupBeforeSleepCostsNothing) {
  sim::Simulator sim;
  Cpu cpu(sim, 0, "cpu0");
  cpu.set_sched_costs(SchedCosts{500_ns, 300_ns});
  Thread t(cpu, "t");
  bool flag = false;
  Log log;
  // The interrupt arrives while the thread works (0-1us); it is taken at
  // the chunk boundary (1-2us), after the thread found its condition false
  // but before it switched out: schedule() then keeps the thread.
  sim.Spawn(Sleeper(sim, t, &flag, &log));
  sim.Spawn(Waker(sim, cpu, t, &flag, 500_ns));
  sim.RunUntil(20_us);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].second, 2_us);
  EXPECT_EQ(t.voluntary_switches(), 0u);
  EXPECT_EQ(t.wakeups(), 0u);
  EXPECT_EQ(cpu.BusyTime(), 2_us);
}

TEST(ThreadTest, WakeupFromAnotherCpuChargesEachItsShare) {
  sim::Simulator sim;
  Cpu cpu0(sim, 0, "cpu0");
  Cpu cpu1(sim, 1, "cpu1");
  cpu0.set_sched_costs(SchedCosts{500_ns, 300_ns});
  cpu1.set_sched_costs(SchedCosts{500_ns, 300_ns});
  Thread t(cpu0, "t");
  bool flag = false;
  Log log;
  sim.Spawn(Sleeper(sim, t, &flag, &log));
  sim.Spawn(Waker(sim, cpu1, t, &flag, 10_us));
  sim.RunUntil(20_us);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].second, 11800_ns);
  EXPECT_EQ(cpu1.BusyTime(), 1300_ns);  // handler + try_to_wake_up
  EXPECT_EQ(cpu0.BusyTime(), 2_us);     // work + two switches
}

TEST(CpuExecTest, RunStaysOutsideTheExecEngine) {
  // Cpu::Run, as the lock benchmark uses it: one event, state running, no
  // context accounting.
  sim::Simulator sim;
  Cpu cpu(sim, 0, "cpu0");
  auto flow = [](Cpu& c) -> sim::Task { co_await c.Run(5_us); };
  sim.Spawn(flow(cpu));
  sim.RunUntil(10_us);
  EXPECT_EQ(sim.events(), 2u);
  EXPECT_EQ(cpu.TimeIn(CpuState::kRunning), 10_us);
  EXPECT_EQ(cpu.TimeInContext(ExecContext::kNone), 10_us);
}

}  // namespace
}  // namespace models
