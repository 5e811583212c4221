#include "models/sync/mutex.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "sim/trace.h"

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
    TraceWaiters();
    co_await me.Schedule();
    me.SetState(Task::State::kRunning);
    // Woken by an unlock (which took us off the queue) or by anyone else.
    auto it = std::find(sleepers_.begin(), sleepers_.end(), &me);
    if (it != sleepers_.end()) {
      sleepers_.erase(it);
      TraceWaiters();
    }
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
  if (sim_->trace() != nullptr && acquired_at_ < now) {
    sim_->trace()->Complete(Cpu::kTracePid, cpu.id(), name_, acquired_at_, now - acquired_at_, "lock");
  }
  owner_ = nullptr;
  if (sleepers_.empty()) co_return;
  Task* next = sleepers_.front();
  sleepers_.pop_front();
  TraceWaiters();
  co_await cpu.scheduler()->TryToWakeUp(*next, cpu);
}

void Mutex::CloseTraceSlice() {
  const sim::Time now = sim_->Now();
  if (owner_ != nullptr && owner_->cpu() != nullptr && acquired_at_ < now) {
    sim_->trace()->Complete(Cpu::kTracePid, owner_->cpu()->id(), name_, acquired_at_, now - acquired_at_, "lock");
  }
}

void Mutex::OpenTraceSlice(int ordinal) {
  waiters_track_ = absl::StrCat(name_, " waiters #", ordinal);
  TraceWaiters();
}

void Mutex::TraceWaiters() const {
  if (sim_->trace() == nullptr || waiters_track_.empty()) return;
  sim_->trace()->Counter(Cpu::kTracePid, waiters_track_, sim_->Now(), static_cast<int64_t>(sleepers_.size()));
}

}  // namespace models
