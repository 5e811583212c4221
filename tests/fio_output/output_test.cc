// fio 3.33's output formats (analysis/fio_output.h) against real fio 3.33
// output: num2str cases, golden runs (normal, terse, JSON, json+) rebuilt
// from their own numbers, the JSON key trees of real fio, and hand-derived
// cases for the rules the golden runs do not reach.
#include "analysis/fio_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "analysis/json_value.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/fio/stats.h"
#include "tests/fio_output/test_files.h"

namespace fio {
namespace {

using analysis::JsonValue;
using ::testing::HasSubstr;

const char kTestdata[] = "tests/fio_output/testdata/";

// ---------------------------------------------------------------------------
// num2str, with cases read off the real outputs.

TEST(Num2Str, CasesFromRealOutputs) {
  // a_libaio_randread.normal.txt: total=198730 in 2003 ms.
  EXPECT_EQ(Num2Str(1000 * 198730 / 2003, 4, 1, false, N2sUnit::kNone), "99.2k");
  const uint64_t bytes = 198730ull * 4096;
  const uint64_t bw = 1000 * bytes / 2003;
  EXPECT_EQ(Num2Str(bw, 4, 1, true, N2sUnit::kBytePerSec), "388MiB/s");
  EXPECT_EQ(Num2Str(bw, 4, 1, false, N2sUnit::kBytePerSec), "406MB/s");
  EXPECT_EQ(Num2Str(bytes, 4, 1, true, N2sUnit::kByte), "776MiB");
  EXPECT_EQ(Num2Str(bytes, 4, 1, false, N2sUnit::kByte), "814MB");
  // c_randrw_mixed.normal.txt: total=2389536 in 2008 ms.
  EXPECT_EQ(Num2Str(1000 * 2389536ull / 2008, 4, 1, false, N2sUnit::kNone), "1190k");
  // Header block sizes.
  EXPECT_EQ(Num2Str(16384, 4, 1, true, N2sUnit::kByte), "16.0KiB");
  EXPECT_EQ(Num2Str(4096, 4, 1, true, N2sUnit::kByte), "4096B");
  EXPECT_EQ(Num2Str(131072, 4, 1, true, N2sUnit::kByte), "128KiB");
  // Latency min/max use six digits: golden_a3 slat max, c's clat max.
  EXPECT_EQ(Num2Str(3686869, 6, 1, false, N2sUnit::kNone), "3686.9k");
  EXPECT_EQ(Num2Str(16504123, 6, 1, false, N2sUnit::kNone), "16504k");
  EXPECT_EQ(Num2Str(637522, 6, 1, false, N2sUnit::kNone), "637522");
  // g_batch_complete_0_0: 60.8MiB/s, io=60.9MiB; IOPS=9146 has no prefix.
  EXPECT_EQ(Num2Str(9146, 4, 1, false, N2sUnit::kNone), "9146");
  EXPECT_EQ(Num2Str(101399, 4, 1, false, N2sUnit::kNone), "101k");
}

TEST(Num2Str, RoundingRules) {
  // Two levels of division: only the last remainder counts, and its carry
  // can push the number past maxlen.
  EXPECT_EQ(Num2Str(1023 * 1024 + 511, 4, 1, true, N2sUnit::kByte), "1023KiB");
  EXPECT_EQ(Num2Str(1023 * 1024 + 1023, 4, 1, true, N2sUnit::kByte), "1024KiB");
  // No room for decimals: rounds half up (carry).
  EXPECT_EQ(Num2Str(12345500, 4, 1, false, N2sUnit::kNone), "12.3M");
  EXPECT_EQ(Num2Str(123500, 4, 1, false, N2sUnit::kNone), "124k");
  EXPECT_EQ(Num2Str(123499, 4, 1, false, N2sUnit::kNone), "123k");
  // With decimals the remainder is shown as a fraction of 1000 or 1024; a
  // fraction that rounds up to 1 carries into the integer part.
  EXPECT_EQ(Num2Str(1999, 3, 1, false, N2sUnit::kNone), "2.0k");
  EXPECT_EQ(Num2Str(19990, 4, 1, false, N2sUnit::kNone), "20.0k");
  EXPECT_EQ(Num2Str(19940, 4, 1, false, N2sUnit::kNone), "19.9k");
  // golden_randrw_group: bw_bytes 94334849 = 89 MiB + 1019.1 KiB.
  EXPECT_EQ(Num2Str(94334849, 4, 1, true, N2sUnit::kBytePerSec), "90.0MiB/s");
  EXPECT_EQ(Num2Str(8, 4, 1, false, N2sUnit::kBit), "64bit");
  EXPECT_EQ(Num2Str(1, 4, 1024, true, N2sUnit::kByte), "1KiB");
}

// ---------------------------------------------------------------------------
// Golden runs: the numbers of a real run go into a FioReport; the formats
// must reproduce that run's output.

// A combined run's output: normal header lines, terse lines, JSON, then the
// rest of the normal output.
struct Capture {
  std::string header;
  std::vector<std::string> terse;
  std::string json;
  std::string body;
};

Capture Split(const std::string& text) {
  Capture c;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = text.find('\n', pos) + 1;
    const std::string line = text.substr(pos, end - pos);
    if (line == "{\n") break;
    if (line.rfind("3;", 0) == 0) {
      c.terse.push_back(line);
    } else {
      c.header += line;
    }
    pos = end;
  }
  const size_t json_end = text.find("\n}\n", pos) + 3;
  c.json = text.substr(pos, json_end - pos);
  c.body = text.substr(json_end);
  return c;
}

std::string Fmt(double v) { return absl::StrFormat("%f", v); }

// fio prints shares of integer counts; find counts (over `total`, or over
// the smallest total that works when `total` is 0) whose shares print as the
// JSON's values. `clamp` is fio's smallest shown share (0.1 or 0.01).
bool CountsFor(const JsonValue& obj, uint64_t total, double clamp, std::vector<uint64_t>* counts,
               uint64_t* total_out) {
  auto share = [&](uint64_t c, uint64_t t) {
    if (t == 0) return 0.0;
    double p = static_cast<double>(c) / static_cast<double>(t) * 100.0;
    if (p < clamp && c != 0) p = clamp;
    return p;
  };
  auto fit = [&](uint64_t t, std::vector<uint64_t>* out) {
    out->clear();
    for (const auto& [key, value] : obj.members) {
      if (value.str == "0.000000") {
        out->push_back(0);
        continue;
      }
      const double want = value.Num();
      const int64_t guess = std::llround(want * static_cast<double>(t) / 100.0);
      bool found = false;
      for (int64_t c : {guess, guess - 1, guess + 1, guess - 2, guess + 2, int64_t{1}}) {
        if (c < 1 || c > static_cast<int64_t>(t)) continue;
        if (Fmt(share(c, t)) == value.str) {
          out->push_back(c);
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
    return true;
  };
  if (total != 0) {
    *total_out = total;
    return fit(total, counts);
  }
  for (uint64_t t = 1; t < 5000000; ++t) {
    if (fit(t, counts)) {
      *total_out = t;
      return true;
    }
  }
  return false;
}

template <size_t N>
void FillCounts(const JsonValue& obj, uint64_t total, double clamp, std::array<uint64_t, N>* out,
                uint64_t* total_out = nullptr) {
  std::vector<uint64_t> counts;
  uint64_t t = 0;
  ASSERT_TRUE(CountsFor(obj, total, clamp, &counts, &t));
  ASSERT_EQ(counts.size(), N);
  for (size_t i = 0; i < N; ++i) (*out)[i] = counts[i];
  if (total_out != nullptr) *total_out = t;
}

// A clat histogram for a plain-JSON run (no bins): mass placed at the
// percentile values so that fio's percentile rule gives them back.
std::array<uint64_t, LatStat::kBuckets> BucketsFromPercentiles(const JsonValue& pct, uint64_t n, uint64_t max) {
  std::array<uint64_t, LatStat::kBuckets> b{};
  uint64_t cum = 0;
  int last = -1;
  for (const auto& [key, value] : pct.members) {
    const int idx = LatStat::BucketOf(value.U64());
    EXPECT_EQ(LatStat::BucketValue(idx), value.U64());
    const long double t = static_cast<long double>(std::stod(key)) / 100.0 * static_cast<long double>(n);
    const uint64_t need = static_cast<uint64_t>(std::ceil(t));
    if (idx != last) {
      EXPECT_LT(static_cast<long double>(cum), t) << key;
    }
    if (need > cum) {
      b[idx] += need - cum;
      cum = need;
    }
    last = idx;
  }
  b[std::max(last, LatStat::BucketOf(max))] += n - cum;
  return b;
}

LatStat LatFromJson(const JsonValue& o) {
  std::array<uint64_t, LatStat::kBuckets> buckets{};
  if (o.Has("bins")) {
    for (const auto& [key, count] : o["bins"].members) buckets[LatStat::BucketOf(std::stoull(key))] += count.U64();
  } else if (o.Has("percentile")) {
    buckets = BucketsFromPercentiles(o["percentile"], o["N"].U64(), o["max"].U64());
  }
  return LatStat::FromParts(o["N"].U64(), o["min"].U64(), o["max"].U64(), o["mean"].Num(), o["stddev"].Num(),
                            buckets);
}

SampleStat SamplesFromJson(const JsonValue& d, const std::string& p, const char* dev) {
  SampleStat s;
  s.min = d[p + "_min"].U64();
  s.max = d[p + "_max"].U64();
  s.mean = d[p + "_mean"].Num();
  s.stddev = d[p + dev].Num();
  s.samples = d[p + "_samples"].U64();
  return s;
}

// Builds what viosim would have to report to print this run: the JSON's
// numbers, the headers given by the test, members and pids from the normal
// text ("(groupid=G, jobs=N): err= 0: pid=P").
FioReport ReportFromCapture(const Capture& c, const std::vector<FioReport::Header>& headers, int processes) {
  FioReport r;
  r.headers = headers;
  r.processes = processes;
  const auto root = analysis::JsonReader(c.json).Document();
  EXPECT_TRUE(root.ok());
  if (!root.ok()) return r;
  for (const auto& [key, value] : (*root)["global options"].members) r.global_options.push_back({key, value.str});

  std::vector<std::pair<int, int>> members_pid;
  for (absl::string_view line : absl::StrSplit(c.body, '\n')) {
    const size_t g = line.find(": (groupid=");
    if (g == absl::string_view::npos) continue;
    int members = 0, pid = 0;
    const std::string rest(line.substr(g));
    sscanf(rest.c_str() + rest.find("jobs="), "jobs=%d", &members);
    sscanf(rest.c_str() + rest.find(" pid="), " pid=%d", &pid);  // not "groupid="
    members_pid.emplace_back(members, pid);
  }

  size_t entity = 0;
  for (const JsonValue& job : (*root)["jobs"].items) {
    ThreadStat ts;
    ts.name = job["jobname"].str;
    ts.groupid = static_cast<int>(job["groupid"].I64());
    ts.error = static_cast<int>(job["error"].I64());
    ts.elapsed_s = job["elapsed"].U64();
    if (entity < members_pid.size()) {
      ts.members = members_pid[entity].first;
      ts.pid = members_pid[entity].second;
    }
    ++entity;
    if (job.Has("job options")) {
      for (const auto& [key, value] : job["job options"].members) ts.job_options.push_back({key, value.str});
    }
    if (job.Has("desc")) ts.description = job["desc"].str;
    uint64_t total_ios = 0;
    for (int d = 0; d < kDdirs; ++d) {
      const JsonValue& j = job[d == 0 ? "read" : d == 1 ? "write" : "trim"];
      DirStats& s = ts.ddir[d];
      s.io_bytes = j["io_bytes"].U64();
      s.total_ios = j["total_ios"].U64();
      s.short_ios = j["short_ios"].U64();
      s.drop_ios = j["drop_ios"].U64();
      s.runtime_ms = j["runtime"].U64();
      s.slat = LatFromJson(j["slat_ns"]);
      s.clat = LatFromJson(j["clat_ns"]);
      s.lat = LatFromJson(j["lat_ns"]);
      s.bw = SamplesFromJson(j, "bw", "_dev");
      s.iops = SamplesFromJson(j, "iops", "_stddev");
      total_ios += s.total_ios;
    }
    ts.job_runtime_ms = job["job_runtime"].U64();
    ts.usr_cpu = job["usr_cpu"].Num();
    ts.sys_cpu = job["sys_cpu"].Num();
    ts.ctx = job["ctx"].U64();
    ts.majf = job["majf"].U64();
    ts.minf = job["minf"].U64();
    FillCounts(job["iodepth_level"], total_ios, 0.1, &ts.io_depth);
    FillCounts(job["iodepth_submit"], 0, 0.1, &ts.io_submit, &ts.total_submit);
    FillCounts(job["iodepth_complete"], 0, 0.1, &ts.io_complete, &ts.total_complete);
    FillCounts(job["latency_ns"], total_ios, 0.01, &ts.lat_ns);
    FillCounts(job["latency_us"], total_ios, 0.01, &ts.lat_us);
    FillCounts(job["latency_ms"], total_ios, 0.01, &ts.lat_ms);
    ts.latency_depth = static_cast<int>(job["latency_depth"].I64());
    r.entities.push_back(ts);
  }
  int max_group = -1;
  for (const ThreadStat& ts : r.entities) max_group = std::max(max_group, ts.groupid);
  for (int g = 0; g <= max_group; ++g) {
    std::vector<ThreadStat> members;
    for (const ThreadStat& ts : r.entities) {
      if (ts.groupid == g) members.push_back(ts);
    }
    r.groups.push_back(MakeGroupStat(g, members));
  }
  for (const JsonValue& d : (*root)["disk_util"].items) {
    DiskUtil du;
    du.name = d["name"].str;
    du.ios[0] = d["read_ios"].U64();
    du.ios[1] = d["write_ios"].U64();
    du.merges[0] = d["read_merges"].U64();
    du.merges[1] = d["write_merges"].U64();
    du.ticks[0] = d["read_ticks"].U64();
    du.ticks[1] = d["write_ticks"].U64();
    du.in_queue = d["in_queue"].U64();
    du.util = d["util"].Num();
    r.disk_util.push_back(du);
  }
  r.requested_s = 1;
  r.simulated_s = 1;
  r.stack = "golden";
  return r;
}

// The documented differences, applied to real fio's text.
std::string ToViosimNormal(const std::string& real) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(real, '\n')) {
    std::string l(line);
    if (l == "fio-3.33") l = kViosimVersion;
    if (l.find(": (groupid=") != std::string::npos) {
      const size_t pid = l.find(" pid=");
      l = l.substr(0, l.find(": ", pid) + 2) + kPlaceholderTime;
    }
    out += l + "\n";
  }
  out.pop_back();
  return out;
}

std::string ToViosimJson(const std::string& real) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(real, '\n')) {
    std::string l(line);
    if (l.rfind("  \"fio version\" : ", 0) == 0) l = absl::StrFormat("  \"fio version\" : \"%s\",", kViosimVersion);
    if (l.rfind("  \"timestamp\" : ", 0) == 0) l = "  \"timestamp\" : 0,";
    if (l.rfind("  \"timestamp_ms\" : ", 0) == 0) l = "  \"timestamp_ms\" : 0,";
    if (l.rfind("  \"time\" : ", 0) == 0) l = absl::StrFormat("  \"time\" : \"%s\",", kPlaceholderTime);
    if (l.rfind("      \"eta\" : ", 0) == 0) l = "      \"eta\" : 0,";
    out += l + "\n";
  }
  out.pop_back();
  return out;
}

