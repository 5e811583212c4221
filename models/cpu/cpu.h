// A CPU executing costed work.
//
// A Cpu is a place where simulated threads execute. It keeps the time it
// spends in each state (running, spinning, idle, and the states later models
// add), whether local interrupts are disabled (spin_lock_irqsave), and how
// long they have been disabled.
//
// Two ways to charge work:
//
// - `co_await cpu.Run(cost)`: the caller owns the CPU (one thread per CPU,
//   as the lock benchmark has it). One event; nothing else is serialized.
// - `co_await cpu.Exec(cost)` / `cpu.ExecIrq(cost)`: the CPU is shared by
//   task-context flows (a thread's syscall path) and interrupt handlers, and
//   their work runs one chunk at a time. A chunk, once started, runs to its
//   end: preemption happens at chunk boundaries only. At a boundary, pending
//   interrupt work runs first (unless interrupts are disabled on the CPU),
//   then task work in arrival order. The flow whose chunk just ended keeps
//   its place: what it asks of the CPU straight away (in the same instant,
//   before it waits on anything else) goes ahead of what other flows queued,
//   as a running kernel path is not switched out for a waiting one. The
//   Exec engine keeps the state (running while a chunk runs or a poller
//   spins, idle otherwise) and the time per context (task, irq, poll).
//
// Do not mix Run and Exec on one CPU: Run does not take part in the
// serialization.
#ifndef VIOSIM_MODELS_CPU_CPU_H_
#define VIOSIM_MODELS_CPU_CPU_H_

#include <array>
#include <coroutine>
#include <cstdint>
#include <string>
#include <utility>

#include "models/cpu/callback.h"
#include "sim/simulator.h"
#include "sim/stats.h"
#include "sim/time.h"

namespace sim {
class TraceWriter;
}

namespace models {

enum class CpuState : uint8_t {
  kIdle = 0,   // nothing to run
  kRunning,    // executing a thread's work (or the guest's, in a vCPU)
  kSpinning,   // burning cycles waiting for a spinlock
  kExit,       // a vCPU outside the guest, handling a VM exit
  kCount,
};
inline constexpr int kCpuStates = static_cast<int>(CpuState::kCount);
const char* CpuStateName(CpuState s);

// The context work submitted through Exec runs in.
enum class ExecLevel : uint8_t {
  kTask = 0,  // process context: a thread's own work, syscalls
  kIrq,       // interrupt context: hardirq handlers and what they call
};

// What an Exec-driven CPU is doing, for the time split (TimeInContext).
enum class ExecContext : uint8_t {
  kNone = 0,  // nothing: idle
  kTask,      // a task-context chunk
  kIrq,       // an interrupt-context chunk
  kPoll,      // a task spinning in a polling loop (SpinUntil)
  kCount,
};
inline constexpr int kExecContexts = static_cast<int>(ExecContext::kCount);
const char* ExecContextName(ExecContext c);

// Scheduler costs on this CPU. Charged by models::Thread (thread.h).
struct SchedCosts {
  // One __schedule() switch on this CPU: from a task going to sleep to the
  // next one (idle), or from idle to a woken task.
  sim::Time context_switch;
  // try_to_wake_up() of a sleeping task, charged to the waker's CPU.
  sim::Time try_to_wake_up;
};

class Cpu {
 public:
  // Trace process id under which CPUs appear, one track per CPU id.
  static constexpr int kTracePid = 1;

  Cpu(sim::Simulator& sim, int id, std::string name);
  Cpu(const Cpu&) = delete;
  Cpu& operator=(const Cpu&) = delete;

  int id() const { return id_; }
  const std::string& name() const { return name_; }
  sim::Simulator& sim() const { return *sim_; }
  CpuState state() const { return state_; }

  void SetState(CpuState s) {
    if (s == state_) return;
    occupancy_.Set(static_cast<int>(s), sim_->Now());
    if (sim_->trace() != nullptr) TraceStateEnd();
    state_ = s;
  }

  // Executes `cost` of work on this CPU: the CPU is running for that long.
  // `co_await cpu.Run(cost)`; one event.
  sim::Simulator::DelayAwaiter Run(sim::Time cost) {
    SetState(CpuState::kRunning);
    return sim_->Delay(cost);
  }

  // ---- Shared execution (see the file comment) ----

  // A chunk of work queued on a CPU; intrusive, owned by whoever submits it
  // (an awaiter in a coroutine frame, or a long-lived object for Post).
  struct Work {
    sim::Time cost;
    // Resumed when the chunk ends, inline, as the continuation of the flow
    // that ran it. May be null (work nobody waits for).
    std::coroutine_handle<> then;
    ExecLevel level = ExecLevel::kTask;
    Work* next = nullptr;
  };

  class ExecAwaiter {
   public:
    ExecAwaiter(Cpu* cpu, sim::Time cost, ExecLevel level) : cpu_(cpu) {
      w_.cost = cost;
      w_.level = level;
    }
    bool await_ready() const noexcept { return false; }
    // A zero-cost chunk that could start at once does not suspend.
    bool await_suspend(std::coroutine_handle<> h) {
      if (w_.cost == sim::Time::Zero() && cpu_->CanStart(w_)) return false;
      w_.then = h;
      cpu_->Submit(w_);
      return true;
    }
    void await_resume() const noexcept {}

   private:
    Cpu* cpu_;
    Work w_;
  };

