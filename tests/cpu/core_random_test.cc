// The CPU/task/scheduler core under random interleavings: tasks that work,
// take spinlocks with interrupts off, wait for a hand-off at a set time
// with preemption on (and may be preempted and moved meanwhile), sleep and
// wake each other; interrupt
// handlers that take the same locks and wake tasks; under the pinned and the
// fair scheduler, with and without scheduler costs. Whatever the order, the
// invariants a kernel developer relies on must hold:
//   - every task finishes all the work it asked for, and no sooner than the
//     work itself takes (nothing is lost, nothing runs twice);
//   - a spinlock is never held by two contexts at once;
//   - a timed wait never ends before its time, and no task stays on a CPU
//     waiting for one that has passed;
//   - each CPU's time adds up to the window (user + system + irq + softirq
//     + idle + spin + poll + exit);
//   - the same seed gives the same run, event for event.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/sched_fair.h"
#include "models/cpu/task.h"
#include "models/sync/spinlock.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"
#include "tests/cpu/machine.h"

namespace models {
namespace {

using sim::Time;

constexpr int kLocks = 3;

struct World {
  World(const std::string& policy, int ncpus, int ntasks, uint64_t seed, const SchedCosts& costs)
      : rng(sim::Rng::ForStream(seed, "core_random")) {
    sched = std::move(*MakeScheduler(policy, sim));
    for (int i = 0; i < ncpus; ++i) {
      CpuPlace place;
      place.llc = i / 2;
      place.socket = i / 4;
      place.core = i;
      cpus.push_back(std::make_unique<Cpu>(sim, i, absl::StrCat("cpu", i), place));
      cpus.back()->set_sched_costs(costs);
      sched->AddCpu(*cpus.back());
    }
    for (int l = 0; l < kLocks; ++l) locks.push_back(std::make_unique<Spinlock>(sim, absl::StrCat("l", l), Time::Nanos(50)));
    for (int t = 0; t < ntasks; ++t) {
      std::vector<int> allowed;
      if (policy == "pinned") allowed = {t % ncpus};
      tasks.push_back(std::make_unique<Task>(absl::StrCat("t", t), allowed));
      flags.push_back(false);
      owed.push_back(Time::Zero());
      done_at.push_back(Time::Max());
    }
  }

  Time Draw(int64_t max_ns) { return Time::Nanos(1 + static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(max_ns))); }
  int Pick(int n) { return static_cast<int>(rng.Next() % static_cast<uint64_t>(n)); }

  // A critical section on `cpu` in the caller's context, checking that no
  // one else is inside.
  sim::Task Critical(Cpu& cpu, int l, Time hold) {
    Spinlock& lock = *locks[static_cast<size_t>(l)];
    cpu.LocalIrqSave();
    co_await lock.Lock(cpu);
    EXPECT_EQ(inside[l]++, 0) << "two contexts inside lock " << l;
    co_await cpu.Run(hold);
    --inside[l];
    lock.UnlockIrqRestore(cpu);
  }

  sim::Task Body(int i) {
    Task& me = *tasks[static_cast<size_t>(i)];
    const Time start = sim.Now();
    Time mine;
    for (int step = 0; step < 300; ++step) {
      const int what = Pick(5);
      if (what == 0) {
        const Time w = Draw(3000);
        mine += w;
        co_await me.Run(w);
      } else if (what == 1) {
        const Time h = Draw(500);
        mine += h;
        co_await Critical(*me.cpu(), Pick(kLocks), h);
      } else if (what == 4) {
        const Time at = sim.Now() + Draw(30000);
        co_await testbed::SpinUntilTime{&me, at};
        EXPECT_GE(sim.Now(), at) << me.name() << "'s timed wait ended early";
      } else if (what == 2) {
        // Wake another task (it may be running, queued or asleep).
        const int other = Pick(static_cast<int>(tasks.size()));
        flags[static_cast<size_t>(other)] = true;
        co_await sched->TryToWakeUp(*tasks[static_cast<size_t>(other)], *me.cpu());
      } else {
        // Sleep until woken (or already flagged); a timer wakes everyone
        // eventually, so no task sleeps for ever.
        for (;;) {
          me.SetState(Task::State::kInterruptible);
          if (flags[static_cast<size_t>(i)]) break;
          co_await me.Schedule();
        }
        me.SetState(Task::State::kRunning);
        flags[static_cast<size_t>(i)] = false;
      }
    }
    owed[static_cast<size_t>(i)] = mine;
    done_at[static_cast<size_t>(i)] = sim.Now();
    EXPECT_GE(sim.Now() - start, mine) << me.name() << " finished before its own work could";
  }

  // Interrupts at random times on random CPUs (for about the first 2ms,
  // while the tasks are busy): a handler takes a lock and
  // wakes a task, as a completion handler does.
  sim::Task Handler(Cpu& cpu) {
    co_await cpu.Run(Draw(300));
    co_await Critical(cpu, Pick(kLocks), Draw(200));
    const int t = Pick(static_cast<int>(tasks.size()));
    flags[static_cast<size_t>(t)] = true;
    co_await sched->TryToWakeUp(*tasks[static_cast<size_t>(t)], cpu);
  }