// viosim's JSON without its extra top-level "viosim" object.
std::string WithoutViosimObject(const std::string& json) {
  const size_t at = json.find(",\n  \"viosim\" : {");
  if (at == std::string::npos) return json;
  return json.substr(0, at) + "\n}\n";
}

void ExpectSameLines(const std::string& got, const std::string& want) {
  const std::vector<std::string> g = absl::StrSplit(got, '\n');
  const std::vector<std::string> w = absl::StrSplit(want, '\n');
  for (size_t i = 0; i < std::min(g.size(), w.size()); ++i) {
    EXPECT_EQ(g[i], w[i]) << "line " << i + 1;
  }
  EXPECT_EQ(g.size(), w.size());
}

FioReport::Header MakeHeader(const std::string& name, int g, int clones, Pattern rw, uint64_t bs,
                             const std::string& engine, int iodepth) {
  FioReport::Header h;
  h.name = name;
  h.groupid = g;
  h.clones = clones;
  h.rw = rw;
  for (int d = 0; d < kDdirs; ++d) h.bs_min[d] = h.bs_max[d] = bs;
  h.ioengine_name = engine;
  h.iodepth = iodepth;
  return h;
}

struct Golden {
  const char* file;
  bool plus;
  std::vector<FioReport::Header> headers;
  int processes;
};

