#include "models/cpu/sched_fair.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace models {

// A CPU's runqueue (struct cfs_rq).
struct FairScheduler::Rq {
  Rq(FairScheduler* s, Cpu* c) : sched(s), cpu(c), kick(Callback::Bind<&Rq::OnKick>(this)) {}
  void OnKick() { sched->OnKick(*this); }

  FairScheduler* sched;
  Cpu* cpu;
  std::vector<Task*> heap;  // queued tasks, a min-heap on (vruntime, seq)
  Task* curr = nullptr;     // picked to run (cfs_rq->curr)
  int nr = 0;               // nr_running: heap plus curr
  sim::Time min_vruntime;
  bool kick_pending = false;
  // The other CPUs, nearest first: same LLC, same socket, the rest; each
  // from the next CPU id on, wrapping (for_each_cpu_wrap).
  std::vector<Rq*> domain[3];
  Callback kick;
};

int FairTunableFactor(int ncpus) {
  int cpus = std::min(ncpus, 8);
  int log = 0;
  while (cpus > 1) {
    cpus >>= 1;
    ++log;
  }
  return 1 + log;
}

FairScheduler::FairScheduler(sim::Simulator& sim, const FairParams& params)
    : Scheduler(sim),
      params_(params),
      latency_(params.sched_latency),
      min_gran_(params.min_granularity),
      wakeup_gran_(params.wakeup_granularity),
      balance_tick_(Callback::Bind<&FairScheduler::OnBalanceTick>(this)) {}

FairScheduler::~FairScheduler() = default;

void FairScheduler::Build() {
  std::vector<Cpu*> by_id = cpus();
  std::sort(by_id.begin(), by_id.end(), [](const Cpu* a, const Cpu* b) { return a->id() < b->id(); });
  const int n = static_cast<int>(by_id.size());
  const int factor = params_.scale_with_cpus ? FairTunableFactor(n) : 1;
  latency_ = params_.sched_latency * factor;
  min_gran_ = params_.min_granularity * factor;
  wakeup_gran_ = params_.wakeup_granularity * factor;
  for (Cpu* c : by_id) {
    const size_t id = static_cast<size_t>(c->id());
    if (id >= rqs_.size()) rqs_.resize(id + 1);
    if (rqs_[id] == nullptr) {
      rqs_[id] = std::make_unique<Rq>(this, c);
      ++idle_rqs_;
    }
  }
  std::map<int, std::vector<Rq*>> llcs, sockets;
  groups_.clear();
  for (int i = 0; i < n; ++i) {
    Rq& a = RqOf(*by_id[i]);
    for (auto& d : a.domain) d.clear();
    for (int k = 1; k < n; ++k) {
      Rq& b = RqOf(*by_id[(i + k) % n]);
      switch (DistanceOf(a.cpu->place(), b.cpu->place())) {
        case CpuDistance::kSame:
        case CpuDistance::kCore:
        case CpuDistance::kLlc: a.domain[0].push_back(&b); break;
        case CpuDistance::kSocket: a.domain[1].push_back(&b); break;
        case CpuDistance::kRemote: a.domain[2].push_back(&b); break;
      }
    }
    llcs[a.cpu->place().llc].push_back(&a);
    sockets[a.cpu->place().socket].push_back(&a);
  }
  // Balance groups, smallest first; one that repeats the level below is
  // left out.
  for (auto* level : {&llcs, &sockets}) {
    for (auto& [key, g] : *level) {
      if (g.size() >= 2 && std::find(groups_.begin(), groups_.end(), g) == groups_.end()) groups_.push_back(g);
    }
  }
  std::vector<Rq*> all;
  for (Cpu* c : by_id) all.push_back(&RqOf(*c));
  if (all.size() >= 2 && std::find(groups_.begin(), groups_.end(), all) == groups_.end()) {
    groups_.push_back(std::move(all));
  }
  built_ = cpus().size();
}

int FairScheduler::NrRunning(const Cpu& cpu) const {
  const size_t id = static_cast<size_t>(cpu.id());
  return id < rqs_.size() && rqs_[id] != nullptr ? rqs_[id]->nr : 0;
}

