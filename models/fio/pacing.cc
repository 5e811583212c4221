// fio's pacing of a job (fio 3.33's rate_ddir, usec_for_io,
// handle_thinktime, check_min_rate): the wait for a rate's next slot, the
// schedule's step after each I/O, the think between I/Os, the rate floor's
// check, and the timed sleep they use, which a timer's interrupt on the
// job's CPU ends.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "models/fio/job.h"
#include "models/fio/workload.h"
#include "models/fio/workload_internal.h"
#include "sim/task.h"
#include "sim/time.h"

namespace fio {

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

}  // namespace fio
