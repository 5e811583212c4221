// The state of fio's jobs that the workload's files share: a job (its
// options, pacing, progress, engine state and accounting), its I/O units,
// and the sink that hands completions to them. workload.cc runs the I/O
// loop and its engines; pacing.cc paces it (rate, thinktime);
// workload_run.cc builds the jobs, runs the groups and makes the report.
#ifndef VIOSIM_MODELS_FIO_WORKLOAD_INTERNAL_H_
#define VIOSIM_MODELS_FIO_WORKLOAD_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/block/block_stack.h"
#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "models/fio/job.h"
#include "models/fio/logs.h"
#include "models/fio/stats.h"
#include "models/fio/workload.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/stats.h"
#include "sim/task.h"
#include "sim/time.h"

namespace fio {
namespace internal {

// One fio I/O unit (struct io_u).
struct Job;

struct IoU {
  models::BlockRequest rq;
  Job* job = nullptr;
  int ddir = kRead;
  sim::Time start_time;  // prepared (get_io_u)
  sim::Time issue_time;  // submitted
  IoU* next = nullptr;   // completion list
  IoU* older = nullptr;  // in-flight list, both ways (Job::inflight_*)
  IoU* newer = nullptr;
};

struct Job {
  JobOptions opt;
  int number = 0;  // across all jobs and clones, from 0
  int group = 0;
  std::unique_ptr<models::Task> task;  // the fio process
  sim::Rng offset_rng{1}, mix_rng{1}, bs_rng{1};
  sim::Rng poisson_rng[kDdirs] = {sim::Rng{1}, sim::Rng{1}, sim::Rng{1}};

  // Pacing (fio's rate and thinktime state). The rate schedule counts from
  // rate_epoch (the job's start, then the end of the ramp): the next I/O of
  // a direction may not start before rate_next_us[d] us after it.
  sim::Time rate_epoch;
  uint64_t rate_bps[kDdirs] = {};
  uint64_t rate_issue_bytes[kDdirs] = {};
  uint64_t rate_next_us[kDdirs] = {};
  uint64_t last_usec[kDdirs] = {};  // poisson's cumulative schedule
  uint64_t think_issues = 0, think_blocks = 0;  // io_issues and io_blocks summed, for thinktime
  uint64_t last_think_blocks = 0;
  bool timer_fired = false;
  bool pacing_sleep = false;  // in SleepFor
  uint64_t sleep_gen = 0;     // SleepFor calls: a timer of an earlier one does nothing
  // rate_min / rate_iops_min: completions since the epoch, and the check's
  // baseline.
  uint64_t done_bytes[kDdirs] = {}, done_blocks[kDdirs] = {};
  bool min_rate_base = false;
  sim::Time settle_from;  // td->start: the job's start, then the ramp's end
  sim::Time min_rate_since;
  uint64_t min_rate_bytes[kDdirs] = {}, min_rate_blocks[kDdirs] = {};

  // Progress.
  uint64_t region = 0;        // bytes of the region the I/O goes to
  uint64_t issued_bytes = 0;  // for size-bound jobs
  uint64_t next_offset = 0;   // sequential patterns
  uint64_t seq_left = 0;      // random patterns with rw=...:N
  uint64_t io_issues[2] = {};
  int rwmix_ddir = kRead;
  uint64_t rwmix_issues = 0;
  bool stop = false;
  bool done = false;
  sim::Time start;          // the group's start
  sim::Time measure_start;  // end of ramp
  sim::Time loop_end;

