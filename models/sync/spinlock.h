// spinlock_t: the one lock interface models use, over either of the two
// arch_spinlock_t implementations x86 and arm64 have had:
//
//   - the FIFO ticket lock of the 3.x kernels (arch/x86/include/asm/
//     spinlock.h, Linux 3.15): a waiter takes a ticket and spins until the
//     owner field reaches it;
//   - the queued spinlock of Linux 4.2 onwards (kernel/locking/qspinlock.c,
//     as in 5.x and 6.x; qspinlock.h): a pending bit for the first waiter,
//     an MCS queue behind it.
//
// The kernel picks one per build (CONFIG_QUEUED_SPINLOCKS); here each lock
// has its kind, so that a scenario can put either under the same model.
//
// Usage, in the caller's own coroutine on the CPU it runs on:
//
//   co_await lock.LockIrqSave(cpu);   // spin_lock_irqsave()
//   ...
//   lock.UnlockIrqRestore(cpu);       // spin_unlock_irqrestore()
//
// A free lock is taken at once, with no event and no allocation. A waiter
// spins on its CPU (CpuTime::kSpin), with interrupts off if it came through
// LockIrqSave; its wait ends through its CPU (Cpu::ResumeAt), so a task
// spinning while a handler runs on its CPU gets the lock when the handler
// returns.
//
// Hand-off: after an unlock the next owner has the lock only once the lock
// word's cache line has moved from the releasing CPU to its own, at the cost
// LockHandoffCosts gives for the distance between the two (one event). With
// a zero cost the ticket lock is exactly a FIFO single server.
//
// Every lock keeps lock_stat rows (lock_stat.h).
#ifndef VIOSIM_MODELS_SYNC_SPINLOCK_H_
#define VIOSIM_MODELS_SYNC_SPINLOCK_H_

#include <algorithm>
#include <array>
#include <coroutine>
#include <cstdint>
#include <string>
#include <vector>

#include "models/cpu/cpu.h"
#include "models/sync/handoff_costs.h"
#include "models/sync/lock_stat.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace models {

enum class SpinlockKind : uint8_t {
  kTicket,  // FIFO ticket lock (Linux 3.x)
  kQueued,  // qspinlock: pending bit and MCS queue (Linux 4.2+)
};
const char* SpinlockKindName(SpinlockKind k);

class Spinlock : public sim::TraceSource {
 public:
  // A ticket lock whose every hand-off costs `handoff`.
  Spinlock(sim::Simulator& sim, std::string name, sim::Time handoff);
  // A lock of `kind` whose hand-off costs the line transfer from the
  // releasing CPU to the next owner's.
  Spinlock(sim::Simulator& sim, std::string name, SpinlockKind kind, const LockHandoffCosts& handoff);
  // The same, with qspinlock's MCS node hand-off (the head role passed to
  // the successor's node, a line of its own) costing `node` rather than
  // `handoff` (which then stands for the lock word's moves alone).
  Spinlock(sim::Simulator& sim, std::string name, SpinlockKind kind, const LockHandoffCosts& handoff,
           const LockHandoffCosts& node);
  Spinlock(const Spinlock&) = delete;
  Spinlock& operator=(const Spinlock&) = delete;

  // A hold still in progress (the lock held when a traced run ends) is
  // drawn up to now.
  void CloseTraceSlice() override;
  // The lock's waiters as a counter track, "<name> waiters #<ordinal>" (the
  // ordinal tells apart locks of one name): its value as a trace starts,
  // then a sample at each change.
  void OpenTraceSlice(int ordinal) override;

  const std::string& name() const { return name_; }
  SpinlockKind kind() const { return kind_; }
  // Held, or being handed to a waiter.
  bool locked() const { return owner_ != nullptr; }
  // Number of CPU contexts spinning on the lock now.
  int waiters() const { return waiters_; }
  // qspinlock's lock word: a waiter holds the pending bit; waiters in the
  // MCS queue (for a ticket lock, every waiter is queued).
  bool pending() const { return pending_ != nullptr; }
  int queued() const { return waiters_ - (pending_ != nullptr ? 1 : 0); }

