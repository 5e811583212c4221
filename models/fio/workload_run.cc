// Running a job file's jobs: building them (clones, groups, CPUs, random
// streams), each group's run (ramp, batches, steady-state stopping) with
// the bw and iops samples, fio's report with the disk stats, and the
// measurement-window API a scenario's measurement engine uses.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "models/fio/job.h"
#include "models/fio/logs.h"
#include "models/fio/stats.h"
#include "models/fio/workload.h"
#include "models/fio/workload_internal.h"
#include "sim/rng.h"
#include "sim/stats.h"
#include "sim/time.h"

namespace fio {
namespace {

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
