// A CFS-like policy (kernel/sched/fair.c) for the scheduler core (sched.h).
//
// Each CPU has a runqueue ordered by vruntime, ties broken by the order of
// enqueueing, so that every run picks the same task. All tasks have the
// nice-0 weight: a task's vruntime grows by the time it runs (irq time
// included, as without IRQ_TIME_ACCOUNTING), and there are no groups.
//
//   - Slice: max(sched_latency / nr_running, min_granularity)
//     (sched_slice() with __sched_period()). When it ends, the task is
//     preempted if a queued task has a smaller vruntime; otherwise it gets
//     a new slice (check_preempt_tick finds nothing to do).
//   - Wake-up preemption: a woken task preempts the current one when the
//     current vruntime exceeds its own by more than wakeup_granularity
//     (check_preempt_wakeup / wakeup_preempt_entity).
//   - Placement (place_entity): a woken task at max(its vruntime,
//     min_vruntime - sched_latency / 2) (GENTLE_FAIR_SLEEPERS' credit); a
//     new task at min_vruntime plus one slice (START_DEBIT). A task that
//     changes CPU keeps its vruntime relative to min_vruntime.
//   - select_task_rq: a waking task goes to its previous CPU if idle, else
//     to an idle CPU of the same LLC (select_idle_sibling, scanning from
//     the CPU after it), else to its previous CPU; a new task to the CPU
//     with the fewest runnable tasks. Always within the task's affinity.
//   - Idle balance (newidle_balance): a CPU about to go idle pulls one
//     queued task from the busiest runqueue, nearest domain first (same
//     LLC, same socket, the rest).
//   - Idle kick (nohz_balancer_kick): when a task has to wait on a busy
//     CPU while another CPU it may run on is idle, that CPU is told
//     (after the target's wakeup_latency, the IPI) and pulls as above; so
//     is one when a preempted task has finished switching out and waits.
//     With the idle balance this keeps every CPU busy while a task waits.
//   - Periodic balance (rebalance_domains): every balance_interval, within
//     each LLC, then each socket, then the machine, queued tasks move from
//     the busiest to the idlest runqueue while they differ by two or more.
//     It runs only while some runqueue has a task waiting.
//
// Not modeled: nice levels and weights, PELT load tracking (balancing
// counts tasks), the skip/next/last buddies, SMT-aware idle search, cache
// hotness, wake-affine, and the cost of balancing itself. A task still
// switching out is never migrated (can_migrate_task's task_running()).
#ifndef VIOSIM_MODELS_CPU_SCHED_FAIR_H_
#define VIOSIM_MODELS_CPU_SCHED_FAIR_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "models/cpu/callback.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace models {

// The CFS tunables, unscaled (normalized_sysctl_* in kernel/sched/fair.c).
// The effective values are these times the factor 1 + ilog2(min(ncpus, 8))
// (get_update_sysctl_factor(), SCHED_TUNABLESCALING_LOG, the default):
// x1 on 1 CPU, x2 on 2-3, x3 on 4-7, x4 on 8 or more, so 6ms / 0.75ms / 1ms
// become 24ms / 3ms / 4ms on a machine of 8 CPUs or more.
struct FairParams {
  // sysctl_sched_latency: the period in which each runnable task runs once.
  sim::Time sched_latency = sim::Time::Millis(6);
  // sysctl_sched_min_granularity: the shortest slice.
  sim::Time min_granularity = sim::Time::Micros(750);
  // sysctl_sched_wakeup_granularity: how far ahead in vruntime the current
  // task must be for a woken one to preempt it.
  sim::Time wakeup_granularity = sim::Time::Millis(1);
  // SCHED_TUNABLESCALING_LOG when true, SCHED_TUNABLESCALING_NONE when false.
  bool scale_with_cpus = true;
  // START_DEBIT: a new task starts one slice behind min_vruntime.
  bool start_debit = true;
  // How often the periodic balance runs (the scheduler tick at HZ=250).
  sim::Time balance_interval = sim::Time::Millis(4);
};

// 1 + ilog2(min(ncpus, 8)) (get_update_sysctl_factor). REQUIRES: ncpus >= 1.
int FairTunableFactor(int ncpus);

class FairScheduler;
extern template class SchedCore<FairScheduler>;

class FairScheduler final : public SchedCore<FairScheduler> {
 public:
  FairScheduler(sim::Simulator& sim, const FairParams& params = {});
  ~FairScheduler() override;
  const char* name() const override { return "fair"; }
  bool migrates() const override { return true; }
  int NrRunning(const Cpu& cpu) const override;

  const FairParams& params() const { return params_; }
  // The effective (scaled) tunables, for the CPUs added so far.
  sim::Time sched_latency() const { return latency_; }
  sim::Time min_granularity() const { return min_gran_; }
  sim::Time wakeup_granularity() const { return wakeup_gran_; }
  // cfs_rq->min_vruntime of `cpu`'s runqueue.
  sim::Time min_vruntime(const Cpu& cpu) const;

