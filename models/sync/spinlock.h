// A FIFO ticket spinlock, as arch_spinlock_t on x86 and arm64 of the 3.x
// kernels (arch/x86/include/asm/spinlock.h, Linux 3.15): a waiter takes a
// ticket and spins until the owner field reaches it, so the lock is handed to
// waiters strictly in arrival order. A spinning waiter burns its CPU (state
// CpuTime::kSpin), with interrupts off if it came through spin_lock_irqsave.
//
// Hand-off: after spin_unlock the next waiter owns the lock only once the
// lock's cache line has moved to its CPU; `handoff` models that delay (one
// event). With a zero hand-off the lock is exactly a FIFO single server.
//
// Every lock keeps lock_stat-style counters (CONFIG_LOCK_STAT,
// kernel/locking/lockdep.c): acquisitions, contentions, wait and hold times,
// and bounces (acquisitions and contentions on a CPU other than the last
// holder's).
#ifndef VIOSIM_MODELS_SYNC_SPINLOCK_H_
#define VIOSIM_MODELS_SYNC_SPINLOCK_H_

#include <coroutine>
#include <cstdint>
#include <string>

#include "models/cpu/cpu.h"
#include "sim/simulator.h"
#include "sim/stats.h"
#include "sim/time.h"

namespace models {

// The counters of one lock class, as /proc/lock_stat shows them.
struct LockStat {
  uint64_t acquisitions = 0;
  uint64_t contentions = 0;   // acquisitions that had to wait
  uint64_t acq_bounces = 0;   // acquired on a CPU other than the last holder's
  uint64_t con_bounces = 0;   // contended on a CPU other than the last holder's
  sim::Summary wait;          // per contended acquisition, picoseconds
  sim::Summary hold;          // per release, picoseconds
  void Reset();
};

class Spinlock {
 public:
  Spinlock(sim::Simulator& sim, std::string name, sim::Time handoff);
  Spinlock(const Spinlock&) = delete;
  Spinlock& operator=(const Spinlock&) = delete;

  const std::string& name() const { return name_; }
  bool locked() const { return owner_ != nullptr; }
  // Number of CPUs spinning on the lock now.
  int waiters() const { return waiters_; }

  class Awaiter {
   public:
    Awaiter(Spinlock* l, Cpu* c) : lock_(l), cpu_(c) {}
    // preempt_disable(), then the uncontended fast path: no event.
    bool await_ready() {
      cpu_->PreemptDisable();
      return lock_->TryAcquireUncontended(*cpu_);
    }
    void await_suspend(std::coroutine_handle<> h) {
      was_irq_ = cpu_->in_irq();
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
    Awaiter* next_ = nullptr;
    sim::Time since_;
    bool was_irq_ = false;
  };

  // spin_lock(): `co_await lock.Lock(cpu)` in the caller's own coroutine,
  // with `cpu` the CPU the caller runs on. No event when the lock is free.
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

 private:
  bool TryAcquireUncontended(Cpu& cpu) {
    if (owner_ != nullptr || head_ != nullptr) return false;
    Acquired(cpu);
    return true;
  }
  void Enqueue(Awaiter* a, std::coroutine_handle<> h);
  void Release(Cpu& cpu);
  void TraceHold(Cpu& cpu, sim::Time now) const;
  void Acquired(Cpu& cpu) {
    owner_ = &cpu;
    acquired_at_ = sim_->Now();
    ++stat_.acquisitions;
    if (last_cpu_ != nullptr && last_cpu_ != &cpu) ++stat_.acq_bounces;
    last_cpu_ = &cpu;
  }

  sim::Simulator* sim_;
  std::string name_;
  sim::Time handoff_;
  Cpu* owner_ = nullptr;     // holder, or the waiter the lock is passing to
  Cpu* last_cpu_ = nullptr;  // last CPU to acquire
  sim::Time acquired_at_;
  Awaiter* head_ = nullptr;  // FIFO of spinning waiters (ticket order)
  Awaiter* tail_ = nullptr;
  int waiters_ = 0;
  LockStat stat_;
};

// Inline: both run once per contended acquisition, the hot path of every
// lock-heavy model.
inline void Spinlock::Enqueue(Awaiter* a, std::coroutine_handle<> h) {
  a->h_ = h;
  a->since_ = sim_->Now();
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

inline void Spinlock::Release(Cpu& cpu) {
  const sim::Time now = sim_->Now();
  stat_.hold.Record((now - acquired_at_).ps());
  if (sim_->trace() != nullptr) TraceHold(cpu, now);
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
  // The waiter leaves its spin loop when it resumes, through its CPU (a
  // task's spin ends only once an interrupt handler on its CPU has
  // returned); until then it spins.
  next->cpu_->ResumeAt(next->h_, acquired_at_, next->was_irq_);
}

}  // namespace models

#endif  // VIOSIM_MODELS_SYNC_SPINLOCK_H_
