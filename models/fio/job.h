// An fio job as fio 3.33 understands it, after parsing: the options viosim
// models, with fio's defaults, plus what the reports echo back.
//
// Produced by the job-file parser (scenarios/fio_parser.h); consumed by the
// workload model (models/fio/workload.h) and the output formats
// (analysis/fio_output.h).
#ifndef VIOSIM_MODELS_FIO_JOB_H_
#define VIOSIM_MODELS_FIO_JOB_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fio {

// fio's data directions, in its order (DDIR_READ, DDIR_WRITE, DDIR_TRIM).
enum Ddir { kRead = 0, kWrite = 1, kTrim = 2 };
inline constexpr int kDdirs = 3;

// rw=: the I/O pattern (trim patterns are known to fio but not modeled).
enum class Pattern { kRead, kWrite, kRandRead, kRandWrite, kRw, kRandRw };
inline bool IsRandom(Pattern p) {
  return p == Pattern::kRandRead || p == Pattern::kRandWrite || p == Pattern::kRandRw;
}
inline bool IsMixed(Pattern p) { return p == Pattern::kRw || p == Pattern::kRandRw; }
inline bool IsWriteOnly(Pattern p) { return p == Pattern::kWrite || p == Pattern::kRandWrite; }

enum class Engine { kPsync, kSync, kPvsync2, kLibaio, kIoUring };
// Synchronous engines complete each I/O inside the submitting call (depth 1,
// no slat).
inline bool IsSync(Engine e) { return e == Engine::kPsync || e == Engine::kSync || e == Engine::kPvsync2; }

// An option as written, for the reports' "job options"/"global options":
// canonical name (aliases resolved) and the verbatim value. Options written
// without a value are kept with `bare` set (fio's JSON leaves them out).
struct WrittenOption {
  std::string name;
  std::string value;
  bool bare = false;
};

// fio's per-job logs (write_bw_log, write_lat_log, write_iops_log,
// write_hist_log and their log_* options; init.c add_job, stat.c, iolog.c).
struct LogOptions {
  // Each log is on when its write_*_log option is given; the option's value
  // is the file name prefix, empty for the job's name (make_log_name).
  bool bw = false, lat = false, iops = false, hist = false;
  std::string bw_prefix, lat_prefix, iops_prefix, hist_prefix;
  int64_t avg_msec = 0;       // log_avg_msec: 0 logs every I/O
  int64_t hist_msec = 0;      // log_hist_msec: 0 writes no histogram entry
  int hist_coarseness = 0;    // log_hist_coarseness: 2^c buckets per column
  bool max_value = false;     // log_max_value: a window's maximum, not its mean
  bool offset = false;        // log_offset: an offset column
  bool prio = false;          // log_prio: the priority column as 0x%04x
  bool per_job_logs = true;   // per_job_logs: the job number in the file name
  bool any() const { return bw || lat || iops || hist; }
};

struct JobOptions {
  std::string name;         // job name: the section name, or name= in the section
  std::string description;  // description=
  std::string filename;     // filename= as written (the device it names, for "Disk stats")
  int line = 0;             // line of the section header, for messages

  Pattern rw = Pattern::kRead;
  // rw=...:N. Random patterns: N I/Os per new random offset (fio's
  // ddir_seq_nr, default 1). Sequential patterns: added to each offset
  // (ddir_seq_add, may be negative).
  int64_t rw_seq_nr = 1;
  int64_t rw_seq_add = 0;

  // Block sizes per direction (bs= / bsrange=). Without bsrange, min == max.
  uint64_t bs_min[kDdirs] = {4096, 4096, 4096};
  uint64_t bs_max[kDdirs] = {4096, 4096, 4096};

  Engine ioengine = Engine::kPsync;
  std::string ioengine_name = "psync";  // as written, for the header line
  int iodepth = 1;
  int iodepth_batch_submit = 1;        // iodepth_batch; 0 or > iodepth means iodepth
  int iodepth_batch_complete_min = 1;
  int iodepth_batch_complete_max = 0;  // 0: same as _min (fio's default)
  int numjobs = 1;

  uint64_t size = 0;         // bytes per job (clone); 0: not given (filesize= if set)
  int64_t runtime_us = 0;    // 0: unlimited
  bool time_based = false;
  // loops=: passes over `size` (fio's keep_running). Ignored when
  // time_based; fio runs loops=0 as 1.
  int loops = 1;
  int64_t ramp_time_us = 0;
  int rwmixread = 50;        // rwmixwrite = 100 - rwmixread

  bool direct = false;       // direct= / buffered= (inverse)
  bool hipri = false;        // engine option of pvsync2 and io_uring
  bool group_reporting = false;
  bool stonewall = false;    // starts a new group (also new_group)
  bool new_group = false;
  // wait_for=: the name of a job this one starts after (fio's
  // waitee_running: it waits while that job runs). Empty: none.
  std::string wait_for;
  std::string cpus_allowed;  // as written; empty: any CPU
  std::string cpus_allowed_at;  // "FILE:LINE" of the cpus_allowed option, for messages
  bool randrepeat = true;
  bool norandommap = false;

  // Pacing, as fio 3.33 does it (docs/cli.md, "Pacing"). Per direction, 0
  // when not set: rate= (bytes/s), rate_iops=, and the floors rate_min=
  // and rate_iops_min= checked every rate_cycle= ms after the first 2 s.
  uint64_t rate[kDdirs] = {0, 0, 0};
  uint64_t rate_iops[kDdirs] = {0, 0, 0};
  uint64_t rate_min[kDdirs] = {0, 0, 0};
  uint64_t rate_iops_min[kDdirs] = {0, 0, 0};
  bool rate_poisson = false;   // rate_process=poisson (else linear)
  int64_t rate_cycle_ms = 1000;
  // thinktime= (us) after every thinktime_blocks= I/Os (completed, or
  // issued with thinktime_blocks_type=issue), its first thinktime_spin= us
  // spent spinning.
  int64_t thinktime_us = 0;
  int64_t thinktime_spin_us = 0;
  int64_t thinktime_blocks = 1;
  bool thinktime_blocks_issue = false;
  // bssplit=: per direction, the sizes and their shares, sorted by share
  // (stably) as fio walks them. Empty: bs/bsrange.
  struct BsSplit {
    uint64_t bs = 0;
    int perc = 0;
  };
  std::vector<BsSplit> bssplit[kDdirs];
  // Whether any rate option is set (fio's TD_F_CHECK_RATE).
  bool Rated() const {
    for (int d = 0; d < kDdirs; ++d) {
      if (rate[d] || rate_iops[d] || rate_min[d] || rate_iops_min[d]) return true;
    }
    return false;
  }
  LogOptions log;

  // The section's own options in parse order, for "job options".
  std::vector<WrittenOption> options;
};

struct JobFile {
  std::string path;
  // [global] options in parse order, for "global options".
  std::vector<WrittenOption> global_options;
  // Job sections in file order, before numjobs cloning.
  std::vector<JobOptions> jobs;
  // Things fio would run but viosim changes, said once on stderr (e.g.
  // "direct=0 (page cache) is not modeled: running as direct I/O").
  std::vector<std::string> notes;
};

}  // namespace fio

#endif  // VIOSIM_MODELS_FIO_JOB_H_