class GoldenTest : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenTest, NormalJsonAndTerseMatchRealFio) {
  const Golden& g = GetParam();
  const std::string text = fio_test::ReadFile(std::string(kTestdata) + g.file);
  ASSERT_FALSE(text.empty()) << g.file;
  const Capture c = Split(text);
  const FioReport r = ReportFromCapture(c, g.headers, g.processes);
  ASSERT_FALSE(r.entities.empty());

  {
    SCOPED_TRACE("normal");
    ExpectSameLines(FormatNormal(r), ToViosimNormal(c.header + c.body));
  }
  {
    SCOPED_TRACE(g.plus ? "json+" : "json");
    const std::string json = FormatJson(r, g.plus);
    ExpectSameLines(WithoutViosimObject(json), ToViosimJson(c.json));
    EXPECT_THAT(json, HasSubstr("  \"viosim\" : {\n    \"requested_s\" : 1.000000,\n"
                                "    \"simulated_s\" : 1.000000,\n    \"confidence_pct\" : null,\n"
                                "    \"confidence_informative\" : null,\n    \"window_iops\" : [],\n"
                                "    \"stopped_at_steady_state\" : false,\n    \"stack\" : \"golden\"\n  }\n}\n"));
  }
  if (!c.terse.empty()) {
    SCOPED_TRACE("terse");
    std::string want;
    for (const std::string& line : c.terse) want += absl::StrCat("3;", kViosimVersion, line.substr(10));
    ExpectSameLines(FormatTerse(r), want);
  }
}

