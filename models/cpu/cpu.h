// A CPU as the kernel sees it: the task running on it, interrupts and
// preemption as counters in its state, and the time it spends in each mode.
//
// One way to charge time. Code running on a CPU -- a task's kernel path, or
// a hard interrupt handler -- calls `co_await cpu.Run(cost)` (or RunUser)
// inside its own coroutine. The CPU knows which context the caller is in:
// while a handler runs (`in_irq()`), it is the handler's; otherwise it is the
// current task's. There is no other way to spend time on a CPU.
//
// Interrupts. `RaiseIrq(handler)` makes a hard interrupt pending. It is taken
// as soon as interrupts are enabled on the CPU (irq-off depth zero), the
// CPU is not inside a VM exit and no handler runs: then the task's work in
// progress is frozen (what is left of its Run is kept), the handler runs
// with interrupts off (as hardirq handlers do) and, when it returns, the
// task's work continues where it stopped. Handlers do not nest; pending ones
// run one after the other, in the order they were raised.
//
// `LocalIrqSave/Restore` (local_irq_save / local_irq_restore) and
// `PreemptDisable/Enable` are counters. They do not suspend: a
// spin_lock_irqsave is `cpu.LocalIrqSave(); co_await lock.Lock(cpu);` inside
// the caller's own function, and the caller's code goes on in the same
// coroutine. An interrupt that becomes deliverable (restore to zero, end of
// an exit) is taken at once, before the task's next step on this CPU.
//
// Task-context resumptions go through the CPU. A task waiting on this CPU --
// for its work to end, for a spinlock it spins on, for a polled condition --
// is resumed by the CPU (`ResumeTask`), which holds the resumption back while
// a handler runs, so that task code never runs inside an interrupt.
//
// VM exits (vCPUs). `BeginExit/EndExit` bracket the time a vCPU spends out of
// the guest: to the guest an exit is one long instruction, so no interrupt is
// taken during it and whatever the guest holds stays held.
//
// Steal (vCPUs). A vCPU runs only while its host thread runs on a host
// CPU. `BeginSteal/EndSteal` bracket a time the thread does not: it was
// preempted on its host CPU (runnable, waiting: what KVM reports to the
// guest as steal time, the thread's sched_info.run_delay), or that CPU
// runs a host interrupt. The guest stands still: the task's work in
// progress is frozen as for an interrupt, no interrupt is taken, no
// context switch starts and one under way waits, a lock handed to a
// spinning task is taken only once the vCPU runs again. A steal that
// begins while a guest interrupt handler runs starts when the handler
// returns (handlers here charge their time as single events, a few
// microseconds: their end is not moved). Work that does not go through
// the CPU (an exit's host side, charged by KVM and QEMU on the host) is
// the host's to stretch. A host task is the thread of a vCPU through
// Task::set_vcpu: its host CPU then begins and ends the vCPU's steals.
//
// Accounting. The time of the CPU is split as the kernel accounts it: user,
// system, irq, softirq, idle, and, for a vCPU, exit and steal (the guest's
// share is everything but idle, exit and steal). Spinning on a lock and busy polling are
// system (or irq) time to the kernel; they are kept apart here so that a
// report can show them.
//
// Scheduling. Which task runs is the scheduler's decision (sched.h); the CPU
// only holds the current task and runs the context switch the scheduler asks
// for.
#ifndef VIOSIM_MODELS_CPU_CPU_H_
#define VIOSIM_MODELS_CPU_CPU_H_

#include <coroutine>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "models/cpu/callback.h"
#include "sim/simulator.h"
#include "sim/stats.h"
#include "sim/task.h"
#include "sim/time.h"

namespace sim {
class TraceWriter;
}

