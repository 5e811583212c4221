// What the CPU, block and virtio tests build a machine from: a simulator,
// CPUs with one set of scheduler costs, the pinned FIFO scheduler that owns
// them, and the kernel's sleep loop.
#ifndef VIOSIM_TESTS_CPU_MACHINE_H_
#define VIOSIM_TESTS_CPU_MACHINE_H_

#include <coroutine>
#include <memory>
#include <string>
#include <vector>

#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {
namespace testbed {

// `n` CPUs with ids 0..n-1, named `prefix` and their id, on one pinned
// FIFO scheduler.
struct Machine {
  explicit Machine(int n, const SchedCosts& costs = {}, const std::string& prefix = "cpu") : sched(sim) {
    for (int i = 0; i < n; ++i) {
      cpus.push_back(std::make_unique<Cpu>(sim, i, prefix + std::to_string(i)));
      cpus.back()->set_sched_costs(costs);
      sched.AddCpu(*cpus.back());
    }
  }
  Cpu& cpu(int i) { return *cpus[static_cast<size_t>(i)]; }
  std::vector<Cpu*> ptrs() const {
    std::vector<Cpu*> out;
    for (const auto& c : cpus) out.push_back(c.get());
    return out;
  }

  sim::Simulator sim;
  std::vector<std::unique_ptr<Cpu>> cpus;
  PinnedFifoScheduler sched;
};

// The kernel's sleep loop for task `t` (running it): set_current_state(),
// the check, schedule(), until `done()` holds; then TASK_RUNNING.
template <class Cond>
sim::Task SleepUntil(Task& t, Cond done) {
  for (;;) {
    t.SetState(Task::State::kUninterruptible);
    if (done()) break;
    co_await t.Schedule();
  }
  t.SetState(Task::State::kRunning);
}

// `co_await SpinUntilTime{&task, at}`: a wait that another party ends at a
// fixed time (a lock's hand-off, a cache line's transaction), spun on the
// task's CPU with preemption on, so the task may be preempted and moved
// while it waits.
struct SpinUntilTime {
  Task* t;
  sim::Time at;
  bool await_ready() const { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    t->cpu()->BeginSpinWait();
    t->cpu()->ResumeAt(h, at, /*was_irq=*/false);
  }
  void await_resume() const { t->cpu()->EndSpinWait(false); }
};

// A hard interrupt handler that runs `cost` on its CPU and records when it
// ended.
inline sim::Task IrqWork(Cpu& cpu, sim::Time cost, sim::Time* done) {
  co_await cpu.Run(cost);
  *done = cpu.sim().Now();
}

// Raises IrqWork(cpu, cost, done) on `cpu` at `at`.
inline sim::Task RaiseIrqAt(Cpu& cpu, sim::Time at, sim::Time cost, sim::Time* done) {
  co_await cpu.sim().Delay(at - cpu.sim().Now());
  cpu.RaiseIrq(IrqWork(cpu, cost, done));
}

}  // namespace testbed
}  // namespace models

#endif  // VIOSIM_TESTS_CPU_MACHINE_H_
