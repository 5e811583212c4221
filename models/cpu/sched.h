// The scheduler: the core of kernel/sched/core.c (schedule(),
// try_to_wake_up(), wake_up_new_task(), preemption) over a set of CPUs, and
// the policy interface a scheduling class implements (struct sched_class).
//
// Two policies exist: PinnedFifoScheduler (below: each CPU runs its queued
// tasks in arrival order, a task runs until it sleeps, nobody migrates) and
// FairScheduler (sched_fair.h: CFS-like). A scenario picks one by name.
//
// The kernel's cases, in TryToWakeUp(p):
//   - p is TASK_RUNNING: nothing to do (the fast path's cost);
//   - p is on a runqueue (woken between set_current_state() and schedule(),
//     or preempted): its state becomes TASK_RUNNING (ttwu_runnable, the fast
//     path's cost);
//   - p is switching out (on_cpu): the wake-up completes once the switch
//     has ended (it is put back on a runqueue then); with
//     set_ttwu_spins_on_cpu(true), as Linux 3.0 to 5.7 do
//     (`while (p->on_cpu) cpu_relax();`), the waker spins on its CPU until
//     the switch has ended, then wakes p as below;
//   - p is asleep: the waker pays try_to_wake_up on its own CPU, in its own
//     context and under whatever it holds; then select_task_rq picks a CPU,
//     p is enqueued there, and the target is told to reschedule: at once if
//     it is the waker's CPU (taken when the waker's interrupt or
//     preempt-off section ends), after wakeup_latency (the reschedule IPI)
//     if it is another, idle CPU, or when the policy's wake-up preemption
//     says the woken task should run before the current one.
// The woken task runs after the target's context switch.
#ifndef VIOSIM_MODELS_CPU_SCHED_H_
#define VIOSIM_MODELS_CPU_SCHED_H_

#include <coroutine>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

template <class Class>
class SchedCore;

class alignas(64) Scheduler {
 public:
  explicit Scheduler(sim::Simulator& sim) : sim_(&sim) {}
  virtual ~Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  virtual const char* name() const = 0;
  sim::Simulator& sim() const { return *sim_; }

  // Gives `cpu` a runqueue of this scheduler. Call for every CPU before
  // starting tasks.
  void AddCpu(Cpu& cpu);
  const std::vector<Cpu*>& cpus() const { return cpus_; }

  // wake_up_new_task(): `p` becomes runnable on a CPU of its affinity (its
  // first allowed CPU for the pinned policy) and runs `body` when it is
  // first switched in. The scheduler owns the coroutine. REQUIRES: `p`
  // outlives the simulation and has not been started.
  void Start(Task& p, sim::Task body);

  // try_to_wake_up(p, TASK_NORMAL) by code running on `waker` (see the
  // file comment). `co_await sched.TryToWakeUp(p, cpu)`. `*woken`, if
  // given, says whether p's state changed.
  //
  // The function is an awaitable rather than a coroutine of its own, so a
  // wake-up allocates no frame: the state checks run when it is awaited,
  // the waker's cost is charged in the caller's context (`Cpu::Run`), and
  // the rest (the enqueue) runs when that work ends, before the caller goes
  // on.
  class WakeUpAwaiter {
   public:
    WakeUpAwaiter(Scheduler* s, Task* p, Cpu* waker, bool* woken)
        : sched_(s), p_(p), woken_(woken), work_(waker, sim::Time::Zero(), CpuTime::kSystem) {}
    bool await_ready() {
      if (sched_->SpinsOnCpu(*p_)) {
        // 3.0's waker spinning on p->on_cpu: the one case that waits on
        // another CPU, run as a coroutine of its own.
        spinning_ = sched_->WakeUpSwitchingOut(*p_, work_.cpu(), woken_);
        return false;
      }
      work_ = sched_->BeginWakeUp(*p_, work_.cpu(), woken_, &activate_);
      return work_.await_ready();
    }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> h) {
      if (spinning_.valid()) return spinning_.await_suspend(h);
      work_.await_suspend(h);
      return std::noop_coroutine();
    }
    void await_resume() {
      if (activate_) sched_->EndWakeUp(*p_, work_.cpu());
    }