INSTANTIATE_TEST_SUITE_P(
    RealFio, GoldenTest,
    ::testing::Values(
        // Research run (a3): libaio randread, 4 jobs, group_reporting, plain JSON.
        Golden{"golden_a3_normal_plus_json.out", false,
               {MakeHeader("a_randread", 0, 4, Pattern::kRandRead, 4096, "libaio", 64)}, 4},
        Golden{"golden_rr_libaio.out", true,
               {MakeHeader("rr_libaio", 0, 1, Pattern::kRandRead, 4096, "libaio", 16)}, 1},
        Golden{"golden_randrw_group.out", true,
               {MakeHeader("randrw_group", 0, 2, Pattern::kRandRw, 4096, "psync", 1)}, 2},
        Golden{"golden_two_groups.out", true,
               {MakeHeader("seqread", 0, 1, Pattern::kRead, 131072, "psync", 1),
                MakeHeader("randwrite", 1, 2, Pattern::kRandWrite, 4096, "libaio", 8)},
               3}));

// ---------------------------------------------------------------------------
// The JSON key tree of real fio 3.33 for a libaio randread job and a randrw
// job (captured once into testdata) against viosim's, for a report built by
// hand for the same jobs.

void RecordAll(LatStat& s, const std::vector<uint64_t>& v) {
  for (uint64_t x : v) s.Record(x);
}

