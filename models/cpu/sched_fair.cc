#include "models/cpu/sched_fair.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/cpu/sched_core.h"

namespace models {

// A CPU's runqueue (struct cfs_rq). Its nr_running is kept apart, in
// FairScheduler::nr_, where scans over many CPUs read it.
// Its first cache line holds what every enqueue and pick reads.
struct alignas(64) FairScheduler::Rq {
  Rq(FairScheduler* s, Cpu* c) : cpu(c), id(c->id()), sched(s), kick(Callback::Bind<&Rq::OnKick>(this)) {}
  void OnKick() { sched->OnKick(*this); }

  Cpu* cpu;
  int id;
  int llc = 0, socket = 0;  // dense indices into llcs_ and sockets_
  bool kick_pending = false;
  std::vector<Task*> heap;  // queued tasks, a min-heap on (vruntime, seq)
  Task* curr = nullptr;     // picked to run (cfs_rq->curr)
  sim::Time min_vruntime;
  FairScheduler* sched;
  // The other CPUs' ids, nearest first: same LLC, same socket, the rest;
  // each from the next CPU id on, wrapping (for_each_cpu_wrap).
  std::vector<int> domain[3];
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
    : SchedCore(sim),
      latency_(params.sched_latency),
      min_gran_(params.min_granularity),
      wakeup_gran_(params.wakeup_granularity),
      params_(params),
      balance_tick_(Callback::Bind<&FairScheduler::OnBalanceTick>(this)) {
  SetSlices();
}

FairScheduler::~FairScheduler() = default;

void FairScheduler::Build() {
  std::vector<Cpu*> by_id = cpus();
  std::sort(by_id.begin(), by_id.end(), [](const Cpu* a, const Cpu* b) { return a->id() < b->id(); });
  const int n = static_cast<int>(by_id.size());
  const int factor = params_.scale_with_cpus ? FairTunableFactor(n) : 1;
  latency_ = params_.sched_latency * factor;
  min_gran_ = params_.min_granularity * factor;
  wakeup_gran_ = params_.wakeup_granularity * factor;
  SetSlices();
  for (Cpu* c : by_id) {
    const size_t id = static_cast<size_t>(c->id());
    if (id >= rqs_.size()) {
      rqs_.resize(id + 1);
      nr_.resize(id + 1, 0);
    }
    if (rqs_[id] == nullptr) rqs_[id] = std::make_unique<Rq>(this, c);
  }
  // Dense LLC and socket indices, in the order of CPU ids.
  std::map<std::pair<int, int>, int> llc_index;
  std::map<int, int> socket_index;
  std::vector<std::vector<int>> llc_members, socket_members;
  for (Cpu* c : by_id) {
    Rq& rq = RqOf(*c);
    const CpuPlace& place = c->place();
    auto [l, new_llc] = llc_index.emplace(std::make_pair(place.socket, place.llc), llc_index.size());
    auto [s, new_socket] = socket_index.emplace(place.socket, socket_index.size());
    if (new_llc) llc_members.emplace_back();
    if (new_socket) socket_members.emplace_back();
    rq.llc = l->second;
    rq.socket = s->second;
    llc_members[rq.llc].push_back(rq.id);
    socket_members[rq.socket].push_back(rq.id);
  }
  for (int i = 0; i < n; ++i) {
    Rq& a = RqOf(*by_id[i]);
    for (auto& d : a.domain) d.clear();
    for (int k = 1; k < n; ++k) {
      const Rq& b = RqOf(*by_id[(i + k) % n]);
      const int d = b.llc == a.llc ? 0 : b.socket == a.socket ? 1 : 2;
      a.domain[d].push_back(b.id);
    }
  }
  llcs_.assign(llc_members.size(), Counts());
  sockets_.assign(socket_members.size(), Counts());
  total_ = Counts();
  for (Cpu* c : by_id) {
    const int nr = nr_[static_cast<size_t>(c->id())];
    Count(RqOf(*c), nr == 0, nr >= 2);
  }
  // Balance groups, smallest first; one that repeats the level below is
  // left out.
  groups_.clear();
  std::vector<int> all;
  for (Cpu* c : by_id) all.push_back(c->id());
  for (auto* level : {&llc_members, &socket_members}) {
    for (const std::vector<int>& g : *level) {
      if (g.size() >= 2 && std::find(groups_.begin(), groups_.end(), g) == groups_.end()) groups_.push_back(g);
    }
  }
  if (all.size() >= 2 && std::find(groups_.begin(), groups_.end(), all) == groups_.end()) {
    groups_.push_back(std::move(all));
  }
  built_ = cpus().size();
}

int FairScheduler::NrRunning(const Cpu& cpu) const {
  const size_t id = static_cast<size_t>(cpu.id());
  return id < nr_.size() ? nr_[id] : 0;
}

sim::Time FairScheduler::min_vruntime(const Cpu& cpu) const {
  const size_t id = static_cast<size_t>(cpu.id());
  return id < rqs_.size() && rqs_[id] != nullptr ? rqs_[id]->min_vruntime : sim::Time::Zero();
}

inline void FairScheduler::AddNr(Rq& rq, int delta) {
  int& nr = nr_[static_cast<size_t>(rq.id)];
  const int idle = (nr + delta == 0) - (nr == 0);
  const int overloaded = (nr + delta >= 2) - (nr >= 2);
  nr += delta;
  if (idle != 0 || overloaded != 0) Count(rq, idle, overloaded);
}

void FairScheduler::Count(const Rq& rq, int idle, int overloaded) {
  for (Counts* c : {&llcs_[static_cast<size_t>(rq.llc)], &sockets_[static_cast<size_t>(rq.socket)], &total_}) {
    c->idle += idle;
    c->overloaded += overloaded;
  }
}

FairScheduler::Counts FairScheduler::DomainCounts(const Rq& rq, int d) const {
  const Counts& llc = llcs_[static_cast<size_t>(rq.llc)];
  const Counts& socket = sockets_[static_cast<size_t>(rq.socket)];
  const int nr = nr_[static_cast<size_t>(rq.id)];
  switch (d) {
    case 0: return {llc.idle - (nr == 0), llc.overloaded - (nr >= 2)};
    case 1: return {socket.idle - llc.idle, socket.overloaded - llc.overloaded};
    default: return {total_.idle - socket.idle, total_.overloaded - socket.overloaded};
  }
}

int FairScheduler::NrOf(const Rq& rq) const { return nr_[static_cast<size_t>(rq.id)]; }

sim::Time FairScheduler::CurrVruntime(const Rq& rq) const {
  const Task& c = *rq.curr;
  // Running since exec_start_ once switched in; not yet while switching.
  return rq.cpu->current() == &c ? c.vruntime_ + (sim().Now() - c.exec_start_) : c.vruntime_;
}

namespace {
// The smaller and the larger of two vruntimes by value, marked as a coin
// toss so that GCC compiles them to conditional moves: std::min and
// std::max return a reference, and their compare became a branch that the
// order of events makes unpredictable.
sim::Time Earlier(sim::Time a, sim::Time b) {
  return sim::Time::Picos(__builtin_expect_with_probability(b.ps() < a.ps(), 1, 0.5) ? b.ps() : a.ps());
}
sim::Time Later(sim::Time a, sim::Time b) {
  return sim::Time::Picos(__builtin_expect_with_probability(a.ps() < b.ps(), 1, 0.5) ? b.ps() : a.ps());
}
}  // namespace

// update_min_vruntime(): the smaller of the current task's and the
// leftmost queued task's vruntime, never moving back.
void FairScheduler::UpdateMinVruntime(Rq& rq) {
  sim::Time v;
  if (rq.curr != nullptr) {
    v = CurrVruntime(rq);
    if (!rq.heap.empty()) v = Earlier(v, rq.heap.front()->vruntime_);
  } else if (!rq.heap.empty()) {
    v = rq.heap.front()->vruntime_;
  } else {
    return;
  }
  rq.min_vruntime = Later(rq.min_vruntime, v);
}

sim::Time FairScheduler::Slice(int nr_running) const {
  if (static_cast<unsigned>(nr_running) < kSlices) return slices_[static_cast<size_t>(nr_running)];
  return std::max(latency_ / nr_running, min_gran_);
}
void FairScheduler::SetSlices() {
  slices_[0] = slices_[1] = latency_;
  for (int n = 2; n < kSlices; ++n) slices_[static_cast<size_t>(n)] = std::max(latency_ / n, min_gran_);
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

namespace {
// push_back when the vector is full, out of line: the common push then
// needs no stack frame for the reallocation's registers.
[[gnu::noinline]] void GrowAndPush(std::vector<Task*>& heap, Task* p) { heap.push_back(p); }
}  // namespace

void FairScheduler::Push(Rq& rq, Task& p) {
  p.rq_seq_ = ++seq_;
  if (rq.heap.size() == rq.heap.capacity()) [[unlikely]] {
    GrowAndPush(rq.heap, &p);
  } else {
    rq.heap.push_back(&p);
  }
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

Cpu* FairScheduler::IdleSibling(const Rq& rq, const Task& p) const {
  // select_idle_sibling(): an idle CPU sharing the LLC.
  for (int id : rq.domain[0]) {
    if (nr_[static_cast<size_t>(id)] == 0 && Allowed(p, id)) return RqOf(id).cpu;
  }
  return nullptr;
}

Cpu* FairScheduler::FewestRunnable(const Task& p) const {
  // A new task (or one whose CPU it may no longer use): the CPU with the
  // fewest runnable tasks, the first of equals.
  Cpu* target = nullptr;
  int best = 0;
  for (Cpu* c : cpus()) {
    if (!Allowed(p, c->id())) continue;
    const int nr = nr_[static_cast<size_t>(c->id())];
    if (target == nullptr || nr < best) {
      target = c;
      best = nr;
    }
  }
  return target == nullptr ? cpus().front() : target;
}

Cpu& FairScheduler::SelectTaskRq(Task& p, Cpu* waker) {
  if (cpus().size() != built_) Build();
  Cpu* prev = p.cpu();
  Cpu* target = nullptr;
  if (waker != nullptr && prev != nullptr) {
    const Rq& pr = RqOf(*prev);
    if (nr_[static_cast<size_t>(pr.id)] == 0 && Allowed(p, pr.id)) {
      target = prev;
    } else if (DomainCounts(pr, 0).idle > 0) {
      target = IdleSibling(pr, p);
    }
    if (target == nullptr && Allowed(p, pr.id)) target = prev;
  }
  if (target == nullptr) target = FewestRunnable(p);
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
    p.vruntime_ = rq.min_vruntime + (params_.start_debit ? Slice(NrOf(rq) + 1) : sim::Time::Zero());
  } else {
    // place_entity(): the sleeper's credit, half a latency.
    p.vruntime_ = Later(p.vruntime_, rq.min_vruntime - latency_ / 2);
  }
  Push(rq, p);
  AddNr(rq, +1);
  if (NrOf(rq) >= 2) {
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

// PickNextTask and StopRunning run on nearly every context switch and are
// inlined into the core's schedule() (sched_core.h, compiled in this file).
// GCC warns that a function not declared inline might not be inlinable;
// here it always is.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattributes"
[[gnu::always_inline]] Task* FairScheduler::PickNextTask(Cpu& cpu) {
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

[[gnu::always_inline]] void FairScheduler::StopRunning(Cpu& cpu, Task& p, sim::Time ran) {
  Rq& rq = RqOf(cpu);
  // update_curr() and update_min_vruntime() with p's run up to now.
  p.vruntime_ += ran;
  const sim::Time v = rq.heap.empty() ? p.vruntime_ : Earlier(p.vruntime_, rq.heap.front()->vruntime_);
  rq.min_vruntime = Later(rq.min_vruntime, v);
  rq.curr = nullptr;
  AddNr(rq, -1);
}
#pragma GCC diagnostic pop

void FairScheduler::SwitchedOut(Cpu& cpu, Task& prev) {
  // A preempted task could not be pulled while it was switching out.
  Rq& rq = RqOf(cpu);
  if (prev.on_rq() && rq.curr != &prev && NrOf(rq) >= 2) KickIdle(rq, prev);
}

sim::Time FairScheduler::SliceOf(Cpu& cpu, Task& p) {
  (void)p;
  return Slice(nr_[static_cast<size_t>(cpu.id())]);
}

void FairScheduler::SliceEnded(Cpu& cpu, Task& p) {
  Rq& rq = RqOf(cpu);
  if (rq.curr == &p) {
    UpdateMinVruntime(rq);
    if (rq.heap.empty() || CurrVruntime(rq) < rq.heap.front()->vruntime_) {
      // Still the leftmost: it would be picked again.
      RearmSlice(cpu, Slice(NrOf(rq)));
      return;
    }
  }
  Scheduler::SliceEnded(cpu, p);
}

// ---- Balancing ----

Task* FairScheduler::Movable(const Rq& from, const Cpu& to) const {
  Task* best = nullptr;
  for (Task* t : from.heap) {
    if (t->on_cpu() || !Allowed(*t, to.id())) continue;
    if (best == nullptr || Before(best, t)) best = t;
  }
  return best;
}

bool FairScheduler::Pull(Rq& rq) {
  if (total_.overloaded == 0) return false;
  for (int d = 0; d < 3; ++d) {
    if (DomainCounts(rq, d).overloaded == 0) continue;
    int busiest = 1;
    Rq* from = nullptr;
    Task* task = nullptr;
    for (int id : rq.domain[d]) {
      const int nr = nr_[static_cast<size_t>(id)];
      if (nr <= busiest) continue;
      if (Task* t = Movable(RqOf(id), *rq.cpu)) {
        busiest = nr;
        from = &RqOf(id);
        task = t;
      }
    }
    if (from != nullptr) {
      ++idle_pulls_;
      Migrate(*task, *from->cpu, *rq.cpu);
      return true;
    }
  }
  return false;
}

void FairScheduler::IdleBalance(Cpu& cpu) { Pull(RqOf(cpu)); }

void FairScheduler::KickIdle(Rq& rq, const Task& p) {
  if (total_.idle == 0) return;
  for (int d = 0; d < 3; ++d) {
    if (DomainCounts(rq, d).idle == 0) continue;
    for (int id : rq.domain[d]) {
      Rq& r = RqOf(id);
      if (nr_[static_cast<size_t>(id)] != 0 || r.kick_pending || !Allowed(p, id)) continue;
      r.kick_pending = true;
      const sim::Time ipi = r.cpu->sched_costs().wakeup_latency;
      if (ipi == sim::Time::Zero()) {
        sim().Wake(r.kick.handle());  // after the enqueue has finished
      } else {
        sim().ScheduleAt(sim().Now() + ipi, r.kick.handle());
      }
      return;
    }
  }
}

void FairScheduler::OnKick(Rq& rq) {
  rq.kick_pending = false;
  // Idle still: reschedule, which pulls (PickOnIdle, IdleBalance).
  if (NrOf(rq) == 0 && total_.overloaded > 0) Resched(*rq.cpu, sim::Time::Zero());
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
  for (const std::vector<int>& g : groups_) Balance(g);
  if (total_.overloaded > 0) ArmBalance();
}

void FairScheduler::Balance(const std::vector<int>& group) {
  for (size_t moves = 0; moves < group.size(); ++moves) {
    int busiest = group.front(), idlest = group.front();
    for (int id : group) {
      if (nr_[static_cast<size_t>(id)] > nr_[static_cast<size_t>(busiest)]) busiest = id;
      if (nr_[static_cast<size_t>(id)] < nr_[static_cast<size_t>(idlest)]) idlest = id;
    }
    if (nr_[static_cast<size_t>(busiest)] - nr_[static_cast<size_t>(idlest)] < 2) return;
    Rq& from = RqOf(busiest);
    Rq& to = RqOf(idlest);
    Task* t = Movable(from, *to.cpu);
    if (t == nullptr) return;
    ++periodic_moves_;
    Migrate(*t, *from.cpu, *to.cpu);
  }
}

template class SchedCore<FairScheduler>;

// ---- Factory ----

absl::StatusOr<std::unique_ptr<Scheduler>> MakeScheduler(std::string_view name, sim::Simulator& sim,
                                                         const FairParams& fair) {
  if (name == "pinned") return std::make_unique<PinnedFifoScheduler>(sim);
  if (name == "fair") return std::make_unique<FairScheduler>(sim, fair);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown scheduler \"", std::string(name), "\" (known: ", absl::StrJoin(SchedulerNames(), ", "), ")"));
}

}  // namespace models