  class Awaiter {
   public:
    Awaiter(Spinlock* l, Cpu* c) : lock_(l), cpu_(c) {}
    // preempt_disable(), then the uncontended fast path: no event.
    bool await_ready() {
      cpu_->PreemptDisable();
      if (lock_->ideal_) [[unlikely]] {
        lock_->IdealAcquired(*cpu_);  // free, at once, whoever holds it
        return true;
      }
      if (!lock_->TryAcquireUncontended(*cpu_)) return false;
      // Taken; with uncontended moves on, the word may still have to come
      // from the last holder's CPU (its own event).
      if (!lock_->uncontended_moves_) return true;
      move_ = lock_->UncontendedMove(*cpu_);
      return move_ == sim::Time::Zero();
    }
    void await_suspend(std::coroutine_handle<> h) {
      was_irq_ = cpu_->in_irq();
      h_ = h;
      if (move_ != sim::Time::Zero()) {
        // The uncontended cmpxchg's miss: the caller's own kernel time.
        cpu_->BeginSpinWait(CpuTime::kSystem);
        cpu_->ResumeAt(h, lock_->sim_->Now() + move_, was_irq_);
        return;
      }
      cpu_->BeginSpinWait(CpuTime::kSpin);
      lock_->Enqueue(this, h);
    }
    // The CPU leaves the spin loop and runs the critical section.
    void await_resume() const noexcept {
      if (h_) cpu_->EndSpinWait(was_irq_);
    }

   private:
    friend class Spinlock;
    Spinlock* lock_;
    Cpu* cpu_;
    std::coroutine_handle<> h_;
    Awaiter* next_ = nullptr;  // the next waiter in ticket / MCS order
    sim::Time since_;          // when it started to spin
    sim::Time ready_at_;       // MCS queue: from when it spins on the lock word
    bool was_irq_ = false;
    bool con_bounce_ = false;  // the last holder was on another CPU
    sim::Time move_;           // uncontended moves: the word's transfer
  };

  // spin_lock(): `co_await lock.Lock(cpu)` in the caller's own coroutine,
  // with `cpu` the CPU the caller runs on.
  Awaiter Lock(Cpu& cpu) { return Awaiter(this, &cpu); }
  // spin_lock_irqsave(): disables interrupts on `cpu`, then spins for the lock.
  Awaiter LockIrqSave(Cpu& cpu) {
    cpu.LocalIrqSave();
    return Lock(cpu);
  }
  // spin_unlock(), then preempt_enable(). REQUIRES: `cpu` holds the lock.
  void Unlock(Cpu& cpu) {
    Release(cpu);
    cpu.PreemptEnable();
  }
  // spin_unlock_irqrestore().
  void UnlockIrqRestore(Cpu& cpu) {
    Release(cpu);
    cpu.LocalIrqRestore();
    cpu.PreemptEnable();
  }

  const LockStat& stat() const { return stat_; }
  void ResetStats() { stat_.Reset(); }

  // The socket the lock word's memory is on (HomedDistance); -1, the
  // default: distances as DistanceOf gives them.
  void set_home_socket(int socket) { home_ = socket; }
  // Whether an uncontended acquisition pays the lock word's move from the
  // CPU that last held it (the fast path's cmpxchg missing in this CPU's
  // cache), at the hand-off cost of their distance; the lock is this CPU's
  // from the call, its hold from when the word arrives. Off by default: the
  // fast path is then free, as a word already in this CPU's cache is.
  void set_uncontended_moves(bool on) { uncontended_moves_ = on; }
  bool uncontended_moves() const { return uncontended_moves_; }
  // Ideal (sim::Simulator::IsIdeal of its name, as it is built): taken and
  // released at no cost, never contended, nobody spins for it; the work
  // done while holding it is unchanged, and holders no longer exclude each
  // other. lock_stat counts its acquisitions only.
  bool ideal() const { return ideal_; }

