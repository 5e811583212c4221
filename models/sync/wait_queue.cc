#include "models/sync/wait_queue.h"

#include <utility>

#include "models/cpu/sched.h"

namespace models {

WaitQueue::WaitQueue(sim::Simulator& sim, std::string name, SpinlockKind lock_kind,
                     const LockHandoffCosts& handoff, sim::Time has_sleeper)
    : lock_(sim, std::move(name), lock_kind, handoff),
      has_sleeper_(has_sleeper),
      no_line_(sim, "", LockHandoffCosts::Uniform(sim::Time::Zero())) {}

WaitQueue::WaitQueue(sim::Simulator& sim, std::string name, const LockHandoffCosts& handoff,
                     const LockHandoffCosts& node, sim::Time has_sleeper)
    : lock_(sim, std::move(name), SpinlockKind::kQueued, handoff, node),
      has_sleeper_(has_sleeper),
      no_line_(sim, "", LockHandoffCosts::Uniform(sim::Time::Zero())) {}

sim::Task WaitQueue::LockIrqSave(Cpu& cpu) {
  co_await lock_.LockIrqSave(cpu);
  // The lock word shares the head's line: taking it wrote the line.
  if (head_line_ != nullptr) head_line_->Touch(cpu);
}

bool WaitQueue::Queued(const Task& task) const {
  auto it = entries_.find(&task);
  return it != entries_.end() && it->second.queued;
}

// prepare_to_wait() / prepare_to_wait_exclusive() (kernel/sched/wait.c).
sim::Task WaitQueue::Prepare(Cpu& cpu, Task& task, Task::State state, bool exclusive) {
  Entry& e = entries_[&task];
  e.task = &task;
  e.exclusive = exclusive;
  co_await LockIrqSave(cpu);
  // __add_wait_queue_entry_tail() / __add_wait_queue().
  if (!e.queued) {
    if (head_line_ != nullptr) co_await head_line_->Write(cpu);
    InsertBefore(e, exclusive ? nullptr : head_);
  }
  task.SetState(state);  // set_current_state()
  lock_.UnlockIrqRestore(cpu);
}

// finish_wait() (kernel/sched/wait.c).
sim::Task WaitQueue::FinishWait(Cpu& cpu, Task& task) {
  task.SetState(Task::State::kRunning);  // __set_current_state()
  auto it = entries_.find(&task);
  if (it == entries_.end() || !it->second.queued) co_return;  // list_empty_careful()
  co_await LockIrqSave(cpu);
  if (it->second.queued) {
    if (head_line_ != nullptr) co_await head_line_->Write(cpu);
    Remove(it->second);
  }
  lock_.UnlockIrqRestore(cpu);
}

// __wake_up() -> __wake_up_common_lock() -> __wake_up_common()
// (kernel/sched/wait.c), each entry's function being
// autoremove_wake_function().
sim::Task WaitQueue::WakeUp(Cpu& cpu, int nr_exclusive) {
  Scheduler& sched = *cpu.scheduler();
  co_await LockIrqSave(cpu);
  if (head_line_ != nullptr) co_await head_line_->Read(cpu, walk_);
  // The list holds still meanwhile: changing it takes the lock we hold.
  for (Entry* e = head_; e != nullptr;) {
    Entry* next = e->next;
    bool woken = false;
    co_await sched.TryToWakeUp(*e->task, cpu, &woken);
    if (woken) {
      if (head_line_ != nullptr) co_await head_line_->Write(cpu);
      Remove(*e);
    }
    if (woken && e->exclusive && --nr_exclusive == 0) break;
    e = next;
  }
  lock_.UnlockIrqRestore(cpu);
}

void WaitQueue::InsertBefore(Entry& e, Entry* at) {
  e.next = at;
  e.prev = at != nullptr ? at->prev : tail_;
  (e.prev != nullptr ? e.prev->next : head_) = &e;
  (at != nullptr ? at->prev : tail_) = &e;
  e.queued = true;
  ++size_;
}

void WaitQueue::Remove(Entry& e) {
  (e.prev != nullptr ? e.prev->next : head_) = e.next;
  (e.next != nullptr ? e.next->prev : tail_) = e.prev;
  e.prev = e.next = nullptr;
  e.queued = false;
  --size_;
}

}  // namespace models