namespace models {

class Task;
class Scheduler;
template <class Class>
class SchedCore;

// How the time of a CPU is accounted (kernel/sched/cputime.c), plus the
// two views kept apart: spinning on a lock and busy polling.
enum class CpuTime : uint8_t {
  kIdle = 0,
  kUser,     // a task in user mode
  kSystem,   // a task in the kernel (including the context switch)
  kIrq,      // hard interrupt handlers
  kSoftirq,  // softirq / bottom halves
  kExit,     // a vCPU outside the guest: a VM exit and its handler
  kSpin,     // spinning for a spinlock (system or irq time to the kernel)
  kPoll,     // a task busy-polling for a completion (system time)
  kSteal,    // a vCPU whose host thread is off its host CPU (BeginSteal)
  kCount,
};
inline constexpr int kCpuTimes = static_cast<int>(CpuTime::kCount);
const char* CpuTimeName(CpuTime t);

// Where a CPU sits in the machine, for costs that depend on distance
// (lock hand-off, wake-up) and for the fair scheduler's domains.
struct CpuPlace {
  int socket = 0;
  int llc = 0;   // last-level cache domain, unique across sockets
  int core = 0;  // physical core, unique across the machine (SMT siblings share it)
};

// The distance between two CPUs.
enum class CpuDistance : uint8_t {
  kSame = 0,   // the same CPU
  kCore,       // SMT siblings
  kLlc,        // same last-level cache
  kSocket,     // same socket, another LLC
  kRemote,     // another socket
};
CpuDistance DistanceOf(const CpuPlace& a, const CpuPlace& b);
const char* CpuDistanceName(CpuDistance d);

// Scheduler costs charged on a CPU (kernel/sched/core.c).
struct SchedCosts {
  // One __schedule() switch on this CPU, from one task (or idle) to another.
  sim::Time context_switch;
  // try_to_wake_up() of a sleeping task: the waker's share, charged on the
  // waker's CPU in the waker's context (select_task_rq, enqueue,
  // check_preempt, the IPI's send).
  sim::Time try_to_wake_up;
  // try_to_wake_up() that finds the task already running or on a runqueue
  // (the state check and ttwu_runnable): the fast path.
  sim::Time try_to_wake_up_fast;
  // From a remote wake-up to the idle target CPU starting its switch: the
  // reschedule IPI and the way out of idle. Zero when not modeled.
  sim::Time wakeup_latency;
};

class alignas(64) Cpu {
 public:
  // Trace process id under which CPUs appear, one track per CPU id.
  static constexpr int kTracePid = 1;

  Cpu(sim::Simulator& sim, int id, std::string name, CpuPlace place = {});
  Cpu(const Cpu&) = delete;
  Cpu& operator=(const Cpu&) = delete;

  int id() const { return id_; }
  const std::string& name() const { return name_; }
  const CpuPlace& place() const { return place_; }
  sim::Simulator& sim() const { return *sim_; }

  void set_sched_costs(const SchedCosts& c) { sched_costs_ = c; }
  const SchedCosts& sched_costs() const { return sched_costs_; }
  // The scheduler this CPU's runqueue belongs to (null: no tasks).
  Scheduler* scheduler() const { return sched_; }

  // ---- The kernel's per-CPU state ----

  // The task running (or being switched in); null when idle.
  Task* current() const { return curr_; }
  bool in_irq() const { return in_irq_; }
  bool in_exit() const { return exit_depth_ > 0; }
  bool idle() const { return curr_ == nullptr && !switching_ && !in_irq_; }

  // local_irq_save() / local_irq_restore(); they nest.
  void LocalIrqSave() {
    if (irq_off_depth_++ == 0) irq_off_.Set(1, sim_->Now());
  }
  void LocalIrqRestore();
  bool irqs_disabled() const { return irq_off_depth_ > 0; }
  // preempt_disable() / preempt_enable(); they nest. preempt_enable() to
  // zero with a reschedule pending preempts the task at once.
  void PreemptDisable() { ++preempt_count_; }
  void PreemptEnable() {
    if (--preempt_count_ == 0 && need_resched_) MaybeReschedule();
  }
  // preempt_enable_no_resched(): the count falls without acting on a
  // pending reschedule (the caller is about to call schedule() itself).
  void PreemptEnableNoResched() { --preempt_count_; }
  int preempt_count() const { return preempt_count_; }
  // Whether the current task may be preempted now (preempt count zero,
  // interrupts on, not in an interrupt or exit).
  bool preemptible() const {
    return preempt_count_ == 0 && irq_off_depth_ == 0 && !in_irq_ && exit_depth_ == 0;
  }

