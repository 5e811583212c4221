// fio's job semantics over a modeled storage stack: each job (and each
// numjobs clone) is a thread on a CPU running fio's I/O loop (backend.c
// do_io, fio 3.33) with its engine:
//
// - psync / sync / pvsync2: one I/O at a time, completed inside the
//   syscall; the thread sleeps until the interrupt wakes it, or polls when
//   pvsync2 has hipri set (RWF_HIPRI).
// - libaio / io_uring: I/Os are queued up to iodepth, committed in batches
//   of iodepth_batch_submit (io_submit / io_uring_enter), and reaped with
//   getevents when the queue is full (wait_for_completions) in batches of
//   iodepth_batch_complete_min..max.
//
// Directions follow fio's own rwmix algorithm (io_u.c get_rw_ddir,
// set_rwmix_bytes); block sizes fio's get_next_buflen; offsets are
// sequential (with rw=...:N added) or uniformly random within `size`. A
// job's timing does not depend on which blocks it touches, so fio's random
// map (each block once per pass) is not tracked.
//
// Runs end at `runtime` (time_based), when `size` is done, or earlier when
// every job's IOPS has reached steady state within the confidence target;
// the report then covers the simulated window only and says how much of
// the requested run was simulated. With a target, `ramp_time` also ends
// early once the completion rate has settled (its purpose reached).
#ifndef VIOSIM_MODELS_FIO_WORKLOAD_H_
#define VIOSIM_MODELS_FIO_WORKLOAD_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "models/block/block_stack.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/fio/job.h"
#include "models/fio/stats.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace fio {

// CPU time fio and its syscalls cost, per I/O or per call. Values with
// their sources live in the scenario that wires the workload. Sleeping and
// waking are the scheduler's costs (models/cpu/sched.h).
struct EngineCosts {
  sim::Time fio_per_io;          // fio's own work per I/O: get_io_u, offset, accounting
  sim::Time syscall;             // one syscall's entry and exit
  sim::Time aio_per_iocb;        // io_submit's per-iocb work (aio_get_req, copy)
  sim::Time reap_per_event;      // io_getevents / CQ reap per event
};

struct WorkloadControl {
  uint64_t seed = 1;
  // Stop once every group's IOPS has a 95% confidence half-width at most
  // this share of its mean (batch means over `batch`-long windows, at least
  // `min_batches` of them after ramp). 0: never stop early.
  double target_rel_ci = 0.01;
  sim::Time batch = sim::Time::Millis(50);
  int min_batches = 20;  // at least 1s measured: two of fio's 500ms bw/iops samples
  // Simulate at most this long per group (after ramp) when steady state is
  // not reached, and for open-ended jobs (no runtime, no size). Without a
  // target (0) a job with a runtime or size runs its full length.
  sim::Time max_group_time = sim::Time::Seconds(30);
  // Called at each group's start to restart the stack's counters; unset:
  // the block stack's ResetStats.
  std::function<void()> reset_stack;
};

namespace internal {
struct Job;
struct IoU;
}

class Workload {
 public:
  // `cpus` are the CPUs fio's processes may run on (cpus_allowed indexes
  // them); `sched` runs them (every CPU of `cpus` is on it). REQUIRES:
  // every pointer outlives the Workload.
  Workload(sim::Simulator& sim, models::BlockStack& stack, models::Scheduler& sched, std::vector<models::Cpu*> cpus,
           const JobFile& jobs, const EngineCosts& costs, const WorkloadControl& control);
  ~Workload();

  // Runs every group in order and returns what fio would report (fio's
  // own ramp, runtime and steady-state rules: `viosim fio`).
  FioReport Run();

