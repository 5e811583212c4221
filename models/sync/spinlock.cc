#include "models/sync/spinlock.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
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
    : Spinlock(sim, std::move(name), kind, handoff, handoff) {}

Spinlock::Spinlock(sim::Simulator& sim, std::string name, SpinlockKind kind, const LockHandoffCosts& handoff,
                   const LockHandoffCosts& node)
    : sim::TraceSource(sim), sim_(&sim), name_(std::move(name)), kind_(kind), handoff_(handoff.Table()), node_handoff_(node.Table()) {
  waiters_track_ = name_ + " waiters";
  flat_ = std::count(handoff_.begin(), handoff_.end(), handoff_[0]) == kCpuDistances;
  ideal_ = sim.IsIdeal(name_);
  sim.RegisterResource(name_, "spinlock");
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
    a->ready_at_ = mcs_until_ + NodeTransfer(*mcs_cpu_, *a->cpu_);
  } else {
    a->ready_at_ = now;
  }
  Append(a);
}

// arch_mcs_spin_unlock_contended(): the queue head, owning the lock, writes
// its successor's MCS node; only then does the successor spin on the lock
// word. With no successor yet, one arriving before `at` still queues behind
// it.
void Spinlock::PassHeadRole(const Awaiter& head, sim::Time at) {
  if (head_ != nullptr) {
    head_->ready_at_ = at + NodeTransfer(*head.cpu_, *head_->cpu_);
  } else {
    mcs_until_ = at;
    mcs_cpu_ = head.cpu_;
  }
}

void Spinlock::CloseTraceSlice() {
  // (A hand-off still on its way has no hold yet.)
  if (owner_ != nullptr && acquired_at_ < sim_->Now()) TraceHold(*owner_, sim_->Now());
}

void Spinlock::OpenTraceSlice(int ordinal) {
  waiters_track_ = absl::StrCat(name_, " waiters #", ordinal);
  TraceWaiters(sim_->Now());
}

void Spinlock::TraceWaiters(sim::Time now) const {
  sim_->trace()->Counter(Cpu::kTracePid, waiters_track_, now, waiters_);
}

void Spinlock::TraceHandoff(Cpu& next, sim::Time from, sim::Time to) const {
  if (to > from) sim_->trace()->Complete(Cpu::kTracePid, next.id(), name_, from, to - from, "handoff");
}

void Spinlock::TraceHold(Cpu& cpu, sim::Time now) const {
  sim_->trace()->Complete(Cpu::kTracePid, cpu.id(), name_, acquired_at_, now - acquired_at_, "lock");
}

}  // namespace models
