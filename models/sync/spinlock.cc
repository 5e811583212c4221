#include "models/sync/spinlock.h"

#include <algorithm>
#include <utility>

#include "sim/trace.h"

namespace models {

const char* SpinlockKindName(SpinlockKind k) {
  switch (k) {
    case SpinlockKind::kTicket: return "ticket";
    case SpinlockKind::kQueued: return "queued";
  }
  return "?";
}

Spinlock::Spinlock(sim::Simulator& sim, std::string name, sim::Time handoff)
    : Spinlock(sim, std::move(name), SpinlockKind::kTicket, LockHandoffCosts::Uniform(handoff)) {}

Spinlock::Spinlock(sim::Simulator& sim, std::string name, SpinlockKind kind, const LockHandoffCosts& handoff)
    : sim_(&sim), name_(std::move(name)), kind_(kind), handoff_(handoff.Table()) {
  uniform_ = std::count(handoff_.begin(), handoff_.end(), handoff_[0]) == kCpuDistances;
}

// queued_spin_lock_slowpath() (kernel/locking/qspinlock.c, Linux 5.x/6.x),
// for a waiter that found the lock held.
void Spinlock::EnqueueQueued(Awaiter* a, sim::Time now) {
  const bool queue_empty = head_ == nullptr && now >= mcs_until_;
  if (queue_empty && pending_ == nullptr) {
    // No tail and no pending bit: set pending and spin on the locked byte.
    pending_ = a;
    return;
  }
  // xchg_tail(): join the MCS queue. With no predecessor this waiter is the
  // head and spins on the lock word at once, unless the previous head is
  // still taking the lock, which then passes the head role on; behind a
  // predecessor it spins on its own node until the head role reaches it.
  if (head_ != nullptr) {
    a->ready_at_ = sim::Time::Max();
  } else if (now < mcs_until_) {
    a->ready_at_ = mcs_until_ + Transfer(*mcs_cpu_, *a->cpu_);
  } else {
    a->ready_at_ = now;
  }
  Append(a);
}

// The unlock's side: the pending waiter goes first
// (clear_pending_set_locked()); else the MCS head, once it spins on the lock
// word, takes the lock and passes the head role on by writing its
// successor's node (arch_mcs_spin_unlock_contended()).
Spinlock::Awaiter* Spinlock::NextQueued(Cpu& cpu, sim::Time now, sim::Time* at) {
  Awaiter* next = pending_;
  if (next != nullptr) {
    pending_ = nullptr;
    *at = now + Transfer(cpu, *next->cpu_);
    return next;
  }
  next = head_;
  head_ = next->next_;
  if (head_ == nullptr) tail_ = nullptr;
  *at = std::max(now, next->ready_at_) + Transfer(cpu, *next->cpu_);
  if (head_ != nullptr) {
    head_->ready_at_ = *at + Transfer(*next->cpu_, *head_->cpu_);
  } else {
    mcs_until_ = *at;
    mcs_cpu_ = next->cpu_;
  }
  return next;
}

void Spinlock::TraceHold(Cpu& cpu, sim::Time now) const {
  sim_->trace()->Complete(Cpu::kTracePid, cpu.id(), name_, acquired_at_, now - acquired_at_, "lock");
}

}  // namespace models