 private:
  bool TryAcquireUncontended(Cpu& cpu) {
    if (owner_ != nullptr) return false;  // free implies no waiter
    Acquired(cpu, sim_->Now());
    wait_ = kUncontended;
    return true;
  }
  // After TryAcquireUncontended: the word's move from the previous
  // holder's CPU to `cpu` (the same-CPU cost when it held it last, zero
  // when nobody did); the hold starts once it has come.
  sim::Time UncontendedMove(const Cpu& cpu) {
    if (prev_cpu_ == nullptr) return sim::Time::Zero();
    const sim::Time t = Transfer(*prev_cpu_, cpu);
    acquired_at_ += t;
    if (prev_cpu_ != &cpu) ++stat_.uncontended_moves;
    return t;
  }
  // Ideal: each CPU's hold timed on its own (holders overlap), recorded at
  // release as an uncontended acquisition.
  void IdealAcquired(const Cpu& cpu) {
    const auto id = static_cast<size_t>(cpu.id());
    if (id >= ideal_since_.size()) ideal_since_.resize(id + 1);
    ideal_since_[id] = sim_->Now();
  }
  void IdealReleased(const Cpu& cpu) {
    ++stat_.acquisitions;
    stat_.hold.Record((sim_->Now() - ideal_since_[static_cast<size_t>(cpu.id())]).ps());
  }
  void Acquired(Cpu& cpu, sim::Time at) {
    owner_ = &cpu;
    acquired_at_ = at;
    prev_cpu_ = last_cpu_;
    last_cpu_ = &cpu;
  }
  int Distance(const Cpu& from, const Cpu& to) const {
    return &from == &to ? 0 : static_cast<int>(HomedDistance(from.place(), to.place(), home_));
  }
  sim::Time Transfer(const Cpu& from, const Cpu& to) const { return handoff_[Distance(from, to)]; }
  sim::Time NodeTransfer(const Cpu& from, const Cpu& to) const { return node_handoff_[Distance(from, to)]; }
  void Enqueue(Awaiter* a, std::coroutine_handle<> h);
  // qspinlock's slow path: the pending bit, or the MCS queue.
  void EnqueueQueued(Awaiter* a, sim::Time now);
  void Append(Awaiter* a);
  void Release(Cpu& cpu);
  // qspinlock: `head`, just taken off the MCS queue, has the lock at `at`
  // and passes the head role on.
  void PassHeadRole(const Awaiter& head, sim::Time at);
  // Records the critical section `owner_` ends now (lock_stat.h).
  void RecordHold(sim::Time now);
  void TraceHold(Cpu& cpu, sim::Time now) const;
  // The lock on its way from its releaser to `next` over [from, to): a slice
  // of category "handoff" on the next owner's track.
  void TraceHandoff(Cpu& next, sim::Time from, sim::Time to) const;
  void TraceWaiters(sim::Time now) const;

  sim::Simulator* sim_;
  std::string name_;
  SpinlockKind kind_;
  std::array<sim::Time, kCpuDistances> handoff_;  // by CpuDistance
  std::array<sim::Time, kCpuDistances> node_handoff_;  // MCS node hand-off, by CpuDistance
  // Every distance costs the same: a hand-off needs no distance (and
  // lock_stat's contentions_by stays empty).
  bool flat_;
  int home_ = -1;
  bool uncontended_moves_ = false;
  bool ideal_ = false;
  std::vector<sim::Time> ideal_since_;  // by CPU id, while ideal
  Cpu* owner_ = nullptr;     // holder, or the waiter the lock is passing to
  Cpu* last_cpu_ = nullptr;  // CPU of the last acquisition
  Cpu* prev_cpu_ = nullptr;  // CPU of the acquisition before the owner's
  sim::Time acquired_at_;
  // The owner's acquisition, for its lock_stat sample at release: how long
  // it waited (kUncontended: not at all), whether it bounced, and how far
  // the lock word came to it.
  static constexpr sim::Time kUncontended = sim::Time::Picos(-1);
  sim::Time wait_;
  bool con_bounce_ = false;
  int8_t handoff_distance_ = -1;  // -1: not computed (flat_)
  // Waiters: the pending one (qspinlock), then a FIFO (ticket order, or
  // the MCS queue whose head spins on the lock word).
  Awaiter* pending_ = nullptr;
  Awaiter* head_ = nullptr;
  Awaiter* tail_ = nullptr;
  int waiters_ = 0;
  // qspinlock: the MCS head the lock was last handed to stays the queue's
  // tail until it owns the lock; a waiter arriving before then queues
  // behind it.
  sim::Time mcs_until_;
  Cpu* mcs_cpu_ = nullptr;
  LockStat stat_;
  std::string waiters_track_;  // the waiters' counter track (traced runs only)
};

