// A sleeping mutex of tasks with glibc's pthread_mutex semantics (nptl's
// low-level lock over futex_wait / futex_wake, glibc 2.x): the lock is not
// handed over. Unlock releases it and, if tasks sleep on it, futex-wakes
// the longest sleeper (the futex hash bucket's queue is FIFO for equal
// priorities): try_to_wake_up charged on the unlocker's CPU, in its
// context. The woken task runs after its wake-up latency and a context
// switch, and retries; meanwhile the lock is free and any task that
// arrives takes it at once (barging). A woken task that finds the lock
// taken again sleeps again at the end of the queue.
//
// QEMU's BQL is one (models/qemu/virtio_blk_device.h): its threads are
// tasks on host CPUs, so the mutex's costs come from the host's scheduler.
//
// lock_stat row: each critical section recorded whole at its unlock, as
// the spinlocks' (lock_stat.h); no bounce counts.
#ifndef VIOSIM_MODELS_SYNC_MUTEX_H_
#define VIOSIM_MODELS_SYNC_MUTEX_H_

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>
#include <string>

#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "models/sync/lock_stat.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

class Mutex : public sim::TraceSource {
 public:
  // Ideal when sim::Simulator::IsIdeal(name) as it is built: taken and
  // released at no cost, nobody sleeps for it, holders do not exclude each
  // other; lock_stat counts its acquisitions only.
  Mutex(sim::Simulator& sim, std::string name)
      : sim::TraceSource(sim), sim_(&sim), name_(std::move(name)), ideal_(sim.IsIdeal(name_)) {
    sim.RegisterResource(name_, "mutex");
  }
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  const std::string& name() const { return name_; }
  bool locked() const { return owner_ != nullptr; }
  int sleepers() const { return static_cast<int>(sleepers_.size()); }

  // pthread_mutex_lock() by the current task of `cpu`:
  // `co_await m.Lock(cpu)`. No event when the mutex is free.
  sim::Task Lock(Cpu& cpu);
  // pthread_mutex_unlock() by the owner, the current task of `cpu`.
  sim::Task Unlock(Cpu& cpu);

  const LockStat& stat() const { return stat_; }
  // Traced, as a spinlock is: each hold a slice on the holder's CPU track
  // (category "lock", drawn at the unlock), and the sleepers a counter
  // track "<name> waiters #<ordinal>".
  void CloseTraceSlice() override;
  void OpenTraceSlice(int ordinal) override;
  // Woken tasks that found the mutex taken again.
  uint64_t barged() const { return barged_; }
  void ResetStats() {
    stat_.Reset();
    barged_ = 0;
  }

 private:
  sim::Simulator* sim_;
  std::string name_;
  bool ideal_ = false;
  std::vector<std::pair<Task*, sim::Time>> ideal_holds_;  // while ideal: who holds it since when
  Task* owner_ = nullptr;
  sim::Time acquired_at_;
  bool contended_ = false;  // the owner's acquisition had to wait
  sim::Time waited_;
  std::deque<Task*> sleepers_;  // futex_wait queue, FIFO
  LockStat stat_;
  uint64_t barged_ = 0;
  std::string waiters_track_;  // traced runs only
  void TraceWaiters() const;
};

}  // namespace models

#endif  // VIOSIM_MODELS_SYNC_MUTEX_H_
