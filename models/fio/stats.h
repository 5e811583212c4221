// What fio reports per job (its struct thread_stat) and per group (struct
// group_run_stats), filled from simulated events by the workload model and
// printed by analysis/fio_output.h in fio 3.33's formats.
#ifndef VIOSIM_MODELS_FIO_STATS_H_
#define VIOSIM_MODELS_FIO_STATS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/fio/job.h"

namespace fio {

// A latency statistic as fio keeps it (struct io_stat plus its log-linear
// histogram, stat.h FIO_IO_U_PLAT_*): values in nanoseconds; min, max,
// mean and variance (Welford, as fio's add_stat_sample); and fio's
// histogram of 29 groups x 64 buckets (1856), so that percentiles and
// json+ "bins" are computed exactly as fio computes them.
class LatStat {
 public:
  static constexpr int kBitsPerGroup = 6;
  static constexpr int kGroups = 29;
  static constexpr int kBuckets = kGroups << kBitsPerGroup;  // 1856

  void Record(uint64_t ns);
  uint64_t n() const { return n_; }
  uint64_t min() const { return n_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double mean() const { return mean_; }
  double stddev() const;
  // Merges `o` as fio's sum_stat does (pooled mean and variance).
  void Merge(const LatStat& o);
  // fio's calc_clat_percentiles: the first bucket where the cumulative
  // count reaches p/100 * N, reported as that bucket's value
  // (plat_idx_to_val). 0 when empty.
  uint64_t Percentile(double p) const;
  const std::array<uint64_t, kBuckets>& buckets() const { return buckets_; }
  // plat_val_to_idx / plat_idx_to_val.
  static int BucketOf(uint64_t ns);
  static uint64_t BucketValue(int idx);

  // A statistic from its summary and histogram, as a report gives them
  // (for tests and for re-rendering recorded fio results). `stddev` is the
  // sample standard deviation; the sum of squared deviations is recovered
  // as stddev^2 * (n - 1).
  static LatStat FromParts(uint64_t n, uint64_t min, uint64_t max, double mean, double stddev,
                           const std::array<uint64_t, kBuckets>& buckets);

 private:
  uint64_t n_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  double mean_ = 0;
  double m2_ = 0;  // sum of squared deviations
  std::array<uint64_t, kBuckets> buckets_{};
};

// bw or iops samples (one per 500ms window, fio's bwavgtime/iopsavgtime).
struct SampleStat {
  uint64_t min = 0;
  uint64_t max = 0;
  double mean = 0;
  double stddev = 0;
  uint64_t samples = 0;
};

struct DirStats {
  uint64_t io_bytes = 0;
  uint64_t total_ios = 0;
  uint64_t short_ios = 0;
  uint64_t drop_ios = 0;
  uint64_t runtime_ms = 0;  // 0 for a direction that moved nothing
  LatStat slat;             // empty for synchronous engines
  LatStat clat;
  LatStat lat;
  SampleStat bw;    // KiB/s
  SampleStat iops;  // IO/s
};

// Depth buckets as fio's IO depths / submit / complete lines.
inline constexpr int kDepthBuckets = 7;

struct ThreadStat {
  std::string name;
  std::string description;
  int groupid = 0;
  int members = 1;  // jobs summed into this entity (group_reporting)
  int error = 0;
  std::string verror;  // fio's error text, printed as "err=%2d (<verror>)" when error != 0
  int pid = 0;      // a modeled process id: 1000 + job number
  std::vector<WrittenOption> job_options;

  DirStats ddir[kDdirs];
  uint64_t job_runtime_ms = 0;  // summed over members
  uint64_t elapsed_s = 0;       // from start, ramp included

  double usr_cpu = 0;  // percent
  double sys_cpu = 0;  // percent
  uint64_t ctx = 0;
  uint64_t majf = 0;
  uint64_t minf = 0;

  // Counts of I/O units by depth (1, 2, 4, 8, 16, 32, >=64), of I/Os per
  // submit call and per reap call (0, 4, 8, 16, 32, 64, >=64), as fio's
  // io_u_map / io_u_submit / io_u_complete.
  std::array<uint64_t, kDepthBuckets> io_depth{};
  std::array<uint64_t, kDepthBuckets> io_submit{};
  std::array<uint64_t, kDepthBuckets> io_complete{};
  uint64_t total_submit = 0;
  uint64_t total_complete = 0;

  // clat distribution in fio's latency buckets (io_u_lat_n / _u / _m):
  // counts of I/Os below 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 of each
  // unit, and for msec also 2000 and >=2000.
  std::array<uint64_t, 10> lat_ns{};
  std::array<uint64_t, 10> lat_us{};
  std::array<uint64_t, 12> lat_ms{};