  // ---- Charging time ----

  class WorkAwaiter {
   public:
    WorkAwaiter(Cpu* cpu, sim::Time cost, CpuTime mode) : cpu_(cpu), cost_(cost), mode_(mode) {}
    // Zero work does not suspend.
    bool await_ready() const noexcept { return cost_ == sim::Time::Zero(); }
    void await_suspend(std::coroutine_handle<> h) {
      Cpu& c = *cpu_;
      if (c.direct_ && !c.in_irq_) {
        // The direct path (see direct_), inline: it is the hot path of
        // every lock-heavy model.
        if (c.task_mode_ != mode_) c.SetTaskMode(mode_);
        c.direct_until_ = c.sim_->Now() + cost_;
        c.direct_h_ = h;
        c.direct_work_ = true;
        c.sim_->ScheduleAt(c.direct_until_, h);
        return;
      }
      c.BeginWork(h, cost_, mode_);
    }
    void await_resume() const noexcept {}
    Cpu& cpu() const { return *cpu_; }

   private:
    Cpu* cpu_;
    sim::Time cost_;
    CpuTime mode_;
  };
  // `co_await cpu.Run(cost)`: `cost` of kernel work in the caller's context
  // (system time for a task, irq time in a handler). One event.
  WorkAwaiter Run(sim::Time cost) { return WorkAwaiter(this, cost, CpuTime::kSystem); }
  // The same in user mode (a task only).
  WorkAwaiter RunUser(sim::Time cost) { return WorkAwaiter(this, cost, CpuTime::kUser); }

  // Busy-waits in the caller's context until `inner` (any awaitable whose
  // await_suspend takes a coroutine handle) resumes, accounted as `mode`
  // (kPoll for a polling loop, kSpin for a lock). Interrupts are taken
  // during the wait when enabled; a task's wait that ends while a handler
  // runs ends when the handler returns.
  template <class Inner>
  class SpinAwaiter {
   public:
    SpinAwaiter(Cpu* cpu, Inner inner, CpuTime mode) : cpu_(cpu), inner_(std::move(inner)), mode_(mode) {}
    bool await_ready() { return inner_.await_ready(); }
    void await_suspend(std::coroutine_handle<> h) {
      std::coroutine_handle<> through = cpu_->BeginSpin(h, mode_);
      inner_.await_suspend(through);
    }
    decltype(auto) await_resume() { return inner_.await_resume(); }

   private:
    Cpu* cpu_;
    Inner inner_;
    CpuTime mode_;
  };
  template <class Inner>
  SpinAwaiter<Inner> SpinUntil(Inner inner, CpuTime mode = CpuTime::kPoll) {
    return SpinAwaiter<Inner>(this, std::move(inner), mode);
  }

  // For waits that others end (a spinlock's hand-off): the caller's context
  // starts spinning now; `ResumeAt(h, at, was_irq)` ends the wait at `at`,
  // through the CPU (a task's wait ends only once no handler runs).
  // `was_irq` is what in_irq() was when the wait began.
  void BeginSpinWait(CpuTime mode = CpuTime::kSpin) {
    if (in_irq_) {
      irq_mode_ = mode;
      Account();
    } else {
      SetTaskMode(mode);
    }
  }
  void ResumeAt(std::coroutine_handle<> h, sim::Time at, bool was_irq) {
    if (direct_ && !was_irq) {
      // The direct path (see direct_).
      direct_until_ = at;
      direct_h_ = h;
      direct_work_ = false;
      if (at == sim_->Now()) {
        sim_->Wake(h);
      } else {
        sim_->ScheduleAt(at, h);
      }
      return;
    }
    ResumeThrough(h, at, was_irq);
  }
  // ResumeAt(h, at, was_irq) for a waker whose own next event is due at
  // `at`, queued just before (a cache line's next pick, due when the
  // transaction it served is done). ArmWaitEnd(h, at) leaves the task's
  // wait as ResumeAt's would, due at `at`, and returns the sequence number
  // its event would have had (Simulator::ReserveSeq), but queues nothing.
  // At `at` the waker's event ends with WaitEndInline() where no wakeup is
  // pending (the wait's end runs where its event would have: right after),
  // else with WaitEndQueued(seq) (it is queued in its reserved place, after
  // those wakeups). Only for a task's wait on a CPU off the direct path
  // (CanArmWaitEnd): there the wait's end is the CPU's task timer, which
  // nothing looks up in the queue.
  bool CanArmWaitEnd(bool was_irq) const { return !direct_ && !was_irq && curr_ != nullptr; }
  uint64_t ArmWaitEnd(std::coroutine_handle<> h, sim::Time at) {
    SetWait(h, at);
    return sim_->ReserveSeq();
  }
  void WaitEndInline() {
    sim_->RanInline();
    OnTaskEvent();
  }
  void WaitEndQueued(uint64_t seq) { sim_->ScheduleAtSeq(sim_->Now(), seq, task_timer_.handle()); }
  // Back from such a wait: the context runs (system or irq time) again.
  void EndSpinWait(bool was_irq) {
    if (was_irq) {
      irq_mode_ = CpuTime::kIrq;
      Account();
    } else if (curr_ != nullptr) {
      SetTaskMode(CpuTime::kSystem);
    }
  }