  // Tasks moved since the last ResetBalanceStats: by a CPU going idle or
  // kicked while idle, and by the periodic balance.
  uint64_t idle_pulls() const { return idle_pulls_; }
  uint64_t periodic_moves() const { return periodic_moves_; }
  void ResetBalanceStats() { idle_pulls_ = periodic_moves_ = 0; }

 protected:
  friend class SchedCore<FairScheduler>;
  Cpu& SelectTaskRq(Task& p, Cpu* waker) override;
  void EnqueueTask(Cpu& rq, Task& p, bool wakeup) override;
  void DequeueTask(Cpu& rq, Task& p) override;
  Task* PickNextTask(Cpu& rq) override;
  void PutPrevTask(Cpu& rq, Task& prev) override;
  bool CheckPreemptCurr(Cpu& rq, Task& curr, Task& woken) override;
  void StartRunning(Cpu& rq, Task& p) override;
  void StopRunning(Cpu& rq, Task& p, sim::Time ran) override;
  void SwitchedOut(Cpu& rq, Task& prev) override;
  void IdleBalance(Cpu& rq) override;
  sim::Time SliceOf(Cpu& rq, Task& p) override;
  void SliceEnded(Cpu& cpu, Task& p) override;

 private:
  struct Rq;
  // Runqueues with nothing runnable, and with a task waiting (nr_running
  // >= 2), in an LLC, a socket or the machine.
  struct Counts {
    int idle = 0;
    int overloaded = 0;
  };
  static bool Allowed(const Task& p, int cpu) { return p.AllowedOn(cpu); }
  // Makes the runqueues and domains for the CPUs added so far.
  void Build();
  Rq& RqOf(const Cpu& cpu) const { return RqOf(cpu.id()); }
  Rq& RqOf(int id) const { return *rqs_[static_cast<size_t>(id)]; }
  int NrOf(const Rq& rq) const;
  // The steps marked always_inline run on nearly every context switch;
  // inlined, they save the calls (docs/speed.md).
  [[gnu::always_inline]] void AddNr(Rq& rq, int delta);
  void Count(const Rq& rq, int idle, int overloaded);
  // The counts of `rq`'s domain `d` (0: its LLC, 1: the rest of its
  // socket, 2: the other sockets), `rq` itself left out.
  [[gnu::always_inline]] inline Counts DomainCounts(const Rq& rq, int d) const;
  sim::Time CurrVruntime(const Rq& rq) const;
  [[gnu::always_inline]] inline void UpdateMinVruntime(Rq& rq);
  sim::Time Slice(int nr_running) const;
  // The runqueue (a binary min-heap on (vruntime, seq)).
  [[gnu::always_inline]] inline void Push(Rq& rq, Task& p);
  void Remove(Rq& rq, Task& p);
  void SiftUp(Rq& rq, size_t i);
  void SiftDown(Rq& rq, size_t i);
  // A queued task of `from` that may move to `to`: the one that would run
  // last there. Null if none.
  Task* Movable(const Rq& from, const Cpu& to) const;
  // SelectTaskRq's scans, out of line so that its common case (the task's
  // own CPU) saves few registers: an idle CPU of rq's LLC p may run on, or
  // null; the CPU with the fewest runnable tasks p may run on.
  [[gnu::noinline]] Cpu* IdleSibling(const Rq& rq, const Task& p) const;
  [[gnu::noinline]] Cpu* FewestRunnable(const Task& p) const;
  // `rq`'s CPU pulls one task from the busiest runqueue, nearest first.
  bool Pull(Rq& rq);
  // A task must wait on `rq`: tell an idle CPU it may run on.
  void KickIdle(Rq& rq, const Task& p);
  void OnKick(Rq& rq);
  void ArmBalance();
  void OnBalanceTick();
  void Balance(const std::vector<int>& group);

  // What every enqueue, pick and balance reads first, together.
  std::vector<std::unique_ptr<Rq>> rqs_;  // by CPU id
  std::vector<int> nr_;                   // nr_running, by CPU id
  std::vector<Counts> llcs_, sockets_;    // by dense LLC and socket index
  Counts total_;
  uint64_t seq_ = 0;
  size_t built_ = 0;                      // cpus().size() at the last Build()
  sim::Time latency_, min_gran_, wakeup_gran_;
  bool balance_armed_ = false;
  uint64_t idle_pulls_ = 0, periodic_moves_ = 0;
  // Slice(n) for n < kSlices, set with latency_ and min_gran_ (SetSlices):
  // a switch reads its slice instead of dividing.
  static constexpr int kSlices = 64;
  std::array<sim::Time, kSlices> slices_;
  void SetSlices();
  FairParams params_;
  // Groups of CPU ids for the periodic balance: each LLC, each socket, the
  // machine.
  std::vector<std::vector<int>> groups_;
  Callback balance_tick_;
};

// The policy called `name` (one of SchedulerNames()): "pinned" or "fair".
absl::StatusOr<std::unique_ptr<Scheduler>> MakeScheduler(std::string_view name, sim::Simulator& sim,
                                                         const FairParams& fair = {});

}  // namespace models

#endif  // VIOSIM_MODELS_CPU_SCHED_FAIR_H_
