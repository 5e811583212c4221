#include "models/sync/cache_line.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace models {

const char* LineArbitrationName(LineArbitration a) {
  switch (a) {
    case LineArbitration::kUnqueued: return "unqueued";
    case LineArbitration::kRandom: return "random";
    case LineArbitration::kFifo: return "fifo";
    case LineArbitration::kNearestFirst: return "nearest_first";
  }
  return "?";
}

CacheLine::CacheLine(sim::Simulator& sim, std::string name, const LineCosts& costs)
    : sim_(&sim),
      name_(std::move(name)),
      costs_(costs),
      handoff_(costs.handoff.Table()),
      rng_(sim::Rng::ForStream(costs.seed, name_)) {
  const double ratio = costs_.arbitration == LineArbitration::kUnqueued ? 1.0 : costs_.service_ratio;
  for (int d = 0; d < kCpuDistances; ++d) {
    service_[d] = sim::Time::Picos(std::llround(static_cast<double>(handoff_[d].ps()) * ratio));
  }
  ideal_ = sim.IsIdeal(name_);
  sim.RegisterResource(name_, "line");
}

CacheLine::CacheLine(sim::Simulator& sim, std::string name, const LockHandoffCosts& handoff)
    : CacheLine(sim, std::move(name), LineCosts{handoff}) {}

void CacheLine::ResetStats() {
  accesses_ = transfers_ = queued_ = bypasses_ = 0;
  transfers_by_.fill(0);
  wait_sum_ = sim::Time::Zero();
  // The part of the transaction in flight that falls in the new window.
  busy_sum_ = std::max(sim::Time::Zero(), busy_until_ - sim_->Now());
}

sim::Time CacheLine::BusyTime() const { return busy_sum_ - std::max(sim::Time::Zero(), busy_until_ - sim_->Now()); }

bool CacheLine::Needs(const Cpu& cpu, bool write) const {
  // A write hits only a line held exclusive here with no other CPU's
  // transaction on its way (the line is being taken from this CPU then:
  // the write waits for it and takes the line back).
  if (write) return !(writer_ == nullptr || (writer_ == &cpu && !shared_ && pending_.cpu == nullptr));
  return !HasCopy(cpu);
}

void CacheLine::Touch(const Cpu& cpu) {
  writer_ = &cpu;
  holder_ = &cpu;
  shared_ = false;
  ++writes_;
}

sim::Time CacheLine::Serve(const Cpu& cpu, bool write) {
  // Where the line comes from: the previous transaction's CPU, or for the
  // upgrade of this CPU's own shared copy, the last writer's.
  const Cpu* from = holder_ != &cpu ? holder_ : writer_;
  const CpuDistance d = from != nullptr ? Distance(*from, cpu) : CpuDistance::kSame;
  ++transfers_;
  ++transfers_by_[static_cast<int>(d)];
  const sim::Time s = service_[static_cast<int>(d)];
  if (costs_.arbitration == LineArbitration::kUnqueued) {
    Apply(cpu, write);
  } else {
    // The line is the new owner's once the transaction is done; until
    // then the CPUs that had it go on hitting their copies.
    pending_ = {&cpu, write, sim_->Now() + s};
  }
  return s;
}

void CacheLine::Apply(const Cpu& cpu, bool write) {
  holder_ = &cpu;
  if (write) {
    writer_ = &cpu;
    shared_ = false;
    ++writes_;
  } else {
    shared_ = true;
    const auto id = static_cast<size_t>(cpu.id());
    if (id >= copy_at_.size()) copy_at_.resize(id + 1, 0);
    copy_at_[id] = writes_;
  }
}

bool CacheLine::Start(Access& a) {
  ++accesses_;
  const Cpu& cpu = *a.cpu_;
  Settle();
  if (ideal_ || !Needs(cpu, a.write_)) {
    if (!ideal_ && a.write_) {
      // A write to a line nobody wrote yet, or held here exclusive: it
      // stays here, and other CPUs' copies go stale.
      writer_ = holder_ = &cpu;
      ++writes_;
    }
    a.run_ = handoff_[0] + a.then_;
    return a.run_ == sim::Time::Zero();
  }
  const sim::Time now = sim_->Now();
  if (costs_.arbitration != LineArbitration::kUnqueued && (waiters_ > 0 || busy_until_ > now)) {
    a.queued_ = true;
    return false;
  }
  const sim::Time s = Serve(cpu, a.write_);
  if (costs_.arbitration != LineArbitration::kUnqueued) {
    busy_until_ = now + s;
    busy_sum_ += s;
  }
  a.run_ = s + a.then_;
  return a.run_ == sim::Time::Zero();
}