  int latency_depth = 1;  // the job's iodepth

  // viosim's own, not printed: the time-average number of this job's I/Os
  // between preparation (start_time) and completion over the measured
  // window, for Little's law (IOPS x mean lat = mean_in_flight).
  double mean_in_flight = 0;

  // For the header line (one per job section).
  Pattern rw = Pattern::kRead;
  uint64_t bs_min[kDdirs] = {4096, 4096, 4096};
  uint64_t bs_max[kDdirs] = {4096, 4096, 4096};
  std::string ioengine_name;
  bool sync_engine = false;
};

// Sums `members` into one entity as fio's group_reporting does
// (sum_thread_stats): counters summed, runtime max, latency stats merged,
// bw/iops sample stats summed (min, max, mean, squared deviations and
// samples each added up), usr/sys CPU as summed CPU time over summed
// job_runtime, job_runtime summed, elapsed max. The name, description,
// groupid, pid and header fields are the first member's; job_options and
// latency_depth the last member's (fio copies those per member).
ThreadStat SumThreadStats(const std::vector<ThreadStat>& members);

struct GroupStat {
  int groupid = 0;
  uint64_t io_bytes[kDdirs] = {};
  uint64_t agg_bw[kDdirs] = {};  // bytes/s: sum io_bytes * 1000 / max_run
  uint64_t min_bw[kDdirs] = {};  // bytes/s over the group's reported entities
  uint64_t max_bw[kDdirs] = {};
  uint64_t min_run[kDdirs] = {};  // ms
  uint64_t max_run[kDdirs] = {};
};

// Computes a group's status line from its reported entities.
GroupStat MakeGroupStat(int groupid, const std::vector<ThreadStat>& entities);

// One device's counters for fio's "Disk stats" lines and JSON "disk_util"
// (struct disk_util_stat): I/Os, merges and ticks (ms) per direction, time
// in queue (ms) and busy share (percent, at most 100).
struct DiskUtil {
  std::string name;
  uint64_t ios[2] = {};
  uint64_t merges[2] = {};
  uint64_t ticks[2] = {};
  uint64_t in_queue = 0;
  double util = 0;
};

// A log file fio writes (models/fio/logs.h): its name and whole text.
struct LogFile {
  std::string name;
  std::string text;
};

// A whole fio run: what `fio` would print.
struct FioReport {
  std::vector<WrittenOption> global_options;
  // Per job section, in order, for the header lines: the first clone's
  // stats carry rw, bs, ioengine and iodepth; `clones` is numjobs.
  struct Header {
    std::string name;
    int groupid = 0;
    int clones = 1;
    Pattern rw = Pattern::kRead;
    uint64_t bs_min[kDdirs] = {};
    uint64_t bs_max[kDdirs] = {};
    std::string ioengine_name;
    int iodepth = 1;
  };
  std::vector<Header> headers;
  int processes = 0;  // "Starting N processes"
  std::vector<ThreadStat> entities;  // per job, or per group with group_reporting
  std::vector<GroupStat> groups;
  // The devices fio would list under "Disk stats" / "disk_util" (the
  // modeled disks under the jobs' files). Empty: both are left out, as fio
  // does when it collected no disk statistics.
  std::vector<DiskUtil> disk_util;
  // viosim's own account of how much was simulated (also in the JSON under
  // "viosim").
  double requested_s = 0;        // the run the job file asks for (ramp + runtime, or size-bound estimate)
  double simulated_s = 0;        // simulated, ramp included
  double confidence_pct = 0;     // half-width of the 95% CI of the IOPS, percent of the mean
  bool has_confidence = false;   // confidence_pct was computed (every group measured enough batches)
  // Per group: the IOPS the interval is of (the batches' completions over
  // their exact length, never rounded to milliseconds as fio prints it).
  std::vector<double> window_iops;
  // The run repeated at `replicate_seed` gave exactly the same window_iops:
  // a deterministic bottleneck sets the value and the batches' spread says
  // nothing about how sure it is (no replicate run: true).
  bool confidence_informative = true;
  uint64_t replicate_seed = 0;
  bool stopped_at_steady_state = false;
  std::string stack;             // the stack the jobs ran on
  // The log files the jobs ask for (write_bw_log, ...), in fio's order.
  std::vector<LogFile> logs;
  // What fio prints on stderr while the jobs run ("job: rate_iops_min=500
  // not met, got 99 IOPS"), in order.
  std::vector<std::string> messages;
};

}  // namespace fio

#endif  // VIOSIM_MODELS_FIO_STATS_H_