   private:
    Scheduler* sched_;
    Task* p_;
    bool* woken_;
    bool activate_ = false;
    Cpu::WorkAwaiter work_;
    sim::Task spinning_;
  };
  [[nodiscard]] WakeUpAwaiter TryToWakeUp(Task& p, Cpu& waker, bool* woken = nullptr) {
    return WakeUpAwaiter(this, &p, &waker, woken);
  }

  // Linux 3.0's try_to_wake_up(): a waker that finds p still switching out
  // spins (CpuTime::kSpin, in its own context and under whatever it holds)
  // until p's switch has ended. Off: the wake-up is queued and completed
  // when the switch ends (the wake-list of 5.8 onwards).
  void set_ttwu_spins_on_cpu(bool on) { ttwu_spins_on_cpu_ = on; }
  bool ttwu_spins_on_cpu() const { return ttwu_spins_on_cpu_; }

  // Linux 3.0's TTWU_QUEUE (kernel/sched.c ttwu_queue, on for any remote
  // CPU): a wake-up of a sleeping task onto another CPU than the waker's is
  // not enqueued by the waker. The waker picks the CPU (select_task_rq) and
  // pays `waker` (its share: pi_lock, the selection, the wake list's
  // cmpxchg, the IPI's send) instead of try_to_wake_up. The task goes on
  // the target's wake list; the first on an empty list sends the
  // reschedule IPI, which arrives after the target's wakeup_latency, and
  // the target's scheduler_ipi enqueues the listed tasks in its interrupt
  // context, newest first (the list is a stack), costing `ipi` there
  // (charged to whatever runs on it), and checks preemption. Off (the
  // default): the waker enqueues on the remote runqueue itself.
  // REQUIRES: ttwu_spins_on_cpu() (3.0's wake-up of a task switching out).
  void set_ttwu_queue(bool on, sim::Time waker, sim::Time ipi);
  bool ttwu_queue() const { return ttwu_queue_; }
  // Remote wake-ups queued so (since the last ResetStats), and the IPIs
  // they sent.
  uint64_t queued_wakeups() const { return queued_wakeups_; }
  uint64_t wake_ipis() const { return wake_ipis_; }

  // Whether tasks move between CPUs (a workload spreads pinned clones
  // itself when they do not).
  virtual bool migrates() const = 0;
  // Whether a running task can be preempted by another task (time slices,
  // wake-up preemption).
  virtual bool PreemptsRunningTasks() const { return true; }
  // Tasks runnable on `cpu`, the running one included (rq->nr_running).
  virtual int NrRunning(const Cpu& cpu) const = 0;

  // Counters over every CPU since the last ResetStats.
  uint64_t wakeups() const { return wakeups_; }
  uint64_t fast_wakeups() const { return fast_wakeups_; }
  uint64_t preemptions() const { return preemptions_; }
  void ResetStats() { wakeups_ = fast_wakeups_ = preemptions_ = queued_wakeups_ = wake_ipis_ = 0; }

 protected:
  // ---- The policy (struct sched_class) ----
  // select_task_rq(): the CPU a waking (or new) task goes to. `waker` is
  // null for a new task.
  virtual Cpu& SelectTaskRq(Task& p, Cpu* waker) = 0;
  // enqueue_task() of a runnable task that is not running.
  virtual void EnqueueTask(Cpu& rq, Task& p, bool wakeup) = 0;
  // dequeue_task() of a queued (not running) task, for a migration.
  virtual void DequeueTask(Cpu& rq, Task& p) = 0;
  // pick_next_task(): removes and returns the task to run next on `rq`, or
  // null. `prev` has been put back already if it is still runnable.
  virtual Task* PickNextTask(Cpu& rq) = 0;
  // put_prev_task(): the running `prev` leaves its CPU still runnable
  // (preempted or yielding): queue it again.
  virtual void PutPrevTask(Cpu& rq, Task& prev) = 0;
  // check_preempt_curr(): whether `woken`, just enqueued on `rq`, should
  // preempt `curr`.
  virtual bool CheckPreemptCurr(Cpu& rq, Task& curr, Task& woken) = 0;
  // Called when `p` starts running on `rq` (set_next_entity) and when it
  // stops (put_prev/dequeue), with the runtime it just had.
  virtual void StartRunning(Cpu& rq, Task& p) { (void)rq, (void)p; }
  virtual void StopRunning(Cpu& rq, Task& p, sim::Time ran) { (void)rq, (void)p, (void)ran; }
  // finish_task_switch(): `prev` has left `rq` (it is no longer on_cpu) and
  // may still be queued there; from now on it can migrate.
  virtual void SwitchedOut(Cpu& rq, Task& prev) { (void)rq, (void)prev; }
  // newidle_balance(): `rq` is about to go idle; the policy may move queued
  // tasks to it (with Migrate).
  virtual void IdleBalance(Cpu& rq) { (void)rq; }
  // How long `p`, starting to run on `rq`, may run before the policy wants
  // it preempted (its slice); sim::Time::Max() for never.
  virtual sim::Time SliceOf(Cpu& rq, Task& p) {
    (void)rq, (void)p;
    return sim::Time::Max();
  }

  // The running `p`'s slice on `cpu` has ended (scheduler_tick decided).
  // By default: reschedule. A policy may instead give it a new slice with
  // RearmSlice (check_preempt_tick finding no reason to preempt).
  virtual void SliceEnded(Cpu& cpu, Task& p);

  // ---- Helpers for policies ----
  // Asks `cpu` to reschedule: at once when it is this CPU's event, after
  // `delay` otherwise (an IPI).
  void Resched(Cpu& cpu, sim::Time delay);
  // Starts a new slice of `slice` for the task running on `cpu`, from now.
  void RearmSlice(Cpu& cpu, sim::Time slice) { cpu.ArmSlice(slice); }

 private:
  friend class Cpu;
  friend struct Task::ScheduleAwaiter;
  template <class>
  friend class SchedCore;

  sim::Task TaskMain(Task& p, sim::Task body);
  // try_to_wake_up() up to the waker's cost, which it returns as the work
  // to charge; `*activate` says whether EndWakeUp must follow it.
  Cpu::WorkAwaiter BeginWakeUp(Task& p, Cpu& waker, bool* woken, bool* activate);
  // Whether a wake-up of `p` now finds it switching out under
  // set_ttwu_spins_on_cpu(true), and WakeUpSwitchingOut, that wake-up:
  // spin until p's switch ends, then the wake-up's cost and the enqueue.
  bool SpinsOnCpu(const Task& p) const {
    return ttwu_spins_on_cpu_ && p.on_cpu_ && !p.on_rq_ && p.state_ != Task::State::kRunning &&
           p.state_ != Task::State::kDead;
  }
  sim::Task WakeUpSwitchingOut(Task& p, Cpu& waker, bool* woken);
  // TTWU_QUEUE: the waker's share when it picks another CPU for `p` (p
  // then queued there by Activate), else try_to_wake_up's cost.
  Cpu::WorkAwaiter BeginQueuedWakeUp(Task& p, Cpu& waker);
  // `p`, bound for `rq`, on its wake list; the IPI's flight; scheduler_ipi
  // on `rq`.
  void QueueRemoteWakeUp(Task& p, Cpu& rq);
  sim::Task SendWakeIpi(Cpu& rq);
  sim::Task SchedulerIpi(Cpu& rq);

  // ---- The core's steps that call the policy (SchedCore) ----
  // The rest of a wake-up, once the waker has paid: p is enqueued (or,
  // still switching out, once that ends).
  virtual void EndWakeUp(Task& p, Cpu& waker) = 0;
  // __schedule() on `cpu` for its current task `prev` (voluntary when it
  // sleeps, involuntary when preempted).
  virtual void Switch(Cpu& cpu, bool preempt) = 0;
  // The end of a context switch on `cpu`: `next` (if any) starts its time
  // slice, and finish_task_switch(): `prev` is off its CPU.
  virtual void FinishSwitch(Cpu& cpu, Task* prev, Task* next) = 0;
  // Makes a sleeping task runnable on a CPU (ttwu_do_activate).
  virtual void Activate(Task& p, Cpu* waker) = 0;
  // The enqueue on `rq` (chosen already) and the preemption check.
  virtual void Enqueue(Task& p, Cpu& rq, Cpu* waker) = 0;
  // A CPU with nothing running picks its next task.
  virtual void PickOnIdle(Cpu& cpu) = 0;

  sim::Simulator* sim_;
  std::vector<Cpu*> cpus_;
  uint64_t wakeups_ = 0;
  uint64_t fast_wakeups_ = 0;
  uint64_t preemptions_ = 0;
  bool ttwu_spins_on_cpu_ = false;
  bool ttwu_queue_ = false;
  sim::Time ttwu_queue_waker_;
  sim::Time ttwu_queue_ipi_;
  uint64_t queued_wakeups_ = 0;
  uint64_t wake_ipis_ = 0;
};