sim::Time FairScheduler::min_vruntime(const Cpu& cpu) const {
  const size_t id = static_cast<size_t>(cpu.id());
  return id < rqs_.size() && rqs_[id] != nullptr ? rqs_[id]->min_vruntime : sim::Time::Zero();
}

void FairScheduler::AddNr(Rq& rq, int delta) {
  const int old = rq.nr;
  rq.nr += delta;
  idle_rqs_ += (rq.nr == 0) - (old == 0);
  overloaded_rqs_ += (rq.nr >= 2) - (old >= 2);
}

sim::Time FairScheduler::CurrVruntime(const Rq& rq) const {
  const Task& c = *rq.curr;
  // Running since exec_start_ once switched in; not yet while switching.
  return rq.cpu->current() == &c ? c.vruntime_ + (sim().Now() - c.exec_start_) : c.vruntime_;
}

// update_min_vruntime(): the smaller of the current task's and the
// leftmost queued task's vruntime, never moving back.
void FairScheduler::UpdateMinVruntime(Rq& rq) {
  sim::Time v;
  if (rq.curr != nullptr) {
    v = CurrVruntime(rq);
    if (!rq.heap.empty()) v = std::min(v, rq.heap.front()->vruntime_);
  } else if (!rq.heap.empty()) {
    v = rq.heap.front()->vruntime_;
  } else {
    return;
  }
  rq.min_vruntime = std::max(rq.min_vruntime, v);
}

sim::Time FairScheduler::Slice(int nr_running) const {
  if (nr_running <= 1) return latency_;
  return std::max(latency_ / nr_running, min_gran_);
}

// ---- The runqueue ----

namespace {
bool Before(const Task* a, const Task* b) {
  return a->vruntime_ < b->vruntime_ || (a->vruntime_ == b->vruntime_ && a->rq_seq_ < b->rq_seq_);
}
}  // namespace

void FairScheduler::SiftUp(Rq& rq, size_t i) {
  std::vector<Task*>& h = rq.heap;
  Task* t = h[i];
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!Before(t, h[parent])) break;
    h[i] = h[parent];
    h[i]->rq_index_ = static_cast<int>(i);
    i = parent;
  }
  h[i] = t;
  t->rq_index_ = static_cast<int>(i);
}

void FairScheduler::SiftDown(Rq& rq, size_t i) {
  std::vector<Task*>& h = rq.heap;
  const size_t n = h.size();
  Task* t = h[i];
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && Before(h[c + 1], h[c])) ++c;
    if (!Before(h[c], t)) break;
    h[i] = h[c];
    h[i]->rq_index_ = static_cast<int>(i);
    i = c;
  }
  h[i] = t;
  t->rq_index_ = static_cast<int>(i);
}

void FairScheduler::Push(Rq& rq, Task& p) {
  p.rq_seq_ = ++seq_;
  rq.heap.push_back(&p);
  SiftUp(rq, rq.heap.size() - 1);
}

void FairScheduler::Remove(Rq& rq, Task& p) {
  const size_t i = static_cast<size_t>(p.rq_index_);
  Task* last = rq.heap.back();
  rq.heap.pop_back();
  p.rq_index_ = -1;
  if (last == &p) return;
  rq.heap[i] = last;
  last->rq_index_ = static_cast<int>(i);
  if (i > 0 && Before(last, rq.heap[(i - 1) / 2])) {
    SiftUp(rq, i);
  } else {
    SiftDown(rq, i);
  }
}

// ---- The policy ----