ThreadStat HandEntity(const std::string& name, bool read, bool write, bool async, int depth) {
  ThreadStat ts;
  ts.name = name;
  ts.pid = 1000;
  ts.latency_depth = depth;
  uint64_t total = 0;
  for (int d : {kRead, kWrite}) {
    if ((d == kRead && !read) || (d == kWrite && !write)) continue;
    DirStats& s = ts.ddir[d];
    s.io_bytes = 4096 * 1000;
    s.total_ios = 1000;
    s.runtime_ms = 1000;
    if (async) RecordAll(s.slat, {2000, 3000, 4500});
    RecordAll(s.clat, {90000, 120000, 250000, 1000000});
    RecordAll(s.lat, {95000, 125000, 255000, 1003000});
    s.bw = {3900, 4100, 4000.0, 100.0, 2};
    s.iops = {975, 1025, 1000.0, 25.0, 2};
    total += s.total_ios;
  }
  ts.job_runtime_ms = 1000;
  ts.elapsed_s = 2;
  ts.usr_cpu = 3.5;
  ts.sys_cpu = 20.25;
  ts.ctx = 1234;
  ts.minf = 12;
  ts.io_depth[async ? 4 : 0] = total;
  ts.io_submit[1] = total;
  ts.io_complete[1] = total;
  ts.total_submit = total;
  ts.total_complete = total;
  ts.lat_us[6] = total / 2;
  ts.lat_ms[0] = total - total / 2;
  return ts;
}

