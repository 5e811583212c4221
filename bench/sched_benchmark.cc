// Engine speed under the fair scheduler: 400 tasks on 128 CPUs (2 sockets x
// 8 LLCs x 8 cores, no SMT), each running Exp(50us) of user work, then
// sleeping Exp(50us) until its timer fires and wakes it with
// try_to_wake_up() (from a timer process, not from a CPU: the waker's share
// of the wake-up is not charged). They ask for 200 CPUs' worth of work, so
// runqueues hold waiting tasks, woken sleepers preempt, and the balancer
// moves tasks. A context switch costs 1us and the reschedule IPI to an idle
// CPU 1us. Prints simulated context switches per CPU-second
// (items_per_second), events per CPU-second, events per switch and the
// share of switches that preempted a running task.
//
//   bazel run -c opt //bench:sched_benchmark
#include <coroutine>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/sched_fair.h"
#include "models/cpu/task.h"
#include "sim/distribution.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace {

using namespace sim::literals;  // NOLINT

constexpr int kSockets = 2, kLlcsPerSocket = 8, kCoresPerLlc = 8;
constexpr int kTasks = 400;
constexpr sim::Time kSimulated = 500_ms;

// A task that alternates work and sleep, and its timer.
struct Sleeper {
  Sleeper(std::string name, uint64_t seed) : task(name), rng(sim::Rng::ForStream(seed, name)) {}
  models::Task task;
  sim::Rng rng;
  bool expired = false;
  std::coroutine_handle<> timer;  // the parked timer process
};

// Parks the calling process; whoever holds the handle resumes it.
struct Park {
  std::coroutine_handle<>* slot;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) { *slot = h; }
  void await_resume() const noexcept {}
};

sim::Task Timer(Sleeper& s, models::Scheduler& sched) {
  for (;;) {
    co_await Park{&s.timer};
    s.expired = true;
    co_await sched.TryToWakeUp(s.task, *s.task.cpu());
  }
}

sim::Task RunSleep(Sleeper& s, sim::Simulator& sim, const sim::Distribution& run, const sim::Distribution& sleep) {
  models::Task& t = s.task;
  for (;;) {
    co_await t.RunUser(run.Sample(s.rng));
    // nanosleep(): arm the timer, then sleep until it has fired.
    s.expired = false;
    sim.ScheduleAt(sim.Now() + sleep.Sample(s.rng), s.timer);
    for (;;) {
      t.SetState(models::Task::State::kInterruptible);
      if (s.expired) break;
      co_await t.Schedule();
    }
    t.SetState(models::Task::State::kRunning);
  }
}

void BM_FairScheduler(benchmark::State& state) {
  const sim::Distribution run = sim::Distribution::Exponential(50_us);
  const sim::Distribution sleep = sim::Distribution::Exponential(50_us);
  models::SchedCosts costs;
  costs.context_switch = 1_us;
  costs.wakeup_latency = 1_us;
  uint64_t switches = 0, events = 0, preemptions = 0;
  for (auto _ : state) {
    sim::Simulator sim;
    models::FairScheduler sched(sim);
    std::vector<std::unique_ptr<models::Cpu>> cpus;
    for (int s = 0; s < kSockets; ++s) {
      for (int l = 0; l < kLlcsPerSocket; ++l) {
        for (int c = 0; c < kCoresPerLlc; ++c) {
          const int llc = s * kLlcsPerSocket + l;
          const int id = static_cast<int>(cpus.size());
          cpus.push_back(std::make_unique<models::Cpu>(sim, id, absl::StrCat("cpu", id),
                                                       models::CpuPlace{s, llc, id}));
          cpus.back()->set_sched_costs(costs);
          sched.AddCpu(*cpus.back());
        }
      }
    }
    std::deque<Sleeper> tasks;
    for (int i = 0; i < kTasks; ++i) {
      tasks.emplace_back(absl::StrCat("task", i), /*seed=*/1);
      sim.Spawn(Timer(tasks.back(), sched));
      sched.Start(tasks.back().task, RunSleep(tasks.back(), sim, run, sleep));
    }
    sim.RunUntil(kSimulated);
    for (const auto& c : cpus) switches += c->switches();
    events += sim.events();
    preemptions += sched.preemptions();
  }
  state.SetItemsProcessed(static_cast<int64_t>(switches));
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events_per_switch"] = static_cast<double>(events) / switches;
  state.counters["preempted_share"] = static_cast<double>(preemptions) / switches;
}
BENCHMARK(BM_FairScheduler)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