// The core's steps that call the policy, written once (sched_core.h) and
// compiled for each policy `Class` (a final class deriving from
// SchedCore<Class>), so that they call the policy's functions directly and
// the compiler can inline them, as the kernel calls pick_next_task_fair()
// directly when every runnable task is a fair one. The CPUs reach these
// steps through Scheduler's virtual functions: one indirect call per step
// instead of one per policy function.
template <class Class>
class SchedCore : public Scheduler {
 protected:
  using Scheduler::Scheduler;
  // Moves queued task `p` from `from` to `to` (a migration), and makes `to`
  // reschedule if it is idle.
  void Migrate(Task& p, Cpu& from, Cpu& to);

 private:
  Class& self() { return static_cast<Class&>(*this); }
  void EndWakeUp(Task& p, Cpu& waker) final;
  void Switch(Cpu& cpu, bool preempt) final;
  void FinishSwitch(Cpu& cpu, Task* prev, Task* next) final;
  void Activate(Task& p, Cpu* waker) final;
  void Enqueue(Task& p, Cpu& rq, Cpu* waker) final;
  // FinishSwitch's rare cases, out of line so that its common one saves
  // fewer registers: wakers spinning on prev's on_cpu, and a wake-up that
  // came while prev was switching out.
  [[gnu::noinline]] void WakeOnCpuWaiters(Task& prev);
  [[gnu::noinline]] void ActivateAfterSwitch(Task& prev, Cpu& cpu);
  void PickOnIdle(Cpu& cpu) final;
};

