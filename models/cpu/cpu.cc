#include "models/cpu/cpu.h"

#include <utility>

#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "sim/trace.h"

namespace models {

const char* CpuTimeName(CpuTime t) {
  switch (t) {
    case CpuTime::kIdle: return "idle";
    case CpuTime::kUser: return "user";
    case CpuTime::kSystem: return "system";
    case CpuTime::kIrq: return "irq";
    case CpuTime::kSoftirq: return "softirq";
    case CpuTime::kExit: return "exit";
    case CpuTime::kSpin: return "spin";
    case CpuTime::kPoll: return "poll";
    case CpuTime::kSteal: return "steal";
    case CpuTime::kCount: break;
  }
  return "?";
}

CpuDistance DistanceOf(const CpuPlace& a, const CpuPlace& b) {
  if (a.socket != b.socket) return CpuDistance::kRemote;
  if (a.llc != b.llc) return CpuDistance::kSocket;
  if (a.core != b.core) return CpuDistance::kLlc;
  return CpuDistance::kCore;
}

const char* CpuDistanceName(CpuDistance d) {
  switch (d) {
    case CpuDistance::kSame: return "same_cpu";
    case CpuDistance::kCore: return "same_core";
    case CpuDistance::kLlc: return "same_llc";
    case CpuDistance::kSocket: return "same_socket";
    case CpuDistance::kRemote: return "other_socket";
  }
  return "?";
}

Cpu::Cpu(sim::Simulator& sim, int id, std::string name, CpuPlace place)
    : sim_(&sim),
      id_(id),
      acct_(kCpuTimes, sim.Now(), static_cast<int>(CpuTime::kIdle)),
      name_(std::move(name)),
      place_(place),
      irq_kick_(Callback::Bind<&Cpu::OnIrqKick>(this)),
      slice_timer_(Callback::Bind<&Cpu::OnSliceEnd>(this)),
      resched_kick_(Callback::Bind<&Cpu::OnReschedKick>(this)),
      irq_off_(2, sim.Now(), 0),
      traced_since_(sim.Now()) {
  idle_since_ = sim.Now();
}


void Cpu::LocalIrqRestore() {
  if (--irq_off_depth_ == 0) {
    irq_off_.Set(0, sim_->Now());
    if (CanTakeIrq()) KickIrq();
    if (need_resched_) MaybeReschedule();
  }
}

sim::Time Cpu::BusyTime() const { return window() - TimeIn(CpuTime::kIdle); }

void Cpu::ResetStats() {
  acct_.Reset(sim_->Now());
  irq_off_.Reset(sim_->Now());
  irqs_taken_ = 0;
  switches_ = 0;
}

// ---- Task waits ----

// The path of Run that goes through the CPU (the direct one is inline in
// WorkAwaiter).
void Cpu::BeginWork(std::coroutine_handle<> h, sim::Time cost, CpuTime mode) {
  if (in_irq_) {
    // Handlers are not interrupted: their work is one event.
    irq_mode_ = CpuTime::kIrq;
    Account();
    sim_->ScheduleAt(sim_->Now() + cost, h);
    return;
  }
  Task* t = curr_;
  if (t == nullptr) __builtin_trap();  // task-context work needs a running task
  const sim::Time due = sim_->Now() + cost;
  t->cont_ = h;
  t->wait_ = Task::Wait::kWork;
  task_mode_ = mode;
  t->frozen_ = false;
  t->due_ = due;
  if (stolen_) [[unlikely]] {
    // Begun by code the CPU does not run (an exit's host side): it waits
    // for the vCPU.
    t->left_ = cost;
    t->frozen_ = true;
    Account();
    return;
  }
  Account();
  sim_->ScheduleAt(t->due_, task_timer_.handle());
  if (need_resched_) MaybeReschedule();
}

std::coroutine_handle<> Cpu::BeginSpin(std::coroutine_handle<> h, CpuTime mode) {
  if (in_irq_) {
    irq_mode_ = mode;
    Account();
    return h;
  }
  Task* t = curr_;
  if (t == nullptr) __builtin_trap();
  t->cont_ = h;
  t->wait_ = Task::Wait::kSignal;
  task_mode_ = mode;
  t->deferred_ = false;
  Account();
  if (need_resched_) MaybeReschedule();
  return t->spin_wake_.handle();
}

void Cpu::SetWait(std::coroutine_handle<> h, sim::Time at) {
  Task* t = curr_;
  t->cont_ = h;
  t->wait_ = Task::Wait::kAt;
  t->deferred_ = false;
  t->due_ = at;
}

void Cpu::ResumeThrough(std::coroutine_handle<> h, sim::Time at, bool was_irq) {
  if (was_irq) {
    if (at == sim_->Now()) {
      sim_->Wake(h);
    } else {
      sim_->ScheduleAt(at, h);
    }
    return;
  }
  if (curr_ == nullptr) __builtin_trap();
  SetWait(h, at);
  if (at == sim_->Now()) {
    sim_->Wake(task_timer_.handle());
  } else {
    sim_->ScheduleAt(at, task_timer_.handle());
  }
}

void Cpu::YieldTo(std::coroutine_handle<> h) {
  Task* t = curr_;
  if (t == nullptr) __builtin_trap();
  t->cont_ = h;
  t->wait_ = Task::Wait::kAt;
  t->deferred_ = false;
  t->due_ = sim_->Now();
  // After the interrupt kick (a wakeup, which runs first).
  sim_->ScheduleAt(t->due_, task_timer_.handle());
}

void Cpu::OnTaskEvent() {
  Task* t = curr_;
  if (t == nullptr || switching_) return;
  if (t->wait_ != Task::Wait::kWork && t->wait_ != Task::Wait::kAt) return;
  if (t->frozen_ || t->due_ != sim_->Now()) return;  // a stale event
  if (in_irq_ || stolen_) {
    t->deferred_ = true;  // a hand-off while a handler runs (or the vCPU stands still): after it
    return;
  }
  if (t->wait_ == Task::Wait::kAt && task_mode_ != CpuTime::kUser) task_mode_ = CpuTime::kSystem;
  t->wait_ = Task::Wait::kNone;
  std::coroutine_handle<> h = std::exchange(t->cont_, {});
  h.resume();
}

void Task::OnSpinWake() {
  Cpu* c = cpu_;
  if (wait_ != Wait::kSignal) return;
  if (c->curr_ != this || c->in_irq_ || c->switching_ || c->stolen_) {
    deferred_ = true;  // resumed when the handler returns or the task is back
    return;
  }
  wait_ = Wait::kNone;
  c->task_mode_ = CpuTime::kSystem;
  c->Account();
  std::exchange(cont_, {}).resume();
}

void Cpu::FreezeCurrent() {
  Task* t = curr_;
  if (t == nullptr) return;
  if (t->wait_ == Task::Wait::kWork && !t->frozen_) {
    t->left_ = t->due_ - sim_->Now();
    t->frozen_ = true;
  }
}

void Cpu::ThawCurrent() {
  Task* t = curr_;
  if (t == nullptr || stolen_) return;
  const sim::Time now = sim_->Now();
  switch (t->wait_) {
    case Task::Wait::kNone:
      return;
    case Task::Wait::kWork:
      if (!t->frozen_) return;
      t->frozen_ = false;
      t->due_ = now + t->left_;
      sim_->ScheduleAt(t->due_, task_timer_.handle());
      return;
    case Task::Wait::kAt: {
      Cpu* armed = std::exchange(t->at_cpu_, nullptr);
      if (!t->deferred_ && t->due_ > now) {
        // Its event is still to come: on this CPU's task timer, unless the
        // task was preempted in the wait on another CPU and moved here.
        if (armed != nullptr && armed != this) sim_->ScheduleAt(t->due_, task_timer_.handle());
        return;
      }
      t->deferred_ = false;
      t->due_ = now;
      sim_->ScheduleAt(now, task_timer_.handle());
      return;
    }
    case Task::Wait::kSignal:
      if (!t->deferred_) return;
      t->deferred_ = false;
      sim_->ScheduleAt(now, t->spin_wake_.handle());
      return;
    case Task::Wait::kSwitch:
      // Switched in: it runs now, without waiting for other events due now.
      t->wait_ = Task::Wait::kAt;
      t->due_ = now;
      sim_->Wake(task_timer_.handle());
      return;
  }
}

// ---- VM exits ----

void Cpu::BeginExit() {
  ++exit_depth_;
  Account();
}

void Cpu::EndExit() {
  --exit_depth_;
  Account();
  if (CanTakeIrq()) KickIrq();
}

// ---- Steal ----

void Cpu::BeginSteal() {
  if (steal_depth_++ > 0) return;
  if (direct_) EndDirect();  // the wait in flight must be one the CPU can freeze
  if (in_irq_) return;       // from the handler's return (IrqExit)
  StartSteal();
}

void Cpu::StartSteal() {
  stolen_ = true;
  FreezeCurrent();
  if (switching_) {
    // The switch under way resumes where it stopped; its event, when it
    // comes, is stale.
    switch_left_ = switch_due_ - sim_->Now();
    switch_frozen_ = true;
    ++stale_switch_events_;
  }
  Account();
}

void Cpu::EndSteal() {
  if (--steal_depth_ > 0) return;
  if (!stolen_) return;  // it began under a handler that is still running
  stolen_ = false;
  Account();
  if (switch_frozen_) {
    switch_frozen_ = false;
    switch_due_ = sim_->Now() + switch_left_;
    sim_->ScheduleAt(switch_due_, switch_done_.handle());
    return;
  }
  // A pending interrupt first (the task's thaw is an event after it).
  if (CanTakeIrq()) KickIrq();
  ThawCurrent();
  if (need_resched_) MaybeReschedule();
}

void Cpu::BlockHalted(std::coroutine_handle<> on_work) {
  if (!idle() || halt_blocked_) __builtin_trap();
  halt_blocked_ = true;
  halt_kicked_ = false;
  halt_work_cb_ = on_work;
  BeginSteal();
  Account();  // idle, also when a steal was already under way
}

void Cpu::UnblockHalted() {
  halt_blocked_ = false;
  EndSteal();
  Account();  // steal, if one is still under way
  // Woken for a reschedule whose task went elsewhere: idle again, so the
  // hypervisor is told again.
  if (idle() && !has_pending_work() && !stolen_ && idle_cb_) sim_->Wake(idle_cb_);
}

// ---- Interrupts ----

void Cpu::RaiseIrq(sim::Task handler) {
  pending_.push_back(std::move(handler));
  ++irqs_pending_;
  if (halt_blocked_) [[unlikely]] KickHalted();
  if (direct_) EndDirect();
  if (CanTakeIrq()) KickIrq();
}

void Cpu::EndDirect() {
  direct_ = false;
  Task* t = curr_;
  if (t == nullptr || !direct_h_ || sim_->Now() > direct_until_) return;
  // The task's wait in flight becomes a wait through the CPU, so that the
  // interrupt can freeze it.
  if (!sim_->Retarget(direct_until_, direct_h_, task_timer_.handle())) return;
  t->cont_ = direct_h_;
  t->wait_ = direct_work_ ? Task::Wait::kWork : Task::Wait::kAt;
  t->frozen_ = false;
  t->deferred_ = false;
  t->due_ = direct_until_;
  direct_h_ = {};
}

void Cpu::KickIrq() {
  if (irq_kick_pending_) return;
  irq_kick_pending_ = true;
  sim_->Wake(irq_kick_.handle());
}

void Cpu::OnIrqKick() {
  irq_kick_pending_ = false;
  if (!CanTakeIrq()) return;
  sim::Task handler = std::move(pending_.front());
  pending_.pop_front();
  --irqs_pending_;
  // An idle period that began this instant -- the switch to idle, or the
  // previous handler, just ended -- is no halt: the interrupt was already
  // pending when the CPU would have halted.
  irq_halted_since_ = idle() && idle_since_ < sim_->Now() ? idle_since_ : sim::Time::Max();
  in_irq_ = true;
  irq_mode_ = CpuTime::kIrq;
  LocalIrqSave();  // hardirq handlers run with interrupts off
  ++irqs_taken_;
  FreezeCurrent();
  Account();
  // A host interrupt on the CPU of a vCPU's thread: the vCPU stands still.
  if (curr_ != nullptr && curr_->vcpu_ != nullptr && !curr_->stealing_) [[unlikely]] {
    curr_->stealing_ = true;
    curr_->vcpu_->BeginSteal();
  }
  sim_->Spawn(IrqEntry(std::move(handler)));
}

sim::Task Cpu::IrqEntry(sim::Task handler) {
  co_await handler;
  IrqExit();
}

void Cpu::IrqExit() {
  in_irq_ = false;
  irq_halted_since_ = sim::Time::Max();
  if (curr_ == nullptr && !switching_) {
    idle_since_ = sim_->Now();  // back to the idle loop
    if (idle_cb_) [[unlikely]] sim_->Wake(idle_cb_);
  }
  if (--irq_off_depth_ == 0) irq_off_.Set(0, sim_->Now());
  if (steal_depth_ > 0) [[unlikely]] {
    // A steal that began under the handler: the vCPU stands still now,
    // the task's work still frozen.
    StartSteal();
    return;
  }
  Account();
  if (CanTakeIrq()) {
    // The next pending interrupt is taken before the task goes on.
    KickIrq();
  }
  Task* t = curr_;
  ThawCurrent();
  if (need_resched_) MaybeReschedule();
  // A vCPU's thread still on this CPU: its vCPU runs again (switched out
  // by the reschedule instead, it stands still until the thread is back).
  if (t != nullptr && t->stealing_ && curr_ == t && !switching_) [[unlikely]] {
    t->stealing_ = false;
    t->vcpu_->EndSteal();
  }
}

// ---- Scheduling ----

void Cpu::SetNeedResched() {
  need_resched_ = true;
  if (halt_blocked_) [[unlikely]] KickHalted();
  MaybeReschedule();
}

void Cpu::MaybeReschedule() {
  if (!need_resched_ || switching_ || in_irq_ || stolen_ || sched_ == nullptr) return;
  if (curr_ != nullptr && (!preemptible() || curr_->wait_ == Task::Wait::kNone)) {
    // Not now: at preempt_enable, irq restore or irq exit, or once the
    // task's running code reaches its next wait on this CPU.
    return;
  }
  need_resched_ = false;
  if (curr_ == nullptr) {
    sched_->PickOnIdle(*this);
  } else {
    sched_->Switch(*this, /*preempt=*/true);
  }
}

void Cpu::OnReschedKick() { SetNeedResched(); }

void Cpu::SwitchTo(Task* next, bool free) {
  switching_ = true;
  if (curr_ != nullptr) {
    curr_->mode_ = task_mode_;  // saved with the task
    Task& prev = *curr_;
    if (prev.vcpu_ != nullptr && !prev.stealing_ && prev.state_ == Task::State::kRunning) [[unlikely]] {
      // A vCPU's thread preempted: its vCPU stands still until it is back.
      prev.stealing_ = true;
      prev.vcpu_->BeginSteal();
    }
  }
  switch_from_ = curr_;
  switch_to_ = next;
  curr_ = nullptr;
  slice_end_ = sim::Time::Max();
  Account();
  if (stolen_) [[unlikely]] {
    // Begun on a vCPU that stands still: it runs once the vCPU does.
    switch_left_ = free ? sim::Time::Zero() : sched_costs_.context_switch;
    switch_frozen_ = true;
    return;
  }
  if (free) {
    switch_due_ = sim_->Now();
    sim_->Wake(switch_done_.handle());
  } else {
    switch_due_ = sim_->Now() + sched_costs_.context_switch;
    sim_->ScheduleAt(switch_due_, switch_done_.handle());
  }
}

std::coroutine_handle<> Cpu::OnSwitchDone() {
  if (stale_switch_events_ > 0) [[unlikely]] {
    // The event of a switch the vCPU's steal froze (the first to come).
    --stale_switch_events_;
    return {};
  }
  switching_ = false;
  ++switches_;
  Task* prev = std::exchange(switch_from_, nullptr);
  Task* next = std::exchange(switch_to_, nullptr);
  curr_ = next;
  if (next != nullptr) {
    task_mode_ = next->mode_;
    next->on_cpu_ = true;
    next->exec_start_ = sim_->Now();
    next->run_delay_ += sim_->Now() - next->enqueued_at_;
  } else {
    idle_since_ = sim_->Now();
    if (idle_cb_) [[unlikely]] sim_->Wake(idle_cb_);
  }
  Account();
  if (next != nullptr && next->stealing_) [[unlikely]] {
    // A vCPU's thread back on a CPU: its vCPU runs again.
    next->stealing_ = false;
    next->vcpu_->EndSteal();
  }
  sched_->FinishSwitch(*this, prev, next);  // next's slice, then prev's end
  // A pending interrupt first (both are wakeups, run in order), then the
  // task switched in.
  if (CanTakeIrq()) KickIrq();
  if (curr_ == nullptr) {
    if (!switching_) sched_->PickOnIdle(*this);
    return {};
  }
  if (curr_ != next) return {};
  if (next->wait_ != Task::Wait::kSwitch || next->frozen_ || in_irq_) {
    ThawCurrent();
    return {};
  }
  // ThawCurrent's switch-in, with its wakeup as this event's last act:
  // when nothing else is pending now, the task runs from here (what
  // OnTaskEvent would do for it), without an event of its own.
  next->wait_ = Task::Wait::kAt;
  next->due_ = sim_->Now();
  std::coroutine_handle<> run = sim_->WakeLast(task_timer_.handle());
  if (!run) return {};
  if (task_mode_ != CpuTime::kUser) task_mode_ = CpuTime::kSystem;
  next->wait_ = Task::Wait::kNone;
  return std::exchange(next->cont_, {});
}

// The slice timer keeps at most one event pending (at slice_timer_at_): a
// slice that ends later than it is left to that event, which arms the next
// one when it fires. Slices are long and most tasks sleep well before theirs
// ends, so an event per switch would mostly be stale, and would crowd the
// event queue.
void Cpu::OnSliceEnd() {
  const sim::Time now = sim_->Now();
  if (now == slice_timer_at_) slice_timer_at_ = sim::Time::Max();
  if (curr_ == nullptr || switching_ || slice_end_ == sim::Time::Max()) return;
  if (now < slice_end_) {
    // Armed for an earlier slice: wait for this one's end.
    if (slice_end_ < slice_timer_at_) {
      slice_timer_at_ = slice_end_;
      sim_->ScheduleAt(slice_end_, slice_timer_.handle());
    }
    return;
  }
  slice_end_ = sim::Time::Max();
  sched_->SliceEnded(*this, *curr_);
}

// ---- Trace ----

void Cpu::NameTraceTrack(sim::TraceWriter& t) {
  traced_since_ = sim_->Now();
  traced_mode_ = static_cast<int>(Mode());
  t.SetThreadName(kTracePid, id_, trace_label_.empty() ? name_ : name_ + " " + trace_label_);
  t.SetThreadSortIndex(kTracePid, id_, id_);
}

void Cpu::CloseTraceSlice() {
  sim::TraceWriter* t = sim_->trace();
  const sim::Time now = sim_->Now();
  if (t != nullptr && traced_mode_ > 0 && now > traced_since_) {
    t->Complete(kTracePid, id_, CpuTimeName(static_cast<CpuTime>(traced_mode_)), traced_since_, now - traced_since_,
                "cpu");
  }
  traced_since_ = now;
}

void Cpu::TraceMode() {
  const int mode = static_cast<int>(Mode());
  if (mode == traced_mode_) return;
  CloseTraceSlice();
  traced_mode_ = mode;
}

}  // namespace models