  // `co_await cpu.Exec(cost)`: runs `cost` of task-context work on this CPU
  // once the CPU is free for it; resumes when it is done. One event.
  ExecAwaiter Exec(sim::Time cost) { return ExecAwaiter(this, cost, ExecLevel::kTask); }
  // The same in interrupt context: goes ahead of queued task work.
  ExecAwaiter ExecIrq(sim::Time cost) { return ExecAwaiter(this, cost, ExecLevel::kIrq); }
  // Queues `w` (its cost, level and optional continuation) as the Exec
  // awaiters do. `w` must stay alive, unchanged, until it has run.
  void Post(Work& w) { Submit(w); }

  // The level of the flow running now, as far as this CPU knows: the level
  // of the chunk whose continuation is running, else task. Work a flow posts
  // on behalf of itself (a wakeup from an interrupt handler) uses it.
  ExecLevel context() const { return in_cont_ ? cont_level_ : ExecLevel::kTask; }

  // Wraps an awaitable: while the caller waits on `inner`, it spins on this
  // CPU (busy, state running, context poll), as a polling loop does.
  // Interrupt work preempts the spin at once (a polling loop's iterations
  // are its chunk boundaries); task work from other flows waits for the
  // spin to end. REQUIRES: no other flow spins on this CPU.
  template <class Inner>
  class SpinAwaiter {
   public:
    SpinAwaiter(Cpu* cpu, Inner inner) : cpu_(cpu), inner_(std::move(inner)) {}
    bool await_ready() { return inner_.await_ready(); }
    template <class H>
    decltype(auto) await_suspend(H h) {
      cpu_->BeginSpin();
      spun_ = true;
      return inner_.await_suspend(h);
    }
    decltype(auto) await_resume() {
      if (spun_) cpu_->EndSpin();
      return inner_.await_resume();
    }

   private:
    Cpu* cpu_;
    Inner inner_;
    bool spun_ = false;
  };
  template <class Inner>
  SpinAwaiter<Inner> SpinUntil(Inner inner) {
    return SpinAwaiter<Inner>(this, std::move(inner));
  }

  bool busy() const { return current_ != nullptr || spinning_; }
  bool spinning() const { return spinning_; }

  void set_sched_costs(const SchedCosts& c) { sched_costs_ = c; }
  const SchedCosts& sched_costs() const { return sched_costs_; }

  // local_irq_save()/local_irq_restore(); nests.
  void LocalIrqSave();
  void LocalIrqRestore();
  bool irqs_disabled() const { return irq_off_depth_ > 0; }
  // Resumes when interrupts are enabled on this CPU (immediately if they
  // are): an interrupt handler waits here before it runs.
  struct IrqsEnabledAwaiter {
    Cpu* cpu;
    sim::Signal::Awaiter inner;
    bool await_ready() const noexcept { return cpu->irq_off_depth_ == 0; }
    void await_suspend(std::coroutine_handle<> h) { inner.await_suspend(h); }
    void await_resume() const noexcept {}
  };
  IrqsEnabledAwaiter IrqsEnabled() { return {this, irqs_enabled_.Wait()}; }

  // Statistics since the last ResetStats().
  sim::Time TimeIn(CpuState s) const {
    return occupancy_.TimeIn(static_cast<int>(s), sim_->Now());
  }
  double Share(CpuState s) const {
    return occupancy_.Share(static_cast<int>(s), sim_->Now());
  }
  sim::Time IrqOffTime() const { return irq_off_.TimeIn(1, sim_->Now()); }
  // Time not idle, and its share of the time since the last reset.
  sim::Time BusyTime() const;
  double BusyShare() const { return 1.0 - Share(CpuState::kIdle); }
  // Time in each Exec context (zero for a CPU driven by Run only).
  sim::Time TimeInContext(ExecContext c) const {
    return exec_.TimeIn(static_cast<int>(c), sim_->Now());
  }
  void ResetStats();

  // Names this CPU's track in a trace that starts now.
  void NameTraceTrack(sim::TraceWriter& t);

 private:
  // Closes the trace slice of the state being left.
  void TraceStateEnd();

  // The Exec engine.
  struct Queue {
    Work* head = nullptr;
    Work* tail = nullptr;
  };
  bool CanStart(const Work& w) const;
  void Submit(Work& w);
  void Enqueue(Work& w);
  Work* Dequeue(ExecLevel level);
  void Start(Work& w);
  void StartNext();
  void ChunkEnded();  // the dispatcher's callback
  void BeginSpin();
  void EndSpin();
  void SetContext(ExecContext c) { exec_.Set(static_cast<int>(c), sim_->Now()); }

  sim::Simulator* sim_;
  int id_;
  std::string name_;
  CpuState state_ = CpuState::kIdle;
  sim::Time state_since_;  // start of the current trace slice (tracing on)
  sim::StateOccupancy occupancy_;
  int irq_off_depth_ = 0;
  sim::StateOccupancy irq_off_;  // 0: enabled, 1: disabled
  sim::Signal irqs_enabled_;

  SchedCosts sched_costs_;
  Work* current_ = nullptr;  // the chunk running now
  bool spinning_ = false;    // a task spins here (SpinUntil)
  Queue queues_[2];          // pending work by ExecLevel
  // While the flow of a chunk that just ended runs inline (its
  // continuation): its level, and per level the last item it queued at the
  // front (null: none yet), so that its requests keep their order.
  bool in_cont_ = false;
  ExecLevel cont_level_ = ExecLevel::kTask;
  Work* cont_after_[2] = {nullptr, nullptr};
  sim::StateOccupancy exec_;  // ExecContext
  Callback dispatcher_;       // resumed when current_ ends
};

}  // namespace models

#endif  // VIOSIM_MODELS_CPU_CPU_H_