void CacheLine::Suspend(Access& a, std::coroutine_handle<> h) {
  Cpu& cpu = *a.cpu_;
  if (!a.queued_) {
    cpu.Run(a.run_).await_suspend(h);
    return;
  }
  a.h_ = h;
  a.was_irq_ = cpu.in_irq();
  a.since_ = sim_->Now();
  a.mark_ = 0;
  cpu.BeginSpinWait(CpuTime::kSystem);
  // Into the arrival order and its LLC's.
  a.prev_ = tail_;
  a.next_ = nullptr;
  (tail_ != nullptr ? tail_->next_ : head_) = &a;
  tail_ = &a;
  const auto g = static_cast<size_t>(cpu.place().llc);
  if (g >= llc_.size()) llc_.resize(g + 1);
  Append(llc_[g], a, &Access::in_llc_);
  const auto sk = static_cast<size_t>(cpu.place().socket);
  if (sk >= socket_.size()) socket_.resize(sk + 1);
  Append(socket_[sk], a, &Access::in_socket_);
  ++waiters_;
  ++queued_;
  if (!pick_due_) {
    pick_due_ = true;
    sim_->ScheduleAt(std::max(busy_until_, sim_->Now()), pick_.handle());
  }
}

void CacheLine::Append(Group& g, Access& a, Access::Link Access::*l) {
  (a.*l).prev = g.tail;
  (a.*l).next = nullptr;
  (g.tail != nullptr ? (g.tail->*l).next : g.head) = &a;
  g.tail = &a;
}

void CacheLine::Remove(Group& g, Access& a, Access::Link Access::*l) {
  const Access::Link& k = a.*l;
  (k.prev != nullptr ? (k.prev->*l).next : g.head) = k.next;
  (k.next != nullptr ? (k.next->*l).prev : g.tail) = k.prev;
}

void CacheLine::Unlink(Access* a) {
  if (a->prev_ != nullptr) {
    a->prev_->mark_ += a->mark_;
  } else {
    passed_marks_ -= a->mark_;
  }
  (a->prev_ != nullptr ? a->prev_->next_ : head_) = a->next_;
  (a->next_ != nullptr ? a->next_->prev_ : tail_) = a->prev_;
  Remove(llc_[static_cast<size_t>(a->cpu_->place().llc)], *a, &Access::in_llc_);
  Remove(socket_[static_cast<size_t>(a->cpu_->place().socket)], *a, &Access::in_socket_);
  --waiters_;
}

CacheLine::Access* CacheLine::Choose() {
  Access* oldest = head_;
  if (costs_.arbitration == LineArbitration::kRandom) {
    // Any waiter alike, wherever it sits: the locality-free arbitration.
    uint64_t k = rng_.Below(static_cast<uint64_t>(waiters_));
    Access* a = head_;
    while (k-- > 0 && a->next_ != nullptr) a = a->next_;
    return a;
  }
  if (costs_.arbitration != LineArbitration::kNearestFirst || holder_ == nullptr) return oldest;
  if (passed_marks_ >= costs_.max_bypass) return oldest;  // the oldest's times passed over
  // The holder's LLC first.
  const CpuPlace& at = holder_->place();
  const auto g = static_cast<size_t>(at.llc);
  if (g < llc_.size() && llc_[g].head != nullptr) return llc_[g].head;
  // Then the oldest waiter of the holder's socket, where that socket's LLCs
  // talk directly (not through another socket's home directory).
  // (No waiter shares the holder's LLC here, so every waiter of its socket
  // is at CpuDistance::kSocket from it: the first of them in arrival order.)
  if ((costs_.home_socket < 0 || at.socket == costs_.home_socket) &&
      Distance(*holder_, *oldest->cpu_) == CpuDistance::kRemote) {
    const auto s = static_cast<size_t>(at.socket);
    if (s < socket_.size() && socket_[s].head != nullptr) return socket_[s].head;
  }
  return oldest;
}

void CacheLine::Pick() {
  Settle();
  Cpu* const done = std::exchange(resume_cpu_at_pick_, nullptr);
  Access* a = Choose();
  if (a != head_) {
    // Every older waiter is passed over.
    ++bypasses_;
    ++a->prev_->mark_;
    ++passed_marks_;
  }
  Unlink(a);
  const sim::Time now = sim_->Now();
  const sim::Time s = Serve(*a->cpu_, a->write_);
  busy_until_ = now + s;
  busy_sum_ += s;
  wait_sum_ += now - a->since_;
  if (waiters_ > 0) {
    sim_->ScheduleAt(busy_until_, pick_.handle());
  } else {
    pick_due_ = false;
  }
  const uint64_t done_seq = resume_seq_;
  if (waiters_ > 0 && busy_until_ > now && a->then_ == sim::Time::Zero() && a->cpu_->CanArmWaitEnd(a->was_irq_)) {
    // Its wait ends when it is done, with the next pick (queued just now).
    resume_seq_ = a->cpu_->ArmWaitEnd(a->h_, busy_until_);
    resume_cpu_at_pick_ = a->cpu_;
  } else {
    a->cpu_->ResumeAt(a->h_, busy_until_ + a->then_, a->was_irq_);
  }
  // Last, where its own event would have run: the waiter whose transaction
  // is done resumes.
  if (done != nullptr) {
    if (sim_->ready_empty()) {
      done->WaitEndInline();
    } else {
      done->WaitEndQueued(done_seq);
    }
  }
}

}  // namespace models
