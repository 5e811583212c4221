#include "models/sync/mutex.h"

#include <algorithm>

namespace models {

// __lll_lock_wait(): while the lock word is taken, futex_wait (sleep), then
// retry.
sim::Task Mutex::Lock(Cpu& cpu) {
  if (ideal_) {
    ideal_holds_.emplace_back(cpu.current(), sim_->Now());
    co_return;
  }
  Task& me = *cpu.current();
  if (owner_ == nullptr) {
    owner_ = &me;
    acquired_at_ = sim_->Now();
    contended_ = false;
    co_return;
  }
  const sim::Time since = sim_->Now();
  while (owner_ != nullptr) {
    me.SetState(Task::State::kInterruptible);
    sleepers_.push_back(&me);
    co_await me.Schedule();
    me.SetState(Task::State::kRunning);
    // Woken by an unlock (which took us off the queue) or by anyone else.
    auto it = std::find(sleepers_.begin(), sleepers_.end(), &me);
    if (it != sleepers_.end()) sleepers_.erase(it);
    if (owner_ != nullptr) ++barged_;
  }
  owner_ = &me;
  acquired_at_ = sim_->Now();
  contended_ = true;
  waited_ = sim_->Now() - since;
}

// __lll_unlock(): release, then futex_wake one sleeper.
sim::Task Mutex::Unlock(Cpu& cpu) {
  const sim::Time now = sim_->Now();
  if (ideal_) {
    for (auto it = ideal_holds_.begin(); it != ideal_holds_.end(); ++it) {
      if (it->first != cpu.current()) continue;
      ++stat_.acquisitions;
      stat_.hold.Record((now - it->second).ps());
      ideal_holds_.erase(it);
      break;
    }
    co_return;
  }
  ++stat_.acquisitions;
  stat_.hold.Record((now - acquired_at_).ps());
  if (contended_) {
    ++stat_.contentions;
    stat_.wait.Record(waited_.ps());
  }
  owner_ = nullptr;
  if (sleepers_.empty()) co_return;
  Task* next = sleepers_.front();
  sleepers_.pop_front();
  co_await cpu.scheduler()->TryToWakeUp(*next, cpu);
}

}  // namespace models
