// The vhost worker and vhost_work_queue() (models/vhost/vhost.h) on a
// small machine: wakers are interrupt handlers on the other CPUs.
#include "models/vhost/vhost.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/cpu/sched_fair.h"
#include "sim/simulator.h"
#include "models/sync/handoff_costs.h"
#include "sim/task.h"
#include "tests/cpu/machine.h"

namespace models {
namespace {

using sim::Time;

SchedCosts Costs() {
  SchedCosts c;
  c.context_switch = Time::Micros(1);
  c.try_to_wake_up = Time::Nanos(800);
  c.try_to_wake_up_fast = Time::Nanos(100);
  c.wakeup_latency = Time::Micros(2);
  return c;
}

struct Rig {
  explicit Rig(bool outside) : Rig(VhostParams{outside}) {}
  explicit Rig(const VhostParams& params)
      : m(4, Costs()),
        dev(m.sim, m.sched, VhostCosts{{Time::Nanos(50), {}}}, params, SpinlockKind::kTicket,
            LockHandoffCosts::Uniform(Time::Nanos(50))) {
    m.sched.set_ttwu_spins_on_cpu(true);
    for (int i = 0; i < 3; ++i) {
      auto w = std::make_unique<VhostWork>();
      w->name = "work" + std::to_string(i);
      w->fn = [](Task& t) -> sim::Task { co_await t.Run(Time::Micros(3)); };
      works.push_back(std::move(w));
    }
  }
  // A hard interrupt on `cpu` at `at` that queues works[i].
  void QueueAt(Time at, int cpu, int i) { m.sim.Spawn(Raise(at, cpu, i)); }
  sim::Task Raise(Time at, int cpu, int i) {
    co_await m.sim.Delay(at - m.sim.Now());
    Cpu& c = m.cpu(cpu);
    c.RaiseIrq(Handler(c, *works[static_cast<size_t>(i)]));
  }
  sim::Task Handler(Cpu& c, VhostWork& w) { co_await dev.WorkQueue(c, w); }

