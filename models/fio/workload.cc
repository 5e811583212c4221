#include "models/fio/workload.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "models/fio/logs.h"
#include "models/fio/workload_internal.h"
#include "sim/rng.h"
#include "sim/stats.h"

namespace fio {
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

}  // namespace

sim::Task Workload::Sink::Complete(models::BlockRequest& rq, models::Cpu& cpu) {
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

}  // namespace fio