  sim::Task Interrupts() {
    for (int k = 0; k < 1000; ++k) {
      co_await sim.Delay(Draw(4000));
      Cpu& cpu = *cpus[static_cast<size_t>(Pick(static_cast<int>(cpus.size())))];
      cpu.RaiseIrq(Handler(cpu));
    }
  }

  // Every 50us for 90ms, every task is flagged and woken from a CPU's
  // interrupt; the last 10ms of the window are quiet, so that everything
  // has settled when the invariants are checked.
  sim::Task Timer() {
    for (int k = 0; k < 1800; ++k) {
      co_await sim.Delay(Time::Micros(50));
      Cpu& cpu = *cpus[0];
      cpu.RaiseIrq(WakeAll(cpu));
    }
  }
  // Every microsecond: a task on a CPU (no handler running there, the
  // vCPU not standing still) whose timed wait ended before this instant
  // should have gone on.
  sim::Task Probe(Time until) {
    while (sim.Now() + Time::Micros(1) <= until) {
      co_await sim.Delay(Time::Micros(1));
      for (const auto& cpu : cpus) {
        const Task* t = cpu->current();
        if (t == nullptr || cpu->in_irq() || cpu->stolen()) continue;
        if (t->wait_ == Task::Wait::kAt && t->due_ < sim.Now()) {
          ++stuck;
          if (stuck == 1) {
            ADD_FAILURE() << t->name() << " sits on " << cpu->name() << " in a wait that ended at "
                          << sim::FormatTime(t->due_) << ", now " << sim::FormatTime(sim.Now());
          }
        }
      }
    }
  }
  sim::Task WakeAll(Cpu& cpu) {
    for (size_t t = 0; t < tasks.size(); ++t) {
      flags[t] = true;
      co_await sched->TryToWakeUp(*tasks[t], cpu);
    }
  }

  sim::Simulator sim;
  sim::Rng rng;
  std::unique_ptr<Scheduler> sched;
  std::vector<std::unique_ptr<Cpu>> cpus;
  std::vector<std::unique_ptr<Spinlock>> locks;
  std::vector<std::unique_ptr<Task>> tasks;
  std::vector<bool> flags;
  std::vector<Time> owed;
  std::vector<Time> done_at;
  int inside[kLocks] = {0, 0, 0};
  int stuck = 0;
};

struct Case {
  const char* policy;
  int ncpus;
  int ntasks;
  bool costs;
};

class CoreRandomTest : public ::testing::TestWithParam<Case> {};

uint64_t RunOnce(const Case& c, uint64_t seed) {
  SchedCosts costs;
  if (c.costs) {
    costs.context_switch = Time::Nanos(700);
    costs.try_to_wake_up = Time::Nanos(300);
    costs.try_to_wake_up_fast = Time::Nanos(20);
    costs.wakeup_latency = Time::Nanos(900);
  }
  World w(c.policy, c.ncpus, c.ntasks, seed, costs);
  for (int i = 0; i < c.ntasks; ++i) w.sched->Start(*w.tasks[static_cast<size_t>(i)], w.Body(i));
  w.sim.Spawn(w.Interrupts());
  w.sim.Spawn(w.Timer());
  const Time window = Time::Millis(100);
  w.sim.Spawn(w.Probe(window));
  w.sim.RunUntil(window);
  for (int i = 0; i < c.ntasks; ++i) {
    EXPECT_NE(w.done_at[static_cast<size_t>(i)], Time::Max()) << "task " << i << " never finished (seed " << seed << ")";
  }
  for (const auto& cpu : w.cpus) {
    Time sum;
    for (int t = 0; t < kCpuTimes; ++t) sum += cpu->TimeIn(static_cast<CpuTime>(t));
    EXPECT_EQ(sum, window) << cpu->name() << ": time does not add up";
    EXPECT_FALSE(cpu->irqs_disabled()) << cpu->name();
    EXPECT_EQ(cpu->preempt_count(), 0) << cpu->name();
  }
  for (int l = 0; l < kLocks; ++l) EXPECT_FALSE(w.locks[static_cast<size_t>(l)]->locked());
  return w.sim.events();
}

TEST_P(CoreRandomTest, InvariantsHoldAndTheRunRepeatsItself) {
  const Case& c = GetParam();
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(absl::StrCat(c.policy, " seed ", seed));
    const uint64_t a = RunOnce(c, seed);
    const uint64_t b = RunOnce(c, seed);
    EXPECT_EQ(a, b) << "the same seed gave another run";
  }
}

INSTANTIATE_TEST_SUITE_P(Core, CoreRandomTest,
                         ::testing::Values(Case{"pinned", 4, 4, false}, Case{"pinned", 4, 12, true},
                                           Case{"fair", 4, 12, false}, Case{"fair", 8, 24, true},
                                           Case{"fair", 2, 9, true}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return absl::StrCat(i.param.policy, i.param.ncpus, "cpus", i.param.ntasks, "tasks",
                                               i.param.costs ? "_costs" : "_free");
                         });

}  // namespace
}  // namespace models