  // Engine state.
  std::vector<IoU> ious;
  std::vector<IoU*> free_ious;
  std::vector<IoU*> pending;   // queued, not yet committed
  // Committed and not reaped, oldest first: a list through IoU::older and
  // newer, so that reaping one is O(1) whatever the depth. Only a polling
  // job (hipri) reads it, to poll its oldest request still in flight, so
  // only a polling job keeps it: unlinking a request reaped out of order
  // writes its neighbours, lines nothing else of the reap touches.
  IoU* inflight_oldest = nullptr;
  IoU* inflight_newest = nullptr;
  void AddInflight(IoU* u) {
    u->older = inflight_newest;
    u->newer = nullptr;
    (inflight_newest != nullptr ? inflight_newest->newer : inflight_oldest) = u;
    inflight_newest = u;
  }
  void RemoveInflight(IoU* u) {
    (u->older != nullptr ? u->older->newer : inflight_oldest) = u->newer;
    (u->newer != nullptr ? u->newer->older : inflight_newest) = u->older;
    u->older = u->newer = nullptr;
  }
  IoU* completed_head = nullptr;
  IoU* completed_tail = nullptr;
  uint64_t completed_count = 0;
  uint64_t cur_depth = 0;  // queued + in flight, as fio's cur_depth
  bool sleeping = false;
  std::unique_ptr<sim::Signal> finished;  // notified when the job ends
  std::vector<Job*> waits_for;            // wait_for=: jobs to finish first

  // Accounting, after ramp. `ts` is the job's own report, or, when no
  // report is made (Workload::Start), one the workload's jobs share and
  // nobody reads.
  std::unique_ptr<ThreadStat> own_ts;
  ThreadStat* ts = nullptr;
  sim::Time usr, sys;
  // The job's CPU time in the measured window, user and system: its spans
  // on the CPU, each counted for its part inside the window only.
  sim::BusyTime usr_busy, sys_busy;
  // bw and iops samples (stat.c __add_samples): bytes and I/Os since the
  // last sample, taken every bw_avg_time / iops_avg_time ms from the job's
  // epoch (its start, or the end of the ramp: fio's td->epoch), when the
  // next sample is due (Max: none). fio's default period is 500 ms; a bw or
  // iops log sets it to log_avg_msec, and with log_avg_msec=0 samples every
  // I/O instead (per_unit_log).
  uint64_t window_bytes[kDdirs] = {}, window_ios[kDdirs] = {};
  std::vector<double> bw_samples[kDdirs], iops_samples[kDdirs];
  bool launched = false;  // its process started
  bool sampling = false;  // epoch set: launched and past the ramp
  sim::Time epoch;
  int64_t bw_period_ms = 500, iops_period_ms = 500;  // 0: no windowed samples
  sim::Time bw_next = sim::Time::Max(), iops_next = sim::Time::Max();
  std::unique_ptr<JobLogs> logs;  // the log files it asks for, if any
  uint64_t ElapsedMs(sim::Time now) const { return static_cast<uint64_t>((now - epoch).ps() / 1000000000); }
  uint64_t ios = 0;  // completions accounted, all directions
  uint64_t completions = 0;  // all completions, ramp included
  // Little's law: I/Os prepared and not yet completed, and the time
  // integral of that count over the measured window.
  int64_t open_ios = 0;
  sim::Time open_since;
  double open_integral_s = 0;
  void ChangeOpen(int64_t delta, sim::Time now) {
    if (Accounting(now)) {
      open_integral_s += static_cast<double>(open_ios) * (now - std::max(open_since, measure_start)).ToSeconds();
    }
    open_since = now;
    open_ios += delta;
  }

  bool Accounting(sim::Time now) const { return now >= measure_start; }
  bool MoreToIssue() const {
    return !stop && (opt.time_based || opt.size == 0 || issued_bytes < opt.size * static_cast<uint64_t>(opt.loops));
  }
};

}  // namespace internal

// Hands completions to their job and wakes it if it sleeps in the engine.
// Runs in the completion path (interrupt or poll), so it only queues.
class Workload::Sink : public models::CompletionSink {
 public:
  explicit Sink(Workload* w) : workload_(w) {}
  sim::Task Complete(models::BlockRequest& rq, models::Cpu& cpu) override;

 private:
  static sim::Task WakeUp(Job& job, models::Cpu& cpu) { co_await cpu.scheduler()->TryToWakeUp(*job.task, cpu); }

  Workload* workload_;
};

}  // namespace fio

#endif  // VIOSIM_MODELS_FIO_WORKLOAD_INTERNAL_H_