  // ---- Under a scenario's measurement engine (warm-up, batches) ----
  // Creates the jobs and starts them, each issuing I/O until the simulation
  // ends: the engine decides the window, not the job's ramp or runtime.
  // InvalidArgument when the file has more than one group.
  absl::Status Start();
  // What every job did since the last ResetCounters().
  struct WindowCounters {
    uint64_t ios[2] = {0, 0};  // completions, reads and writes
    double bytes = 0;
    double clat_ns = 0;  // sums over those completions
    double lat_ns = 0;
    LatStat clat;        // their completion latencies
  };
  const WindowCounters& window() const { return window_; }
  // The integral over the window so far of the number of I/Os open, in
  // ns x I/Os: submitted and not yet reaped (`clat`), or prepared and not
  // yet reaped (lat). Over the window's completions it is the time-average
  // (Little's law, L = lambda W) estimate of the mean latency, which in a
  // window shorter than the latency's tail has a far smaller variance than
  // the mean over the completions, whose sample is biased toward the I/Os
  // that waited longest; in steady state both estimate the same mean.
  double WindowOpenArea(bool clat) const;
  // The CPU time of every job in the window so far, user (`user`) or
  // system: each span on a CPU counted for its part inside the window, so
  // a job's share of the window is at most 100%.
  sim::Time WindowCpu(bool user) const;
  void ResetCounters();
  // fio's processes (jobs times numjobs).
  int processes() const;
  // What fio would have printed on stderr so far (a job stopped by its rate
  // floor), in order.
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  using Job = internal::Job;
  using IoU = internal::IoU;
  class Sink;
  sim::Task LaunchJob(Job& job);
  sim::Task RunJob(Job& job);
  sim::Task RunSyncEngine(Job& job);
  sim::Task RunAsyncEngine(Job& job);
  sim::Task Commit(Job& job);
  sim::Task Reap(Job& job, uint64_t min_events, uint64_t max_events);
  // `cost` of fio's (user) or its syscalls' (system) work on the job's
  // CPU, accounted to the job: `co_await Work(...)`, one event (none when
  // zero), without a coroutine frame of its own.
  models::Cpu::WorkAwaiter Work(Job& job, sim::Time cost, bool user);
  sim::Task Sleep(Job& job, uint64_t min_events);
  // Charges the job's system time from `since` to now.
  void AddSys(Job& job, sim::Time since);
  // Creates the jobs of every group (report headers filled).
  std::vector<std::vector<Job*>> BuildJobs(FioReport& report);
  void Account(Job& job, IoU& u, sim::Time now);
  void LogCompletion(Job& job, const IoU& u, uint64_t clat, uint64_t lat, sim::Time now);
  void StartSampling(Job& job);
  void TakeRateSamples(const std::vector<Job*>& group, sim::Time until);
  // get_io_u in two steps: the direction (rwmix), then, after any rate
  // wait, the block size and offset.
  int ChooseDdir(Job& job);
  void PrepareIo(Job& job, IoU& u, int ddir);
  // Pacing (fio 3.33's rate_ddir, usec_for_io, handle_thinktime,
  // check_min_rate): the wait before an I/O, which may change its
  // direction (`*ddir`); the schedule's step after one is issued; the think
  // after an iteration; the floor's check, false when the job must stop.
  sim::Task RateWait(Job& job, int* ddir);
  void RateIssued(Job& job, int ddir, uint64_t bytes);
  sim::Task Think(Job& job);
  bool CheckMinRate(Job& job);
  // io_u_quiesce: what is queued committed, everything in flight reaped.
  sim::Task Quiesce(Job& job);
  // usec_sleep: the job sleeps `d` (a timer's interrupt on its CPU wakes
  // it), cut short when its group stops.
  sim::Task SleepFor(Job& job, sim::Time d);
  sim::Task Timer(Job& job, sim::Time at, uint64_t gen);
  static sim::Task TimerIrq(Job& job, models::Cpu& cpu, uint64_t gen);
  // Wakes the job from a SleepFor now (its group stops).
  static void WakeSleeper(Job& job);
  // Runs the jobs of one group to their end; returns the simulated time
  // the job file asked for (ramp + runtime, or an estimate for size-bound
  // jobs) and fills `steady` and `ci_pct` (the IOPS's 95% half-width in
  // percent of the mean; none when too few batches were measured) and
  // `window_iops` (the mean of the batches' IOPS, which that interval is of).
  double RunGroup(const std::vector<Job*>& group, bool* steady, std::optional<double>* ci_pct,
                  double* window_iops);

  sim::Simulator* sim_;
  models::BlockStack* stack_;
  models::Scheduler* sched_;
  std::vector<models::Cpu*> cpus_;
  const JobFile* file_;
  EngineCosts costs_;
  WorkloadControl control_;
  std::vector<std::unique_ptr<Job>> jobs_;
  std::unique_ptr<Sink> sink_;
  WindowCounters window_;
  // I/Os open now, and their integral since the last ResetCounters().
  struct OpenArea {
    int64_t n = 0;
    sim::Time since;
    sim::Time from;  // the window's start
    double area_ns = 0;
    // An I/O open since `opened` (<= now), counted from now.
    void OpenedAt(sim::Time opened, sim::Time now) {
      Change(+1, now);
      area_ns += static_cast<double>((now - std::max(opened, from)).ps()) / 1000.0;
    }
    void Reset(sim::Time now) {
      Change(0, now);
      from = now;
      area_ns = 0;
    }
    void Change(int64_t delta, sim::Time now) {
      area_ns += static_cast<double>(n) * static_cast<double>((now - since).ps()) / 1000.0;
      since = now;
      n += delta;
    }
    double Until(sim::Time now) const {
      return area_ns + static_cast<double>(n) * static_cast<double>((now - since).ps()) / 1000.0;
    }
  };
  OpenArea open_lat_, open_clat_;
  std::vector<std::string> messages_;  // what fio would print on stderr (a rate floor not met)
  // The device as fio's disk stats see it (block/genhd.c part_stat): I/Os
  // in flight from all jobs, and over the measured windows the time with
  // at least one in flight (io_ticks), completions and their summed
  // latency (ticks) per direction.
  struct DiskCounters {
    int64_t in_flight = 0;
    sim::Time busy_since;
    sim::Time io_ticks;
    uint64_t ios[2] = {};
    sim::Time ticks[2];
    sim::Time measured;
    sim::Time start;  // of the current measured window
    bool measuring = false;
  } disk_;
  void DiskIssue(int n);
  void DiskComplete(const IoU& u);
  // Whether each job keeps fio's per-job report (ThreadStat: its latency
  // histograms are most of a job's memory), which only Run() shows. Start()
  // turns it off: the jobs' counters then go to `unreported_`, which
  // nothing reads, and their latencies are not recorded.
  bool job_reports_ = true;
  std::unique_ptr<ThreadStat> unreported_;

};

// fio's cpus_allowed list ("0-3,6", "1") as CPU indexes. Empty text: none.
absl::StatusOr<std::vector<int>> ParseCpuList(const std::string& text, int ncpus);

}  // namespace fio

#endif  // VIOSIM_MODELS_FIO_WORKLOAD_H_
