// A wait queue (struct wait_queue_head, include/linux/wait.h and
// kernel/sched/wait.c, Linux 5.x/6.x): a list of waiting tasks under the
// queue's own spinlock.
//
// A waiter sleeps the kernel's way (prepare_to_wait / finish_wait), reading
// its CPU again after each schedule() since it may have moved:
//
//   for (;;) {
//     co_await wq.PrepareToWait(*task.cpu(), task, Task::State::kUninterruptible);
//     if (condition) break;
//     co_await task.Schedule();
//   }
//   co_await wq.FinishWait(*task.cpu(), task);
//
// and a waker, having made the condition true, calls
//
//   co_await wq.WakeUp(cpu, 1);                      // wake_up()
//
// which always takes the queue's lock, or guards it the way many callers do:
//
//   if (co_await wq.HasSleeper(cpu)) co_await wq.WakeUp(cpu, 1);
//
// which takes no lock when nobody waits. The lock is a Spinlock with its
// lock_stat row; try_to_wake_up's cost is charged to the waker inside the
// lock hold, as __wake_up_common runs under it.
//
// Entries. The kernel's entry (DEFINE_WAIT) lives on the waiter's stack;
// here the queue keeps one entry per task that has waited on it, made on
// its first wait and reused after (no allocation in steady state). Entries
// are woken in list order: non-exclusive waiters are added at the head,
// exclusive ones at the tail.
#ifndef VIOSIM_MODELS_SYNC_WAIT_QUEUE_H_
#define VIOSIM_MODELS_SYNC_WAIT_QUEUE_H_

#include <coroutine>
#include <string>
#include <unordered_map>

#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "models/sync/cache_line.h"
#include "models/sync/handoff_costs.h"
#include "models/sync/spinlock.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

class WaitQueue {
 public:
  // `lock_kind` and `handoff` make the queue's spinlock (named after the
  // queue); `has_sleeper` is what HasSleeper() costs the caller (the full
  // memory barrier and the list check), zero to leave it out.
  WaitQueue(sim::Simulator& sim, std::string name, SpinlockKind lock_kind, const LockHandoffCosts& handoff,
            sim::Time has_sleeper = sim::Time::Zero());
  // The same with a qspinlock whose MCS node hand-off costs `node` and
  // whose lock word's hand-off costs `handoff` (spinlock.h).
  WaitQueue(sim::Simulator& sim, std::string name, const LockHandoffCosts& handoff, const LockHandoffCosts& node,
            sim::Time has_sleeper);
  WaitQueue(const WaitQueue&) = delete;
  WaitQueue& operator=(const WaitQueue&) = delete;

  const std::string& name() const { return lock_.name(); }

  // Optional, for callers whose queue head is a contended line: the cache
  // line of wait_queue_head_t (`line`, which the caller owns: the lock word
  // and the list head share it), read by HasSleeper and by WakeUp's walk,
  // written whenever an entry is queued or removed and whenever the lock is
  // taken (CacheLine::Touch: the word's move is the lock's own hand-off
  // cost); and `walk`, __wake_up_common's own work under the lock. Unset:
  // the head costs nothing.
  void set_head(CacheLine* line, sim::Time walk) {
    head_line_ = line;
    walk_ = walk;
  }
  // wq_head->lock, for its lock_stat row.
  const Spinlock& lock() const { return lock_; }
  void ResetStats() { lock_.ResetStats(); }
  // The socket the queue's lock word is on (Spinlock::set_home_socket).
  void set_home_socket(int socket) { lock_.set_home_socket(socket); }

  // waitqueue_active(): whether an entry is queued, without cost.
  bool active() const { return head_ != nullptr; }
  // Entries queued now.
  int size() const { return size_; }
  // Whether `task`'s entry is queued (!list_empty(&wait->entry)).
  bool Queued(const Task& task) const;

  // prepare_to_wait(): under the queue's lock (irqsave), queues `task`'s
  // entry at the head unless it is queued already, and sets the task's
  // state. `cpu` is the CPU the task runs on.
  sim::Task PrepareToWait(Cpu& cpu, Task& task, Task::State state) { return Prepare(cpu, task, state, false); }
  // prepare_to_wait_exclusive(): the same with an exclusive entry, queued
  // at the tail.
  sim::Task PrepareToWaitExclusive(Cpu& cpu, Task& task, Task::State state) {
    return Prepare(cpu, task, state, true);
  }
  // finish_wait(): the task's state becomes TASK_RUNNING; if its entry is
  // still queued (list_empty_careful(), no lock), it is removed under the
  // lock. A woken entry was removed by its waker: no lock then.
  sim::Task FinishWait(Cpu& cpu, Task& task);

  // __wake_up(wq, TASK_NORMAL, nr_exclusive, NULL) by code running on
  // `cpu`: under the queue's lock (irqsave), try_to_wake_up() for each
  // entry in list order -- every non-exclusive one and up to `nr_exclusive`
  // exclusive ones (0: all) -- removing each entry whose task it woke
  // (autoremove_wake_function). An exclusive entry counts only if its task
  // was woken. REQUIRES: `cpu` has a scheduler.
  sim::Task WakeUp(Cpu& cpu, int nr_exclusive);

  // wq_has_sleeper(): smp_mb() and waitqueue_active(), no lock:
  // `if (co_await wq.HasSleeper(cpu))`. Reads the head's line, then costs
  // `has_sleeper` on `cpu`.
  class HasSleeperAwaiter {
   public:
    HasSleeperAwaiter(CacheLine::Access read, const WaitQueue* wq) : read_(read), wq_(wq) {}
    bool await_ready() { return read_.await_ready(); }
    void await_suspend(std::coroutine_handle<> h) { read_.await_suspend(h); }
    // The list is read after the barrier.
    bool await_resume() const noexcept {
      read_.await_resume();
      return wq_->active();
    }

   private:
    CacheLine::Access read_;
    const WaitQueue* wq_;
  };
  HasSleeperAwaiter HasSleeper(Cpu& cpu) const {
    CacheLine* line = head_line_ != nullptr ? head_line_ : &no_line_;
    return HasSleeperAwaiter(line->Read(cpu, has_sleeper_), this);
  }

 private:
  // struct wait_queue_entry, with its list link.
  struct Entry {
    Task* task = nullptr;
    bool exclusive = false;
    bool queued = false;
    Entry* prev = nullptr;
    Entry* next = nullptr;
  };
  sim::Task Prepare(Cpu& cpu, Task& task, Task::State state, bool exclusive);
  // Links `e` in before `at` (null: at the tail).
  void InsertBefore(Entry& e, Entry* at);
  void Remove(Entry& e);  // list_del_init()

  // lock_.LockIrqSave, and the head's line written by the lock word's move.
  sim::Task LockIrqSave(Cpu& cpu);

  Spinlock lock_;
  sim::Time has_sleeper_;
  CacheLine* head_line_ = nullptr;
  // Without a head line: one that is always here (every access a hit).
  mutable CacheLine no_line_;
  sim::Time walk_;
  std::unordered_map<const Task*, Entry> entries_;  // one per task; stable addresses
  Entry* head_ = nullptr;
  Entry* tail_ = nullptr;
  int size_ = 0;
};

}  // namespace models

#endif  // VIOSIM_MODELS_SYNC_WAIT_QUEUE_H_
