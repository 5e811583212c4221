// The vhost device core of Linux 3.0 to 3.10 (drivers/vhost/vhost.c): the
// per-device worker thread, its work list and work_lock, and the poll
// entries that queue work from other contexts' wait-queue callbacks.
//
//   vhost_work_queue(dev, work):
//     spin_lock_irqsave(&dev->work_lock, flags);
//     if (list_empty(&work->node)) {
//       list_add_tail(&work->node, &dev->work_list);
//       work->queue_seq++;
//       wake_up_process(dev->worker);          // before ac9fde24: here
//     }
//     spin_unlock_irqrestore(&dev->work_lock, flags);
//     (after ac9fde24 the wake-up follows the unlock)
//
//   vhost_worker(), 3.0.27: for (;;) { set_current_state(TASK_INTERRUPTIBLE);
//     spin_lock_irq(&dev->work_lock); take the first item, if any;
//     spin_unlock_irq(); if (work) { __set_current_state(TASK_RUNNING);
//     work->fn(work); } else schedule(); }
//   (drivers/vhost/vhost.c, v3.0.27: no need_resched() check after an
//   item; 3.10 adds `if (need_resched()) schedule();`, set
//   VhostParams::resched_after_work for it.) Under the 3.0 default
//   PREEMPT_NONE (kernel/Kconfig.preempt) a kernel thread is switched out
//   only where it calls schedule(): the worker runs its loop with
//   preemption off, so with work listed it keeps its CPU.
//
// The one field the two variants of the case differ in is
// VhostParams::wake_outside_lock. Who wakes the worker and in which state
// it is found (running, on its runqueue between set_current_state and
// schedule, inside schedule, asleep) comes from the simulated tasks; the
// wake-up itself is the scheduler's try_to_wake_up (models/cpu/sched.h).
#ifndef VIOSIM_MODELS_VHOST_VHOST_H_
#define VIOSIM_MODELS_VHOST_VHOST_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "models/sync/spinlock.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

struct VhostParams {
  // ac9fde24: wake_up_process() after spin_unlock_irqrestore().
  bool wake_outside_lock = false;
  // The worker's CPU affinity: -1 for any CPU (kthread_create()'s default),
  // else the one host CPU it may run on (taskset).
  int worker_cpu = -1;
  // wake_up_process() takes the worker's p->pi_lock (try_to_wake_up()'s
  // raw_spin_lock_irqsave(&p->pi_lock), Linux 3.0) as a spinlock, held
  // through the whole wake-up; off, concurrent wake-ups do not exclude
  // each other.
  bool ttwu_pi_lock = false;
  // 3.10's `if (need_resched()) schedule();` after each item (absent from
  // 3.0.27's vhost_worker()).
  bool resched_after_work = false;
};

struct VhostCosts {
  // list_add_tail / list_del_init and the queue_seq update on the shared
  // work list, under work_lock (one line of dev touched by both sides).
  Param<sim::Time> work_list_op;
};

// struct vhost_work: one deferred function, at most once on the list.
struct VhostWork {
  std::string name;
  // work->fn(work), run by the worker task on its CPU.
  std::function<sim::Task(Task& worker)> fn;
  bool queued = false;  // !list_empty(&work->node)
  VhostWork* next = nullptr;
  uint64_t queue_seq = 0;
  uint64_t done_seq = 0;
  uint64_t runs = 0;  // times the worker ran it
};

// The worker's state as a waker finds it: try_to_wake_up()'s cases.
enum class WakeCase : uint8_t {
  kRunning = 0,   // TASK_RUNNING (inside work->fn): the state check only
  kRunnable,      // set TASK_INTERRUPTIBLE, not yet switched out: ttwu_remote
  kSwitching,     // inside schedule(), still on_cpu: the 3.0 waker spins
  kAsleep,        // off the runqueue: select_task_rq, enqueue, maybe an IPI
  kCount,
};
inline constexpr int kWakeCases = static_cast<int>(WakeCase::kCount);
const char* WakeCaseName(WakeCase c);

struct VhostStats {
  uint64_t queue_calls = 0;   // vhost_work_queue() calls
  uint64_t queued = 0;        // ... that added the item (and woke the worker)
  std::array<uint64_t, kWakeCases> wakes{};  // by the case the waker found
  uint64_t items_run = 0;
  // The worker's spinning for work_lock at the top of its loop.
  sim::Time work_lock_spin;
  void Reset() { *this = VhostStats(); }
};

class VhostDev : public sim::TraceSource {
 public:
  // The worker is a task of `sched` (unpinned: kthread_create's default).
  VhostDev(sim::Simulator& sim, Scheduler& sched, const VhostCosts& costs, const VhostParams& params,
           SpinlockKind lock_kind, const LockHandoffCosts& handoff);
  VhostDev(const VhostDev&) = delete;
  VhostDev& operator=(const VhostDev&) = delete;

  // vhost_dev_set_owner(): starts the worker.
  void Start();

  // vhost_work_queue(): by code running on `cpu` (any context).
  sim::Task WorkQueue(Cpu& cpu, VhostWork& work);

  // Traced: the work items queued for the worker, as a counter track
  // "vhost work list waiters #<ordinal>" (what waits on the list, as a
  // lock's waiters wait on it).
  void CloseTraceSlice() override {}
  void OpenTraceSlice(int ordinal) override;

  Task& worker() { return worker_; }
  const Spinlock& work_lock() const { return work_lock_; }
  const Spinlock& pi_lock() const { return pi_lock_; }
  Spinlock& work_lock() { return work_lock_; }
  Spinlock& pi_lock() { return pi_lock_; }
  const VhostStats& stats() const { return stats_; }
  // The worker's CPU time since the reset as top shows it: its runtime
  // plus the context switches into it (which the kernel charges to the
  // task switched in).
  sim::Time WorkerCpuTime() const;
  // The part of it spent in context switches (schedule()).
  sim::Time WorkerScheduleTime() const;
  void ResetStats();

 private:
  sim::Task Worker();
  sim::Task Schedule();
  sim::Task WakeUpWorker(Cpu& cpu, WakeCase found);
  void TraceListLength() const;
  int list_length_ = 0;         // items on dev->work_list
  std::string list_track_;      // traced runs only

  sim::Simulator* sim_;
  Scheduler* sched_;
  VhostCosts costs_;
  VhostParams params_;
  Spinlock work_lock_;
  Spinlock pi_lock_;  // the worker's p->pi_lock (VhostParams::ttwu_pi_lock)
  VhostWork* head_ = nullptr;  // dev->work_list
  VhostWork* tail_ = nullptr;
  Task worker_;
  VhostStats stats_;
  uint64_t switches_at_reset_ = 0;
  sim::Time runtime_at_reset_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_VHOST_VHOST_H_
