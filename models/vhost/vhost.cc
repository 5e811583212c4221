#include "models/vhost/vhost.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sim/trace.h"

namespace models {

const char* WakeCaseName(WakeCase c) {
  switch (c) {
    case WakeCase::kRunning: return "running";
    case WakeCase::kRunnable: return "runnable";
    case WakeCase::kSwitching: return "switching";
    case WakeCase::kAsleep: return "asleep";
    case WakeCase::kCount: break;
  }
  return "?";
}

VhostDev::VhostDev(sim::Simulator& sim, Scheduler& sched, const VhostCosts& costs, const VhostParams& params,
                   SpinlockKind lock_kind, const LockHandoffCosts& handoff)
    : sim::TraceSource(sim),
      sim_(&sim),
      sched_(&sched),
      costs_(costs),
      params_(params),
      work_lock_(sim, "work_lock", lock_kind, handoff),
      pi_lock_(sim, "pi_lock(vhost)", lock_kind, handoff),
      worker_("vhost", params.worker_cpu >= 0 ? std::vector<int>{params.worker_cpu} : std::vector<int>{}) {}

void VhostDev::Start() { sched_->Start(worker_, Worker()); }

namespace {

WakeCase CaseOf(const Task& p) {
  if (p.state() == Task::State::kRunning) return WakeCase::kRunning;
  if (p.on_rq()) return WakeCase::kRunnable;
  if (p.on_cpu()) return WakeCase::kSwitching;
  return WakeCase::kAsleep;
}

// The worker's time so far, including the run in progress.
sim::Time RuntimeNow(const Task& p, sim::Time now) {
  return p.runtime() + (p.running() ? now - p.exec_start_ : sim::Time::Zero());
}

}  // namespace

void VhostDev::OpenTraceSlice(int ordinal) {
  list_track_ = absl::StrCat("vhost work list waiters #", ordinal);
  TraceListLength();
}

void VhostDev::TraceListLength() const {
  if (sim_->trace() == nullptr || list_track_.empty()) return;
  sim_->trace()->Counter(Cpu::kTracePid, list_track_, sim_->Now(), list_length_);
}

// vhost_work_queue(), Linux 3.0 (before and after ac9fde24).
sim::Task VhostDev::WorkQueue(Cpu& cpu, VhostWork& work) {
  ++stats_.queue_calls;
  co_await work_lock_.LockIrqSave(cpu);
  if (!work.queued) {
    co_await cpu.Run(costs_.work_list_op.value);
    work.queued = true;
    work.next = nullptr;
    (tail_ != nullptr ? tail_->next : head_) = &work;
    tail_ = &work;
    ++list_length_;
    TraceListLength();
    ++work.queue_seq;
    ++stats_.queued;
    const WakeCase found = CaseOf(worker_);
    ++stats_.wakes[static_cast<int>(found)];
    if (!params_.wake_outside_lock) {
      co_await WakeUpWorker(cpu, found);  // wake_up_process(dev->worker)
      work_lock_.UnlockIrqRestore(cpu);
    } else {
      work_lock_.UnlockIrqRestore(cpu);
      co_await WakeUpWorker(cpu, found);
    }
  } else {
    work_lock_.UnlockIrqRestore(cpu);
  }
}

// wake_up_process(dev->worker), shown in a trace as a slice on the
// waker's CPU named after the case it found.
sim::Task VhostDev::WakeUpWorker(Cpu& cpu, WakeCase found) {
  const sim::Time from = sim_->Now();
  if (params_.ttwu_pi_lock) co_await pi_lock_.LockIrqSave(cpu);  // raw_spin_lock_irqsave(&p->pi_lock)
  co_await sched_->TryToWakeUp(worker_, cpu);
  if (params_.ttwu_pi_lock) pi_lock_.UnlockIrqRestore(cpu);
  if (sim::TraceWriter* t = sim_->trace(); t != nullptr) {
    t->Complete(Cpu::kTracePid, cpu.id(), absl::StrCat("wake_up_process(vhost): ", WakeCaseName(found)), from,
                sim_->Now() - from, "sched");
  }
}

// vhost_worker(), Linux 3.0.27 (drivers/vhost/vhost.c). The task may
// change CPU in schedule(), so its CPU is read again after every switch.
// PREEMPT_NONE: preemption stays off outside schedule() (the header).
sim::Task VhostDev::Worker() {
  VhostWork* work = nullptr;
  uint64_t seq = 0;
  worker_.cpu()->PreemptDisable();
  for (;;) {
    // "mb paired w/ kthread_stop": set_current_state(TASK_INTERRUPTIBLE).
    worker_.SetState(Task::State::kInterruptible);
    Cpu* cpu = worker_.cpu();
    const sim::Time spin_from = sim_->Now();
    // A free lock is taken at once (its word's move, if any, is not spinning).
    const bool spins = work_lock_.locked();
    co_await work_lock_.LockIrqSave(*cpu);  // spin_lock_irq(&dev->work_lock)
    cpu = worker_.cpu();
    if (spins) stats_.work_lock_spin += sim_->Now() - spin_from;
    if (work != nullptr) {
      work->done_seq = seq;  // no flusher waits in this model (work->flushing)
    }
    if (head_ != nullptr) {
      co_await cpu->Run(costs_.work_list_op.value);
      work = head_;
      head_ = work->next;
      if (head_ == nullptr) tail_ = nullptr;
      --list_length_;
      TraceListLength();
      work->next = nullptr;
      work->queued = false;  // list_del_init()
      seq = work->queue_seq;
    } else {
      work = nullptr;
    }
    work_lock_.UnlockIrqRestore(*cpu);  // spin_unlock_irq()
    if (work != nullptr) {
      worker_.SetState(Task::State::kRunning);  // __set_current_state(TASK_RUNNING)
      ++work->runs;
      ++stats_.items_run;
      co_await work->fn(worker_);
      if (params_.resched_after_work) co_await Schedule();  // 3.10: if (need_resched()) schedule();
    } else {
      co_await Schedule();
    }
  }
}

// schedule() from the worker's loop: the only place a PREEMPT_NONE kernel
// switches it out (a reschedule asked for meanwhile is served here).
sim::Task VhostDev::Schedule() {
  worker_.cpu()->PreemptEnableNoResched();
  co_await worker_.Schedule();
  worker_.cpu()->PreemptDisable();
}

sim::Time VhostDev::WorkerScheduleTime() const {
  const uint64_t switches = worker_.nvcsw() + worker_.nivcsw() - switches_at_reset_;
  return worker_.cpu()->sched_costs().context_switch * static_cast<int64_t>(switches);
}

sim::Time VhostDev::WorkerCpuTime() const {
  return RuntimeNow(worker_, sim_->Now()) - runtime_at_reset_ + WorkerScheduleTime();
}

void VhostDev::ResetStats() {
  stats_.Reset();
  work_lock_.ResetStats();
  pi_lock_.ResetStats();
  runtime_at_reset_ = RuntimeNow(worker_, sim_->Now());
  switches_at_reset_ = worker_.nvcsw() + worker_.nivcsw();
}

}  // namespace models
