// fio's statistics arithmetic (stat.c in fio 3.33): the log-linear latency
// histogram, the running mean and variance of add_stat_sample, the merges
// of sum_stat / sum_thread_stats, and the group status of
// __show_run_stats.
#include "models/fio/stats.h"

#include <algorithm>
#include <cmath>

namespace fio {
namespace {

constexpr int kPlatVal = 1 << LatStat::kBitsPerGroup;  // buckets per group: 64

// Sum of squared deviations of a sample statistic from its reported
// standard deviation (fio keeps the sum, viosim's SampleStat the deviation).
double SquaredDeviations(const SampleStat& s) {
  return s.samples > 1 ? s.stddev * s.stddev * static_cast<double>(s.samples - 1) : 0.0;
}

}  // namespace

// Values below 128 ns have a bucket each. Above, a value whose highest set
// bit is b (b >= 7) falls in group b - 5, whose 64 buckets each span
// 2^(b-6) ns: the bucket is chosen by the six bits below the highest one.
// Values past the last group land in the last bucket.
int LatStat::BucketOf(uint64_t ns) {
  const int msb = ns == 0 ? 0 : 63 - __builtin_clzll(ns);
  if (msb <= kBitsPerGroup) return static_cast<int>(ns);
  const int error_bits = msb - kBitsPerGroup;
  const int base = (error_bits + 1) << kBitsPerGroup;
  const int offset = static_cast<int>((kPlatVal - 1) & (ns >> error_bits));
  return std::min(base + offset, kBuckets - 1);
}

// The value fio reports for a bucket: the index itself below 128, else the
// middle of the bucket's range (its low end plus half its width).
uint64_t LatStat::BucketValue(int idx) {
  if (idx < (kPlatVal << 1)) return static_cast<uint64_t>(idx);
  const int error_bits = (idx >> kBitsPerGroup) - 1;
  const uint64_t base = uint64_t{1} << (error_bits + kBitsPerGroup);
  const uint64_t k = static_cast<uint64_t>(idx % kPlatVal);
  // fio computes (k + 0.5) * 2^error_bits in double; error_bits >= 1 here,
  // so the product is an exact integer.
  return base + static_cast<uint64_t>((static_cast<double>(k) + 0.5) *
                                      static_cast<double>(1 << error_bits));
}

void LatStat::Record(uint64_t ns) {
  const double val = static_cast<double>(ns);
  if (ns > max_) max_ = ns;
  if (ns < min_) min_ = ns;
  const double delta = val - mean_;
  if (delta != 0) {
    mean_ += delta / (static_cast<double>(n_) + 1.0);
    m2_ += delta * (val - mean_);
  }
  ++n_;
  ++buckets_[BucketOf(ns)];
}

double LatStat::stddev() const {
  if (n_ <= 1) return 0;
  return std::sqrt(m2_ / (static_cast<double>(n_) - 1.0));
}

void LatStat::Merge(const LatStat& o) {
  for (int i = 0; i < kBuckets; ++i) buckets_[i] += o.buckets_[i];
  if (o.n_ == 0) return;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  if (n_ == 0) {
    mean_ = o.mean_;
    m2_ = o.m2_;
  } else {
    // The parallel form of the variance update, with fio's operation order.
    const double delta = o.mean_ - mean_;
    const double mean = (o.mean_ * static_cast<double>(o.n_) + mean_ * static_cast<double>(n_)) /
                        static_cast<double>(n_ + o.n_);
    const double m2 = o.m2_ + m2_ +
                      std::pow(delta, 2.0) * static_cast<double>(n_ * o.n_) /
                          static_cast<double>(n_ + o.n_);
    mean_ = mean;
    m2_ = m2;
  }
  n_ += o.n_;
}

uint64_t LatStat::Percentile(double p) const {
  if (n_ == 0) return 0;
  const long double threshold =
      static_cast<long double>(p) / 100.0 * static_cast<long double>(n_);
  uint64_t sum = 0;
  for (int i = 0; i < kBuckets; ++i) {
    sum += buckets_[i];
    if (static_cast<long double>(sum) >= threshold) return BucketValue(i);
  }
  // Only reachable for p > 100: fio logs an error and keeps no value.
  return BucketValue(kBuckets - 1);
}

LatStat LatStat::FromParts(uint64_t n, uint64_t min, uint64_t max, double mean, double stddev,
                           const std::array<uint64_t, kBuckets>& buckets) {
  LatStat s;
  s.n_ = n;
  s.min_ = n == 0 ? UINT64_MAX : min;
  s.max_ = n == 0 ? 0 : max;
  s.mean_ = n == 0 ? 0 : mean;
  s.m2_ = n > 1 ? stddev * stddev * (static_cast<double>(n) - 1.0) : 0.0;
  s.buckets_ = buckets;
  return s;
}

ThreadStat SumThreadStats(const std::vector<ThreadStat>& members) {
  ThreadStat out;
  if (members.empty()) return out;
  const ThreadStat& first = members.front();
  out.name = first.name;
  out.description = first.description;
  out.groupid = first.groupid;
  out.pid = first.pid;
  out.rw = first.rw;
  for (int d = 0; d < kDdirs; ++d) {
    out.bs_min[d] = first.bs_min[d];
    out.bs_max[d] = first.bs_max[d];
  }
  out.ioengine_name = first.ioengine_name;
  out.sync_engine = first.sync_engine;
  out.members = 0;

  // bw / iops: fio's "pure sum" (min, max, mean, squared deviations and
  // sample counts each added up over the members that have samples).
  double bw_m2[kDdirs] = {}, iops_m2[kDdirs] = {};
  int bw_contrib[kDdirs] = {}, iops_contrib[kDdirs] = {};
  double usr_weighted = 0, sys_weighted = 0, usr_plain = 0, sys_plain = 0;
  uint64_t runtime_total = 0;

  for (const ThreadStat& m : members) {
    for (int d = 0; d < kDdirs; ++d) {
      const DirStats& s = m.ddir[d];
      DirStats& t = out.ddir[d];
      t.io_bytes += s.io_bytes;
      t.total_ios += s.total_ios;
      t.short_ios += s.short_ios;
      t.drop_ios += s.drop_ios;
      t.runtime_ms = std::max(t.runtime_ms, s.runtime_ms);
      t.slat.Merge(s.slat);
      t.clat.Merge(s.clat);
      t.lat.Merge(s.lat);
      struct {
        const SampleStat& src;
        SampleStat& dst;
        double& m2;
        int& contrib;
      } pairs[2] = {{s.bw, t.bw, bw_m2[d], bw_contrib[d]}, {s.iops, t.iops, iops_m2[d], iops_contrib[d]}};
      for (auto& p : pairs) {
        if (p.src.samples == 0) continue;
        if (p.contrib == 0) {
          p.dst = p.src;
        } else {
          p.dst.min += p.src.min;
          p.dst.max += p.src.max;
          p.dst.mean += p.src.mean;
          p.dst.samples += p.src.samples;
        }
        p.m2 += SquaredDeviations(p.src);
        ++p.contrib;
      }
    }
    if (out.error == 0 && m.error != 0) {
      out.error = m.error;
      out.verror = m.verror;
    }
    out.members += m.members;
    out.job_runtime_ms += m.job_runtime_ms;
    out.elapsed_s = std::max(out.elapsed_s, m.elapsed_s);
    usr_weighted += m.usr_cpu * static_cast<double>(m.job_runtime_ms);
    sys_weighted += m.sys_cpu * static_cast<double>(m.job_runtime_ms);
    usr_plain += m.usr_cpu;
    sys_plain += m.sys_cpu;
    runtime_total += m.job_runtime_ms;
    out.ctx += m.ctx;
    out.majf += m.majf;
    out.minf += m.minf;
    for (int k = 0; k < kDepthBuckets; ++k) {
      out.io_depth[k] += m.io_depth[k];
      out.io_submit[k] += m.io_submit[k];
      out.io_complete[k] += m.io_complete[k];
    }
    out.total_submit += m.total_submit;
    out.total_complete += m.total_complete;
    for (size_t k = 0; k < out.lat_ns.size(); ++k) out.lat_ns[k] += m.lat_ns[k];
    for (size_t k = 0; k < out.lat_us.size(); ++k) out.lat_us[k] += m.lat_us[k];
    for (size_t k = 0; k < out.lat_ms.size(); ++k) out.lat_ms[k] += m.lat_ms[k];
    // fio copies these per member, so the last member's survive.
    out.latency_depth = m.latency_depth;
    out.job_options = m.job_options;
  }

  for (int d = 0; d < kDdirs; ++d) {
    struct {
      SampleStat& dst;
      double m2;
      int contrib;
    } sums[2] = {{out.ddir[d].bw, bw_m2[d], bw_contrib[d]}, {out.ddir[d].iops, iops_m2[d], iops_contrib[d]}};
    for (auto& s : sums) {
      if (s.contrib <= 1) continue;  // zero or one member: copied as is
      s.dst.stddev = s.dst.samples > 1 ? std::sqrt(s.m2 / static_cast<double>(s.dst.samples - 1)) : 0.0;
    }
  }

  // fio divides the summed CPU times by the summed run times; with per-job
  // percentages that is the run-time-weighted mean.
  const double n = static_cast<double>(members.size());
  if (runtime_total > 0) {
    out.usr_cpu = usr_weighted / static_cast<double>(runtime_total);
    out.sys_cpu = sys_weighted / static_cast<double>(runtime_total);
  } else {
    out.usr_cpu = usr_plain / n;
    out.sys_cpu = sys_plain / n;
  }
  return out;
}

GroupStat MakeGroupStat(int groupid, const std::vector<ThreadStat>& entities) {
  GroupStat g;
  g.groupid = groupid;
  bool seen[kDdirs] = {};
  for (const ThreadStat& ts : entities) {
    for (int d = 0; d < kDdirs; ++d) {
      const DirStats& s = ts.ddir[d];
      if (s.runtime_ms == 0) continue;
      if (!seen[d] || s.runtime_ms < g.min_run[d]) g.min_run[d] = s.runtime_ms;
      g.max_run[d] = std::max(g.max_run[d], s.runtime_ms);
      const uint64_t bw = s.io_bytes * 1000 / s.runtime_ms;
      if (!seen[d] || bw < g.min_bw[d]) g.min_bw[d] = bw;
      g.max_bw[d] = std::max(g.max_bw[d], bw);
      g.io_bytes[d] += s.io_bytes;
      seen[d] = true;
    }
  }
  for (int d = 0; d < kDdirs; ++d) {
    if (g.max_run[d] > 0) g.agg_bw[d] = g.io_bytes[d] * 1000 / g.max_run[d];
  }
  return g;
}

}  // namespace fio
