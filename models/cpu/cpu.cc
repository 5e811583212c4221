#include "models/cpu/cpu.h"

#include <utility>

#include "sim/trace.h"

namespace models {

const char* CpuStateName(CpuState s) {
  switch (s) {
    case CpuState::kIdle: return "idle";
    case CpuState::kRunning: return "running";
    case CpuState::kSpinning: return "spinning";
    case CpuState::kExit: return "exit";
    case CpuState::kCount: break;
  }
  return "?";
}

const char* ExecContextName(ExecContext c) {
  switch (c) {
    case ExecContext::kNone: return "none";
    case ExecContext::kTask: return "task";
    case ExecContext::kIrq: return "irq";
    case ExecContext::kPoll: return "poll";
    case ExecContext::kCount: break;
  }
  return "?";
}

Cpu::Cpu(sim::Simulator& sim, int id, std::string name)
    : sim_(&sim),
      id_(id),
      name_(std::move(name)),
      state_since_(sim.Now()),
      occupancy_(kCpuStates, sim.Now(), static_cast<int>(CpuState::kIdle)),
      irq_off_(2, sim.Now(), 0),
      irqs_enabled_(sim),
      exec_(kExecContexts, sim.Now(), static_cast<int>(ExecContext::kNone)),
      dispatcher_(Callback::Bind<&Cpu::ChunkEnded>(this)) {}

void Cpu::NameTraceTrack(sim::TraceWriter& t) {
  state_since_ = sim_->Now();
  t.SetThreadName(kTracePid, id_, name_);
  t.SetThreadSortIndex(kTracePid, id_, id_);
}

void Cpu::LocalIrqSave() {
  if (irq_off_depth_++ == 0) irq_off_.Set(1, sim_->Now());
}

void Cpu::LocalIrqRestore() {
  if (--irq_off_depth_ == 0) {
    irq_off_.Set(0, sim_->Now());
    irqs_enabled_.NotifyAll();
    // Interrupt work held back while interrupts were off is taken now.
    if (current_ == nullptr && queues_[static_cast<int>(ExecLevel::kIrq)].head != nullptr) {
      StartNext();
    }
  }
}

sim::Time Cpu::BusyTime() const {
  const sim::Time now = sim_->Now();
  return (now - occupancy_.interval_start()) - occupancy_.TimeIn(static_cast<int>(CpuState::kIdle), now);
}

void Cpu::ResetStats() {
  occupancy_.Reset(sim_->Now());
  irq_off_.Reset(sim_->Now());
  exec_.Reset(sim_->Now());
}

// ---- The Exec engine ----

bool Cpu::CanStart(const Work& w) const {
  if (current_ != nullptr) return false;
  const Queue& irqs = queues_[static_cast<int>(ExecLevel::kIrq)];
  if (w.level == ExecLevel::kIrq) {
    // The running handler's next chunk goes on; a new interrupt waits for
    // interrupts to be enabled and for those already pending.
    if (in_cont_ && cont_level_ == ExecLevel::kIrq) return true;
    return irq_off_depth_ == 0 && irqs.head == nullptr;
  }
  if (spinning_) return false;
  if (irqs.head != nullptr && irq_off_depth_ == 0) return false;
  return in_cont_ || queues_[static_cast<int>(ExecLevel::kTask)].head == nullptr;
}

void Cpu::Submit(Work& w) {
  if (CanStart(w)) {
    Start(w);
  } else {
    Enqueue(w);
  }
}

void Cpu::Enqueue(Work& w) {
  const int l = static_cast<int>(w.level);
  Queue& q = queues_[l];
  if (in_cont_) {
    // The continuing flow goes ahead of the others, in its own order.
    Work*& after = cont_after_[l];
    if (after == nullptr) {
      w.next = q.head;
      q.head = &w;
      if (q.tail == nullptr) q.tail = &w;
    } else {
      w.next = after->next;
      after->next = &w;
      if (q.tail == after) q.tail = &w;
    }
    after = &w;
    return;
  }
  w.next = nullptr;
  if (q.tail != nullptr) {
    q.tail->next = &w;
  } else {
    q.head = &w;
  }
  q.tail = &w;
}

Cpu::Work* Cpu::Dequeue(ExecLevel level) {
  const int l = static_cast<int>(level);
  Queue& q = queues_[l];
  Work* w = q.head;
  q.head = w->next;
  if (q.head == nullptr) q.tail = nullptr;
  if (cont_after_[l] == w) cont_after_[l] = nullptr;
  w->next = nullptr;
  return w;
}

void Cpu::Start(Work& w) {
  current_ = &w;
  SetState(CpuState::kRunning);
  SetContext(w.level == ExecLevel::kIrq ? ExecContext::kIrq : ExecContext::kTask);
  sim_->ScheduleAt(sim_->Now() + w.cost, dispatcher_.handle());
}

void Cpu::StartNext() {
  if (queues_[static_cast<int>(ExecLevel::kIrq)].head != nullptr && irq_off_depth_ == 0) {
    Start(*Dequeue(ExecLevel::kIrq));
  } else if (queues_[static_cast<int>(ExecLevel::kTask)].head != nullptr && !spinning_) {
    Start(*Dequeue(ExecLevel::kTask));
  } else if (spinning_) {
    SetState(CpuState::kRunning);
    SetContext(ExecContext::kPoll);
  } else {
    SetState(CpuState::kIdle);
    SetContext(ExecContext::kNone);
  }
}

void Cpu::ChunkEnded() {
  Work* w = current_;
  current_ = nullptr;
  // `w` may not outlive the resumption (it can live in the frame resumed).
  const std::coroutine_handle<> then = w->then;
  if (then) {
    in_cont_ = true;
    cont_level_ = w->level;
    cont_after_[0] = cont_after_[1] = nullptr;
    then.resume();
    in_cont_ = false;
    cont_after_[0] = cont_after_[1] = nullptr;
  }
  if (current_ == nullptr) StartNext();
}

void Cpu::BeginSpin() {
  // Two flows spinning on one CPU would mean two tasks running on it at once.
  if (spinning_) __builtin_trap();
  spinning_ = true;
  if (current_ == nullptr) {
    SetState(CpuState::kRunning);
    SetContext(ExecContext::kPoll);
  }
}

void Cpu::EndSpin() {
  spinning_ = false;
  if (current_ == nullptr) StartNext();
}

void Cpu::TraceStateEnd() {
  sim::TraceWriter* t = sim_->trace();
  const sim::Time now = sim_->Now();
  if (state_ != CpuState::kIdle && now > state_since_) {
    t->Complete(kTracePid, id_, CpuStateName(state_), state_since_, now - state_since_, "cpu");
  }
  state_since_ = now;
}

}  // namespace models
