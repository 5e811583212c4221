#include "sim/simulator.h"

namespace sim {

Simulator::Simulator(TraceWriter* trace) : trace_(trace) { ready_.reserve(256); }

Simulator::~Simulator() {
  for (TraceSource* t = sources_head_; t != nullptr; t = t->next_) t->owner_ = nullptr;
  // Root processes that never finished are suspended somewhere (a delay, a
  // lock queue, a signal). Destroying a root destroys the children it awaits.
  while (roots_.next != nullptr) {
    auto* p = static_cast<internal::TaskPromise*>(roots_.next);
    p->Unlink();
    std::coroutine_handle<internal::TaskPromise>::from_promise(*p).destroy();
  }
}

TraceSource::TraceSource(Simulator& sim) : owner_(&sim), prev_(sim.sources_tail_) {
  (prev_ != nullptr ? prev_->next_ : sim.sources_head_) = this;
  sim.sources_tail_ = this;
}

TraceSource::~TraceSource() {
  if (owner_ == nullptr) return;
  (prev_ != nullptr ? prev_->next_ : owner_->sources_head_) = next_;
  (next_ != nullptr ? next_->prev_ : owner_->sources_tail_) = prev_;
}

void Simulator::CloseTraceSlices() {
  if (trace_ == nullptr) return;
  for (TraceSource* t = sources_head_; t != nullptr; t = t->next_) t->CloseTraceSlice();
}

void Simulator::OpenTraceSlices() {
  if (trace_ == nullptr) return;
  int ordinal = 0;
  for (TraceSource* t = sources_head_; t != nullptr; t = t->next_) t->OpenTraceSlice(ordinal++);
}

void Simulator::Spawn(Task task) {
  Task::Handle h = task.Release();
  if (!h) return;
  internal::TaskPromise& p = h.promise();
  p.detached = true;
  p.next = roots_.next;
  p.prev = &roots_;
  if (roots_.next != nullptr) roots_.next->prev = &p;
  roots_.next = &p;
  Wake(h);
}

void Simulator::CheckProgress() {
  next_progress_check_ = events_ + max_events_at_one_instant_;
  if (now_ != progress_checked_at_) {
    progress_checked_at_ = now_;
    return;
  }
  Stall();  // every event since the last check ran at this instant
}

void Simulator::Stall() {
  // Drop what is pending, so that RunUntil returns and every later call
  // finds nothing to run.
  stalled_ = true;
  stalled_at_ = now_;
  queue_.Clear();
  ready_.clear();
  ready_head_ = 0;
}

bool Simulator::Retarget(Time at, std::coroutine_handle<> from, std::coroutine_handle<> to) {
  void* const f = from.address();
  if (at == now_) {
    for (std::size_t i = ready_head_; i < ready_.size(); ++i) {
      if (ready_[i] == f) {
        ready_[i] = to.address();
        return true;
      }
    }
  }
  return queue_.Retarget(at.ps(), f, to.address());
}

}  // namespace sim