FioReport HandReport(bool randrw) {
  FioReport r;
  if (randrw) {
    r.global_options = {{"rw", "randrw"}, {"rwmixread", "70"}, {"bs", "4k"}, {"size", "8M"},
                        {"runtime", "1"},  {"time_based", "", true}, {"numjobs", "2"},
                        {"group_reporting", "", true}};
    ThreadStat a = HandEntity("rw", true, true, false, 1);
    ThreadStat b = a;
    b.pid = 1001;
    r.entities.push_back(SumThreadStats({a, b}));
  } else {
    r.global_options = {{"ioengine", "libaio"}, {"direct", "1"},   {"rw", "randread"}, {"bs", "4k"},
                        {"iodepth", "16"},      {"size", "8M"},    {"runtime", "1"},   {"time_based", "", true}};
    r.entities.push_back(HandEntity("rr", true, false, true, 16));
  }
  r.groups.push_back(MakeGroupStat(0, r.entities));
  DiskUtil du;
  du.name = "vda";
  du.ios[0] = 1000;
  du.util = 50.0;
  r.disk_util.push_back(du);
  r.requested_s = 1;
  r.simulated_s = 1;
  r.confidence_pct = 0.8;
  r.has_confidence = true;
  r.window_iops = {1000};
  r.stopped_at_steady_state = true;
  r.stack = "virtio-blk";
  return r;
}

std::vector<std::string> StoredTree(const std::string& file) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(fio_test::ReadFile(std::string(kTestdata) + file), '\n')) {
    if (line.empty() || line[0] == '#') continue;
    out.emplace_back(line);
  }
  return out;
}

class KeyTreeTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(KeyTreeTest, SameKeysAsRealFio) {
  const auto [randrw, plus] = GetParam();
  const std::string file =
      absl::StrCat("keytree_", randrw ? "randrw" : "randread", plus ? "_jsonplus" : "_json", ".txt");
  const std::vector<std::string> want = StoredTree(file);
  ASSERT_GT(want.size(), 100u) << file;

