#include "models/fio/logs.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fio {

// stat.c add_log_sample.
void IoLog::Add(uint64_t elapsed_ms, uint64_t value, int ddir, uint64_t bs, uint64_t offset, uint32_t prio) {
  if (avg_msec_ == 0) {
    entries_.push_back(LogEntry{elapsed_ms, value, ddir, bs, offset, prio});
    return;
  }
  // add_stat_sample: Welford's running mean, as fio keeps it.
  Window& w = window_[ddir];
  w.max = std::max(w.max, value);
  const double delta = static_cast<double>(value) - w.mean;
  if (delta != 0) w.mean += delta / (static_cast<double>(w.samples) + 1.0);
  ++w.samples;
  if (elapsed_ms < avg_last_[ddir]) return;
  const uint64_t this_window = elapsed_ms - avg_last_[ddir];
  // LOG_MSEC_SLACK: a bw or iops window within 1 ms of its end closes.
  if (this_window < avg_msec_ && (inline_ || avg_msec_ - this_window > 1)) return;
  Close(ddir, elapsed_ms);
  avg_last_[ddir] = elapsed_ms - elapsed_ms % avg_msec_;
}

// __add_stat_to_log: the window's mean, rounded half up, or its maximum;
// nothing for a window without values. Block size, offset and priority
// are 0 in an averaged entry.
void IoLog::Close(int ddir, uint64_t elapsed_ms) {
  Window& w = window_[ddir];
  if (w.samples > 0) {
    const uint64_t v = log_max_ ? w.max : static_cast<uint64_t>(w.mean + 0.50);
    entries_.push_back(LogEntry{elapsed_ms, v, ddir, 0, 0, 0});
  }
  w = Window();
}

void IoLog::Finalize(uint64_t elapsed_ms) {
  if (avg_msec_ == 0) return;
  for (int d = 0; d < kDdirs; ++d) Close(d, elapsed_ms);
}

// iolog.c flush_samples: "%lu, %" PRId64 ", %u, %llu[, %llu], %u" (or
// 0x%04x for the priority with log_prio). No priority is modeled: every
// I/O has fio's default 0, which is not the real-time class.
void IoLog::AppendText(bool log_offset, bool log_prio, std::string* out) const {
  for (const LogEntry& e : entries_) {
    absl::StrAppend(out, e.time_ms, ", ", static_cast<int64_t>(e.value), ", ", e.ddir, ", ", e.bs);
    if (log_offset) absl::StrAppend(out, ", ", e.offset);
    if (log_prio) {
      absl::StrAppend(out, absl::StrFormat(", 0x%04x\n", e.prio));
    } else {
      absl::StrAppend(out, ", ", 0, "\n");
    }
  }
}

// The histogram part of stat.c add_clat_sample.
void HistLog::Add(uint64_t elapsed_ms, int ddir, uint64_t bs, const std::array<uint64_t, LatStat::kBuckets>& plat) {
  if (hist_msec_ == 0) return;
  if (hist_last_[ddir] == 0) hist_last_[ddir] = elapsed_ms;
  const uint64_t this_window = elapsed_ms - hist_last_[ddir];
  if (this_window < hist_msec_) return;
  Entry e{elapsed_ms, ddir, bs, {}};
  // flush_hist_samples: each column sums `stride` buckets' counts since the
  // entry before in this direction.
  std::array<uint64_t, LatStat::kBuckets>& before = before_[ddir];
  for (int j = 0; j < LatStat::kBuckets; j += stride_) {
    uint64_t sum = 0;
    for (int k = 0; k < stride_; ++k) sum += plat[j + k] - before[j + k];
    e.counts.push_back(sum);
  }
  before = plat;
  entries_.push_back(std::move(e));
  hist_last_[ddir] = elapsed_ms - (this_window - hist_msec_);
}

void HistLog::AppendText(std::string* out) const {
  for (const Entry& e : entries_) {
    absl::StrAppend(out, e.time_ms, ", ", e.ddir, ", ", e.bs);
    for (uint64_t c : e.counts) absl::StrAppend(out, ", ", c);
    absl::StrAppend(out, "\n");
  }
}

JobLogs::JobLogs(const JobOptions& o, int number) : options(o.log), job_name(o.name), thread_number(number) {
  const LogOptions& l = o.log;
  if (l.lat) {
    lat = std::make_unique<IoLog>(l.avg_msec, l.max_value, true);
    slat = std::make_unique<IoLog>(l.avg_msec, l.max_value, true);
    clat = std::make_unique<IoLog>(l.avg_msec, l.max_value, true);
  }
  if (l.bw) bw = std::make_unique<IoLog>(l.avg_msec, l.max_value, false);
  if (l.iops) iops = std::make_unique<IoLog>(l.avg_msec, l.max_value, false);
  if (l.hist) hist = std::make_unique<HistLog>(l.hist_msec, l.hist_coarseness);
}

void JobLogs::Finalize(uint64_t elapsed_ms) {
  for (IoLog* log : {lat.get(), slat.get(), clat.get(), bw.get(), iops.get()}) {
    if (log != nullptr) log->Finalize(elapsed_ms);
  }
}

// init.c make_log_name and gen_log_name.
std::string LogFileName(const std::string& prefix, const std::string& job_name, const char* type,
                        int thread_number, bool per_job_logs) {
  const std::string& pre = prefix.empty() ? job_name : prefix;
  return per_job_logs ? absl::StrCat(pre, "_", type, ".", thread_number, ".log") : absl::StrCat(pre, "_", type, ".log");
}

std::vector<LogFile> LogFiles(const std::vector<const JobLogs*>& jobs) {
  std::vector<LogFile> files;
  absl::flat_hash_map<std::string, size_t> index;
  auto add = [&](const std::string& prefix, const JobLogs& j, const char* type, auto&& append) {
    const std::string name = LogFileName(prefix, j.job_name, type, j.thread_number, j.options.per_job_logs);
    auto [it, fresh] = index.try_emplace(name, files.size());
    if (fresh) files.push_back(LogFile{name, ""});
    append(&files[it->second].text);
  };
  for (const JobLogs* j : jobs) {
    const LogOptions& o = j->options;
    auto io = [&](const IoLog& log) { return [&](std::string* out) { log.AppendText(o.offset, o.prio, out); }; };
    if (j->bw) add(o.bw_prefix, *j, "bw", io(*j->bw));
    if (j->lat) {
      add(o.lat_prefix, *j, "lat", io(*j->lat));
      add(o.lat_prefix, *j, "slat", io(*j->slat));
      add(o.lat_prefix, *j, "clat", io(*j->clat));
    }
    if (j->iops) add(o.iops_prefix, *j, "iops", io(*j->iops));
    if (j->hist) add(o.hist_prefix, *j, "clat_hist", [&](std::string* out) { j->hist->AppendText(out); });
  }
  return files;
}

}  // namespace fio
