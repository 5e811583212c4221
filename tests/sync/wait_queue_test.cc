// The wait queue: wake_up() always takes the queue's lock, wq_has_sleeper()
// never does; try_to_wake_up() runs inside the lock hold; a woken waiter
// runs after a context switch; exclusive waiters are woken nr_exclusive at
// a time; finish_wait() takes the lock only for an entry still queued.
#include "models/sync/wait_queue.h"

#include <vector>

#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "models/sync/handoff_costs.h"
#include "models/sync/lock_stat.h"
#include "models/sync/spinlock.h"
#include "sim/task.h"
#include "tests/sync/machine.h"

namespace models {
namespace {

using sim::Time;
using namespace sim::literals;  // NOLINT

constexpr Time kHasSleeper = 5_ns;

SchedCosts Costs() {
  SchedCosts c;
  c.context_switch = 500_ns;
  c.try_to_wake_up = 777_ns;
  c.try_to_wake_up_fast = 20_ns;
  c.wakeup_latency = 2_us;
  return c;
}

WaitQueue MakeQueue(Machine& m) {
  return WaitQueue(m.sim, "wq", SpinlockKind::kQueued, EpycRomeHandoffCosts(), kHasSleeper);
}

// wait_event(): the kernel's loop until `*cond`; records when it is done.
sim::Task WaitEvent(Task& t, WaitQueue& wq, const bool* cond, bool exclusive, Time* done) {
  for (;;) {
    if (exclusive) {
      co_await wq.PrepareToWaitExclusive(*t.cpu(), t, Task::State::kUninterruptible);
    } else {
      co_await wq.PrepareToWait(*t.cpu(), t, Task::State::kUninterruptible);
    }
    if (*cond) break;
    co_await t.Schedule();
  }
  co_await wq.FinishWait(*t.cpu(), t);
  *done = t.cpu()->sim().Now();
}

// At `at`, makes the condition true and wakes `nr_exclusive` exclusive
// waiters (and every other one), behind wq_has_sleeper() if `guarded`.
// Records when the wake-up returned and the queue lock's row just then.
struct Wake {
  Time at;
  int nr_exclusive = 1;
  bool guarded = false;
  Time done = Time::Max();
  LockStat lock;
};

sim::Task Waker(Task& t, WaitQueue& wq, bool* cond, Wake* w) {
  Cpu& cpu = *t.cpu();
  co_await cpu.RunUser(w->at - cpu.sim().Now());
  *cond = true;
  bool wake = true;
  if (w->guarded) wake = co_await wq.HasSleeper(cpu);
  if (wake) co_await wq.WakeUp(cpu, w->nr_exclusive);
  w->done = cpu.sim().Now();
  w->lock = wq.lock().stat();
}

// A wake-up at 10us on cpu0; with `sleeper`, a waiter on cpu1 sleeps from
// the start. The queue's row is reset at 5us.
Wake WakeAt10us(bool sleeper, bool guarded, Time* woke = nullptr) {
  Machine m(2, Costs());
  WaitQueue wq = MakeQueue(m);
  bool cond = false;
  Time done = Time::Max();
  if (sleeper) {
    Task& t = m.NewTask(1);
    m.sched.Start(t, WaitEvent(t, wq, &cond, false, woke != nullptr ? woke : &done));
  }
  Wake w{10_us};
  w.guarded = guarded;
  Task& waker = m.NewTask(0);
  m.sched.Start(waker, Waker(waker, wq, &cond, &w));
  m.sim.RunUntil(5_us);
  EXPECT_EQ(wq.active(), sleeper);
  wq.ResetStats();
  m.sim.RunUntil(1_ms);
  EXPECT_FALSE(wq.active());
  return w;
}

TEST(WaitQueueTest, WakeUpOnAnEmptyQueueTakesTheQueueLock) {
  const Wake w = WakeAt10us(/*sleeper=*/false, /*guarded=*/false);
  EXPECT_EQ(w.lock.acquisitions, 1u);
  EXPECT_EQ(w.lock.hold.sum(), 0);
  EXPECT_EQ(w.done, 10_us);
}

TEST(WaitQueueTest, WakeUpGuardedByHasSleeperTakesNoLockOnAnEmptyQueue) {
  const Wake w = WakeAt10us(/*sleeper=*/false, /*guarded=*/true);
  EXPECT_EQ(w.lock.acquisitions, 0u);
  // Only the barrier and the list check.
  EXPECT_EQ(w.done, 10_us + kHasSleeper);
}

TEST(WaitQueueTest, WakeUpGuardedByHasSleeperTakesTheLockWhenATaskWaits) {
  const Wake w = WakeAt10us(/*sleeper=*/true, /*guarded=*/true);
  EXPECT_EQ(w.lock.acquisitions, 1u);
  EXPECT_EQ(w.done, 10_us + kHasSleeper + Costs().try_to_wake_up);
}

TEST(WaitQueueTest, WakeUpChargesTryToWakeUpInsideTheLockHold) {
  const Wake empty = WakeAt10us(/*sleeper=*/false, /*guarded=*/false);
  const Wake one = WakeAt10us(/*sleeper=*/true, /*guarded=*/false);
  ASSERT_EQ(empty.lock.hold.count(), 1);
  ASSERT_EQ(one.lock.hold.count(), 1);
  EXPECT_EQ(Time::Picos(one.lock.hold.max() - empty.lock.hold.max()), Costs().try_to_wake_up);
  EXPECT_EQ(one.done, 10_us + Costs().try_to_wake_up);
}

TEST(WaitQueueTest, WaiterWokenByWakeUpRunsAfterAContextSwitch) {
  Time woke = Time::Max();
  WakeAt10us(/*sleeper=*/true, /*guarded=*/false, &woke);
  // try_to_wake_up on the waker, the reschedule IPI to idle cpu1, then
  // cpu1's switch to the waiter.
  const SchedCosts c = Costs();
  EXPECT_EQ(woke, 10_us + c.try_to_wake_up + c.wakeup_latency + c.context_switch);
}

TEST(WaitQueueTest, WakeUpWakesEveryNonExclusiveWaiterAndNrExclusiveExclusiveOnes) {
  Machine m(5, Costs());
  WaitQueue wq = MakeQueue(m);
  bool cond = false;
  // cpu1 and cpu4 wait non-exclusively, cpu2 then cpu3 exclusively.
  const bool exclusive[] = {false, false, true, true, false};
  std::vector<Time> done(5, Time::Max());
  std::vector<Task*> waiters(5, nullptr);
  for (int i = 1; i <= 4; ++i) {
    waiters[i] = &m.NewTask(i);
    m.sched.Start(*waiters[i], WaitEvent(*waiters[i], wq, &cond, exclusive[i], &done[i]));
  }
  Wake w{10_us};
  Task& waker = m.NewTask(0);
  m.sched.Start(waker, Waker(waker, wq, &cond, &w));
  m.sim.RunUntil(5_us);
  EXPECT_EQ(wq.size(), 4);
  m.sim.RunUntil(100_us);
  EXPECT_NE(done[1], Time::Max());
  EXPECT_NE(done[2], Time::Max());
  EXPECT_EQ(done[3], Time::Max());  // the second exclusive waiter sleeps on
  EXPECT_NE(done[4], Time::Max());
  EXPECT_TRUE(wq.Queued(*waiters[3]));
  EXPECT_EQ(waiters[3]->state(), Task::State::kUninterruptible);
  // Three try_to_wake_up() inside the one hold.
  EXPECT_EQ(Time::Picos(w.lock.hold.max()), Costs().try_to_wake_up * 3);
}

// prepare_to_wait(); if (!cond) schedule(); finish_wait();
sim::Task WaitOnce(Task& t, WaitQueue& wq, const bool* cond) {
  co_await wq.PrepareToWait(*t.cpu(), t, Task::State::kUninterruptible);
  if (!*cond) co_await t.Schedule();
  co_await wq.FinishWait(*t.cpu(), t);
}

TEST(WaitQueueTest, FinishWaitTakesTheLockOnlyIfTheEntryIsStillQueued) {
  for (bool cond_already_true : {true, false}) {
    SCOPED_TRACE(cond_already_true ? "condition true at once" : "woken");
    Machine m(2, Costs());
    WaitQueue wq = MakeQueue(m);
    bool cond = cond_already_true;
    Task& t = m.NewTask(1);
    m.sched.Start(t, WaitOnce(t, wq, &cond));
    Wake w{10_us};
    Task& waker = m.NewTask(0);
    if (!cond_already_true) m.sched.Start(waker, Waker(waker, wq, &cond, &w));
    m.sim.RunUntil(1_ms);
    EXPECT_FALSE(wq.active());
    EXPECT_EQ(t.state(), Task::State::kDead);
    // prepare_to_wait, then either finish_wait's removal or the wake-up
    // (whose autoremove leaves finish_wait nothing to lock for).
    EXPECT_EQ(wq.lock().stat().acquisitions, 2u);
  }
}

}  // namespace
}  // namespace models