Cpu& FairScheduler::SelectTaskRq(Task& p, Cpu* waker) {
  if (cpus().size() != built_) Build();
  Cpu* prev = p.cpu();
  Cpu* target = nullptr;
  if (waker != nullptr && prev != nullptr) {
    const Rq& pr = RqOf(*prev);
    if (pr.nr == 0 && p.AllowedOn(prev->id())) {
      target = prev;
    } else {
      // select_idle_sibling(): an idle CPU sharing the LLC.
      for (const Rq* r : pr.domain[0]) {
        if (r->nr == 0 && p.AllowedOn(r->cpu->id())) {
          target = r->cpu;
          break;
        }
      }
    }
    if (target == nullptr && p.AllowedOn(prev->id())) target = prev;
  }
  if (target == nullptr) {
    // A new task (or one whose CPU it may no longer use): the CPU with the
    // fewest runnable tasks, the first of equals.
    int best = 0;
    for (Cpu* c : cpus()) {
      if (!p.AllowedOn(c->id())) continue;
      const int nr = RqOf(*c).nr;
      if (target == nullptr || nr < best) {
        target = c;
        best = nr;
      }
    }
    if (target == nullptr) target = cpus().front();
  }
  if (prev != nullptr && target != prev) {
    // migrate_task_rq_fair(): vruntime kept relative to min_vruntime.
    p.vruntime_ += RqOf(*target).min_vruntime - RqOf(*prev).min_vruntime;
  }
  return *target;
}

void FairScheduler::EnqueueTask(Cpu& cpu, Task& p, bool wakeup) {
  Rq& rq = RqOf(cpu);
  UpdateMinVruntime(rq);
  if (!wakeup) {
    p.vruntime_ += rq.min_vruntime;  // a migration: back on this CPU's clock
  } else if (!p.started_) {
    // place_entity(initial): START_DEBIT, one slice as if already queued.
    p.vruntime_ = rq.min_vruntime + (params_.start_debit ? Slice(rq.nr + 1) : sim::Time::Zero());
  } else {
    // place_entity(): the sleeper's credit, half a latency.
    p.vruntime_ = std::max(p.vruntime_, rq.min_vruntime - latency_ / 2);
  }
  Push(rq, p);
  AddNr(rq, +1);
  if (rq.nr >= 2) {
    KickIdle(rq, p);
    ArmBalance();
  }
}

void FairScheduler::DequeueTask(Cpu& cpu, Task& p) {
  Rq& rq = RqOf(cpu);
  Remove(rq, p);
  AddNr(rq, -1);
  UpdateMinVruntime(rq);
  p.vruntime_ -= rq.min_vruntime;
}

Task* FairScheduler::PickNextTask(Cpu& cpu) {
  Rq& rq = RqOf(cpu);
  if (rq.heap.empty()) return nullptr;
  UpdateMinVruntime(rq);
  Task* next = rq.heap.front();
  Remove(rq, *next);
  return next;  // still counted in nr: it becomes curr (StartRunning)
}

void FairScheduler::PutPrevTask(Cpu& cpu, Task& prev) {
  Rq& rq = RqOf(cpu);
  Push(rq, prev);
  AddNr(rq, +1);
}

bool FairScheduler::CheckPreemptCurr(Cpu& cpu, Task& curr, Task& woken) {
  const Rq& rq = RqOf(cpu);
  if (rq.curr != &curr) return false;
  return CurrVruntime(rq) - woken.vruntime_ > wakeup_gran_;
}

void FairScheduler::StartRunning(Cpu& cpu, Task& p) { RqOf(cpu).curr = &p; }

void FairScheduler::StopRunning(Cpu& cpu, Task& p, sim::Time ran) {
  Rq& rq = RqOf(cpu);
  UpdateMinVruntime(rq);  // with p's run up to now
  p.vruntime_ += ran;
  rq.curr = nullptr;
  AddNr(rq, -1);
}

void FairScheduler::SwitchedOut(Cpu& cpu, Task& prev) {
  // A preempted task could not be pulled while it was switching out.
  Rq& rq = RqOf(cpu);
  if (prev.on_rq() && rq.curr != &prev && rq.nr >= 2) KickIdle(rq, prev);
}

sim::Time FairScheduler::SliceOf(Cpu& cpu, Task& p) {
  (void)p;
  return Slice(RqOf(cpu).nr);
}