  testbed::Machine m;
  VhostDev dev;
  std::vector<std::unique_ptr<VhostWork>> works;
};

// Every vhost_work_queue() that put an item on the list is followed by
// exactly one run of it, and an item already on the list is not added
// again; in both variants, with wakers on three CPUs at once.
TEST(VhostDevTest, TheWorkerRunsEachQueuedItemExactlyOnce) {
  for (const bool outside : {false, true}) {
    SCOPED_TRACE(outside ? "wake outside work_lock" : "wake under work_lock");
    Rig r(outside);
    r.dev.Start();
    uint64_t calls = 0;
    for (int k = 0; k < 600; ++k) {
      // Bursts from three CPUs, some at the same instant, some while the
      // worker runs, some while it is switching out or asleep.
      const Time at = Time::Nanos(700) * k + Time::Nanos((k * 37) % 500);
      r.QueueAt(at, 1 + k % 3, (k / 3) % 3);
      ++calls;
    }
    r.m.sim.RunUntil(Time::Millis(5));
    const VhostStats& s = r.dev.stats();
    EXPECT_EQ(s.queue_calls, calls);
    EXPECT_GT(s.queued, 0u);
    EXPECT_LT(s.queued, calls) << "some calls should find their item already queued";
    EXPECT_EQ(s.items_run, s.queued);
    uint64_t runs = 0;
    for (const auto& w : r.works) {
      EXPECT_FALSE(w->queued) << w->name;
      EXPECT_EQ(w->runs, w->queue_seq) << w->name;
      EXPECT_EQ(w->done_seq, w->queue_seq) << w->name << ": the worker saw the last queueing";
      runs += w->runs;
    }
    EXPECT_EQ(runs, s.queued);
  }
}

// A waker that finds the worker inside work->fn (TASK_RUNNING) takes
// try_to_wake_up's fast path: no wake-up of a sleeping task, and under
// work_lock only the list operation and the state check.
TEST(VhostDevTest, WakingARunningWorkerTakesTheFastPath) {
  Rig r(/*outside=*/false);
  r.dev.Start();
  r.QueueAt(Time::Micros(1), 1, 0);  // wakes the sleeping worker
  r.m.sim.RunUntil(Time::Micros(6));  // the worker is inside work0's 3us by now
  ASSERT_EQ(r.dev.worker().state(), Task::State::kRunning);
  r.dev.ResetStats();
  const uint64_t slow = r.m.sched.wakeups();
  const uint64_t fast = r.m.sched.fast_wakeups();
  r.QueueAt(Time::Micros(7), 2, 1);
  r.m.sim.RunUntil(Time::Micros(7) + Time::Nanos(500));
  EXPECT_EQ(r.dev.stats().wakes[static_cast<int>(WakeCase::kRunning)], 1u);
  EXPECT_EQ(r.m.sched.wakeups(), slow);
  EXPECT_EQ(r.m.sched.fast_wakeups(), fast + 1);
  // The hold: list_add_tail (50ns) + try_to_wake_up's fast path (100ns).
  EXPECT_EQ(r.dev.work_lock().stat().hold.max(), static_cast<double>(Time::Nanos(150).ps()));
}

// The first wake-up finds the worker asleep; under work_lock it holds the
// lock for the whole try_to_wake_up, after it only for the list operation.
TEST(VhostDevTest, TheVariantsDifferInWhatWorkLockCovers) {
  for (const bool outside : {false, true}) {
    Rig r(outside);
    r.dev.Start();
    r.m.sim.RunUntil(Time::Micros(5));  // the worker has gone to sleep
    r.QueueAt(Time::Micros(10), 1, 0);
    r.m.sim.RunUntil(Time::Micros(12));
    EXPECT_EQ(r.dev.stats().wakes[static_cast<int>(WakeCase::kAsleep)], 1u);
    const Time hold = Time::Nanos(50) + (outside ? Time::Zero() : Time::Nanos(800));
    EXPECT_EQ(r.dev.work_lock().stat().hold.max(), static_cast<double>(hold.ps())) << outside;
  }
}

// A worker pinned to one CPU (taskset) runs every item there, whichever
// CPU woke it, under the fair scheduler.
TEST(VhostDevTest, APinnedWorkerRunsOnlyOnItsCpu) {
  for (const int pin : {-1, 2}) {
    SCOPED_TRACE(pin);
    sim::Simulator sim;
    FairScheduler sched(sim);
    std::vector<std::unique_ptr<Cpu>> cpus;
    for (int i = 0; i < 4; ++i) {
      cpus.push_back(std::make_unique<Cpu>(sim, i, "cpu" + std::to_string(i), CpuPlace{0, 0, i}));
      cpus.back()->set_sched_costs(Costs());
      sched.AddCpu(*cpus.back());
    }
    VhostParams p;
    p.worker_cpu = pin;
    VhostDev dev(sim, sched, VhostCosts{{Time::Nanos(50), {}}}, p, SpinlockKind::kTicket,
                 LockHandoffCosts::Uniform(Time::Nanos(50)));
    VhostWork w;
    w.name = "work";
    w.fn = [](Task& t) -> sim::Task { co_await t.Run(Time::Micros(3)); };
    dev.Start();
    // An interrupt on each CPU in turn queues the item, every 10us.
    auto raise = [](sim::Simulator& sim, Cpu& c, VhostDev& d, VhostWork& w, Time at) -> sim::Task {
      co_await sim.Delay(at - sim.Now());
      c.RaiseIrq([](Cpu& c, VhostDev& d, VhostWork& w) -> sim::Task { co_await d.WorkQueue(c, w); }(c, d, w));
    };
    for (int k = 0; k < 200; ++k) {
      sim.Spawn(raise(sim, *cpus[static_cast<size_t>(k % 4)], dev, w, Time::Micros(10) * k + Time::Micros(5)));
    }
    sim.RunUntil(Time::Millis(3));
    EXPECT_EQ(dev.stats().items_run, dev.stats().queued);
    EXPECT_GT(dev.stats().wakes[static_cast<int>(WakeCase::kAsleep)], 100u);
    if (pin >= 0) {
      EXPECT_EQ(dev.worker().cpu()->id(), pin);
      EXPECT_EQ(dev.worker().migrations(), 0u);
    } else {
      EXPECT_NE(dev.worker().cpu()->id(), 2) << "unpinned it is elsewhere: the pin is what puts it on CPU 2";
    }
  }
}

// With p->pi_lock modeled, two wakers that queue different items at once
// while the worker sleeps: under work_lock the second waits for work_lock
// through the first's try_to_wake_up and pi_lock is never contended; after
// the patch it waits for pi_lock instead, as long.
TEST(VhostDevTest, WithPiLockThePatchMovesTheSecondWakersWaitToPiLock) {
  Time spin[2];
  for (const bool outside : {false, true}) {
    SCOPED_TRACE(outside ? "wake outside work_lock" : "wake under work_lock");
    VhostParams p;
    p.wake_outside_lock = outside;
    p.ttwu_pi_lock = true;
    Rig r(p);
    r.dev.Start();
    r.m.sim.RunUntil(Time::Micros(5));  // the worker has gone to sleep
    r.m.cpu(1).ResetStats();
    r.m.cpu(2).ResetStats();
    r.QueueAt(Time::Micros(10), 1, 0);
    r.QueueAt(Time::Micros(10), 2, 1);
    r.m.sim.RunUntil(Time::Micros(20));
    EXPECT_EQ(r.dev.stats().queued, 2u);
    EXPECT_EQ(r.dev.pi_lock().stat().contentions, outside ? 1u : 0u);
    EXPECT_EQ(r.dev.work_lock().stat().contentions, 1u);
    spin[outside ? 1 : 0] = r.m.cpu(1).TimeIn(CpuTime::kSpin) + r.m.cpu(2).TimeIn(CpuTime::kSpin);
  }
  // The first waker's try_to_wake_up (800ns) is waited for either way.
  EXPECT_GE(spin[0], Time::Nanos(800));
  EXPECT_GE(spin[1], Time::Nanos(700));
}

// Linux 3.0's try_to_wake_up() on a task still switching out: the waker
// spins (CpuTime::kSpin) until the switch has ended, then wakes it.
TEST(VhostDevTest, AWakerOfATaskSwitchingOutSpinsUntilTheSwitchEnds) {
  testbed::Machine m(2, Costs());
  m.sched.set_ttwu_spins_on_cpu(true);
  Task t("t", {0});
  bool woken = false;
  auto body = [&]() -> sim::Task {
    t.SetState(Task::State::kInterruptible);
    co_await t.Schedule();  // switches out for 1us from t=0
    woken = true;
  };
  m.sched.Start(t, body());
  auto waker = [&]() -> sim::Task {
    co_await m.sim.Delay(Time::Nanos(1300));
    Cpu& c = m.cpu(1);
    c.RaiseIrq([](Scheduler& s, Task& p, Cpu& c) -> sim::Task { co_await s.TryToWakeUp(p, c); }(m.sched, t, c));
  };
  m.sim.Spawn(waker());
  m.sim.RunUntil(Time::Micros(20));
  EXPECT_TRUE(woken);
  // t's first switch in ends at 1us, its switch out at 2us: the waker,
  // from 1.3us on, spins until 2us, then pays try_to_wake_up.
  EXPECT_EQ(m.cpu(1).TimeIn(CpuTime::kSpin), Time::Nanos(700));
}

}  // namespace
}  // namespace models