  const std::string json = FormatJson(HandReport(randrw), plus);
  const auto root = analysis::JsonReader(json).Document();
  ASSERT_TRUE(root.ok()) << json;
  std::vector<std::string> all;
  fio_test::KeyTree(*root, "", {"percentile", "bins", "global options", "job options"}, &all);
  std::vector<std::string> got, extra;
  for (const std::string& e : all) (e.rfind("viosim", 0) == 0 ? extra : got).push_back(e);

  // Same paths, types and order; so also the same sorted set.
  EXPECT_EQ(got, want) << file;
  std::vector<std::string> got_sorted = got, want_sorted = want;
  std::sort(got_sorted.begin(), got_sorted.end());
  std::sort(want_sorted.begin(), want_sorted.end());
  EXPECT_EQ(got_sorted, want_sorted);
  // viosim's own object comes last, after fio's keys.
  EXPECT_EQ(extra, (std::vector<std::string>{"viosim object", "viosim.requested_s float", "viosim.simulated_s float",
                                             "viosim.confidence_pct float", "viosim.confidence_informative bool",
                                             "viosim.window_iops array", "viosim.window_iops[] float",
                                             "viosim.stopped_at_steady_state bool",
                                             "viosim.stack string"}));
  EXPECT_EQ(all.back(), "viosim.stack string");
}

INSTANTIATE_TEST_SUITE_P(RealFio, KeyTreeTest, ::testing::Combine(::testing::Bool(), ::testing::Bool()));

// ---------------------------------------------------------------------------
// Rules the golden runs do not reach, derived by hand from stat.c.

TEST(FormatNormal, MillisecondUnitsErrorAndDescription) {
  FioReport r;
  r.headers = {MakeHeader("slow", 0, 1, Pattern::kRandWrite, 16384, "psync", 1)};
  r.processes = 1;
  ThreadStat ts;
  ts.name = "slow";
  ts.pid = 1000;
  ts.error = 5;
  ts.verror = "file:io_u.c:1876, func=io_u error, error=Input/output error";
  ts.description = "three slow writes";
  ts.latency_depth = 1;
  DirStats& d = ts.ddir[kWrite];
  d.io_bytes = 3 * 16384;
  d.total_ios = 3;
  d.runtime_ms = 203;
  RecordAll(d.clat, {3000000, 150000000, 50000000});
  ts.lat_ms = {0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0};
  ts.io_depth[0] = 3;
  ts.io_submit[1] = 3;
  ts.io_complete[1] = 3;
  ts.total_submit = 3;
  ts.total_complete = 3;
  r.entities.push_back(ts);
  r.groups.push_back(MakeGroupStat(0, r.entities));
  const std::string out = FormatNormal(r);

  EXPECT_THAT(out, HasSubstr("slow: (g=0): rw=randwrite, bs=(R) 16.0KiB-16.0KiB, (W) 16.0KiB-16.0KiB, "
                             "(T) 16.0KiB-16.0KiB, ioengine=psync, iodepth=1\nviosim-0.1.0\nStarting 1 process\n\n"));
  EXPECT_THAT(out, HasSubstr("slow: (groupid=0, jobs=1): err= 5 (file:io_u.c:1876, func=io_u error, "
                             "error=Input/output error): pid=1000: Thu Jan  1 00:00:00 1970\n"
                             "  Description  : [three slow writes]\n"));
  // 3 I/Os, 48KiB in 203 ms: 14 IOPS, 242128 B/s.
  EXPECT_THAT(out, HasSubstr("  write: IOPS=14, BW=236KiB/s (242kB/s)(48.0KiB/203msec); 0 zone resets\n"));
  // min > 2ms, max > 99.999999ms, stdev > 1ms: msec; mean 67.67 ms, sample
  // deviation of (3, 150, 50) ms = 75.08 ms.
  EXPECT_THAT(out, HasSubstr("    clat (msec): min=3, max=150, avg=67.67, stdev=75.08\n"));
  // Bucket middles 2998272, 50069504 and 149946368 ns, rounded up to ms
  // twice (to us, then ms): 3, 51, 150.
  EXPECT_THAT(out, HasSubstr("    clat percentiles (msec):\n"
                             "     |  1.00th=[    3],  5.00th=[    3], 10.00th=[    3], 20.00th=[    3],\n"
                             "     | 30.00th=[    3], 40.00th=[   51], 50.00th=[   51], 60.00th=[   51],\n"
                             "     | 70.00th=[  150], 80.00th=[  150], 90.00th=[  150], 95.00th=[  150],\n"
                             "     | 99.00th=[  150], 99.50th=[  150], 99.90th=[  150], 99.95th=[  150],\n"
                             "     | 99.99th=[  150]\n"));
  EXPECT_THAT(out, HasSubstr("  lat (msec)   : 4=33.33%, 100=33.33%, 250=33.33%\n"
                             "  cpu          : usr=0.00%, sys=0.00%, ctx=0, majf=0, minf=0\n"));
  EXPECT_THAT(out, HasSubstr("\nRun status group 0 (all jobs):\n"
                             "  WRITE: bw=236KiB/s (242kB/s), 236KiB/s-236KiB/s (242kB/s-242kB/s), "
                             "io=48.0KiB (49.2kB), run=203-203msec\n"));
  EXPECT_EQ(out.find("Disk stats"), std::string::npos);  // no modeled devices listed
  EXPECT_EQ(out.find("lat (usec)"), std::string::npos);
}

