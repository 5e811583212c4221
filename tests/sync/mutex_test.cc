// The sleeping mutex of tasks (models/sync/mutex.h): glibc's futex
// semantics on the task model. A free mutex costs nothing; an unlock with
// sleepers pays try_to_wake_up on the unlocker's CPU; the woken task runs
// after the remote wake-up latency and a context switch; a task arriving in
// between takes the mutex (barging) and the woken one sleeps again.
#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "models/sync/mutex.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"
#include "tests/sync/machine.h"

namespace models {
namespace {

using sim::Time;
using namespace sim::literals;  // NOLINT

SchedCosts Costs() {
  SchedCosts c;
  c.context_switch = 500_ns;
  c.try_to_wake_up = 300_ns;
  c.wakeup_latency = 1_us;
  return c;
}

sim::Task Section(Cpu& cpu, Mutex& m, Time start, Time hold, Time* got, Time* unlocked) {
  co_await cpu.Run(start);
  co_await m.Lock(*cpu.current()->cpu());
  *got = cpu.sim().Now();
  co_await cpu.Run(hold);
  co_await m.Unlock(cpu);
  *unlocked = cpu.sim().Now();
}

TEST(MutexTest, AFreeMutexCostsNothing) {
  Machine m(1, Costs());
  Mutex mu(m.sim, "mu");
  Task& t = m.NewTask(0);
  Time got = Time::Max(), unlocked = Time::Max();
  m.sched.Start(t, Section(m.cpu(0), mu, 1_us, 2_us, &got, &unlocked));
  m.sim.RunUntil(1_ms);
  // The first switch in costs 0.5us; then 1us of work, the lock, 2us held.
  EXPECT_EQ(got, 1500_ns);
  EXPECT_EQ(unlocked, 3500_ns);
  EXPECT_EQ(mu.stat().acquisitions, 1u);
  EXPECT_EQ(mu.stat().contentions, 0u);
}

TEST(MutexTest, UnlockWakesTheSleeperAtTheUnlockersCostAndItRunsAfterItsWakeUpAndASwitch) {
  Machine m(2, Costs());
  Mutex mu(m.sim, "mu");
  Task& holder = m.NewTask(0);
  Task& waiter = m.NewTask(1);
  Time h_got = Time::Max(), h_unlocked = Time::Max(), w_got = Time::Max(), w_unlocked = Time::Max();
  m.sched.Start(holder, Section(m.cpu(0), mu, 0_ns, 10_us, &h_got, &h_unlocked));
  m.sched.Start(waiter, Section(m.cpu(1), mu, 1_us, 1_us, &w_got, &w_unlocked));
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(h_got, 500_ns);                          // after its switch in
  EXPECT_EQ(h_unlocked, 500_ns + 10_us + 300_ns);    // the unlock pays try_to_wake_up
  // The waiter slept at 1.5us (switch out until 2us); woken at 10.8us, its
  // idle CPU starts the switch 1us later, and it runs 0.5us after that.
  EXPECT_EQ(w_got, 10800_ns + 1_us + 500_ns);
  EXPECT_EQ(mu.stat().acquisitions, 2u);
  EXPECT_EQ(mu.stat().contentions, 1u);
  EXPECT_EQ(mu.stat().wait.sum(), static_cast<double>((w_got - 1500_ns).ps()));
  EXPECT_EQ(waiter.nvcsw(), 1u);
}

TEST(MutexTest, ATaskArrivingWhileTheWokenOneComesBackTakesTheMutexAndTheWokenOneSleepsAgain) {
  Machine m(3, Costs());
  Mutex mu(m.sim, "mu");
  Task& holder = m.NewTask(0);
  Task& waiter = m.NewTask(1);
  Task& barger = m.NewTask(2);
  Time h_got, h_unlocked, w_got = Time::Max(), w_unlocked, b_got = Time::Max(), b_unlocked;
  m.sched.Start(holder, Section(m.cpu(0), mu, 0_ns, 10_us, &h_got, &h_unlocked));
  m.sched.Start(waiter, Section(m.cpu(1), mu, 1_us, 1_us, &w_got, &w_unlocked));
  // Arrives at 11.5us: the mutex was released at 10.5us; the woken waiter
  // runs only at 12.3us.
  m.sched.Start(barger, Section(m.cpu(2), mu, 11_us, 5_us, &b_got, &b_unlocked));
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(b_got, 11500_ns);
  EXPECT_GT(w_got, b_unlocked);
  EXPECT_EQ(mu.barged(), 1u);
  EXPECT_EQ(mu.stat().acquisitions, 3u);
  EXPECT_EQ(mu.stat().contentions, 1u);  // the waiter's one acquisition, however often it slept
  EXPECT_EQ(waiter.nvcsw(), 2u);
}

}  // namespace
}  // namespace models