// Inline: Enqueue and Release run once per acquisition in every lock-heavy
// model; the ticket lock's path makes no call of its own.
inline void Spinlock::Enqueue(Awaiter* a, std::coroutine_handle<> h) {
  const sim::Time now = sim_->Now();
  a->h_ = h;
  a->since_ = now;
  a->con_bounce_ = last_cpu_ != a->cpu_;
  ++waiters_;
  if (sim_->trace() != nullptr) TraceWaiters(now);
  if (kind_ == SpinlockKind::kQueued) {
    EnqueueQueued(a, now);
  } else {
    Append(a);
  }
}

inline void Spinlock::Append(Awaiter* a) {
  a->next_ = nullptr;
  if (tail_ != nullptr) {
    tail_->next_ = a;
  } else {
    head_ = a;
  }
  tail_ = a;
}

inline void Spinlock::RecordHold(sim::Time now) {
  ++stat_.acquisitions;
  stat_.hold.Record((now - acquired_at_).ps());
  if (prev_cpu_ != nullptr && prev_cpu_ != owner_) ++stat_.acq_bounces;
  if (wait_ != kUncontended) {
    ++stat_.contentions;
    if (handoff_distance_ >= 0) ++stat_.contentions_by[handoff_distance_];
    stat_.wait.Record(wait_.ps());
    if (con_bounce_) ++stat_.con_bounces;
  }
}

inline void Spinlock::Release(Cpu& cpu) {
  if (ideal_) [[unlikely]] {
    IdealReleased(cpu);
    return;
  }
  const sim::Time now = sim_->Now();
  RecordHold(now);
  if (sim_->trace() != nullptr) TraceHold(cpu, now);
  if (waiters_ == 0) {
    owner_ = nullptr;
    return;
  }
  // The next owner: qspinlock's pending waiter (clear_pending_set_locked),
  // else the next ticket or the MCS queue head, from when it spins on the
  // lock word.
  Awaiter* next = pending_;
  const bool mcs_head = next == nullptr && kind_ == SpinlockKind::kQueued;
  sim::Time spins = now;
  if (next != nullptr) {
    pending_ = nullptr;
  } else {
    next = head_;
    head_ = next->next_;
    if (head_ == nullptr) tail_ = nullptr;
    if (mcs_head) spins = std::max(now, next->ready_at_);
  }
  // It has the lock once the line reaches its CPU; it spins until then.
  const int d = flat_ ? -1 : Distance(cpu, *next->cpu_);
  const sim::Time at = spins + handoff_[flat_ ? 0 : d];
  if (mcs_head) PassHeadRole(*next, at);
  --waiters_;
  if (sim_->trace() != nullptr) {
    TraceWaiters(now);
    TraceHandoff(*next->cpu_, now, at);
  }
  Acquired(*next->cpu_, at);
  wait_ = at - next->since_;
  con_bounce_ = next->con_bounce_;
  handoff_distance_ = static_cast<int8_t>(d);
  // Its spin ends when it resumes, through its CPU.
  next->cpu_->ResumeAt(next->h_, at, next->was_irq_);
}

}  // namespace models

#endif  // VIOSIM_MODELS_SYNC_SPINLOCK_H_
