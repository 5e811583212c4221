// A task (struct task_struct): a coroutine with a state, a CPU and the CPUs
// it may run on.
//
// A task's code charges time only through its CPU (`co_await
// task.cpu()->Run(cost)`, cpu.h). It sleeps the kernel's way:
//
//   for (;;) {
//     task.SetState(Task::State::kUninterruptible);   // set_current_state()
//     if (condition) break;
//     co_await task.Schedule();                        // schedule()
//   }
//   task.SetState(Task::State::kRunning);             // __set_current_state()
//
// and is woken with `co_await sched.TryToWakeUp(task, waker_cpu)` (sched.h).
// After Schedule() returns the task may be on another CPU: read cpu() again.
//
// The fields under "scheduler" belong to the scheduler (sched.h) and its
// policies; models use the public accessors only.
#ifndef VIOSIM_MODELS_CPU_TASK_H_
#define VIOSIM_MODELS_CPU_TASK_H_

#include <coroutine>
#include <cstdint>
#include <string>
#include <vector>

#include "models/cpu/callback.h"
#include "models/cpu/cpu.h"
#include "sim/time.h"

namespace models {

class Scheduler;

class alignas(64) Task {
 public:
  // TASK_RUNNING, TASK_INTERRUPTIBLE, TASK_UNINTERRUPTIBLE, and a task whose
  // body has returned (TASK_DEAD).
  enum class State : uint8_t { kRunning, kInterruptible, kUninterruptible, kDead };

  // `allowed`: CPU ids the task may run on (its cpus_mask); empty means all.
  Task(std::string name, std::vector<int> allowed = {});
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  const std::string& name() const { return name_; }
  // task_cpu(p): the CPU the task runs on, or last ran on, or is queued on.
  Cpu* cpu() const { return cpu_; }
  State state() const { return state_; }
  // set_current_state() / __set_current_state().
  void SetState(State s) { state_ = s; }
  const std::vector<int>& allowed() const { return allowed_; }
  bool AllowedOn(int cpu) const { return any_cpu_ || AllowedOnList(cpu); }
  // On a runqueue or running (p->on_rq), and on a CPU (p->on_cpu).
  bool on_rq() const { return on_rq_; }
  bool on_cpu() const { return on_cpu_; }
  bool running() const { return cpu_ != nullptr && cpu_->current() == this; }

  // Costed work on the task's CPU: `co_await task.Run(cost)`.
  Cpu::WorkAwaiter Run(sim::Time cost) { return cpu_->Run(cost); }
  Cpu::WorkAwaiter RunUser(sim::Time cost) { return cpu_->RunUser(cost); }

  // schedule() (kernel/sched/core.c): with the task in a sleeping state it
  // leaves its CPU until woken; in TASK_RUNNING it yields only when a
  // reschedule is pending. Resumes running (perhaps on another CPU).
  struct ScheduleAwaiter {
    Task* p;
    bool await_ready() const noexcept;
    // Defined in sched.h (it calls the scheduler): include it to sleep.
    inline void await_suspend(std::coroutine_handle<> h);
    void await_resume() const noexcept {}
  };
  ScheduleAwaiter Schedule() { return ScheduleAwaiter{this}; }

  // Makes this task the host thread of `vcpu` (the vCPU thread's
  // ioctl(KVM_RUN)): while the task is preempted, or its CPU runs an
  // interrupt, `vcpu` stands still (Cpu::BeginSteal). Null: none.
  void set_vcpu(Cpu* vcpu) { vcpu_ = vcpu; }
  Cpu* vcpu() const { return vcpu_; }

  // Counters since the last ResetStats (as /proc/PID/sched).
  uint64_t nvcsw() const { return nvcsw_; }    // voluntary switches (slept)
  uint64_t nivcsw() const { return nivcsw_; }  // involuntary (preempted)
  uint64_t wakeups() const { return wakeups_; }
  uint64_t migrations() const { return migrations_; }
  sim::Time runtime() const { return runtime_; }  // time on a CPU (se.sum_exec_runtime)
  sim::Time run_delay() const { return run_delay_; }  // time runnable but waiting (sched_info)
  void ResetStats();

