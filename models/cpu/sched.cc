#include "models/cpu/sched.h"

#include <utility>

namespace models {

// ---- Task ----

Task::Task(std::string name, std::vector<int> allowed)
    : spin_wake_(Callback::Bind<&Task::OnSpinWake>(this)), name_(std::move(name)), allowed_(std::move(allowed)) {}

bool Task::AllowedOn(int cpu) const {
  if (allowed_.empty()) return true;
  for (int c : allowed_) {
    if (c == cpu) return true;
  }
  return false;
}

void Task::ResetStats() {
  nvcsw_ = nivcsw_ = wakeups_ = migrations_ = 0;
  runtime_ = run_delay_ = sim::Time::Zero();
}

bool Task::ScheduleAwaiter::await_ready() const noexcept {
  return p->state_ == State::kRunning && !p->cpu_->need_resched_;
}

void Task::ScheduleAwaiter::await_suspend(std::coroutine_handle<> h) {
  p->cont_ = h;
  p->wait_ = Wait::kSwitch;
  p->sched_->Switch(*p->cpu_, /*preempt=*/false);
}

// ---- The core ----

void Scheduler::AddCpu(Cpu& cpu) {
  cpu.sched_ = this;
  cpu.direct_ = !PreemptsRunningTasks();
  cpus_.push_back(&cpu);
}

namespace {

// Suspends a new task until it is first switched in.
struct FirstRun {
  Task* p;
  Scheduler* s;
  void (*activate)(Scheduler*, Task*);
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    p->cont_ = h;
    p->wait_ = Task::Wait::kSwitch;
    activate(s, p);
  }
  void await_resume() const noexcept {}
};

// A task whose body returned: it leaves its CPU for good.
struct Dead {
  void (*leave)(Scheduler*, Task*);
  Scheduler* s;
  Task* p;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) { leave(s, p); }
  void await_resume() const noexcept {}
};

}  // namespace

void Scheduler::Start(Task& p, sim::Task body) {
  p.sched_ = this;
  sim_->Spawn(TaskMain(p, std::move(body)));
}

sim::Task Scheduler::TaskMain(Task& p, sim::Task body) {
  co_await FirstRun{&p, this, [](Scheduler* s, Task* t) { s->Activate(*t, nullptr); }};
  p.started_ = true;
  co_await body;
  // do_exit(): the task never runs again.
  p.state_ = Task::State::kDead;
  co_await Dead{[](Scheduler* s, Task* t) {
                  t->wait_ = Task::Wait::kNone;
                  s->Switch(*t->cpu_, /*preempt=*/false);
                },
                this, &p};
}

void Scheduler::Activate(Task& p, Cpu* waker) {
  Cpu& rq = SelectTaskRq(p, waker);
  if (p.cpu_ != nullptr && p.cpu_ != &rq) ++p.migrations_;
  p.cpu_ = &rq;
  p.on_rq_ = true;
  p.enqueued_at_ = sim_->Now();
  EnqueueTask(rq, p, /*wakeup=*/true);
  const sim::Time ipi = (waker == &rq) ? sim::Time::Zero() : rq.sched_costs().wakeup_latency;
  if (rq.curr_ == nullptr && !rq.switching_) {
    Resched(rq, waker == nullptr ? sim::Time::Zero() : ipi);
  } else if (rq.curr_ != nullptr && CheckPreemptCurr(rq, *rq.curr_, p)) {
    Resched(rq, ipi);
  }
}

void Scheduler::Resched(Cpu& cpu, sim::Time delay) {
  if (delay == sim::Time::Zero()) {
    cpu.SetNeedResched();
  } else {
    sim_->ScheduleAt(sim_->Now() + delay, cpu.resched_kick_.handle());
  }
}

void Scheduler::PickOnIdle(Cpu& cpu) {
  if (cpu.curr_ != nullptr || cpu.switching_) return;
  cpu.need_resched_ = false;
  Task* next = PickNextTask(cpu);
  if (next == nullptr) {
    IdleBalance(cpu);
    // A pulled task makes an idle CPU reschedule at once (Migrate), which
    // may already have switched to it.
    if (cpu.curr_ != nullptr || cpu.switching_) return;
    next = PickNextTask(cpu);
  }
  if (next == nullptr) return;
  StartRunning(cpu, *next);
  cpu.SwitchTo(next, /*free=*/false);
}

void Scheduler::Switch(Cpu& cpu, bool preempt) {
  Task& prev = *cpu.curr_;
  // __schedule() clears need_resched whatever called it: a reschedule
  // asked for while the task could not be preempted is served by this one.
  cpu.need_resched_ = false;
  const sim::Time now = sim_->Now();
  const sim::Time ran = now - prev.exec_start_;
  prev.runtime_ += ran;
  StopRunning(cpu, prev, ran);
  if (preempt) {
    cpu.FreezeCurrent();
    PutPrevTask(cpu, prev);
    prev.enqueued_at_ = now;
  } else if (prev.state_ == Task::State::kRunning) {
    PutPrevTask(cpu, prev);  // schedule() with a reschedule pending: a yield
    prev.enqueued_at_ = now;
  } else {
    prev.on_rq_ = false;  // deactivate_task()
  }
  Task* next = PickNextTask(cpu);
  if (next == nullptr && !prev.on_rq_) {
    IdleBalance(cpu);
    next = PickNextTask(cpu);
  }
  if (next == &prev) {
    // Picked again: no switch, but a new slice (set_next_entity).
    prev.exec_start_ = now;
    StartRunning(cpu, prev);
    cpu.ArmSlice(SliceOf(cpu, prev));
    cpu.ThawCurrent();
    return;
  }
  if (preempt) {
    ++prev.nivcsw_;
    ++preemptions_;
  } else if (prev.state_ != Task::State::kDead) {
    ++prev.nvcsw_;
  }
  if (next != nullptr) StartRunning(cpu, *next);
  cpu.SwitchTo(next, /*free=*/false);
}

