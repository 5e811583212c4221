#include "models/cpu/thread.h"

#include <utility>

namespace models {

Thread::Thread(Cpu& cpu, std::string name) : cpu_(&cpu), name_(std::move(name)) {}

// io_schedule() -> schedule() -> __schedule(), kernel/sched/core.c, Linux
// 5.13, with the task already in TASK_UNINTERRUPTIBLE.
sim::Task Thread::Schedule() {
  if (wake_pending_) {
    // Woken between set_current_state() and schedule(): no switch.
    wake_pending_ = false;
    co_return;
  }
  state_ = State::kSleeping;
  // Reaching __schedule(): interrupt work already pending on this CPU runs
  // first (a zero-cost chunk; no event when the CPU is free). A wakeup it
  // makes finds the task still on the CPU: schedule() picks it again.
  co_await cpu_->Exec(sim::Time::Zero());
  if (wake_pending_) {
    wake_pending_ = false;
    state_ = State::kRunning;
    co_return;
  }
  // deactivate_task() and the switch to the idle task, on this CPU.
  co_await cpu_->Exec(cpu_->sched_costs().context_switch);
  ++nvcsw_;
  if (wake_pending_) {
    // Woken while switching out (try_to_wake_up waits for p->on_cpu to
    // clear, then finds the task): back on the CPU with one more switch.
    wake_pending_ = false;
    state_ = State::kWaking;
  } else {
    co_await SleepAwaiter{this};
    sleeper_ = nullptr;
  }
  // Picked again: the switch from idle back to this task.
  co_await cpu_->Exec(cpu_->sched_costs().context_switch);
  state_ = State::kRunning;
}

// try_to_wake_up(), kernel/sched/core.c, Linux 5.13.
void Thread::WakeUp(Cpu& waker) {
  switch (state_) {
    case State::kRunning:
      wake_pending_ = true;
      return;
    case State::kWaking:
      return;
    case State::kSleeping:
      break;
  }
  if (!sleeper_) {
    // Still switching out: the sleep is cut short when the switch ends.
    wake_pending_ = true;
    return;
  }
  ++wakeups_;
  state_ = State::kWaking;
  wake_.cost = waker.sched_costs().try_to_wake_up;
  wake_.level = waker.context();
  wake_.then = sleeper_;
  waker.Post(wake_);
}

}  // namespace models