  // `co_await cpu.TakePending()`: a point where an interrupt that became
  // deliverable is taken before the caller goes on (the instruction after
  // a VM exit); a task on a vCPU that stands still (stolen: its thread was
  // preempted as the exit ended) goes on only once it runs again. No event
  // when neither holds.
  struct TakePendingAwaiter {
    Cpu* cpu;
    bool await_ready() const noexcept {
      return cpu->in_irq_ || (!cpu->CanTakeIrq() && !cpu->stolen_);
    }
    void await_suspend(std::coroutine_handle<> h) { cpu->YieldTo(h); }
    void await_resume() const noexcept {}
  };
  TakePendingAwaiter TakePending() { return {this}; }

  // ---- VM exits ----
  void BeginExit();
  void EndExit();

  // ---- Steal (see the file comment) ----
  // They nest; the vCPU stands still from the first BeginSteal (or, if a
  // handler runs then, from its return) to the last EndSteal.
  void BeginSteal();
  void EndSteal();
  // Whether the vCPU stands still now.
  bool stolen() const { return stolen_; }

  // ---- A vCPU halted in the host (its idle instruction trapped, its
  // thread in kvm_vcpu_block) ----
  // `h` runs (as an event of its own) each time the CPU goes idle: after a
  // switch to idle, or a handler's return to the idle loop.
  void set_idle_callback(std::coroutine_handle<> h) { idle_cb_ = h; }
  // The vCPU has left the guest for its idle instruction: it stands still,
  // accounted idle, until UnblockHalted, and the first interrupt raised or
  // reschedule asked for meanwhile runs `on_work` (as an event of its own).
  // REQUIRES: idle(), not blocked already.
  void BlockHalted(std::coroutine_handle<> on_work);
  void UnblockHalted();
  bool halt_blocked() const { return halt_blocked_; }
  // Work waiting for the CPU: an interrupt pending, a reschedule asked for,
  // or a switch under way.
  bool has_pending_work() const { return irqs_pending_ != 0 || need_resched_ || switching_; }
  int irqs_pending() const { return irqs_pending_; }

  // ---- Interrupts ----
  // Makes `handler` a pending hard interrupt on this CPU (see the file
  // comment). The CPU owns it from here on.
  void RaiseIrq(sim::Task handler);
  uint64_t irqs_taken() const { return irqs_taken_; }
  // For the handler running now: when it was taken on an idle CPU (a
  // halted vCPU), the time that CPU had gone idle; Time::Max() when it
  // interrupted a task, or was pending already when the CPU went idle (at
  // the end of a switch to idle or of another handler).
  sim::Time halted_since() const { return irq_halted_since_; }