void Scheduler::FinishSwitch(Cpu& cpu, Task* prev) {
  if (prev == nullptr) return;
  prev->on_cpu_ = false;
  for (std::coroutine_handle<> h : prev->on_cpu_waiters_) sim_->Wake(h);
  prev->on_cpu_waiters_.clear();
  SwitchedOut(cpu, *prev);
  if (prev->wake_pending_) {
    prev->wake_pending_ = false;
    Activate(*prev, &cpu);
  }
}

void Scheduler::SliceEnded(Cpu& cpu, Task& p) {
  (void)p;
  cpu.SetNeedResched();
}

void Scheduler::Migrate(Task& p, Cpu& from, Cpu& to) {
  DequeueTask(from, p);
  p.cpu_ = &to;
  ++p.migrations_;
  EnqueueTask(to, p, /*wakeup=*/false);
  if (to.curr_ == nullptr && !to.switching_) Resched(to, sim::Time::Zero());
}

Cpu::WorkAwaiter Scheduler::BeginWakeUp(Task& p, Cpu& waker, bool* woken, bool* activate) {
  if (woken != nullptr) *woken = false;
  *activate = false;
  const SchedCosts& costs = waker.sched_costs();
  if (p.state_ == Task::State::kRunning || p.state_ == Task::State::kDead) {
    ++fast_wakeups_;
    return waker.Run(costs.try_to_wake_up_fast);
  }
  p.state_ = Task::State::kRunning;
  if (woken != nullptr) *woken = true;
  if (p.on_rq_) {
    // ttwu_runnable(): still on its runqueue (or running): only the state.
    ++fast_wakeups_;
    return waker.Run(costs.try_to_wake_up_fast);
  }
  ++wakeups_;
  ++p.wakeups_;
  *activate = true;
  return waker.Run(costs.try_to_wake_up);
}

bool Scheduler::SpinsOnCpu(const Task& p) const {
  return ttwu_spins_on_cpu_ && p.on_cpu_ && !p.on_rq_ && p.state_ != Task::State::kRunning &&
         p.state_ != Task::State::kDead;
}

sim::Task Scheduler::WakeUpSwitchingOut(Task& p, Cpu& waker, bool* woken) {
  p.state_ = Task::State::kRunning;
  if (woken != nullptr) *woken = true;
  // while (p->on_cpu) cpu_relax();
  struct SwitchedOut {
    Task* p;
    bool await_ready() const noexcept { return !p->on_cpu_; }
    void await_suspend(std::coroutine_handle<> h) { p->on_cpu_waiters_.push_back(h); }
    void await_resume() const noexcept {}
  };
  co_await waker.SpinUntil(SwitchedOut{&p}, CpuTime::kSpin);
  ++wakeups_;
  ++p.wakeups_;
  co_await waker.Run(waker.sched_costs().try_to_wake_up);
  EndWakeUp(p, waker);
}

void Scheduler::EndWakeUp(Task& p, Cpu& waker) {
  if (p.on_cpu_) {
    p.wake_pending_ = true;  // still switching out: enqueued when that ends
  } else {
    Activate(p, &waker);
  }
}

// ---- Pinned FIFO ----

PinnedFifoScheduler::Queue& PinnedFifoScheduler::QueueOf(const Cpu& cpu) {
  const size_t id = static_cast<size_t>(cpu.id());
  if (id >= queues_.size()) queues_.resize(id + 1);
  return queues_[id];
}

const PinnedFifoScheduler::Queue& PinnedFifoScheduler::QueueOf(const Cpu& cpu) const {
  static const Queue kEmpty;
  const size_t id = static_cast<size_t>(cpu.id());
  return id < queues_.size() ? queues_[id] : kEmpty;
}

int PinnedFifoScheduler::NrRunning(const Cpu& cpu) const {
  return QueueOf(cpu).n + (cpu.current() != nullptr ? 1 : 0);
}

Cpu& PinnedFifoScheduler::SelectTaskRq(Task& p, Cpu* waker) {
  (void)waker;
  if (p.cpu() != nullptr) return *p.cpu();
  const int want = p.allowed().empty() ? 0 : p.allowed().front();
  for (Cpu* c : cpus()) {
    if (c->id() == want) return *c;
  }
  return *cpus().front();
}

void PinnedFifoScheduler::EnqueueTask(Cpu& rq, Task& p, bool wakeup) {
  (void)wakeup;
  Queue& q = QueueOf(rq);
  p.rq_next_ = nullptr;
  if (q.tail != nullptr) {
    q.tail->rq_next_ = &p;
  } else {
    q.head = &p;
  }
  q.tail = &p;
  ++q.n;
}

void PinnedFifoScheduler::DequeueTask(Cpu& rq, Task& p) {
  Queue& q = QueueOf(rq);
  Task* prev = nullptr;
  for (Task* t = q.head; t != nullptr; prev = t, t = t->rq_next_) {
    if (t != &p) continue;
    (prev != nullptr ? prev->rq_next_ : q.head) = t->rq_next_;
    if (q.tail == t) q.tail = prev;
    t->rq_next_ = nullptr;
    --q.n;
    return;
  }
}

Task* PinnedFifoScheduler::PickNextTask(Cpu& rq) {
  Queue& q = QueueOf(rq);
  Task* t = q.head;
  if (t == nullptr) return nullptr;
  q.head = t->rq_next_;
  if (q.head == nullptr) q.tail = nullptr;
  t->rq_next_ = nullptr;
  --q.n;
  return t;
}

std::vector<std::string> SchedulerNames() { return {"pinned", "fair"}; }

}  // namespace models
