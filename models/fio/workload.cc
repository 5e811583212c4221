#include "models/fio/workload.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "models/fio/logs.h"
#include "sim/rng.h"
#include "sim/stats.h"

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

namespace {

using internal::IoU;
using internal::Job;

int DepthBucket(uint64_t depth) {  // 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64
  if (depth >= 64) return 6;
  if (depth >= 32) return 5;
  if (depth >= 16) return 4;
  if (depth >= 8) return 3;
  if (depth >= 4) return 2;
  if (depth >= 2) return 1;
  return 0;
}

int BatchBucket(uint64_t n) {  // 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64
  if (n == 0) return 0;
  if (n <= 4) return 1;
  if (n <= 8) return 2;
  if (n <= 16) return 3;
  if (n <= 32) return 4;
  if (n <= 64) return 5;
  return 6;
}

// fio's clat distribution buckets (stat.c io_u_lat_n/u/m): counts below 2,
// 4, 10, 20, 50, 100, 250, 500, 750, 1000 of the unit; msec adds 2000 and
// >= 2000.
void MarkLatency(ThreadStat& ts, uint64_t ns) {
  static constexpr uint64_t kBounds[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
  auto mark = [](auto& buckets, uint64_t v) {
    for (size_t i = 0; i < 10; ++i) {
      if (v < kBounds[i]) {
        ++buckets[i];
        return true;
      }
    }
    return false;
  };
  if (ns < 1000) {
    mark(ts.lat_ns, ns);
  } else if (ns < 1000000) {
    mark(ts.lat_us, ns / 1000);
  } else {
    const uint64_t ms = ns / 1000000;
    if (!mark(ts.lat_ms, ms)) ++ts.lat_ms[ms < 2000 ? 10 : 11];
  }
}

// The next block size in `ddir` (io_u.c get_next_buflen): a uniform draw
// between the minimum and maximum, aligned down to a multiple of the
// minimum when that is a power of two.
uint64_t NextBlockSize(const JobOptions& o, int ddir, sim::Rng& rng) {
  const uint64_t lo = o.bs_min[ddir], hi = o.bs_max[ddir];
  if (lo == hi) return lo;
  if (const std::vector<JobOptions::BsSplit>& split = o.bssplit[ddir]; !split.empty()) {
    // bssplit: the first entry, in ascending order of share, whose
    // cumulative share reaches the draw; past them all, the last one with
    // a share. Aligned down to a multiple of the smallest size.
    const double r = 100 * rng.Uniform01();
    uint64_t len = 0;
    int cum = 0;
    for (const JobOptions::BsSplit& e : split) {
      if (e.perc == 0) continue;
      len = e.bs;
      cum += e.perc;
      if (r < cum) break;
    }
    if ((lo & (lo - 1)) == 0) {
      len &= ~(lo - 1);
    } else {
      len -= len % lo;
    }
    return std::clamp(len, lo, hi);
  }
  uint64_t len = lo + static_cast<uint64_t>(static_cast<double>(hi) * rng.Uniform01());
  if ((lo & (lo - 1)) == 0) {
    len &= ~(lo - 1);
  } else {
    len -= len % lo;  // io_u.c: a multiple of the smallest size
  }
  return std::clamp(len, lo, hi);
}

uint64_t RoundUpMs(sim::Time t) { return static_cast<uint64_t>((t.ps() / 1000000 + 999) / 1000); }

SampleStat Summarize(const std::vector<double>& v) {
  SampleStat s;
  if (v.empty()) return s;
  double sum = 0, lo = v[0], hi = v[0];
  for (double x : v) {
    sum += x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  s.samples = v.size();
  s.mean = sum / v.size();
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(ss / (v.size() - 1)) : 0;
  s.min = static_cast<uint64_t>(lo);
  s.max = static_cast<uint64_t>(hi);
  return s;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseCpuList(const std::string& text, int ncpus) {
  std::vector<int> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> range = absl::StrSplit(part, '-');
    int lo = 0, hi = 0;
    if (range.size() > 2 || !absl::SimpleAtoi(range[0], &lo) ||
        !absl::SimpleAtoi(range.size() == 2 ? range[1] : range[0], &hi) || lo < 0 || hi < lo) {
      return absl::InvalidArgumentError(absl::StrCat("cpus_allowed '", text, "': not a CPU list"));
    }
    if (hi >= ncpus) {
      return absl::InvalidArgumentError(
          absl::StrCat("cpus_allowed '", text, "': CPU ", hi, " does not exist (the stack has ", ncpus, ")"));
    }
    for (int c = lo; c <= hi; ++c) out.push_back(c);
  }
  return out;
}

// Hands completions to their job and wakes it if it sleeps in the engine.
// Runs in the completion path (interrupt or poll), so it only queues.
class Workload::Sink : public models::CompletionSink {
 public:
  explicit Sink(Workload* w) : workload_(w) {}
  sim::Task Complete(models::BlockRequest& rq, models::Cpu& cpu) override {
    auto* u = static_cast<IoU*>(rq.issuer);
    Job& job = *u->job;
    rq.done = true;
    workload_->DiskComplete(*u);
    u->next = nullptr;
    if (job.completed_tail != nullptr) {
      job.completed_tail->next = u;
    } else {
      job.completed_head = u;
    }
    job.completed_tail = u;
    ++job.completed_count;
    ++job.completions;
    // aio_complete / the block layer's wake-up of a task sleeping for its
    // I/O: every completion wakes the sleeper, which rechecks. Nothing to
    // await otherwise (an empty Task: no frame, no event).
    return job.sleeping ? WakeUp(job, cpu) : sim::Task();
  }

 private:
  static sim::Task WakeUp(Job& job, models::Cpu& cpu) { co_await cpu.scheduler()->TryToWakeUp(*job.task, cpu); }

  Workload* workload_;
};

void Workload::DiskIssue(int n) {
  if (disk_.in_flight == 0) disk_.busy_since = sim_->Now();
  disk_.in_flight += n;
}

void Workload::DiskComplete(const IoU& u) {
  const sim::Time now = sim_->Now();
  if (--disk_.in_flight == 0 && disk_.measuring) disk_.io_ticks += now - std::max(disk_.busy_since, disk_.start);
  if (disk_.measuring && u.issue_time >= disk_.start && u.ddir < 2) {
    ++disk_.ios[u.ddir];
    disk_.ticks[u.ddir] += now - u.issue_time;
  }
}

Workload::Workload(sim::Simulator& sim, models::BlockStack& stack, models::Scheduler& sched,
                   std::vector<models::Cpu*> cpus, const JobFile& jobs, const EngineCosts& costs,
                   const WorkloadControl& control)
    : sim_(&sim),
      stack_(&stack),
      sched_(&sched),
      cpus_(std::move(cpus)),
      file_(&jobs),
      costs_(costs),
      control_(control),
      sink_(std::make_unique<Sink>(this)) {}

Workload::~Workload() = default;

// The engine's wait for `min_events` completions (io_getevents, or the sync
// engine's sleep in the block layer): the kernel's sleep loop; the
// completion path wakes the job at each completion (Sink::Complete), and it
// rechecks.
sim::Task Workload::Sleep(Job& j, uint64_t min_events) {
  models::Task& t = *j.task;
  j.sleeping = true;
  for (;;) {
    t.SetState(models::Task::State::kInterruptible);
    if (j.completed_count >= min_events) break;
    co_await t.Schedule();
  }
  t.SetState(models::Task::State::kRunning);
  j.sleeping = false;
}

void Workload::AddSys(Job& j, sim::Time since) {
  const sim::Time now = sim_->Now();
  if (j.Accounting(now)) j.sys += now - since;
  j.sys_busy.Book(since, now);
}

models::Cpu::WorkAwaiter Workload::Work(Job& job, sim::Time cost, bool user) {
  if (cost != sim::Time::Zero()) {
    if (job.Accounting(sim_->Now())) (user ? job.usr : job.sys) += cost;
    (user ? job.usr_busy : job.sys_busy).Book(sim_->Now(), sim_->Now() + cost);
  }
  return user ? job.task->RunUser(cost) : job.task->Run(cost);  // zero: no wait, no event
}

// get_io_u's direction (get_rw_ddir without the rate wait).
int Workload::ChooseDdir(Job& j) {
  const JobOptions& o = j.opt;
  int ddir = IsWriteOnly(o.rw) ? kWrite : kRead;
  if (IsMixed(o.rw)) {
    // io_u.c get_rw_ddir: when the current direction has issued its share,
    // draw v in [1, 100] and pick read if v <= rwmixread; on a change,
    // set_rwmix_bytes sets the next threshold from the old direction's
    // issues and the new direction's share.
    if (j.io_issues[j.rwmix_ddir] >= j.rwmix_issues) {
      const uint64_t v = 1 + j.mix_rng.Below(100);
      const int next = v <= static_cast<uint64_t>(o.rwmixread) ? kRead : kWrite;
      if (next != j.rwmix_ddir) {
        const int share = next == kRead ? o.rwmixread : 100 - o.rwmixread;
        j.rwmix_issues = j.io_issues[j.rwmix_ddir] * share / 100;
      }
      j.rwmix_ddir = next;
    }
    ddir = j.rwmix_ddir;
  }
  return ddir;
}

// The rest of get_io_u: block size and offset in `ddir`.
void Workload::PrepareIo(Job& j, IoU& u, int ddir) {
  const JobOptions& o = j.opt;
  const uint64_t bs = NextBlockSize(o, ddir, j.bs_rng);
  uint64_t offset;
  if (IsRandom(o.rw)) {
    if (j.seq_left > 0) {
      --j.seq_left;
      offset = j.next_offset;
    } else {
      const uint64_t blocks = std::max<uint64_t>(1, j.region / bs);
      offset = j.offset_rng.Below(blocks) * bs;
      j.seq_left = o.rw_seq_nr > 1 ? o.rw_seq_nr - 1 : 0;
    }
    j.next_offset = offset + bs;
  } else {
    if (j.next_offset + bs > j.region) j.next_offset = 0;
    offset = j.next_offset;
    const int64_t next = static_cast<int64_t>(offset + bs) + o.rw_seq_add;
    j.next_offset = next < 0 ? j.region - bs : static_cast<uint64_t>(next);
  }
  ++j.io_issues[ddir];
  ++j.think_issues;
  j.issued_bytes += bs;
  u.ddir = ddir;
  u.rq.write = ddir == kWrite;
  u.rq.offset = offset;
  u.rq.bytes = static_cast<uint32_t>(bs);
  u.rq.polled = o.hipri;
  u.rq.done = false;
  u.start_time = sim_->Now();
  j.ChangeOpen(+1, u.start_time);
  open_lat_.Change(+1, u.start_time);
}

// io_completed: the I/O's latencies and counters, if the ramp is over.
void Workload::Account(Job& j, IoU& u, sim::Time now) {
  j.ChangeOpen(-1, now);
  open_lat_.Change(-1, now);
  open_clat_.Change(-1, now);
  ++j.think_blocks;
  j.done_bytes[u.ddir] += u.rq.bytes;
  ++j.done_blocks[u.ddir];
  if (!j.Accounting(now)) return;
  ThreadStat& ts = *j.ts;
  DirStats& d = ts.ddir[u.ddir];
  const uint64_t clat = static_cast<uint64_t>((now - u.issue_time).ps() / 1000);
  const uint64_t lat = static_cast<uint64_t>((now - u.start_time).ps() / 1000);
  if (job_reports_) {
    d.clat.Record(clat);
    d.lat.Record(lat);
    MarkLatency(ts, clat);
  }
  d.io_bytes += u.rq.bytes;
  ++d.total_ios;
  j.window_bytes[u.ddir] += u.rq.bytes;
  ++j.window_ios[u.ddir];
  ++j.ios;
  ++window_.ios[u.ddir];
  window_.bytes += u.rq.bytes;
  window_.clat_ns += static_cast<double>(clat);
  window_.lat_ns += static_cast<double>(lat);
  window_.clat.Record(clat);
  if (j.logs != nullptr) LogCompletion(j, u, clat, lat, now);
}

// account_io_completion's log samples (stat.c add_lat_sample,
// add_clat_sample, add_bw_sample, add_iops_sample). A per-I/O bw log's value
// is the I/O's bytes over its completion latency (bytes * 10^6 / clat_ns),
// and a per-I/O iops log's is 1; both also become the job's bw and iops
// samples, as fio then takes no windowed ones.
void Workload::LogCompletion(Job& j, const IoU& u, uint64_t clat, uint64_t lat, sim::Time now) {
  JobLogs& l = *j.logs;
  const uint64_t ms = j.ElapsedMs(now);
  const uint64_t bytes = u.rq.bytes;
  if (l.lat != nullptr) l.lat->Add(ms, lat, u.ddir, bytes, u.rq.offset, 0);
  if (l.clat != nullptr) l.clat->Add(ms, clat, u.ddir, bytes, u.rq.offset, 0);
  if (l.hist != nullptr) l.hist->Add(ms, u.ddir, bytes, j.ts->ddir[u.ddir].clat.buckets());
  if (l.bw != nullptr && l.bw->per_unit()) {
    const uint64_t rate = clat > 0 ? bytes * 1000000 / clat : 0;
    j.bw_samples[u.ddir].push_back(static_cast<double>(rate));
    l.bw->Add(ms, rate, u.ddir, bytes, u.rq.offset, 0);
  }
  if (l.iops != nullptr && l.iops->per_unit()) {
    j.iops_samples[u.ddir].push_back(1);
    l.iops->Add(ms, 1, u.ddir, bytes, u.rq.offset, 0);
  }
}

// The job's epoch (fio's set_epoch_time): when its process starts, or at
// the end of the ramp (reset_all_stats). Its first bw and iops samples are
// due one period later.
void Workload::StartSampling(Job& j) {
  if (j.sampling || !j.launched || j.measure_start == sim::Time::Max()) return;
  j.sampling = true;
  j.epoch = std::max(sim_->Now(), j.measure_start);
  if (j.bw_period_ms > 0) j.bw_next = j.epoch + sim::Time::Millis(j.bw_period_ms);
  if (j.iops_period_ms > 0) j.iops_next = j.epoch + sim::Time::Millis(j.iops_period_ms);
}

// The helper thread's calc_log_samples up to `until`: each running job's bw
// (KiB/s) and iops samples at their exact due times, one per direction that
// moved data in the period (__add_samples), also entries of a windowed bw
// or iops log.
void Workload::TakeRateSamples(const std::vector<Job*>& group, sim::Time until) {
  for (;;) {
    sim::Time next = sim::Time::Max();
    for (Job* j : group) {
      if (j->sampling && !j->done) next = std::min({next, j->bw_next, j->iops_next});
    }
    if (next > until) return;
    sim_->RunUntil(next);
    if (sim_->stalled()) return;
    for (Job* j : group) {
      if (!j->sampling || j->done) continue;
      const uint64_t ms = j->ElapsedMs(next);
      if (j->bw_next == next) {
        for (int d = 0; d < kDdirs; ++d) {
          if (j->window_bytes[d] == 0) continue;
          const uint64_t rate = j->window_bytes[d] * 1000 / static_cast<uint64_t>(j->bw_period_ms) / 1024;
          j->bw_samples[d].push_back(static_cast<double>(rate));
          const uint64_t bs = j->opt.bs_min[d] == j->opt.bs_max[d] ? j->opt.bs_min[d] : 0;
          if (j->logs != nullptr && j->logs->bw != nullptr) j->logs->bw->Add(ms, rate, d, bs, 0, 0);
          j->window_bytes[d] = 0;
        }
        j->bw_next = j->bw_next + sim::Time::Millis(j->bw_period_ms);
      }
      if (j->iops_next == next) {
        for (int d = 0; d < kDdirs; ++d) {
          if (j->window_ios[d] == 0) continue;
          const uint64_t rate = j->window_ios[d] * 1000 / static_cast<uint64_t>(j->iops_period_ms);
          j->iops_samples[d].push_back(static_cast<double>(rate));
          const uint64_t bs = j->opt.bs_min[d] == j->opt.bs_max[d] ? j->opt.bs_min[d] : 0;
          if (j->logs != nullptr && j->logs->iops != nullptr) j->logs->iops->Add(ms, rate, d, bs, 0, 0);
          j->window_ios[d] = 0;
        }
        j->iops_next = j->iops_next + sim::Time::Millis(j->iops_period_ms);
      }
    }
  }
}

sim::Task Workload::RunSyncEngine(Job& j) {
  IoU& u = j.ious[0];
  const bool rated = j.opt.Rated();
  while (j.MoreToIssue()) {
    co_await Work(j, costs_.fio_per_io, true);
    int ddir = ChooseDdir(j);
    if (rated) {
      co_await RateWait(j, &ddir);
      if (!j.MoreToIssue()) break;
    }
    PrepareIo(j, u, ddir);
    if (rated) RateIssued(j, ddir, u.rq.bytes);
    const bool acct = j.Accounting(sim_->Now());
    if (acct) {
      ++j.ts->io_depth[0];
      ++j.ts->io_submit[1];
      ++j.ts->total_submit;
    }
    // pread/pwrite/preadv2: the syscall, then the block layer below it.
    co_await Work(j, costs_.syscall, false);
    u.issue_time = u.start_time;  // synchronous engines record no slat
    open_clat_.OpenedAt(u.issue_time, sim_->Now());
    DiskIssue(1);
    sim::Time t0 = sim_->Now();
    co_await stack_->Submit(*j.task->cpu(), u.rq, /*last=*/true);
    if (u.rq.polled) {
      co_await stack_->Poll(*j.task->cpu(), u.rq);  // the CPU spins until it completes
      AddSys(j, t0);
    } else {
      AddSys(j, t0);
      co_await Sleep(j, 1);
    }
    j.completed_head = j.completed_tail = nullptr;
    j.completed_count = 0;
    Account(j, u, sim_->Now());
    if (j.Accounting(sim_->Now())) {
      ++j.ts->io_complete[1];
      ++j.ts->total_complete;
    }
    co_await Think(j);
    if (rated && !CheckMinRate(j)) break;
  }
}

// td_io_commit: io_submit (or io_uring_enter) for every queued I/O.
sim::Task Workload::Commit(Job& j) {
  if (j.pending.empty()) co_return;
  const sim::Time t0 = sim_->Now();
  co_await Work(j, costs_.syscall, false);
  const size_t n = j.pending.size();
  DiskIssue(static_cast<int>(n));
  for (size_t i = 0; i < n; ++i) {
    IoU* u = j.pending[i];
    co_await Work(j, costs_.aio_per_iocb, false);
    const sim::Time t1 = sim_->Now();
    co_await stack_->Submit(*j.task->cpu(), u->rq, /*last=*/i + 1 == n);
    j.sys_busy.Book(t1, sim_->Now());
  }
  const sim::Time now = sim_->Now();
  const bool acct = j.Accounting(now);
  for (IoU* u : j.pending) {
    u->issue_time = now;  // fio_libaio_queued: issue time after io_submit returns
    open_clat_.Change(+1, now);
    if (acct && job_reports_ && u->start_time >= j.measure_start) {
      const uint64_t slat = static_cast<uint64_t>((now - u->start_time).ps() / 1000);
      j.ts->ddir[u->ddir].slat.Record(slat);
      if (j.logs != nullptr && j.logs->slat != nullptr) {
        j.logs->slat->Add(j.ElapsedMs(now), slat, u->ddir, u->rq.bytes, u->rq.offset, 0);
      }
    }
    if (j.opt.hipri) j.AddInflight(u);
  }
  if (acct) {
    ++j.ts->io_submit[BatchBucket(n)];
    j.ts->total_submit += 1;
    j.sys += now - t0 - (costs_.syscall + costs_.aio_per_iocb * static_cast<int64_t>(n));
  }
  j.pending.clear();
}

// io_u_queued_complete: getevents(min, max), sleeping (or polling, for
// io_uring IOPOLL) until `min` completions are there.
sim::Task Workload::Reap(Job& j, uint64_t min_events, uint64_t max_events) {
  co_await Work(j, costs_.syscall, false);
  while (j.completed_count < min_events) {
    IoU* polled = nullptr;
    if (j.opt.hipri) {
      for (IoU* u = j.inflight_oldest; u != nullptr; u = u->newer) {
        if (!u->rq.done) {
          polled = u;
          break;
        }
      }
    }
    if (polled != nullptr) {
      const sim::Time t0 = sim_->Now();
      co_await stack_->Poll(*j.task->cpu(), polled->rq);
      AddSys(j, t0);
      continue;
    }
    co_await Sleep(j, min_events);
  }
  uint64_t n = 0;
  while (j.completed_head != nullptr && n < max_events) {
    IoU* u = j.completed_head;
    j.completed_head = u->next;
    if (j.completed_head == nullptr) j.completed_tail = nullptr;
    --j.completed_count;
    co_await Work(j, costs_.reap_per_event, false);
    if (j.opt.hipri) j.RemoveInflight(u);
    Account(j, *u, sim_->Now());
    j.free_ious.push_back(u);
    --j.cur_depth;
    ++n;
  }
  if (j.Accounting(sim_->Now())) {
    ++j.ts->io_complete[BatchBucket(n)];
    ++j.ts->total_complete;
  }
}

sim::Task Workload::RunAsyncEngine(Job& j) {
  const JobOptions& o = j.opt;
  const uint64_t depth = static_cast<uint64_t>(o.iodepth);
  const uint64_t batch =
      o.iodepth_batch_submit <= 0 || o.iodepth_batch_submit > o.iodepth ? depth : o.iodepth_batch_submit;
  const uint64_t cmin = static_cast<uint64_t>(o.iodepth_batch_complete_min);
  const uint64_t cmax = std::max<uint64_t>(cmin, static_cast<uint64_t>(o.iodepth_batch_complete_max));
  const bool polling_mode = cmin == 0 && o.iodepth_batch_complete_max == 0;
  const bool rated = o.Rated();
  for (;;) {
    bool issued = false;
    if (j.MoreToIssue() && j.cur_depth < depth) {
      co_await Work(j, costs_.fio_per_io, true);
      int ddir = ChooseDdir(j);
      if (rated) {
        co_await RateWait(j, &ddir);
        if (!j.MoreToIssue()) continue;
      }
      IoU* u = j.free_ious.back();
      j.free_ious.pop_back();
      PrepareIo(j, *u, ddir);
      if (rated) RateIssued(j, ddir, u->rq.bytes);
      issued = true;
      j.pending.push_back(u);
      ++j.cur_depth;
      if (j.Accounting(sim_->Now())) ++j.ts->io_depth[DepthBucket(j.cur_depth)];
      if (j.pending.size() >= batch || !j.MoreToIssue()) co_await Commit(j);
    } else if (!j.MoreToIssue()) {
      // Out of work (or stopped): commit what is queued and reap the rest.
      co_await Commit(j);
      if (j.cur_depth == 0) break;
      co_await Reap(j, j.cur_depth, j.cur_depth);
      continue;
    }
    // backend.c: reap when the queue is full, or after every submit in
    // polling mode; at least one event, at most complete_max.
    const bool full = j.cur_depth >= depth;
    if (full || polling_mode) {
      co_await Commit(j);
      uint64_t min_events = std::min(cmin, j.cur_depth);
      if ((full && min_events == 0) || cmin == 0) min_events = 1;
      uint64_t max_events = std::min(std::max(cmax, min_events), j.cur_depth);
      if (j.cur_depth > 0) co_await Reap(j, min_events, max_events);
    }
    if (issued) {
      co_await Think(j);
      if (rated && !CheckMinRate(j)) j.stop = true;
    }
  }
}

// rate_ddir: the direction's next slot is due, or (a mixed job) the other
// direction's is; else fio drains the queue and sleeps until the earlier
// of the two (the sleep's length reckoned before the drain, as fio does).
sim::Task Workload::RateWait(Job& j, int* ddir) {
  const JobOptions& o = j.opt;
  const uint64_t now_us = static_cast<uint64_t>((sim_->Now() - j.rate_epoch).ps() / 1000000);
  int d = *ddir;
  if (j.rate_next_us[d] <= now_us) co_return;
  if (IsMixed(o.rw)) {
    const int other = d == kRead ? kWrite : kRead;
    const int share = other == kRead ? o.rwmixread : 100 - o.rwmixread;
    if (share > 0) {
      if (j.rate_next_us[other] <= now_us) {
        *ddir = j.rwmix_ddir = other;
        co_return;
      }
      if (j.rate_next_us[other] < j.rate_next_us[d]) d = other;
      *ddir = j.rwmix_ddir = d;
    }
  }
  const sim::Time wait = sim::Time::Micros(static_cast<int64_t>(j.rate_next_us[d] - now_us));
  co_await Quiesce(j);
  co_await SleepFor(j, wait);
}

// usec_for_io, after an I/O of `ddir` is issued: linear, the bytes issued
// so far at the direction's byte rate; poisson, one more exponential gap of
// mean 1/IOPS (IOPS the byte rate over the smallest block size), whatever
// the I/O's size.
void Workload::RateIssued(Job& j, int ddir, uint64_t bytes_issued) {
  const uint64_t bps = j.rate_bps[ddir];
  j.rate_issue_bytes[ddir] += bytes_issued;
  if (bps == 0) return;  // an unrated direction is never held back
  if (j.opt.rate_poisson) {
    const uint64_t iops = bps / std::max<uint64_t>(1, j.opt.bs_min[ddir]);
    const double mean_us = iops > 0 ? static_cast<double>(1000000 / iops) : 0;
    const double u = 1 - j.poisson_rng[ddir].Uniform01();  // in (0, 1]
    j.last_usec[ddir] += static_cast<uint64_t>(mean_us * -std::log(u));
    j.rate_next_us[ddir] = j.last_usec[ddir];
    return;
  }
  const uint64_t bytes = j.rate_issue_bytes[ddir];
  j.rate_next_us[ddir] = bytes / bps * 1000000 + bytes % bps * 1000000 / bps;
}

// handle_thinktime: after every thinktime_blocks I/Os (completed, or
// issued), drain the queue, spin thinktime_spin, sleep the rest.
sim::Task Workload::Think(Job& j) {
  const JobOptions& o = j.opt;
  if (o.thinktime_us == 0) co_return;
  const uint64_t b = o.thinktime_blocks_issue ? j.think_issues : j.think_blocks;
  if (b < j.last_think_blocks + static_cast<uint64_t>(o.thinktime_blocks)) co_return;
  co_await Quiesce(j);
  if (o.thinktime_spin_us > 0) co_await Work(j, sim::Time::Micros(o.thinktime_spin_us), true);
  co_await SleepFor(j, sim::Time::Micros(o.thinktime_us - o.thinktime_spin_us));
  j.last_think_blocks = b;  // read before the drain, as fio does
}

// check_min_rate: after the ramp, not before 2 s from the job's start; the
// first call sets a baseline, then every rate_cycle ms each floored
// direction that completed anything must have kept its floor since it.
bool Workload::CheckMinRate(Job& j) {
  const JobOptions& o = j.opt;
  const sim::Time now = sim_->Now();
  if (!j.Accounting(now) || now - j.settle_from < sim::Time::Millis(2000)) return true;
  if (!j.min_rate_base) {
    j.min_rate_base = true;
    j.min_rate_since = now;
    std::copy(std::begin(j.done_bytes), std::end(j.done_bytes), j.min_rate_bytes);
    std::copy(std::begin(j.done_blocks), std::end(j.done_blocks), j.min_rate_blocks);
    return true;
  }
  const uint64_t spent_ms = static_cast<uint64_t>((now - j.min_rate_since).ps() / 1000000000);
  if (spent_ms < static_cast<uint64_t>(o.rate_cycle_ms) || spent_ms == 0) return true;
  for (int d = 0; d < kDdirs; ++d) {
    if (j.done_bytes[d] == 0) continue;
    std::string failed;
    if (o.rate_min[d] != 0) {
      const uint64_t rate = (j.done_bytes[d] - j.min_rate_bytes[d]) * 1000 / spent_ms;
      if (rate < o.rate_min[d]) failed = absl::StrCat(o.name, ": rate_min=", o.rate_min[d], "B/s not met, got ", rate, "B/s");
    } else if (o.rate_iops_min[d] != 0) {
      const uint64_t iops = (j.done_blocks[d] - j.min_rate_blocks[d]) * 1000 / spent_ms;
      if (iops < o.rate_iops_min[d]) {
        failed = absl::StrCat(o.name, ": rate_iops_min=", o.rate_iops_min[d], " not met, got ", iops, " IOPS");
      }
    }
    if (!failed.empty()) {
      messages_.push_back(failed);
      j.ts->error = 5;  // EIO
      j.ts->verror = "file:backend.c:1131, func=check_min_rate, error=Input/output error";
      return false;
    }
  }
  j.min_rate_since = now;
  std::copy(std::begin(j.done_bytes), std::end(j.done_bytes), j.min_rate_bytes);
  std::copy(std::begin(j.done_blocks), std::end(j.done_blocks), j.min_rate_blocks);
  return true;
}

sim::Task Workload::Quiesce(Job& j) {
  if (IsSync(j.opt.ioengine)) co_return;  // nothing stays in flight
  co_await Commit(j);
  if (j.cur_depth > 0) co_await Reap(j, j.cur_depth, j.cur_depth);
}

sim::Task Workload::SleepFor(Job& j, sim::Time d) {
  if (d <= sim::Time::Zero() || j.stop) co_return;
  models::Task& t = *j.task;
  const uint64_t gen = ++j.sleep_gen;
  j.timer_fired = false;
  j.pacing_sleep = true;
  sim_->Spawn(Timer(j, sim_->Now() + d, gen));
  for (;;) {
    t.SetState(models::Task::State::kInterruptible);
    if (j.timer_fired || j.stop) break;
    co_await t.Schedule();
  }
  t.SetState(models::Task::State::kRunning);
  j.pacing_sleep = false;
}

// The sleep's hrtimer: its interrupt on the CPU the job sleeps on wakes it.
sim::Task Workload::Timer(Job& j, sim::Time at, uint64_t gen) {
  co_await sim_->Delay(at - sim_->Now());
  if (j.sleep_gen != gen || !j.pacing_sleep) co_return;
  models::Cpu& cpu = *j.task->cpu();
  cpu.RaiseIrq(TimerIrq(j, cpu, gen));
}

void Workload::WakeSleeper(Job& j) {
  if (!j.pacing_sleep) return;
  models::Cpu& cpu = *j.task->cpu();
  cpu.RaiseIrq(TimerIrq(j, cpu, j.sleep_gen));
}

sim::Task Workload::TimerIrq(Job& j, models::Cpu& cpu, uint64_t gen) {
  if (j.sleep_gen != gen || !j.pacing_sleep) co_return;
  j.timer_fired = true;
  co_await cpu.scheduler()->TryToWakeUp(*j.task, cpu);
}

// fio's fork of a job: wait_for= holds it back until the named job (every
// clone of it) has finished; then its process starts on the scheduler.
sim::Task Workload::LaunchJob(Job& job) {
  for (Job* other : job.waits_for) {
    while (!other->done) co_await other->finished->Wait();
  }
  sched_->Start(*job.task, RunJob(job));
}

sim::Task Workload::RunJob(Job& job) {
  job.launched = true;
  job.rate_epoch = job.settle_from = sim_->Now();
  StartSampling(job);
  if (IsSync(job.opt.ioengine)) {
    co_await RunSyncEngine(job);
  } else {
    co_await RunAsyncEngine(job);
  }
  job.loop_end = sim_->Now();
  if (job.logs != nullptr && job.sampling) job.logs->Finalize(job.ElapsedMs(job.loop_end));
  job.done = true;
  job.finished->NotifyAll();
}

double Workload::RunGroup(const std::vector<Job*>& group, bool* steady, std::optional<double>* ci_pct,
                          double* window_iops) {
  const sim::Time start = sim_->Now();
  sim::Time ramp = sim::Time::Zero(), runtime = sim::Time::Zero();
  for (Job* j : group) {
    ramp = std::max(ramp, sim::Time::Micros(j->opt.ramp_time_us));
    if (j->opt.runtime_us > 0) runtime = std::max(runtime, sim::Time::Micros(j->opt.runtime_us));
  }
  for (Job* j : group) {
    j->start = start;
    j->measure_start = sim::Time::Max();  // until the ramp ends
    sim_->Spawn(LaunchJob(*j));
  }
  auto all_done = [&group] {
    for (Job* j : group) {
      if (!j->done) return false;
    }
    return true;
  };
  // The ramp: I/O runs, nothing is accounted. With a steady-state target it
  // ends early once the group's completion rate has settled: the mean of
  // the last `k` batches within the target of the `k` before them. The
  // ramp exists to reach that state; simulating the rest of it would only
  // repeat it.
  const int k = 5;
  std::vector<double> ramp_rates;
  uint64_t ramp_last = 0;
  sim::Time ramp_end = start + ramp;
  for (sim::Time t = start; t < ramp_end && !all_done();) {
    t = std::min(t + control_.batch, ramp_end);
    sim_->RunUntil(t);
    if (sim_->stalled()) break;
    uint64_t done = 0;
    for (Job* j : group) done += j->completions;
    ramp_rates.push_back(static_cast<double>(done - ramp_last));
    ramp_last = done;
    const size_t n = ramp_rates.size();
    if (control_.target_rel_ci > 0 && n >= static_cast<size_t>(2 * k)) {
      double recent = 0, before = 0;
      for (size_t i = n - k; i < n; ++i) recent += ramp_rates[i];
      for (size_t i = n - 2 * k; i < n - k; ++i) before += ramp_rates[i];
      if (recent > 0 && std::fabs(recent - before) <= control_.target_rel_ci * recent) ramp_end = t;
    }
  }
  ramp_end = std::min(ramp_end, sim_->Now());
  for (Job* j : group) {
    j->measure_start = ramp_end;
    StartSampling(*j);
    // reset_all_stats at the ramp's end: the rate schedule restarts, and
    // the issue and completion counts thinktime compares are zeroed, though
    // not the count of its last think (fio 3.33 keeps that one).
    j->rate_epoch = ramp_end;
    for (int d = 0; d < kDdirs; ++d) j->rate_issue_bytes[d] = j->rate_next_us[d] = j->last_usec[d] = 0;
    j->think_issues = j->think_blocks = 0;
    j->min_rate_base = false;
    if (ramp_end > j->start) j->settle_from = ramp_end;  // reset_all_stats moves td->start
  }
  // Step through batches; stop at runtime, when every job is done, or when
  // the group's IOPS is steady within the target.
  const sim::Time measure_start = ramp_end;
  const sim::Time hard_end = measure_start + (runtime > sim::Time::Zero() ? runtime : sim::Time::Max() / 4);
  // Without a steady-state target the job runs its full length; only an
  // open-ended job (no runtime, no size) is cut at max_group_time.
  bool open_ended = runtime == sim::Time::Zero();
  for (Job* j : group) open_ended = open_ended && j->opt.size == 0;
  const bool full = control_.target_rel_ci == 0 && !open_ended;
  const sim::Time cap = full ? sim::Time::Max() : measure_start + control_.max_group_time;
  sim::BatchMeans iops_batches;
  uint64_t last_ios = 0;
  *steady = false;
  ci_pct->reset();
  bool stopping = false;
  for (Job* j : group) j->task->ResetStats();
  disk_.measuring = true;
  disk_.start = sim_->Now();
  for (sim::Time t = measure_start; !all_done();) {
    if (stopping) {
      // Draining: a batch in which no event is due only moves the clock, so
      // go straight to the batch the next event falls in. With no event
      // left the jobs can never finish.
      const sim::Time next = sim_->NextEventTime();
      if (next == sim::Time::Max()) break;
      const int64_t ahead = (next - t).ps() / control_.batch.ps();
      if (ahead > 1) t = t + control_.batch * (ahead - 1);
    }
    t = t + control_.batch;
    if (!stopping) TakeRateSamples(group, std::min(t, hard_end));
    sim_->RunUntil(stopping ? t : std::min(t, hard_end));
    if (sim_->stalled()) break;
    if (stopping || all_done()) continue;
    const sim::Time now = sim_->Now();
    uint64_t ios = 0;
    for (Job* j : group) ios += j->ios;
    iops_batches.Add(static_cast<double>(ios - last_ios) / control_.batch.ToSeconds());
    last_ios = ios;
    const bool enough = iops_batches.count() >= control_.min_batches;
    const double mean = iops_batches.Mean();
    const double rel = enough && mean > 0 ? iops_batches.HalfWidth95() / mean : 1e9;
    if (enough) *ci_pct = 100 * rel;
    *window_iops = mean;
    const bool steady_now = control_.target_rel_ci > 0 && enough && rel <= control_.target_rel_ci;
    if (steady_now || now >= hard_end || now >= cap) {
      *steady = steady_now && now < hard_end;
      stopping = true;
      for (Job* j : group) {
        j->stop = true;
        WakeSleeper(*j);  // a rate wait or a think ends with the run
      }
    }
  }
  if (disk_.measuring) {
    if (disk_.in_flight > 0) disk_.io_ticks += sim_->Now() - std::max(disk_.busy_since, disk_.start);
    disk_.measured += sim_->Now() - disk_.start;
    disk_.measuring = false;
  }
  // The run the jobs asked for: ramp + runtime when given; for size-bound
  // jobs, the time their size takes at the simulated rate.
  double requested = (ramp + runtime).ToSeconds();
  if (runtime == sim::Time::Zero()) {
    double longest = 0;
    for (Job* j : group) {
      const double elapsed = (j->loop_end - j->measure_start).ToSeconds();
      uint64_t bytes = 0;
      for (int d = 0; d < kDdirs; ++d) bytes += j->ts->ddir[d].io_bytes;
      const double total = static_cast<double>(j->opt.size) * j->opt.loops;
      if (bytes > 0 && total > 0) longest = std::max(longest, elapsed * total / bytes);
    }
    requested = ramp.ToSeconds() + longest;
  }
  return requested;
}

std::vector<std::vector<internal::Job*>> Workload::BuildJobs(FioReport& report) {
  report.global_options = file_->global_options;
  // Jobs, clones and groups (stonewall / new_group start a new group).
  int group = 0;
  int number = 0;
  std::vector<std::vector<Job*>> groups;
  for (size_t s = 0; s < file_->jobs.size(); ++s) {
    const JobOptions& o = file_->jobs[s];
    if (s > 0 && (o.stonewall || o.new_group)) ++group;
    FioReport::Header h;
    h.name = o.name;
    h.groupid = group;
    h.clones = o.numjobs;
    h.rw = o.rw;
    std::copy(std::begin(o.bs_min), std::end(o.bs_min), h.bs_min);
    std::copy(std::begin(o.bs_max), std::end(o.bs_max), h.bs_max);
    h.ioengine_name = o.ioengine_name;
    h.iodepth = o.iodepth;
    report.headers.push_back(h);
    std::vector<int> allowed;
    if (!o.cpus_allowed.empty()) {
      absl::StatusOr<std::vector<int>> list = ParseCpuList(o.cpus_allowed, static_cast<int>(cpus_.size()));
      if (list.ok()) allowed = *list;
    }
    if (allowed.empty()) {
      for (int c = 0; c < static_cast<int>(cpus_.size()); ++c) allowed.push_back(c);
    }
    for (int k = 0; k < o.numjobs; ++k) {
      auto j = std::make_unique<Job>();
      j->opt = o;
      j->number = number;
      j->group = group;
      // Under a policy that does not migrate, clones are spread over the
      // allowed CPUs one each, round robin; otherwise they may run on any.
      std::vector<int> affinity = allowed;
      if (!sched_->migrates()) affinity = {cpus_[allowed[static_cast<size_t>(number) % allowed.size()]]->id()};
      const std::string stream = absl::StrCat("fio.job", number);
      j->offset_rng = sim::Rng::ForStream(control_.seed, stream + ".offset");
      j->mix_rng = sim::Rng::ForStream(control_.seed, stream + ".rwmix");
      j->bs_rng = sim::Rng::ForStream(control_.seed, stream + ".bs");
      for (int d = 0; d < kDdirs; ++d) {
        j->poisson_rng[d] = sim::Rng::ForStream(control_.seed, absl::StrCat(stream, ".poisson", d));
        // init.c __setup_rate: a byte rate, rate_iops counted in the
        // direction's smallest block size.
        // At most 1 TiB/s: beyond it nothing is held back, and the
        // schedule's arithmetic stays within 64 bits.
        j->rate_bps[d] = std::min<uint64_t>(o.rate[d] != 0 ? o.rate[d] : o.rate_iops[d] * o.bs_min[d],
                                            uint64_t{1} << 40);
      }
      j->region = o.size > 0 ? o.size : (uint64_t{1} << 30);
      const int n = IsSync(o.ioengine) ? 1 : o.iodepth;
      j->ious.resize(static_cast<size_t>(n));
      for (IoU& u : j->ious) {
        u.job = j.get();
        u.rq.sink = sink_.get();
        u.rq.issuer = &u;
        j->free_ious.push_back(&u);
      }
      j->pending.reserve(static_cast<size_t>(n));
      j->finished = std::make_unique<sim::Signal>(*sim_);
      j->task = std::make_unique<models::Task>(absl::StrCat("fio/", o.name, ".", k), std::move(affinity));
      if (!job_reports_) {
        if (unreported_ == nullptr) unreported_ = std::make_unique<ThreadStat>();
        j->ts = unreported_.get();
      } else {
        j->own_ts = std::make_unique<ThreadStat>();
        j->ts = j->own_ts.get();
      }
      ThreadStat& ts = *j->ts;
      ts.name = o.name;
      ts.description = o.description;
      ts.groupid = group;
      ts.pid = 1000 + number;
      ts.job_options = o.options;
      ts.latency_depth = o.iodepth;
      ts.rw = o.rw;
      std::copy(std::begin(o.bs_min), std::end(o.bs_min), ts.bs_min);
      std::copy(std::begin(o.bs_max), std::end(o.bs_max), ts.bs_max);
      ts.ioengine_name = o.ioengine_name;
      ts.sync_engine = IsSync(o.ioengine);
      if (o.log.bw) j->bw_period_ms = o.log.avg_msec;  // init.c: bw_avg_time = log_avg_msec
      if (o.log.iops) j->iops_period_ms = o.log.avg_msec;
      if (job_reports_ && o.log.any()) j->logs = std::make_unique<JobLogs>(o, number + 1);
      if (static_cast<int>(groups.size()) <= group) groups.resize(static_cast<size_t>(group) + 1);
      groups[static_cast<size_t>(group)].push_back(j.get());
      jobs_.push_back(std::move(j));
      ++number;
    }
  }
  report.processes = number;
  for (auto& j : jobs_) {
    if (j->opt.wait_for.empty()) continue;
    for (auto& other : jobs_) {
      if (other.get() != j.get() && other->opt.name == j->opt.wait_for) j->waits_for.push_back(other.get());
    }
  }

  return groups;
}

absl::Status Workload::Start() {
  job_reports_ = false;  // nothing reads the jobs' reports
  FioReport unused;
  std::vector<std::vector<Job*>> groups = BuildJobs(unused);
  if (groups.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the job file has ", groups.size(),
        " groups (stonewall or new_group); a scenario measures one: name its job with workload.fio.section"));
  }
  for (Job* j : groups[0]) {
    j->opt.time_based = true;  // the measurement, not the job, ends the run
    j->start = sim_->Now();
    j->measure_start = sim_->Now();
    sim_->Spawn(LaunchJob(*j));
  }
  return absl::OkStatus();
}

void Workload::ResetCounters() {
  window_ = WindowCounters();
  open_lat_.Reset(sim_->Now());
  open_clat_.Reset(sim_->Now());
  for (auto& j : jobs_) {
    j->task->ResetStats();
    j->usr_busy.Reset(sim_->Now());
    j->sys_busy.Reset(sim_->Now());
  }
}

sim::Time Workload::WindowCpu(bool user) const {
  sim::Time t;
  for (const auto& j : jobs_) t += (user ? j->usr_busy : j->sys_busy).BusyUntil(sim_->Now());
  return t;
}

double Workload::WindowOpenArea(bool clat) const { return (clat ? open_clat_ : open_lat_).Until(sim_->Now()); }

int Workload::processes() const { return static_cast<int>(jobs_.size()); }

FioReport Workload::Run() {
  FioReport report;
  std::vector<std::vector<Job*>> groups = BuildJobs(report);
  double ci_worst = 0;
  bool all_ci = !groups.empty();
  bool all_steady = true;
  sim::Time simulated;
  for (auto& g : groups) {
    const sim::Time group_start = sim_->Now();
    if (control_.reset_stack) {
      control_.reset_stack();
    } else {
      stack_->ResetStats();
    }
    bool steady = false;
    std::optional<double> ci;
    double window_iops = 0;
    report.requested_s += RunGroup(g, &steady, &ci, &window_iops);
    report.window_iops.push_back(window_iops);
    all_steady = all_steady && steady;
    ci_worst = std::max(ci_worst, ci.value_or(0));
    all_ci = all_ci && ci.has_value();
    sim::Time end = group_start;
    for (Job* j : g) end = std::max(end, j->loop_end);
    simulated += end - group_start;
  }
  report.simulated_s = simulated.ToSeconds();
  report.confidence_pct = ci_worst;
  report.has_confidence = all_ci;
  report.stopped_at_steady_state = all_steady;

  // The modeled device's disk statistics (fio's "Disk stats"), named as
  // fio names it: the block device the first job's filename= opens
  // (/dev/vdb: vdb); without one, nvme0n1.
  DiskUtil du;
  du.name = "nvme0n1";
  for (const auto& jp : jobs_) {
    const std::string& f = jp->opt.filename;
    if (f.rfind("/dev/", 0) == 0 && f.size() > 5 && f.find(':') == std::string::npos) {
      du.name = f.substr(f.rfind('/') + 1);
      break;
    }
  }
  for (int d = 0; d < 2; ++d) {
    du.ios[d] = disk_.ios[d];
    du.ticks[d] = static_cast<uint64_t>(disk_.ticks[d].ps() / 1000000000);
  }
  du.in_queue = du.ticks[0] + du.ticks[1];
  du.util = disk_.measured > sim::Time::Zero() ? 100.0 * disk_.io_ticks.ToSeconds() / disk_.measured.ToSeconds() : 0;
  report.disk_util.push_back(du);
  report.messages = messages_;

  // Per-job reports, then per group (group_reporting) or per job.
  for (auto& jp : jobs_) {
    Job& j = *jp;
    ThreadStat& ts = *j.ts;
    const sim::Time measured = j.loop_end - j.measure_start;
    for (int d = 0; d < kDdirs; ++d) {
      DirStats& ds = ts.ddir[d];
      if (ds.io_bytes > 0) ds.runtime_ms = RoundUpMs(measured);
      ds.bw = Summarize(j.bw_samples[d]);
      ds.iops = Summarize(j.iops_samples[d]);
    }
    ts.job_runtime_ms = RoundUpMs(measured);
    ts.ctx = j.task->nvcsw() + j.task->nivcsw();
    const double m = measured.ToSeconds();
    j.ChangeOpen(0, j.loop_end);
    ts.mean_in_flight = m > 0 ? j.open_integral_s / m : 0;
    ts.elapsed_s = static_cast<uint64_t>(std::ceil((j.loop_end - j.start).ToSeconds()));
    ts.usr_cpu = m > 0 ? 100 * j.usr.ToSeconds() / m : 0;
    ts.sys_cpu = m > 0 ? 100 * j.sys.ToSeconds() / m : 0;
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<ThreadStat> members;
    bool grouped = false;
    for (Job* j : groups[g]) {
      members.push_back(*j->ts);
      grouped = grouped || j->opt.group_reporting;
    }
    std::vector<ThreadStat> entities;
    if (grouped) {
      entities.push_back(SumThreadStats(members));
    } else {
      entities = members;
    }
    report.groups.push_back(MakeGroupStat(static_cast<int>(g), entities));
    report.entities.insert(report.entities.end(), entities.begin(), entities.end());
  }
  std::vector<const JobLogs*> logs;
  for (auto& j : jobs_) {
    if (j->logs != nullptr) logs.push_back(j->logs.get());
  }
  report.logs = LogFiles(logs);
  return report;
}

}  // namespace fio