  // ---- Statistics since the last ResetStats() ----
  sim::Time TimeIn(CpuTime t) const { return acct_.TimeIn(static_cast<int>(t), sim_->Now()); }
  double Share(CpuTime t) const { return acct_.Share(static_cast<int>(t), sim_->Now()); }
  sim::Time IrqOffTime() const { return irq_off_.TimeIn(1, sim_->Now()); }
  // Time not idle, and its share.
  sim::Time BusyTime() const;
  double BusyShare() const { return 1.0 - Share(CpuTime::kIdle); }
  sim::Time window() const { return sim_->Now() - acct_.interval_start(); }
  // Context switches this CPU has run.
  uint64_t switches() const { return switches_; }
  void ResetStats();

  // Names this CPU's track in a trace that starts now.
  void NameTraceTrack(sim::TraceWriter& t);
  // What runs on the CPU, for its trace track's name ("host4 qemu/main"):
  // set by whoever pins a thread there.
  void set_trace_label(std::string label) { trace_label_ = std::move(label); }
  // Writes the slice of the state the CPU is in, up to now (the end of a
  // traced window: a slice in progress is closed, not dropped).
  void CloseTraceSlice();

 private:
  friend class Scheduler;
  template <class>
  friend class SchedCore;
  friend class Task;

  // The waits a task can have on its CPU (Task::wait_).
  void BeginWork(std::coroutine_handle<> h, sim::Time cost, CpuTime mode);
  std::coroutine_handle<> BeginSpin(std::coroutine_handle<> h, CpuTime mode);
  void YieldTo(std::coroutine_handle<> h);  // a task waits until nothing is pending
  void OnTaskEvent();   // task_timer_: a task wait is due
  void OnSpinWake();    // spin_wake_: a task's SpinUntil condition fired
  void OnIrqKick();     // irq_kick_: try to take a pending interrupt
  // switch_done_: the context switch has ended. Returns the task to run
  // at once (Simulator::WakeLast), if any.
  std::coroutine_handle<> OnSwitchDone();
  void OnSliceEnd();    // slice_timer_: the current task's slice is over
  // Starts a slice of `slice` for the current task from now (Max: none).
  void ArmSlice(sim::Time slice);
  void OnReschedKick(); // resched_kick_: need_resched, looked at from an event of its own
  // Arms the task timer for the current task's wait.
  void ArmTask();
  // Freezes / thaws the current task's wait around a handler or a switch.
  void FreezeCurrent();
  void ThawCurrent();
  bool CanTakeIrq() const {
    // The pending handlers first: nearly always none.
    return irqs_pending_ != 0 && !in_irq_ && irq_off_depth_ == 0 && exit_depth_ == 0 && !switching_ && !stolen_;
  }
  void EndDirect();
  void KickIrq();
  sim::Task IrqEntry(sim::Task handler);
  void IrqExit();

  // Scheduler hooks (sched.h).
  // Starts a context switch to `next` (null: idle), costing the switch
  // unless `free`. REQUIRES: !switching_.
  void SwitchTo(Task* next, bool free);
  // Asks the CPU to reschedule when it can (need_resched).
  void SetNeedResched();
  void MaybeReschedule();

  // The time the CPU is in now.
  CpuTime Mode() const {
    if (stolen_) [[unlikely]] return halt_blocked_ ? CpuTime::kIdle : CpuTime::kSteal;
    if (exit_depth_ > 0) return CpuTime::kExit;
    if (in_irq_) return irq_mode_;
    if (switching_) return CpuTime::kSystem;
    if (curr_ != nullptr) return task_mode_;
    return CpuTime::kIdle;
  }
  void Account() {
    acct_.Set(static_cast<int>(Mode()), sim_->Now());
    if (sim_->trace() != nullptr) TraceMode();
  }
  // The current task's mode becomes `mode` (and is accounted).
  void SetTaskMode(CpuTime mode) {
    if (curr_ == nullptr) __builtin_trap();  // task-context work needs a running task
    task_mode_ = mode;
    Account();
  }
  void ResumeThrough(std::coroutine_handle<> h, sim::Time at, bool was_irq);
  // The current task waits to resume `h` at `at` (Task::Wait::kAt).
  void SetWait(std::coroutine_handle<> h, sim::Time at);
  void TraceMode();

