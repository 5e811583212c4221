// fio 3.33's output formats (stat.c show_thread_status_normal,
// show_thread_status_json, show_thread_status_terse_all, show_group_stats;
// init.c's job header line; json.c's printer; lib/num2str.c), written
// against viosim's FioReport.
#include "analysis/fio_output.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fio {
namespace {

// fio's default percentile list (percentile_list) and its precision.
constexpr double kPercentiles[] = {1.0,  5.0,  10.0, 20.0, 30.0, 40.0,  50.0,  60.0, 70.0,
                                   80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99};
constexpr int kNumPercentiles = sizeof(kPercentiles) / sizeof(kPercentiles[0]);
constexpr int kPercentilePrecision = 2;
// Terse lines always carry this many percentile slots (FIO_IO_U_LIST_MAX_LEN).
constexpr int kTersePercentileSlots = 20;

const char* DdirName(int d) {
  static const char* const kNames[kDdirs] = {"read", "write", "trim"};
  return kNames[d];
}

const char* PatternName(Pattern p) {
  switch (p) {
    case Pattern::kRead:
      return "read";
    case Pattern::kWrite:
      return "write";
    case Pattern::kRandRead:
      return "randread";
    case Pattern::kRandWrite:
      return "randwrite";
    case Pattern::kRw:
      return "rw";
    case Pattern::kRandRw:
      return "randrw";
  }
  return "read";
}

int Digits(uint64_t v) {
  int n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

// ---------------------------------------------------------------------------
// Statistics as fio derives them for printing.

// fio's calc_lat: false when there are no samples.
struct Summary {
  uint64_t min = 0, max = 0;
  double mean = 0, dev = 0;
};
bool Summarize(const LatStat& s, Summary* out) {
  if (s.n() == 0) return false;
  *out = {s.min(), s.max(), s.mean(), s.stddev()};
  return true;
}
bool Summarize(const SampleStat& s, Summary* out) {
  if (s.samples == 0) return false;
  *out = {s.min, s.max, s.mean, s.samples > 1 ? s.stddev : 0.0};
  return true;
}

uint64_t RwSum(const ThreadStat& ts, uint64_t DirStats::*field) {
  uint64_t sum = 0;
  for (int d = 0; d < kDdirs; ++d) sum += ts.ddir[d].*field;
  return sum;
}

// stat_calc_dist: shares of `total` in percent; a non-zero share below
// 0.1% shows as 0.1.
template <size_t N>
std::array<double, N> Dist(const std::array<uint64_t, N>& map, uint64_t total) {
  std::array<double, N> out{};
  for (size_t i = 0; i < N; ++i) {
    if (total == 0) continue;
    out[i] = static_cast<double>(map[i]) / static_cast<double>(total) * 100.0;
    if (out[i] < 0.1 && map[i] != 0) out[i] = 0.1;
  }
  return out;
}

// stat_calc_lat: shares of all I/Os in percent; a non-zero share below
// 0.01% shows as 0.01.
template <size_t N>
std::array<double, N> LatDist(const ThreadStat& ts, const std::array<uint64_t, N>& counts) {
  const uint64_t total = RwSum(ts, &DirStats::total_ios);
  std::array<double, N> out{};
  for (size_t i = 0; i < N; ++i) {
    if (total == 0) continue;
    out[i] = static_cast<double>(counts[i]) / static_cast<double>(total) * 100.0;
    if (out[i] < 0.01 && counts[i] != 0) out[i] = 0.01;
  }
  return out;
}

// convert_agg_kbytes_percent: a mean bandwidth (KiB/s, truncated to int as
// fio's parameter type does) as a share of the group's aggregate.
double AggPercent(const GroupStat& g, int d, double mean) {
  double p = 100.0;
  if (g.agg_bw[d] > 1024) {
    p = static_cast<double>(static_cast<int>(mean)) * 100.0 / (static_cast<double>(g.agg_bw[d]) / 1024.0);
    if (p > 100.0) p = 100.0;
  }
  return p;
}

// The percentile values of the default list (calc_clat_percentiles).
std::array<uint64_t, kNumPercentiles> PercentileValues(const LatStat& s) {
  std::array<uint64_t, kNumPercentiles> v{};
  for (int j = 0; j < kNumPercentiles; ++j) v[j] = s.Percentile(kPercentiles[j]);
  return v;
}

const GroupStat& GroupOf(const FioReport& r, int groupid) {
  static const GroupStat kEmpty;
  for (const GroupStat& g : r.groups) {
    if (g.groupid == groupid) return g;
  }
  return kEmpty;
}

// ---------------------------------------------------------------------------
// The normal format.

// display_lat: picks msec, usec or nsec from min, max and stdev.
void AppendLatLine(std::string& out, const char* name, const Summary& s0) {
  Summary s = s0;
  const char* base = "(nsec)";
  if (s.min > 2000000 && s.max > 99999999ULL && s.dev > 1000000.0) {
    s.min /= 1000000;
    s.max /= 1000000;
    s.mean /= 1000000.0;
    s.dev /= 1000000.0;
    base = "(msec)";
  } else if (s.min > 2000 && s.max > 99999 && s.dev > 1000.0) {
    s.min /= 1000;
    s.max /= 1000;
    s.mean /= 1000.0;
    s.dev /= 1000.0;
    base = "(usec)";
  }
  absl::StrAppendFormat(&out, "    %s %s: min=%s, max=%s, avg=%5.02f, stdev=%5.02f\n", name, base,
                        Num2Str(s.min, 6, 1, false, N2sUnit::kNone),
                        Num2Str(s.max, 6, 1, false, N2sUnit::kNone), s.mean, s.dev);
}

// show_clat_percentiles.
void AppendPercentiles(std::string& out, const char* name, const LatStat& s) {
  std::array<uint64_t, kNumPercentiles> v = PercentileValues(s);
  const uint64_t minv = *std::min_element(v.begin(), v.end());
  const uint64_t maxv = *std::max_element(v.begin(), v.end());
  int scale_down;
  uint64_t divisor;
  const char* unit;
  if (minv > 2000000 && maxv > 99999999ULL) {
    scale_down = 2;
    divisor = 1000000;
    unit = "msec";
  } else if (minv > 2000 && maxv > 99999) {
    scale_down = 1;
    divisor = 1000;
    unit = "usec";
  } else {
    scale_down = 0;
    divisor = 1;
    unit = "nsec";
  }
  absl::StrAppendFormat(&out, "    %s percentiles (%s):\n     |", name, unit);
  const uint64_t scaled_max = maxv / divisor;
  const int digits =
      scaled_max == 0 ? 0 : static_cast<int>(std::log10(static_cast<double>(scaled_max)) + 1);
  const int width = std::max(5, digits);
  const int per_line = (80 - 7) / (kPercentilePrecision + 10 + width);
  for (int j = 0; j < kNumPercentiles; ++j) {
    if (j != 0 && j % per_line == 0) out += "     |";
    const bool last = j == kNumPercentiles - 1;
    uint64_t val = v[j];
    for (int i = 0; i < scale_down; ++i) val = (val + 999) / 1000;
    absl::StrAppendFormat(&out, " %*.*fth=[%*d]%c", kPercentilePrecision + 3, kPercentilePrecision,
                          kPercentiles[j], width, val, last ? '\n' : ',');
    if (last) break;
    if (j % per_line == per_line - 1) out += "\n";
  }
}

// show_ddir_status for a read/write/trim direction.
void AppendDdir(std::string& out, const ThreadStat& ts, const GroupStat& g, int d) {
  const DirStats& s = ts.ddir[d];
  if (s.runtime_ms == 0) return;
  const uint64_t runt = s.runtime_ms;
  const uint64_t bw = 1000 * s.io_bytes / runt;
  const uint64_t iops = 1000 * s.total_ios / runt;
  absl::StrAppendFormat(&out, "  %s: IOPS=%s, BW=%s (%s)(%s/%dmsec)%s\n", DdirName(d),
                        Num2Str(iops, 4, 1, false, N2sUnit::kNone),
                        Num2Str(bw, 4, 1, true, N2sUnit::kBytePerSec),
                        Num2Str(bw, 4, 1, false, N2sUnit::kBytePerSec),
                        Num2Str(s.io_bytes, 4, 1, true, N2sUnit::kByte), runt,
                        d == kWrite ? "; 0 zone resets" : "");
  Summary sum;
  if (Summarize(s.slat, &sum)) AppendLatLine(out, "slat", sum);
  if (Summarize(s.clat, &sum)) AppendLatLine(out, "clat", sum);
  if (Summarize(s.lat, &sum)) AppendLatLine(out, " lat", sum);
  if (s.clat.n() > 0) AppendPercentiles(out, "clat", s.clat);
  if (Summarize(s.bw, &sum)) {
    const double per = AggPercent(g, d, sum.mean);
    const char* label = "KiB";
    uint64_t min = sum.min, max = sum.max;
    double mean = sum.mean, dev = sum.dev;
    if (mean > 1024.0 * 1024.0) {
      // fio divides its integer min/max by a double and stores them back.
      min = static_cast<uint64_t>(static_cast<double>(min) / 1024.0);
      max = static_cast<uint64_t>(static_cast<double>(max) / 1024.0);
      mean /= 1024.0;
      dev /= 1024.0;
      label = "MiB";
    }
    absl::StrAppendFormat(&out,
                          "   bw (%5s/s): min=%5d, max=%5d, per=%3.2f%%, avg=%5.02f, stdev=%5.02f, "
                          "samples=%d\n",
                          label, min, max, per, mean, dev, s.bw.samples);
  }
  if (Summarize(s.iops, &sum)) {
    absl::StrAppendFormat(&out,
                          "   iops        : min=%5d, max=%5d, avg=%5.02f, stdev=%5.02f, samples=%d\n",
                          sum.min, sum.max, sum.mean, sum.dev, s.iops.samples);
  }
}

// show_lat: the non-zero buckets, five to a line.
template <size_t N>
void AppendLatBuckets(std::string& out, const std::array<double, N>& dist, const char* const* labels,
                      const char* unit) {
  bool new_line = true, shown = false;
  int line = 0;
  for (size_t i = 0; i < N; ++i) {
    if (dist[i] <= 0.0) continue;
    shown = true;
    if (new_line) {
      if (line) out += "\n";
      absl::StrAppendFormat(&out, "  lat (%s)   : ", unit);
      new_line = false;
      line = 0;
    }
    if (line) out += ", ";
    absl::StrAppendFormat(&out, "%s%3.2f%%", labels[i], dist[i]);
    ++line;
    if (line == 5) new_line = true;
  }
  if (shown) out += "\n";
}

constexpr const char* kLatLabels[] = {"2=",   "4=",   "10=",  "20=",   "50=",   "100=",
                                      "250=", "500=", "750=", "1000=", "2000=", ">=2000="};

void AppendDepthLine(std::string& out, const char* prefix, const char* const* labels,
                     const std::array<double, kDepthBuckets>& d) {
  out += prefix;
  for (int i = 0; i < kDepthBuckets; ++i) {
    absl::StrAppendFormat(&out, "%s%s=%3.1f%%", i ? ", " : "", labels[i], d[i]);
  }
  out += "\n";
}

constexpr const char* kDepthLabels[] = {"1", "2", "4", "8", "16", "32", ">=64"};
constexpr const char* kBatchLabels[] = {"0", "4", "8", "16", "32", "64", ">=64"};

// show_thread_status_normal.
void AppendEntity(std::string& out, const ThreadStat& ts, const GroupStat& g) {
  if (RwSum(ts, &DirStats::io_bytes) == 0 && RwSum(ts, &DirStats::total_ios) == 0) return;
  if (ts.error == 0) {
    absl::StrAppendFormat(&out, "%s: (groupid=%d, jobs=%d): err=%2d: pid=%d: %s\n", ts.name, ts.groupid,
                          ts.members, ts.error, ts.pid, kPlaceholderTime);
  } else {
    absl::StrAppendFormat(&out, "%s: (groupid=%d, jobs=%d): err=%2d (%s): pid=%d: %s\n", ts.name,
                          ts.groupid, ts.members, ts.error, ts.verror, ts.pid, kPlaceholderTime);
  }
  if (!ts.description.empty()) absl::StrAppendFormat(&out, "  Description  : [%s]\n", ts.description);
  for (int d = 0; d < kDdirs; ++d) {
    if (ts.ddir[d].io_bytes != 0) AppendDdir(out, ts, g, d);
  }
  AppendLatBuckets(out, LatDist(ts, ts.lat_ns), kLatLabels, "nsec");
  AppendLatBuckets(out, LatDist(ts, ts.lat_us), kLatLabels, "usec");
  AppendLatBuckets(out, LatDist(ts, ts.lat_ms), kLatLabels, "msec");
  absl::StrAppendFormat(&out, "  cpu          : usr=%3.2f%%, sys=%3.2f%%, ctx=%d, majf=%d, minf=%d\n",
                        ts.usr_cpu, ts.sys_cpu, ts.ctx, ts.majf, ts.minf);
  AppendDepthLine(out, "  IO depths    : ", kDepthLabels,
                  Dist(ts.io_depth, RwSum(ts, &DirStats::total_ios)));
  AppendDepthLine(out, "     submit    : ", kBatchLabels, Dist(ts.io_submit, ts.total_submit));
  AppendDepthLine(out, "     complete  : ", kBatchLabels, Dist(ts.io_complete, ts.total_complete));
  absl::StrAppendFormat(&out, "     issued rwts: total=%d,%d,%d,0 short=%d,%d,%d,0 dropped=%d,%d,%d,0\n",
                        ts.ddir[0].total_ios, ts.ddir[1].total_ios, ts.ddir[2].total_ios,
                        ts.ddir[0].short_ios, ts.ddir[1].short_ios, ts.ddir[2].short_ios,
                        ts.ddir[0].drop_ios, ts.ddir[1].drop_ios, ts.ddir[2].drop_ios);
  if (ts.latency_depth != 0) {
    absl::StrAppendFormat(&out, "     latency   : target=0, window=0, percentile=100.00%%, depth=%d\n",
                          ts.latency_depth);
  }
}

// show_group_stats.
void AppendGroup(std::string& out, const GroupStat& g) {
  static const char* const kLabels[kDdirs] = {"   READ", "  WRITE", "   TRIM"};
  absl::StrAppendFormat(&out, "\nRun status group %d (all jobs):\n", g.groupid);
  for (int d = 0; d < kDdirs; ++d) {
    if (g.max_run[d] == 0) continue;
    absl::StrAppendFormat(
        &out, "%s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%d-%dmsec\n", kLabels[d],
        Num2Str(g.agg_bw[d], 4, 1, true, N2sUnit::kBytePerSec),
        Num2Str(g.agg_bw[d], 4, 1, false, N2sUnit::kBytePerSec),
        Num2Str(g.min_bw[d], 4, 1, true, N2sUnit::kBytePerSec),
        Num2Str(g.max_bw[d], 4, 1, true, N2sUnit::kBytePerSec),
        Num2Str(g.min_bw[d], 4, 1, false, N2sUnit::kBytePerSec),
        Num2Str(g.max_bw[d], 4, 1, false, N2sUnit::kBytePerSec),
        Num2Str(g.io_bytes[d], 4, 1, true, N2sUnit::kByte),
        Num2Str(g.io_bytes[d], 4, 1, false, N2sUnit::kByte), g.min_run[d], g.max_run[d]);
  }
}

// ---------------------------------------------------------------------------
// fio's JSON printer (json.c): an ordered tree printed with two spaces per
// level, "key" : value pairs, %lld integers, %f floats, and string values
// escaping only '\' and '"'. A pair whose string value is empty is dropped,
// as fio's json_create_value_string fails on it.

struct JValue {
  enum Type { kInt, kFloat, kString, kBool, kObject, kArray, kNull } type = kObject;
  long long i = 0;
  double f = 0;
  std::string s;
  bool keep_empty = false;  // viosim's own keys are printed even when empty
  std::vector<std::pair<std::string, JValue>> pairs;
  std::vector<JValue> items;

  static JValue Int(long long v) {
    JValue j;
    j.type = kInt;
    j.i = v;
    return j;
  }
  static JValue Float(double v) {
    JValue j;
    j.type = kFloat;
    j.f = v;
    return j;
  }
  static JValue Str(std::string v, bool keep_empty = false) {
    JValue j;
    j.type = kString;
    j.s = std::move(v);
    j.keep_empty = keep_empty;
    return j;
  }
  static JValue Bool(bool v) {
    JValue j;
    j.type = kBool;
    j.i = v;
    return j;
  }
  static JValue Null() {
    JValue j;
    j.type = kNull;
    return j;
  }
  static JValue Array() {
    JValue j;
    j.type = kArray;
    return j;
  }

  bool Dropped() const { return type == kString && s.empty() && !keep_empty; }
  JValue& Add(std::string key, JValue v) {
    pairs.emplace_back(std::move(key), std::move(v));
    return pairs.back().second;
  }
  void AddInt(std::string key, uint64_t v) { Add(std::move(key), Int(static_cast<long long>(v))); }
  void AddFloat(std::string key, double v) { Add(std::move(key), Float(v)); }
};

void PrintIndent(std::string& out, int level) { out.append(2 * level, ' '); }

void PrintValue(std::string& out, const JValue& v, int level);

void PrintObject(std::string& out, const JValue& v, int level) {
  out += "{\n";
  bool first = true;
  for (const auto& [key, value] : v.pairs) {
    if (value.Dropped()) continue;
    if (!first) out += ",\n";
    first = false;
    PrintIndent(out, level + 1);
    absl::StrAppend(&out, "\"", key, "\" : ");
    PrintValue(out, value, level + 1);
  }
  out += "\n";
  PrintIndent(out, level);
  out += "}";
}

void PrintArray(std::string& out, const JValue& v, int level) {
  // Only viosim's own arrays can be empty (fio leaves an empty disk_util
  // out): printed as [].
  if (std::all_of(v.items.begin(), v.items.end(), [](const JValue& i) { return i.Dropped(); })) {
    out += "[]";
    return;
  }
  out += "[\n";
  bool first = true;
  for (const JValue& item : v.items) {
    if (item.Dropped()) continue;
    if (!first) out += ",\n";
    first = false;
    PrintIndent(out, level + 1);
    PrintValue(out, item, level + 1);
  }
  out += "\n";
  PrintIndent(out, level);
  out += "]";
}

void PrintValue(std::string& out, const JValue& v, int level) {
  switch (v.type) {
    case JValue::kInt:
      absl::StrAppendFormat(&out, "%lld", v.i);
      break;
    case JValue::kFloat:
      absl::StrAppendFormat(&out, "%f", v.f);
      break;
    case JValue::kBool:
      out += v.i ? "true" : "false";
      break;
    case JValue::kNull:
      out += "null";
      break;
    case JValue::kString:
      out += "\"";
      for (char c : v.s) {
        if (c == '\\' || c == '"') out += '\\';
        out += c;
      }
      out += "\"";
      break;
    case JValue::kObject:
      PrintObject(out, v, level);
      break;
    case JValue::kArray:
      PrintArray(out, v, level);
      break;
  }
}

// json_add_job_opts: present when any option was written; options written
// without a value have an empty value and so are left out of the object.
void AddOptions(JValue& parent, const char* key, const std::vector<WrittenOption>& opts) {
  if (opts.empty()) return;
  JValue& o = parent.Add(key, JValue());
  for (const WrittenOption& w : opts) {
    if (w.bare) continue;
    o.Add(w.name, JValue::Str(w.value));
  }
}

// add_ddir_lat_json.
JValue LatJson(const LatStat& s, bool percentiles, bool plus) {
  JValue o;
  Summary sum;
  if (!Summarize(s, &sum)) sum = Summary();
  o.AddInt("min", sum.min);
  o.AddInt("max", sum.max);
  o.AddFloat("mean", sum.mean);
  o.AddFloat("stddev", sum.dev);
  o.AddInt("N", s.n());
  if (percentiles && s.n() > 0) {
    JValue& p = o.Add("percentile", JValue());
    const std::array<uint64_t, kNumPercentiles> v = PercentileValues(s);
    for (int j = 0; j < kNumPercentiles; ++j) p.AddInt(absl::StrFormat("%f", kPercentiles[j]), v[j]);
    if (plus) {
      JValue& bins = o.Add("bins", JValue());
      const auto& b = s.buckets();
      for (int i = 0; i < LatStat::kBuckets; ++i) {
        if (b[i] != 0) bins.AddInt(absl::StrCat(LatStat::BucketValue(i)), b[i]);
      }
    }
  }
  return o;
}

// add_ddir_status_json for read, write and trim.
JValue DdirJson(const ThreadStat& ts, const GroupStat& g, int d, bool plus) {
  const DirStats& s = ts.ddir[d];
  JValue o;
  uint64_t bw_bytes = 0, bw = 0;
  double iops = 0.0;
  if (s.runtime_ms != 0) {
    bw_bytes = 1000 * s.io_bytes / s.runtime_ms;
    bw = bw_bytes / 1024;
    iops = 1000.0 * static_cast<double>(s.total_ios) / static_cast<double>(s.runtime_ms);
  }
  o.AddInt("io_bytes", s.io_bytes);
  o.AddInt("io_kbytes", s.io_bytes >> 10);
  o.AddInt("bw_bytes", bw_bytes);
  o.AddInt("bw", bw);
  o.AddFloat("iops", iops);
  o.AddInt("runtime", s.runtime_ms);
  o.AddInt("total_ios", s.total_ios);
  o.AddInt("short_ios", s.short_ios);
  o.AddInt("drop_ios", s.drop_ios);
  // fio's defaults: percentiles for clat only.
  o.Add("slat_ns", LatJson(s.slat, false, plus));
  o.Add("clat_ns", LatJson(s.clat, true, plus));
  o.Add("lat_ns", LatJson(s.lat, false, plus));
  Summary sum;
  double agg = 0.0;
  if (Summarize(s.bw, &sum)) {
    agg = AggPercent(g, d, sum.mean);
  } else {
    sum = Summary();
  }
  o.AddInt("bw_min", sum.min);
  o.AddInt("bw_max", sum.max);
  o.AddFloat("bw_agg", agg);
  o.AddFloat("bw_mean", sum.mean);
  o.AddFloat("bw_dev", sum.dev);
  o.AddInt("bw_samples", s.bw.samples);
  if (!Summarize(s.iops, &sum)) sum = Summary();
  o.AddInt("iops_min", sum.min);
  o.AddInt("iops_max", sum.max);
  o.AddFloat("iops_mean", sum.mean);
  o.AddFloat("iops_stddev", sum.dev);
  o.AddInt("iops_samples", s.iops.samples);
  return o;
}

template <size_t N>
void AddDist(JValue& parent, const char* key, const char* const* labels, const std::array<double, N>& d) {
  JValue& o = parent.Add(key, JValue());
  for (size_t i = 0; i < N; ++i) {
    std::string label = labels[i];
    if (!label.empty() && label.back() == '=') label.pop_back();
    o.AddFloat(label, d[i]);
  }
}

// show_thread_status_json.
JValue JobJson(const ThreadStat& ts, const GroupStat& g, bool plus) {
  JValue o;
  o.Add("jobname", JValue::Str(ts.name));
  o.Add("groupid", JValue::Int(ts.groupid));
  o.Add("error", JValue::Int(ts.error));
  o.Add("eta", JValue::Int(0));
  o.AddInt("elapsed", ts.elapsed_s);
  AddOptions(o, "job options", ts.job_options);
  for (int d = 0; d < kDdirs; ++d) o.Add(DdirName(d), DdirJson(ts, g, d, plus));
  // fsync/fdatasync are not modeled: fio's empty "sync" object.
  JValue& sync = o.Add("sync", JValue());
  sync.AddInt("total_ios", 0);
  sync.Add("lat_ns", LatJson(LatStat(), true, plus));
  o.AddInt("job_runtime", ts.job_runtime_ms);
  o.AddFloat("usr_cpu", ts.usr_cpu);
  o.AddFloat("sys_cpu", ts.sys_cpu);
  o.AddInt("ctx", ts.ctx);
  o.AddInt("majf", ts.majf);
  o.AddInt("minf", ts.minf);
  AddDist(o, "iodepth_level", kDepthLabels, Dist(ts.io_depth, RwSum(ts, &DirStats::total_ios)));
  AddDist(o, "iodepth_submit", kBatchLabels, Dist(ts.io_submit, ts.total_submit));
  AddDist(o, "iodepth_complete", kBatchLabels, Dist(ts.io_complete, ts.total_complete));
  AddDist(o, "latency_ns", kLatLabels, LatDist(ts, ts.lat_ns));
  AddDist(o, "latency_us", kLatLabels, LatDist(ts, ts.lat_us));
  AddDist(o, "latency_ms", kLatLabels, LatDist(ts, ts.lat_ms));
  if (ts.latency_depth != 0) {
    o.Add("latency_depth", JValue::Int(ts.latency_depth));
    o.AddInt("latency_target", 0);
    o.AddFloat("latency_percentile", 100.0);
    o.AddInt("latency_window", 0);
  }
  if (!ts.description.empty()) o.Add("desc", JValue::Str(ts.description));
  return o;
}

// ---------------------------------------------------------------------------
// Terse, version 3.

void AppendTerseLat(std::string& out, const LatStat& s) {
  Summary sum;
  if (Summarize(s, &sum)) {
    absl::StrAppendFormat(&out, ";%d;%d;%f;%f", sum.min / 1000, sum.max / 1000, sum.mean / 1000,
                          sum.dev / 1000);
  } else {
    out += ";0;0;0.000000;0.000000";
  }
}

void AppendTerseDdir(std::string& out, const ThreadStat& ts, const GroupStat& g, int d) {
  const DirStats& s = ts.ddir[d];
  uint64_t bw = 0, iops = 0;
  if (s.runtime_ms != 0) {
    bw = 1000 * s.io_bytes / s.runtime_ms / 1024;
    iops = 1000 * s.total_ios / s.runtime_ms;
  }
  absl::StrAppendFormat(&out, ";%d;%d;%d;%d", s.io_bytes >> 10, bw, iops, s.runtime_ms);
  AppendTerseLat(out, s.slat);
  AppendTerseLat(out, s.clat);
  const std::array<uint64_t, kNumPercentiles> v = PercentileValues(s.clat);
  for (int i = 0; i < kTersePercentileSlots; ++i) {
    if (i >= kNumPercentiles) {
      out += ";0%=0";
    } else {
      absl::StrAppendFormat(&out, ";%f%%=%d", kPercentiles[i], v[i] / 1000);
    }
  }
  AppendTerseLat(out, s.lat);
  Summary sum;
  if (Summarize(s.bw, &sum)) {
    // The terse form keeps fio's older share formula: KiB of the aggregate
    // truncated to an integer first.
    double per = 100.0;
    const uint64_t agg_kib = g.agg_bw[d] / 1024;
    if (g.agg_bw[d] != 0 && agg_kib != 0) {
      per = sum.mean * 100 / static_cast<double>(agg_kib);
      if (per > 100.0) per = 100.0;
    }
    absl::StrAppendFormat(&out, ";%d;%d;%f%%;%f;%f", sum.min, sum.max, per, sum.mean, sum.dev);
  } else {
    out += ";0;0;0.000000%;0.000000;0.000000";
  }
}

}  // namespace

std::string Num2Str(uint64_t num, int maxlen, int base, bool pow2, N2sUnit unit) {
  static const char* const kSi[] = {"", "k", "M", "G", "T", "P"};
  static const char* const kIec[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
  static const char* const kUnits[] = {"", "/s", "B", "bit", "B/s", "bit/s"};
  constexpr int kPrefixes = 6;
  const char* const* prefix = pow2 ? kIec : kSi;
  const unsigned thousand = pow2 ? 1024 : 1000;
  const char* unit_str = kUnits[static_cast<int>(unit)];

  int post_index = 0;
  while (base > 1) {
    base /= static_cast<int>(thousand);
    ++post_index;
  }
  if (unit == N2sUnit::kBit || unit == N2sUnit::kBitPerSec) num *= 8;

  // Divide until the number fits, remembering the last remainder.
  bool divided = false;
  unsigned modulo = 0;
  bool carry = false;
  while (post_index < kPrefixes) {
    if (Digits(num) <= maxlen) break;
    modulo = static_cast<unsigned>(num % thousand);
    num /= thousand;
    carry = modulo >= thousand / 2;
    divided = true;
    ++post_index;
  }
  auto plain = [&](uint64_t n) {
    if (post_index >= kPrefixes) post_index = 0;
    return absl::StrCat(n, prefix[post_index], unit_str);
  };
  if (!divided) return plain(num);
  const int len = Digits(num);
  if (maxlen - len <= 1) return plain(carry ? num + 1 : num);
  // The remainder as a fraction of a thousand (or 1024), with the decimals
  // that fit; its digits after the point follow the integer part, which
  // goes up by one when the fraction rounds to 1 ("1.0").
  const std::string frac = absl::StrFormat("%.*f", maxlen - len - 1,
                                           static_cast<double>(modulo) / static_cast<double>(thousand));
  if (frac[0] == '1') ++num;
  return absl::StrCat(num, ".", frac.substr(2), prefix[post_index], unit_str);
}

std::string FormatNormal(const FioReport& r) {
  std::string out;
  for (const FioReport::Header& h : r.headers) {
    absl::StrAppendFormat(&out, "%s: (g=%d): rw=%s, bs=(R) %s-%s, (W) %s-%s, (T) %s-%s, ioengine=%s, iodepth=%d\n",
                          h.name, h.groupid, PatternName(h.rw),
                          Num2Str(h.bs_min[kRead], 4, 1, true, N2sUnit::kByte),
                          Num2Str(h.bs_max[kRead], 4, 1, true, N2sUnit::kByte),
                          Num2Str(h.bs_min[kWrite], 4, 1, true, N2sUnit::kByte),
                          Num2Str(h.bs_max[kWrite], 4, 1, true, N2sUnit::kByte),
                          Num2Str(h.bs_min[kTrim], 4, 1, true, N2sUnit::kByte),
                          Num2Str(h.bs_max[kTrim], 4, 1, true, N2sUnit::kByte), h.ioengine_name,
                          h.iodepth);
    if (h.clones > 1) out += "...\n";
  }
  absl::StrAppend(&out, kViosimVersion, "\n");
  if (r.processes > 0) {
    absl::StrAppendFormat(&out, "Starting %d process%s\n", r.processes, r.processes > 1 ? "es" : "");
  }
  out += "\n";
  for (const ThreadStat& ts : r.entities) AppendEntity(out, ts, GroupOf(r, ts.groupid));
  for (const GroupStat& g : r.groups) AppendGroup(out, g);
  if (!r.disk_util.empty()) {
    out += "\nDisk stats (read/write):\n";
    for (const DiskUtil& du : r.disk_util) {
      absl::StrAppendFormat(&out, "  %s: ios=%d/%d, merge=%d/%d, ticks=%d/%d, in_queue=%d, util=%3.2f%%\n",
                            du.name, du.ios[0], du.ios[1], du.merges[0], du.merges[1], du.ticks[0],
                            du.ticks[1], du.in_queue, du.util);
    }
  }
  return out;
}

std::string FormatJson(const FioReport& r, bool plus) {
  JValue root;
  root.Add("fio version", JValue::Str(kViosimVersion));
  root.AddInt("timestamp", 0);
  root.AddInt("timestamp_ms", 0);
  root.Add("time", JValue::Str(kPlaceholderTime));
  AddOptions(root, "global options", r.global_options);
  JValue& jobs = root.Add("jobs", JValue::Array());
  for (const ThreadStat& ts : r.entities) jobs.items.push_back(JobJson(ts, GroupOf(r, ts.groupid), plus));
  if (!r.disk_util.empty()) {
    JValue& disks = root.Add("disk_util", JValue::Array());
    for (const DiskUtil& du : r.disk_util) {
      JValue d;
      d.Add("name", JValue::Str(du.name));
      d.AddInt("read_ios", du.ios[0]);
      d.AddInt("write_ios", du.ios[1]);
      d.AddInt("read_merges", du.merges[0]);
      d.AddInt("write_merges", du.merges[1]);
      d.AddInt("read_ticks", du.ticks[0]);
      d.AddInt("write_ticks", du.ticks[1]);
      d.AddInt("in_queue", du.in_queue);
      d.AddFloat("util", du.util);
      disks.items.push_back(std::move(d));
    }
  }
  JValue& v = root.Add("viosim", JValue());
  v.AddFloat("requested_s", r.requested_s);
  v.AddFloat("simulated_s", r.simulated_s);
  // null, not 0, when no interval was computed, and null when the run at
  // the next seed gave the same rates (the interval says nothing then).
  if (r.has_confidence && r.confidence_informative) {
    v.AddFloat("confidence_pct", r.confidence_pct);
  } else {
    v.Add("confidence_pct", JValue::Null());
  }
  v.Add("confidence_informative", r.has_confidence ? JValue::Bool(r.confidence_informative) : JValue::Null());
  JValue& rates = v.Add("window_iops", JValue::Array());
  for (double x : r.window_iops) rates.items.push_back(JValue::Float(x));
  v.Add("stopped_at_steady_state", JValue::Bool(r.stopped_at_steady_state));
  v.Add("stack", JValue::Str(r.stack, /*keep_empty=*/true));
  std::string out;
  PrintValue(out, root, 0);
  out += "\n";
  return out;
}

std::string FormatTerse(const FioReport& r) {
  std::string out;
  for (const ThreadStat& ts : r.entities) {
    const GroupStat& g = GroupOf(r, ts.groupid);
    absl::StrAppendFormat(&out, "3;%s;%s;%d;%d", kViosimVersion, ts.name, ts.groupid, ts.error);
    AppendTerseDdir(out, ts, g, kRead);
    AppendTerseDdir(out, ts, g, kWrite);
    absl::StrAppendFormat(&out, ";%f%%;%f%%;%d;%d;%d", ts.usr_cpu, ts.sys_cpu, ts.ctx, ts.majf, ts.minf);
    for (double d : Dist(ts.io_depth, RwSum(ts, &DirStats::total_ios))) absl::StrAppendFormat(&out, ";%3.1f%%", d);
    // Terse folds the nanosecond buckets into the first microsecond one.
    // With no I/O at all that is 0/0, which fio prints as "-nan%".
    std::array<double, 10> us = LatDist(ts, ts.lat_us);
    uint64_t ntotal = 0;
    for (uint64_t c : ts.lat_ns) ntotal += c;
    us[0] += 100.0 * static_cast<double>(ntotal) / static_cast<double>(RwSum(ts, &DirStats::total_ios));
    for (double d : us) absl::StrAppendFormat(&out, ";%3.2f%%", d);
    for (double d : LatDist(ts, ts.lat_ms)) absl::StrAppendFormat(&out, ";%3.2f%%", d);
    for (const DiskUtil& du : r.disk_util) {
      absl::StrAppendFormat(&out, ";%s;%d;%d;%d;%d;%d;%d;%d;%3.2f%%", du.name, du.ios[0], du.ios[1],
                            du.merges[0], du.merges[1], du.ticks[0], du.ticks[1], du.in_queue, du.util);
    }
    if (!ts.description.empty()) absl::StrAppend(&out, ";", ts.description);
    out += "\n";
  }
  return out;
}

}  // namespace fio