TEST(FormatNormal, EntitiesWithoutIoAreSkipped) {
  FioReport r;
  ThreadStat idle;
  idle.name = "idle";
  r.entities.push_back(idle);
  r.groups.push_back(MakeGroupStat(0, r.entities));
  EXPECT_EQ(FormatNormal(r), "viosim-0.1.0\n\n\nRun status group 0 (all jobs):\n");
  // JSON still lists it.
  EXPECT_THAT(FormatJson(r, false), HasSubstr("\"jobname\" : \"idle\""));
}

TEST(FormatJson, PrinterQuirks) {
  FioReport r;
  r.global_options = {{"bs", "4k"}, {"time_based", "", true}, {"description", "say \"hi\" \\ bye"}};
  ThreadStat only_bare;
  only_bare.name = "j1";
  only_bare.job_options = {{"time_based", "", true}};
  ThreadStat none;
  none.name = "j2";
  none.groupid = 0;
  r.entities = {only_bare, none};
  r.groups.push_back(MakeGroupStat(0, r.entities));
  const std::string json = FormatJson(r, false);
  EXPECT_EQ(json.rfind("{\n  \"fio version\" : \"viosim-0.1.0\",\n  \"timestamp\" : 0,\n"
                       "  \"timestamp_ms\" : 0,\n  \"time\" : \"Thu Jan  1 00:00:00 1970\",\n"
                       "  \"global options\" : {\n    \"bs\" : \"4k\",\n"
                       "    \"description\" : \"say \\\"hi\\\" \\\\ bye\"\n  },\n  \"jobs\" : [\n    {\n",
                       0),
            0u)
      << json;
  // A job whose options were all written bare: fio prints an empty object.
  EXPECT_THAT(json, HasSubstr("      \"elapsed\" : 0,\n      \"job options\" : {\n\n      },\n"));
  // A job with no options of its own has no "job options".
  EXPECT_THAT(json, HasSubstr("\"jobname\" : \"j2\",\n      \"groupid\" : 0,\n      \"error\" : 0,\n"
                              "      \"eta\" : 0,\n      \"elapsed\" : 0,\n      \"read\" : {\n"));
  EXPECT_THAT(json, HasSubstr("        \"iops\" : 0.000000,\n"));
  EXPECT_EQ(json.find("disk_util"), std::string::npos);
  EXPECT_EQ(json.substr(json.size() - 6), "  }\n}\n");  // the viosim object, the root, a newline
}

}  // namespace
}  // namespace fio
