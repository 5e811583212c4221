#include "models/cpu/sched.h"

#include <utility>
#include <vector>

#include "models/cpu/sched_core.h"
#include "sim/check.h"

namespace models {

// ---- Task ----

Task::Task(std::string name, std::vector<int> allowed)
    : any_cpu_(allowed.empty()),
      spin_wake_(Callback::Bind<&Task::OnSpinWake>(this)),
      name_(std::move(name)),
      allowed_(std::move(allowed)) {
  for (int c : allowed_) {
    if (c < 0) continue;  // no such CPU: allowed nowhere
    const auto w = static_cast<size_t>(c) / 64;
    if (w >= allowed_bits_.size()) allowed_bits_.resize(w + 1, 0);
    allowed_bits_[w] |= uint64_t{1} << (c % 64);
  }
}

bool Task::AllowedOnList(int cpu) const {
  if (cpu < 0) return false;
  const auto w = static_cast<size_t>(cpu) / 64;
  return w < allowed_bits_.size() && ((allowed_bits_[w] >> (cpu % 64)) & 1) != 0;
}

void Task::ResetStats() {
  nvcsw_ = nivcsw_ = wakeups_ = migrations_ = 0;
  runtime_ = run_delay_ = sim::Time::Zero();
}

// ---- The core (its steps that call the policy: sched_core.h) ----

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

void Scheduler::Resched(Cpu& cpu, sim::Time delay) {
  if (delay == sim::Time::Zero()) {
    cpu.SetNeedResched();
  } else {
    sim_->ScheduleAt(sim_->Now() + delay, cpu.resched_kick_.handle());
  }
}

void Scheduler::SliceEnded(Cpu& cpu, Task& p) {
  (void)p;
  cpu.SetNeedResched();
}

void Scheduler::set_ttwu_queue(bool on, sim::Time waker, sim::Time ipi) {
  VIOSIM_CHECK(!on || ttwu_spins_on_cpu_, "TTWU_QUEUE is 3.0's, whose waker spins on a task switching out");
  ttwu_queue_ = on;
  ttwu_queue_waker_ = waker;
  ttwu_queue_ipi_ = ipi;
}

Cpu::WorkAwaiter Scheduler::BeginQueuedWakeUp(Task& p, Cpu& waker) {
  if (p.on_cpu_) return waker.Run(waker.sched_costs().try_to_wake_up);  // enqueued after its switch
  Cpu& rq = SelectTaskRq(p, &waker);
  p.queue_to_ = &rq;  // Activate enqueues there, or lists it there
  // ttwu_queue's local case: the enqueue here, by the waker.
  return waker.Run(&rq == &waker ? waker.sched_costs().try_to_wake_up : ttwu_queue_waker_);
}

void Scheduler::QueueRemoteWakeUp(Task& p, Cpu& rq) {
  ++queued_wakeups_;
  const bool first = rq.wake_list_.empty();
  rq.wake_list_.push_back(&p);
  if (!first) return;  // an IPI is on its way: it takes the whole list
  ++wake_ipis_;
  sim_->Spawn(SendWakeIpi(rq));
}

sim::Task Scheduler::SendWakeIpi(Cpu& rq) {
  co_await sim_->Delay(rq.sched_costs().wakeup_latency);
  rq.RaiseIrq(SchedulerIpi(rq));
}

// scheduler_ipi() -> sched_ttwu_pending(): the list taken whole, each task
// enqueued here (ttwu_do_activate, its preemption check included).
sim::Task Scheduler::SchedulerIpi(Cpu& rq) {
  co_await rq.Run(ttwu_queue_ipi_);
  std::vector<Task*> list;
  list.swap(rq.wake_list_);
  // llist_add pushes onto the head: the newest is enqueued first.
  for (auto it = list.rbegin(); it != list.rend(); ++it) Enqueue(**it, rq, &rq);
}

sim::Task Scheduler::WakeUpSwitchingOut(Task& p, Cpu& waker, bool* woken) {
  p.state_ = Task::State::kRunning;
  if (woken != nullptr) *woken = true;
  // while (p->on_cpu) cpu_relax();
  struct SwitchedOut {
    Task* p;
    bool await_ready() const noexcept { return !p->on_cpu_; }
    void await_suspend(std::coroutine_handle<> h) {
      p->on_cpu_waiters_.push_back(h);
      p->on_cpu_waited_ = true;
    }
    void await_resume() const noexcept {}
  };
  co_await waker.SpinUntil(SwitchedOut{&p}, CpuTime::kSpin);
  ++wakeups_;
  ++p.wakeups_;
  co_await waker.Run(waker.sched_costs().try_to_wake_up);
  EndWakeUp(p, waker);
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

template class SchedCore<PinnedFifoScheduler>;

std::vector<std::string> SchedulerNames() { return {"pinned", "fair"}; }

}  // namespace models
