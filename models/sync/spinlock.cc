#include "models/sync/spinlock.h"

#include <utility>

#include "sim/trace.h"

namespace models {

void LockStat::Reset() {
  acquisitions = contentions = acq_bounces = con_bounces = 0;
  wait.Reset();
  hold.Reset();
}

Spinlock::Spinlock(sim::Simulator& sim, std::string name, sim::Time handoff)
    : sim_(&sim), name_(std::move(name)), handoff_(handoff) {}

void Spinlock::Enqueue(Awaiter* a, std::coroutine_handle<> h) {
  a->h_ = h;
  a->since_ = sim_->Now();
  a->cpu_->SetState(CpuState::kSpinning);
  ++stat_.contentions;
  if (last_cpu_ != nullptr && last_cpu_ != a->cpu_) ++stat_.con_bounces;
  ++waiters_;
  if (tail_ != nullptr) {
    tail_->next_ = a;
  } else {
    head_ = a;
  }
  tail_ = a;
}

void Spinlock::Unlock(Cpu& cpu) {
  const sim::Time now = sim_->Now();
  stat_.hold.Record((now - acquired_at_).ps());
  if (sim::TraceWriter* t = sim_->trace()) {
    t->Complete(Cpu::kTracePid, cpu.id(), name_, acquired_at_, now - acquired_at_, "lock");
  }
  Awaiter* next = head_;
  if (next == nullptr) {
    owner_ = nullptr;
    return;
  }
  head_ = next->next_;
  if (head_ == nullptr) tail_ = nullptr;
  --waiters_;
  // The next ticket owns the lock once the cache line reaches its CPU; it
  // keeps spinning until then.
  Acquired(*next->cpu_);
  acquired_at_ = now + handoff_;
  stat_.wait.Record((acquired_at_ - next->since_).ps());
  // The waiter leaves its spin loop when it resumes; until then its CPU
  // stays in kSpinning.
  if (handoff_ == sim::Time::Zero()) {
    sim_->Wake(next->h_);
  } else {
    sim_->ScheduleAt(acquired_at_, next->h_);
  }
}

}  // namespace models