void FairScheduler::SliceEnded(Cpu& cpu, Task& p) {
  Rq& rq = RqOf(cpu);
  if (rq.curr == &p) {
    UpdateMinVruntime(rq);
    if (rq.heap.empty() || CurrVruntime(rq) < rq.heap.front()->vruntime_) {
      // Still the leftmost: it would be picked again.
      RearmSlice(cpu, Slice(rq.nr));
      return;
    }
  }
  Scheduler::SliceEnded(cpu, p);
}

// ---- Balancing ----

Task* FairScheduler::Movable(const Rq& from, const Cpu& to) const {
  Task* best = nullptr;
  for (Task* t : from.heap) {
    if (t->on_cpu() || !t->AllowedOn(to.id())) continue;
    if (best == nullptr || Before(best, t)) best = t;
  }
  return best;
}

bool FairScheduler::Pull(Rq& rq) {
  if (overloaded_rqs_ == 0) return false;
  for (const auto& domain : rq.domain) {
    Rq* busiest = nullptr;
    Task* task = nullptr;
    for (Rq* r : domain) {
      if (r->nr < 2 || (busiest != nullptr && r->nr <= busiest->nr)) continue;
      if (Task* t = Movable(*r, *rq.cpu)) {
        busiest = r;
        task = t;
      }
    }
    if (busiest != nullptr) {
      ++idle_pulls_;
      Migrate(*task, *busiest->cpu, *rq.cpu);
      return true;
    }
  }
  return false;
}

void FairScheduler::IdleBalance(Cpu& cpu) { Pull(RqOf(cpu)); }

void FairScheduler::KickIdle(Rq& rq, const Task& p) {
  if (idle_rqs_ == 0) return;
  for (const auto& domain : rq.domain) {
    for (Rq* r : domain) {
      if (r->nr != 0 || r->kick_pending || !p.AllowedOn(r->cpu->id())) continue;
      r->kick_pending = true;
      const sim::Time ipi = r->cpu->sched_costs().wakeup_latency;
      if (ipi == sim::Time::Zero()) {
        sim().Wake(r->kick.handle());  // after the enqueue has finished
      } else {
        sim().ScheduleAt(sim().Now() + ipi, r->kick.handle());
      }
      return;
    }
  }
}

void FairScheduler::OnKick(Rq& rq) {
  rq.kick_pending = false;
  // Idle still: reschedule, which pulls (PickOnIdle, IdleBalance).
  if (rq.nr == 0 && overloaded_rqs_ > 0) Resched(*rq.cpu, sim::Time::Zero());
}

void FairScheduler::ArmBalance() {
  if (balance_armed_ || groups_.empty()) return;
  balance_armed_ = true;
  const sim::Time interval = params_.balance_interval;
  const sim::Time next = interval * (sim().Now() / interval + 1);
  sim().ScheduleAt(next, balance_tick_.handle());
}

void FairScheduler::OnBalanceTick() {
  balance_armed_ = false;
  for (const std::vector<Rq*>& g : groups_) Balance(g);
  if (overloaded_rqs_ > 0) ArmBalance();
}

void FairScheduler::Balance(const std::vector<Rq*>& group) {
  for (size_t moves = 0; moves < group.size(); ++moves) {
    Rq* busiest = group.front();
    Rq* idlest = group.front();
    for (Rq* r : group) {
      if (r->nr > busiest->nr) busiest = r;
      if (r->nr < idlest->nr) idlest = r;
    }
    if (busiest->nr - idlest->nr < 2) return;
    Task* t = Movable(*busiest, *idlest->cpu);
    if (t == nullptr) return;
    ++periodic_moves_;
    Migrate(*t, *busiest->cpu, *idlest->cpu);
  }
}

// ---- Factory ----

absl::StatusOr<std::unique_ptr<Scheduler>> MakeScheduler(std::string_view name, sim::Simulator& sim,
                                                         const FairParams& fair) {
  if (name == "pinned") return std::make_unique<PinnedFifoScheduler>(sim);
  if (name == "fair") return std::make_unique<FairScheduler>(sim, fair);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown scheduler \"", std::string(name), "\" (known: ", absl::StrJoin(SchedulerNames(), ", "), ")"));
}

}  // namespace models
