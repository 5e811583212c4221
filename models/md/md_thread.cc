#include "models/md/md_thread.h"

#include <utility>

namespace models {

MdThread::MdThread(sim::Simulator& sim, std::string name, const LockHandoffCosts& handoff, sim::Time loop,
                   absl::AnyInvocable<sim::Task(Task&)> run)
    : task_(name),
      wqueue_(sim, "&" + name + "->wqueue", SpinlockKind::kQueued, handoff),
      loop_(loop),
      run_(std::move(run)) {}

sim::Task MdThread::Wakeup(Cpu& cpu) {
  ++wakeups_;
  wakeup_ = true;  // set_bit(THREAD_WAKEUP, &thread->flags)
  co_await wqueue_.WakeUp(cpu, 1);
  if (!started_) {
    started_ = true;
    sched_->Start(task_, Body());
  }
}

// md_thread(): wait_event_interruptible_timeout on THREAD_WAKEUP, the bit
// cleared, one call of the daemon; again.
sim::Task MdThread::Body() {
  for (;;) {
    for (;;) {
      co_await wqueue_.PrepareToWait(*task_.cpu(), task_, Task::State::kInterruptible);
      if (wakeup_) break;
      co_await task_.Schedule();
    }
    co_await wqueue_.FinishWait(*task_.cpu(), task_);
    wakeup_ = false;  // clear_bit(THREAD_WAKEUP, &thread->flags)
    ++runs_;
    co_await task_.Run(loop_);
    co_await run_(task_);
  }
}

}  // namespace models
