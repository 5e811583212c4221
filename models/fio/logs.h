// fio 3.33's per-job log files (write_bw_log, write_lat_log,
// write_iops_log, write_hist_log), filled from simulated events by the
// workload model and written by `viosim fio`.
//
// One IoLog is fio's struct io_log for one kind of value: its entries and
// the averaging window of log_avg_msec (stat.c add_log_sample,
// __add_stat_to_log, finalize_logs), printed as iolog.c flush_samples
// prints them:
//
//   time_ms, value, direction, block size[, offset], priority
//
// A HistLog is the clat_hist log: the completion latency histogram's
// buckets counted since the entry before, every log_hist_msec (stat.c
// add_clat_sample, iolog.c flush_hist_samples):
//
//   time_ms, direction, block size, bucket counts (1856 / 2^coarseness)
#ifndef VIOSIM_MODELS_FIO_LOGS_H_
#define VIOSIM_MODELS_FIO_LOGS_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/fio/job.h"
#include "models/fio/stats.h"

namespace fio {

// One line of a bw, iops or latency log (struct io_sample).
struct LogEntry {
  uint64_t time_ms = 0;  // since the job's epoch (its start, or the end of ramp_time)
  uint64_t value = 0;    // KiB/s (windowed bw), B/ms (per-I/O bw), I/Os, or ns
  int ddir = kRead;
  uint64_t bs = 0;
  uint64_t offset = 0;
  uint32_t prio = 0;
};

class IoLog {
 public:
  // `avg_msec` 0 logs every value as it comes; otherwise one entry per
  // direction and window, the window's mean rounded to the nearest integer
  // or, with `log_max`, its maximum. `inline_log`: a latency log, whose
  // window closes at the first value at least avg_msec after the window
  // began (fio's inline_log); the bw and iops logs close theirs within
  // fio's 1 ms slack (LOG_MSEC_SLACK).
  IoLog(int64_t avg_msec, bool log_max, bool inline_log)
      : avg_msec_(static_cast<uint64_t>(avg_msec)), log_max_(log_max), inline_(inline_log) {}

  // add_log_sample, `elapsed_ms` after the job's epoch.
  void Add(uint64_t elapsed_ms, uint64_t value, int ddir, uint64_t bs, uint64_t offset, uint32_t prio);
  // finalize_logs: the windows still open, as entries at `elapsed_ms`.
  void Finalize(uint64_t elapsed_ms);
  // A log of every value (fio's per_unit_log): the bw and iops logs are
  // then fed per I/O instead of per bwavgtime/iopsavgtime window.
  bool per_unit() const { return avg_msec_ == 0; }
  const std::vector<LogEntry>& entries() const { return entries_; }
  // flush_samples: the offset column with log_offset, the priority as
  // 0x%04x with log_prio (else 1 for a real-time class, 0 otherwise).
  void AppendText(bool log_offset, bool log_prio, std::string* out) const;

 private:
  struct Window {  // struct io_stat, as add_stat_sample keeps it
    uint64_t samples = 0;
    uint64_t max = 0;
    double mean = 0;
  };
  void Close(int ddir, uint64_t elapsed_ms);

  uint64_t avg_msec_;
  bool log_max_;
  bool inline_;
  Window window_[kDdirs];
  uint64_t avg_last_[kDdirs] = {};
  std::vector<LogEntry> entries_;
};

class HistLog {
 public:
  HistLog(int64_t hist_msec, int coarseness)
      : hist_msec_(static_cast<uint64_t>(hist_msec)), stride_(1 << coarseness) {}

  // After a completion in `ddir` was counted in `plat` (the job's clat
  // histogram of that direction since the end of ramp_time): an entry when
  // log_hist_msec has passed since the last one.
  void Add(uint64_t elapsed_ms, int ddir, uint64_t bs, const std::array<uint64_t, LatStat::kBuckets>& plat);
  void AppendText(std::string* out) const;
  size_t entries() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t time_ms;
    int ddir;
    uint64_t bs;
    std::vector<uint64_t> counts;  // per column: buckets counted since the entry before
  };
  uint64_t hist_msec_;
  int stride_;
  uint64_t hist_last_[kDdirs] = {};
  std::array<uint64_t, LatStat::kBuckets> before_[kDdirs] = {};
  std::vector<Entry> entries_;
};

// A job's logs, as fio's td->bw_log, lat_log, slat_log, clat_log, iops_log
// and clat_hist_log (init.c add_job): each present when asked for.
struct JobLogs {
  // `thread_number`: fio's, from 1 across every job and clone.
  JobLogs(const JobOptions& o, int thread_number);

  LogOptions options;
  std::string job_name;
  int thread_number;
  std::unique_ptr<IoLog> bw, lat, slat, clat, iops;
  std::unique_ptr<HistLog> hist;

  // finalize_logs at the job's end (the latency logs' open windows).
  void Finalize(uint64_t elapsed_ms);
};

// fio's file name for a log of `type` ("bw", "lat", "slat", "clat", "iops",
// "clat_hist"): PREFIX_TYPE.N.log, or PREFIX_TYPE.log with per_job_logs=0;
// PREFIX is the option's value, or the job's name.
std::string LogFileName(const std::string& prefix, const std::string& job_name, const char* type,
                        int thread_number, bool per_job_logs);

// Every job's log files in job order, each job's in fio's order (bw, lat,
// slat, clat, iops, clat_hist); jobs that share a file name (per_job_logs=0)
// append to it in job order, as fio appends when each job finishes.
std::vector<LogFile> LogFiles(const std::vector<const JobLogs*>& jobs);

}  // namespace fio

#endif  // VIOSIM_MODELS_FIO_LOGS_H_