class PinnedFifoScheduler;
extern template class SchedCore<PinnedFifoScheduler>;

// Each CPU runs its tasks in the order they became runnable; a task runs
// until it sleeps (no time slices, no preemption), and stays on the CPU it
// was started on (its first allowed CPU). The model of the cases whose tasks
// are pinned one per CPU.
class PinnedFifoScheduler final : public SchedCore<PinnedFifoScheduler> {
 public:
  explicit PinnedFifoScheduler(sim::Simulator& sim) : SchedCore(sim) {}
  const char* name() const override { return "pinned"; }
  bool migrates() const override { return false; }
  bool PreemptsRunningTasks() const override { return false; }
  int NrRunning(const Cpu& cpu) const override;

 protected:
  friend class SchedCore<PinnedFifoScheduler>;
  Cpu& SelectTaskRq(Task& p, Cpu* waker) override;
  void EnqueueTask(Cpu& rq, Task& p, bool wakeup) override;
  void DequeueTask(Cpu& rq, Task& p) override;
  Task* PickNextTask(Cpu& rq) override;
  void PutPrevTask(Cpu& rq, Task& prev) override { EnqueueTask(rq, prev, false); }
  bool CheckPreemptCurr(Cpu&, Task&, Task&) override { return false; }

 private:
  struct Queue {
    Task* head = nullptr;
    Task* tail = nullptr;
    int n = 0;
  };
  Queue& QueueOf(const Cpu& cpu);
  const Queue& QueueOf(const Cpu& cpu) const;
  std::vector<Queue> queues_;  // by CPU id
};

// The policies a scenario can name: "pinned" and "fair".
std::vector<std::string> SchedulerNames();

inline void Task::ScheduleAwaiter::await_suspend(std::coroutine_handle<> h) {
  p->cont_ = h;
  p->wait_ = Task::Wait::kSwitch;
  p->sched_->Switch(*p->cpu_, /*preempt=*/false);
}

inline Cpu::WorkAwaiter Scheduler::BeginWakeUp(Task& p, Cpu& waker, bool* woken, bool* activate) {
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
  if (ttwu_queue_) [[unlikely]] return BeginQueuedWakeUp(p, waker);
  return waker.Run(costs.try_to_wake_up);
}

}  // namespace models

#endif  // VIOSIM_MODELS_CPU_SCHED_H_
