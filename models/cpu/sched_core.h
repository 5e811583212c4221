// The core's steps that call the policy (SchedCore in sched.h), for the
// files that compile them for a policy: sched.cc (PinnedFifoScheduler) and
// sched_fair.cc (FairScheduler), each with `template class
// SchedCore<Policy>;`.
#ifndef VIOSIM_MODELS_CPU_SCHED_CORE_H_
#define VIOSIM_MODELS_CPU_SCHED_CORE_H_

#include <coroutine>
#include <utility>

#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "sim/time.h"

namespace models {

template <class Class>
void SchedCore<Class>::EndWakeUp(Task& p, Cpu& waker) {
  if (p.on_cpu_) {
    p.wake_pending_ = true;  // still switching out: enqueued when that ends
  } else {
    Activate(p, &waker);
  }
}

template <class Class>
void SchedCore<Class>::Activate(Task& p, Cpu* waker) {
  // Chosen by the waker already under TTWU_QUEUE (BeginQueuedWakeUp).
  Cpu& rq = p.queue_to_ != nullptr ? *std::exchange(p.queue_to_, nullptr) : self().SelectTaskRq(p, waker);
  if (p.cpu_ != nullptr && p.cpu_ != &rq) ++p.migrations_;
  p.cpu_ = &rq;
  if (ttwu_queue_ && waker != nullptr && waker != &rq) [[unlikely]] {
    QueueRemoteWakeUp(p, rq);
    return;
  }
  Enqueue(p, rq, waker);
}

template <class Class>
void SchedCore<Class>::Enqueue(Task& p, Cpu& rq, Cpu* waker) {
  p.on_rq_ = true;
  p.enqueued_at_ = sim().Now();
  self().EnqueueTask(rq, p, /*wakeup=*/true);
  const sim::Time ipi = (waker == &rq) ? sim::Time::Zero() : rq.sched_costs().wakeup_latency;
  if (rq.curr_ == nullptr && !rq.switching_) {
    Resched(rq, waker == nullptr ? sim::Time::Zero() : ipi);
  } else if (rq.curr_ != nullptr && self().CheckPreemptCurr(rq, *rq.curr_, p)) {
    Resched(rq, ipi);
  }
}

template <class Class>
void SchedCore<Class>::PickOnIdle(Cpu& cpu) {
  if (cpu.curr_ != nullptr || cpu.switching_) return;
  cpu.need_resched_ = false;
  Task* next = self().PickNextTask(cpu);
  if (next == nullptr) {
    self().IdleBalance(cpu);
    // A pulled task makes an idle CPU reschedule at once (Migrate), which
    // may already have switched to it.
    if (cpu.curr_ != nullptr || cpu.switching_) return;
    next = self().PickNextTask(cpu);
  }
  if (next == nullptr) return;
  self().StartRunning(cpu, *next);
  cpu.SwitchTo(next, /*free=*/false);
}

template <class Class>
void SchedCore<Class>::Switch(Cpu& cpu, bool preempt) {
  Task& prev = *cpu.curr_;
  // __schedule() clears need_resched whatever called it: a reschedule
  // asked for while the task could not be preempted is served by this one.
  cpu.need_resched_ = false;
  const sim::Time now = sim().Now();
  const sim::Time ran = now - prev.exec_start_;
  prev.runtime_ += ran;
  self().StopRunning(cpu, prev, ran);
  if (preempt) {
    cpu.FreezeCurrent();
    // The CPU whose timer ends the wait: the first one it was preempted on
    // since it last ran its wait on a CPU (ThawCurrent clears it), however
    // often it is preempted before that.
    if (prev.wait_ == Task::Wait::kAt && prev.at_cpu_ == nullptr) prev.at_cpu_ = &cpu;
    self().PutPrevTask(cpu, prev);
    prev.enqueued_at_ = now;
  } else if (prev.state_ == Task::State::kRunning) {
    self().PutPrevTask(cpu, prev);  // schedule() with a reschedule pending: a yield
    prev.enqueued_at_ = now;
  } else {
    prev.on_rq_ = false;  // deactivate_task()
  }
  Task* next = self().PickNextTask(cpu);
  if (next == nullptr && !prev.on_rq_) {
    self().IdleBalance(cpu);
    next = self().PickNextTask(cpu);
  }
  if (next == &prev) {
    // Picked again: no switch, but a new slice (set_next_entity).
    prev.exec_start_ = now;
    self().StartRunning(cpu, prev);
    cpu.ArmSlice(self().SliceOf(cpu, prev));
    cpu.ThawCurrent();
    return;
  }
  if (preempt) {
    ++prev.nivcsw_;
    ++preemptions_;
  } else if (prev.state_ != Task::State::kDead) {
    ++prev.nvcsw_;
  }
  if (next != nullptr) self().StartRunning(cpu, *next);
  cpu.SwitchTo(next, /*free=*/false);
}

template <class Class>
void SchedCore<Class>::FinishSwitch(Cpu& cpu, Task* prev, Task* next) {
  if (next != nullptr) cpu.ArmSlice(self().SliceOf(cpu, *next));
  if (prev == nullptr) return;
  prev->on_cpu_ = false;
  if (prev->on_cpu_waited_) [[unlikely]] WakeOnCpuWaiters(*prev);
  self().SwitchedOut(cpu, *prev);
  if (prev->wake_pending_) [[unlikely]] ActivateAfterSwitch(*prev, cpu);
}

template <class Class>
void SchedCore<Class>::WakeOnCpuWaiters(Task& prev) {
  for (std::coroutine_handle<> h : prev.on_cpu_waiters_) sim().Wake(h);
  prev.on_cpu_waiters_.clear();
  prev.on_cpu_waited_ = false;
}

template <class Class>
void SchedCore<Class>::ActivateAfterSwitch(Task& prev, Cpu& cpu) {
  prev.wake_pending_ = false;
  Activate(prev, &cpu);
}

template <class Class>
void SchedCore<Class>::Migrate(Task& p, Cpu& from, Cpu& to) {
  self().DequeueTask(from, p);
  p.cpu_ = &to;
  ++p.migrations_;
  self().EnqueueTask(to, p, /*wakeup=*/false);
  if (to.curr_ == nullptr && !to.switching_) Resched(to, sim::Time::Zero());
}

}  // namespace models

#endif  // VIOSIM_MODELS_CPU_SCHED_CORE_H_