  // ---- scheduler ----
  // The saved context: what the task's coroutine waits for on its CPU.
  enum class Wait : uint8_t {
    kNone = 0,
    kWork,    // Run(cost): due_ while running, left_ while frozen
    kAt,      // resumes at due_ (a lock hand-off, a yield)
    kSignal,  // SpinUntil: resumes when spin_wake_ fires
    kSwitch,  // switched out in Schedule(); resumes when switched in
  };
  // Read or written on nearly every switch and wake-up, so together in the
  // object's first two cache lines (a task is cache-line aligned); the rest
  // after them.
  std::coroutine_handle<> cont_;
  Wait wait_ = Wait::kNone;
  bool frozen_ = false;    // kWork: left_ holds what remains
  bool deferred_ = false;  // kAt/kSignal: due while a handler ran or switched out
  CpuTime mode_ = CpuTime::kSystem;
  State state_ = State::kRunning;
  bool on_rq_ = false;
  bool on_cpu_ = false;
  bool wake_pending_ = false;  // woken while switching out
  // allowed_ is empty: every CPU (read on every wake-up and balance, so
  // kept here rather than with the list at the object's end).
  bool any_cpu_;
  bool started_ = false;
  // !on_cpu_waiters_.empty(), kept here because every switch asks and the
  // list sits on a colder line; set and cleared with the list.
  bool on_cpu_waited_ = false;
  int rq_index_ = -1;
  // Policy data (CFS's sched_entity; the FIFO policy's list link): with the
  // flags above, all that a runqueue's sifts and scans read of a queued task.
  sim::Time vruntime_;
  uint64_t rq_seq_ = 0;
  Task* rq_next_ = nullptr;
  Scheduler* sched_ = nullptr;
  Cpu* cpu_ = nullptr;
  // The task's own times, then the statistics a switch or a wake-up counts.
  sim::Time due_;
  sim::Time exec_start_;      // when it last got a CPU
  sim::Time enqueued_at_;     // when it last became runnable and waiting
  sim::Time runtime_, run_delay_;
  uint64_t nvcsw_ = 0, wakeups_ = 0, migrations_ = 0;

  uint64_t nivcsw_ = 0;  // preemptions: rarer than the rest
  // kAt: the CPU whose task timer ends the wait, set when the task is
  // preempted in it (kept through further preemptions until a CPU thaws
  // the wait). Migrated and switched in elsewhere before due_, the task's
  // wait ends on the CPU it runs on (Cpu::ThawCurrent).
  Cpu* at_cpu_ = nullptr;
  // TTWU_QUEUE: the CPU a waker chose for this task and queues it to once
  // its share of the wake-up is paid (Scheduler::set_ttwu_queue).
  Cpu* queue_to_ = nullptr;
  sim::Time left_;
  Cpu* vcpu_ = nullptr;     // set_vcpu
  bool stealing_ = false;  // vcpu_ stands still because of this task's host CPU
  // Wakers spinning until this task's switch out has ended (their
  // resumptions through their CPUs; Scheduler::set_ttwu_spins_on_cpu).
  std::vector<std::coroutine_handle<>> on_cpu_waiters_;
  Callback spin_wake_;  // SpinUntil's resumption, routed through the CPU

 private:
  void OnSpinWake();
  bool AllowedOnList(int cpu) const;
  std::string name_;
  std::vector<int> allowed_;
  // allowed_ as a bitmap by CPU id (a placement asks for every CPU).
  std::vector<uint64_t> allowed_bits_;
};

inline bool Task::ScheduleAwaiter::await_ready() const noexcept {
  return p->state_ == State::kRunning && !p->cpu_->need_resched_;
}

}  // namespace models

#endif  // VIOSIM_MODELS_CPU_TASK_H_
