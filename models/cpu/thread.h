// A kernel task pinned to one CPU, which sleeps and is woken.
//
// The thread's work runs through its CPU's Exec engine (cpu.h), so it
// serializes with the interrupt handlers of that CPU. Sleeping and waking
// charge the scheduler costs of SchedCosts:
//
//   Schedule()  -- schedule() with the task in TASK_UNINTERRUPTIBLE
//                  (io_schedule(), kernel/sched/core.c, Linux 5.13): one
//                  context switch on the thread's CPU, to idle; then the
//                  task is off the CPU until woken.
//   WakeUp(cpu) -- try_to_wake_up() (kernel/sched/core.c, Linux 5.13) run
//                  by code on `cpu` (often an interrupt handler): the
//                  try_to_wake_up cost on the waker's CPU, in the waker's
//                  context; then one context switch on the thread's CPU
//                  (idle to the task), after which Schedule() returns.
//
// Usage follows the kernel's sleep loop:
//
//   while (!rq.done) co_await thread.Schedule();
//
// A wakeup that finds the task not asleep (TASK_RUNNING, or still on its
// way into schedule()) costs nothing and makes the next Schedule() return at
// once, as set_current_state()/schedule() do after a racing wake-up; the
// loop's recheck handles both. Not modeled: run queues with more than one
// runnable task per CPU (no time slices, no preemption by the woken task),
// migration, and the IPI of a wakeup across CPUs.
#ifndef VIOSIM_MODELS_CPU_THREAD_H_
#define VIOSIM_MODELS_CPU_THREAD_H_

#include <coroutine>
#include <cstdint>
#include <string>

#include "models/cpu/cpu.h"
#include "sim/task.h"

namespace models {

class Thread {
 public:
  Thread(Cpu& cpu, std::string name);
  Thread(const Thread&) = delete;
  Thread& operator=(const Thread&) = delete;

  Cpu& cpu() const { return *cpu_; }
  const std::string& name() const { return name_; }

  // Task-context work of this thread: `co_await thread.Run(cost)`.
  Cpu::ExecAwaiter Run(sim::Time cost) { return cpu_->Exec(cost); }

  // schedule(): sleeps until WakeUp, unless a wakeup is already pending.
  sim::Task Schedule();

  // try_to_wake_up() from code running on `waker`. Never suspends.
  void WakeUp(Cpu& waker);

  bool asleep() const { return state_ != State::kRunning; }

  // Voluntary context switches (sleeps that switched out), as fio's ctx.
  uint64_t voluntary_switches() const { return nvcsw_; }
  // Wakeups that found the task asleep.
  uint64_t wakeups() const { return wakeups_; }
  void ResetStats() {
    nvcsw_ = 0;
    wakeups_ = 0;
  }

 private:
  enum class State : uint8_t {
    kRunning,   // on its CPU (or about to be)
    kSleeping,  // in schedule(), off the CPU
    kWaking,    // woken: try_to_wake_up or the switch back in is under way
  };
  struct SleepAwaiter {
    Thread* t;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) { t->sleeper_ = h; }
    void await_resume() const noexcept {}
  };

  Cpu* cpu_;
  std::string name_;
  State state_ = State::kRunning;
  bool wake_pending_ = false;
  std::coroutine_handle<> sleeper_;  // Schedule(), once off the CPU
  Cpu::Work wake_;                   // try_to_wake_up on the waker's CPU
  uint64_t nvcsw_ = 0;
  uint64_t wakeups_ = 0;
};

}  // namespace models

#endif  // VIOSIM_MODELS_CPU_THREAD_H_