  // The layout follows the events (a CPU is cache-line aligned): the first
  // line holds what every task wait and every change of mode reads, with
  // the frame of the event that ends a task's work; the second and third
  // what a context switch reads and writes, with its frame. A lock-heavy
  // model runs through the first two on every acquisition, on every CPU.
  sim::Simulator* sim_;
  Task* curr_ = nullptr;
  // The end of a task's work (or its switch-in).
  InlineCallback<Cpu, &Cpu::OnTaskEvent> task_timer_{this};
  bool direct_ = false;
  bool direct_work_ = false;
  bool in_irq_ = false;
  bool switching_ = false;
  bool need_resched_ = false;
  CpuTime task_mode_ = CpuTime::kSystem;  // the current task's (Task::mode_ while it is off)
  CpuTime irq_mode_ = CpuTime::kIrq;  // what the running handler does (irq, spin, exit)
  int irq_off_depth_ = 0;
  int preempt_count_ = 0;
  int exit_depth_ = 0;
  int id_;
  // While nothing can interrupt or preempt the task (no interrupt raised
  // yet, a policy that never preempts a running task), its waits resume it
  // directly, without the CPU's bookkeeping: direct_h_ resumes at
  // direct_until_ (work when direct_work_, else a lock hand-off). The first
  // RaiseIrq turns this off for good and hands the wait in flight to the
  // CPU (EndDirect), exactly as if it had gone through it.
  std::coroutine_handle<> direct_h_;
  sim::Time direct_until_;
  // The end of a context switch, and what it reads.
  InlineCallback<Cpu, &Cpu::OnSwitchDone> switch_done_{this};
  Scheduler* sched_ = nullptr;
  Task* switch_to_ = nullptr;
  Task* switch_from_ = nullptr;
  uint64_t switches_ = 0;
  sim::Time slice_end_ = sim::Time::Max();
  sim::Time slice_timer_at_ = sim::Time::Max();  // the pending slice_timer_ event
  int irqs_pending_ = 0;  // pending_.size(), read where pending_ is not
  SchedCosts sched_costs_;  // read by every switch and wake-up
  sim::StateOccupancy acct_;

  std::string name_;
  std::string trace_label_;
  CpuPlace place_;
  bool irq_kick_pending_ = false;
  std::deque<sim::Task> pending_;
  std::vector<Task*> wake_list_;  // TTWU_QUEUE's rq->wake_list (Scheduler)
  uint64_t irqs_taken_ = 0;
  sim::Time idle_since_;  // when the CPU last went idle (valid while idle())
  sim::Time irq_halted_since_ = sim::Time::Max();
  // Steal: nesting depth; whether the vCPU stands still (set once no
  // handler runs); a context switch under way when it began, frozen with
  // what it had left, and the stale events of such switches still to come.
  int steal_depth_ = 0;
  bool stolen_ = false;
  bool switch_frozen_ = false;
  int stale_switch_events_ = 0;
  sim::Time switch_due_;
  sim::Time switch_left_;
  void StartSteal();
  // Halted in the host (BlockHalted): whether, the work callback, whether
  // it ran; the idle callback.
  bool halt_blocked_ = false;
  bool halt_kicked_ = false;
  std::coroutine_handle<> halt_work_cb_;
  std::coroutine_handle<> idle_cb_;
  void KickHalted() {
    if (halt_kicked_) return;
    halt_kicked_ = true;
    sim_->Wake(halt_work_cb_);
  }

  Callback spin_wake_;
  Callback irq_kick_;
  Callback slice_timer_;
  Callback resched_kick_;

  sim::StateOccupancy irq_off_;  // 0: enabled, 1: disabled
  int traced_mode_ = -1;
  sim::Time traced_since_;
};

inline void Cpu::ArmSlice(sim::Time slice) {
  if (slice == sim::Time::Max()) {
    slice_end_ = sim::Time::Max();
    return;
  }
  slice_end_ = sim_->Now() + slice;
  if (slice_end_ < slice_timer_at_) {
    slice_timer_at_ = slice_end_;
    sim_->ScheduleAt(slice_end_, slice_timer_.handle());
  }
}

}  // namespace models

#endif  // VIOSIM_MODELS_CPU_CPU_H_
