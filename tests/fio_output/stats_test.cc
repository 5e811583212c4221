// fio's statistics arithmetic in models/fio/stats.h: the histogram's
// bucket mapping and percentile rule (values derived by hand from fio
// 3.33's stat.c formulas, then checked against real json+ outputs), the
// running mean/variance and its pooled merge, group_reporting's sums and the
// group status numbers.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/json_value.h"
#include "gtest/gtest.h"
#include "models/fio/stats.h"
#include "tests/fio_output/test_files.h"

namespace fio {
namespace {

using analysis::JsonValue;

// Below 128 ns every value has its own bucket.
TEST(LatStatBuckets, SmallValuesAreTheirOwnBucket) {
  EXPECT_EQ(LatStat::BucketOf(0), 0);
  EXPECT_EQ(LatStat::BucketOf(1), 1);
  EXPECT_EQ(LatStat::BucketOf(63), 63);
  EXPECT_EQ(LatStat::BucketOf(64), 64);
  EXPECT_EQ(LatStat::BucketOf(127), 127);
  EXPECT_EQ(LatStat::BucketValue(0), 0u);
  EXPECT_EQ(LatStat::BucketValue(100), 100u);
  EXPECT_EQ(LatStat::BucketValue(127), 127u);
}

// 128..255: msb 7, one error bit, group base index (1+1)<<6 = 128, buckets
// 2 ns wide, value = 128 + (k + 0.5) * 2.
TEST(LatStatBuckets, FirstRoundedGroup) {
  EXPECT_EQ(LatStat::BucketOf(128), 128);
  EXPECT_EQ(LatStat::BucketOf(129), 128);
  EXPECT_EQ(LatStat::BucketOf(130), 129);
  EXPECT_EQ(LatStat::BucketOf(255), 191);
  EXPECT_EQ(LatStat::BucketValue(128), 129u);
  EXPECT_EQ(LatStat::BucketValue(129), 131u);
  EXPECT_EQ(LatStat::BucketValue(191), 255u);
}

// 256..511: two error bits, base index 192, 4 ns buckets.
TEST(LatStatBuckets, SecondRoundedGroup) {
  EXPECT_EQ(LatStat::BucketOf(256), 192);
  EXPECT_EQ(LatStat::BucketOf(259), 192);
  EXPECT_EQ(LatStat::BucketOf(260), 193);
  EXPECT_EQ(LatStat::BucketValue(192), 258u);
  EXPECT_EQ(LatStat::BucketValue(193), 262u);
}

TEST(LatStatBuckets, MicroAndMillisecondValues) {
  // 4096: msb 12, 6 error bits, base index 7<<6 = 448, offset 64 & 63 = 0;
  // value 4096 + 0.5 * 64.
  EXPECT_EQ(LatStat::BucketOf(4096), 448);
  EXPECT_EQ(LatStat::BucketValue(448), 4128u);
  // 5000 >> 6 = 78, & 63 = 14: index 462, value 4096 + 14.5 * 64.
  EXPECT_EQ(LatStat::BucketOf(5000), 462);
  EXPECT_EQ(LatStat::BucketValue(462), 5024u);
  // 1 ms: msb 19, 13 error bits, base 14<<6 = 896, (1000000 >> 13) & 63 =
  // 58: index 954, value 2^19 + 58.5 * 8192.
  EXPECT_EQ(LatStat::BucketOf(1000000), 954);
  EXPECT_EQ(LatStat::BucketValue(954), 1003520u);
  // Real fio's 1st percentile in golden_a3 is 1236992 = 2^20 + 11.5 * 2^14,
  // the middle of [1228800, 1245184).
  EXPECT_EQ(LatStat::BucketOf(1228800), 971);
  EXPECT_EQ(LatStat::BucketOf(1245183), 971);
  EXPECT_EQ(LatStat::BucketOf(1245184), 972);
  EXPECT_EQ(LatStat::BucketValue(971), 1236992u);
}

TEST(LatStatBuckets, LastGroupAndClamp) {
  const uint64_t top = uint64_t{1} << 34;
  EXPECT_EQ(LatStat::BucketOf(top - 1), LatStat::kBuckets - 1);
  EXPECT_EQ(LatStat::BucketOf(top), LatStat::kBuckets - 1);
  EXPECT_EQ(LatStat::BucketOf(UINT64_MAX), LatStat::kBuckets - 1);
  // 2^33 + 63.5 * 2^27.
  EXPECT_EQ(LatStat::BucketValue(LatStat::kBuckets - 1), 17112760320u);
}

TEST(LatStatBuckets, EveryBucketValueMapsBackAndGrows) {
  for (int i = 0; i < LatStat::kBuckets; ++i) {
    EXPECT_EQ(LatStat::BucketOf(LatStat::BucketValue(i)), i) << i;
    if (i > 0) {
      EXPECT_GT(LatStat::BucketValue(i), LatStat::BucketValue(i - 1)) << i;
    }
  }
}

TEST(LatStatPercentile, FirstBucketReachingTheShare) {
  LatStat s;
  for (uint64_t v = 1; v <= 100; ++v) s.Record(v);
  EXPECT_EQ(s.Percentile(1), 1u);
  EXPECT_EQ(s.Percentile(50), 50u);
  EXPECT_EQ(s.Percentile(99.5), 100u);
  EXPECT_EQ(s.Percentile(99.99), 100u);
  EXPECT_EQ(s.Percentile(0.5), 1u);
}

TEST(LatStatPercentile, ReachingExactlyCounts) {
  LatStat s;
  for (uint64_t v : {10, 20, 30, 40}) s.Record(v);
  // 50% of 4 is exactly 2: the bucket where the count reaches 2.
  EXPECT_EQ(s.Percentile(50), 20u);
  EXPECT_EQ(s.Percentile(50.0001), 30u);
  EXPECT_EQ(s.Percentile(25), 10u);
}

TEST(LatStatPercentile, ReportsBucketMiddlesNotSamples) {
  LatStat s;
  s.Record(5);
  for (int i = 0; i < 1000; ++i) s.Record(1000000);
  EXPECT_EQ(s.Percentile(50), 1003520u);
  EXPECT_EQ(s.Percentile(0.05), 5u);  // threshold 0.5005 samples
  EXPECT_EQ(s.Percentile(0.1), 1003520u);
  EXPECT_EQ(LatStat().Percentile(50), 0u);
}

TEST(LatStatMoments, WelfordMeanAndSampleDeviation) {
  LatStat s;
  for (uint64_t v : {2, 4, 4, 4, 5, 5, 7, 9}) s.Record(v);
  EXPECT_EQ(s.n(), 8u);
  EXPECT_EQ(s.min(), 2u);
  EXPECT_EQ(s.max(), 9u);
  EXPECT_DOUBLE_EQ(s.mean(), 5.0);
  EXPECT_DOUBLE_EQ(s.stddev(), std::sqrt(32.0 / 7.0));
  LatStat one;
  one.Record(42);
  EXPECT_EQ(one.stddev(), 0.0);
  EXPECT_EQ(LatStat().min(), 0u);
}

TEST(LatStatMoments, PooledMerge) {
  LatStat a, b;
  for (uint64_t v : {1, 2, 3}) a.Record(v);
  b.Record(10);
  a.Merge(b);
  // mean (2*3 + 10) / 4 = 4; squared deviations 2 + 0 + 8^2 * 3 / 4 = 50.
  EXPECT_EQ(a.n(), 4u);
  EXPECT_DOUBLE_EQ(a.mean(), 4.0);
  EXPECT_DOUBLE_EQ(a.stddev(), std::sqrt(50.0 / 3.0));
  EXPECT_EQ(a.min(), 1u);
  EXPECT_EQ(a.max(), 10u);
  EXPECT_EQ(a.buckets()[10], 1u);

  LatStat empty;
  empty.Merge(a);  // into an empty one: a copy
  EXPECT_EQ(empty.n(), 4u);
  EXPECT_DOUBLE_EQ(empty.mean(), 4.0);
  EXPECT_EQ(empty.min(), 1u);
  a.Merge(LatStat());  // merging nothing changes nothing
  EXPECT_EQ(a.n(), 4u);
  EXPECT_EQ(a.min(), 1u);
}

TEST(LatStatMoments, FromPartsKeepsTheSummary) {
  std::array<uint64_t, LatStat::kBuckets> b{};
  b[LatStat::BucketOf(1000)] = 3;
  const LatStat s = LatStat::FromParts(3, 900, 1100, 1000.5, 12.25, b);
  EXPECT_EQ(s.n(), 3u);
  EXPECT_EQ(s.min(), 900u);
  EXPECT_EQ(s.max(), 1100u);
  EXPECT_DOUBLE_EQ(s.mean(), 1000.5);
  EXPECT_DOUBLE_EQ(s.stddev(), 12.25);
  EXPECT_EQ(s.Percentile(50), LatStat::BucketValue(LatStat::BucketOf(1000)));
}

// Real json+ outputs: every bin key is a bucket value, the bins add up to
// N, and the percentiles computed from the bins are fio's.
void CheckBinsAgainstPercentiles(const std::string& path) {
  SCOPED_TRACE(path);
  std::string text = fio_test::ReadFile(path);
  ASSERT_FALSE(text.empty());
  text = text.substr(text.find('{'));
  text = text.substr(0, text.find("\n}\n") + 3);
  const auto root = analysis::JsonReader(text).Document();
  ASSERT_TRUE(root.ok());
  int checked = 0;
  for (const JsonValue& job : (*root)["jobs"].items) {
    for (const char* dir : {"read", "write", "trim"}) {
      const JsonValue& clat = job[dir]["clat_ns"];
      if (!clat.Has("bins")) continue;
      std::array<uint64_t, LatStat::kBuckets> buckets{};
      uint64_t total = 0;
      for (const auto& [key, count] : clat["bins"].members) {
        const uint64_t v = std::stoull(key);
        const int idx = LatStat::BucketOf(v);
        EXPECT_EQ(LatStat::BucketValue(idx), v) << key;
        buckets[idx] += count.U64();
        total += count.U64();
      }
      EXPECT_EQ(total, clat["N"].U64());
      const LatStat s = LatStat::FromParts(clat["N"].U64(), clat["min"].U64(), clat["max"].U64(),
                                           clat["mean"].Num(), clat["stddev"].Num(), buckets);
      for (const auto& [key, value] : clat["percentile"].members) {
        EXPECT_EQ(s.Percentile(std::stod(key)), value.U64()) << dir << " p" << key;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(LatStatRealData, PercentilesFromBinsMatchFio) {
  for (const char* f : {"bins_a_libaio_randread.jsonplus.json", "bins_b_pvsync2_hipri_randwrite.jsonplus.json",
                        "bins_c_randrw_mixed.jsonplus.json", "golden_rr_libaio.out", "golden_randrw_group.out",
                        "golden_two_groups.out"}) {
    CheckBinsAgainstPercentiles(std::string("tests/fio_output/testdata/") + f);
  }
}

ThreadStat Member(const std::string& name, int pid, uint64_t runtime_ms, const std::vector<uint64_t>& clat,
                  SampleStat bw, double usr, uint64_t job_runtime) {
  ThreadStat ts;
  ts.name = name;
  ts.pid = pid;
  ts.description = name + " desc";
  ts.latency_depth = pid;  // to see whose survives
  ts.job_options = {{"rw", name, false}};
  DirStats& d = ts.ddir[kRead];
  d.runtime_ms = runtime_ms;
  d.io_bytes = 4096 * clat.size();
  d.total_ios = clat.size();
  for (uint64_t v : clat) {
    d.clat.Record(v);
    d.lat.Record(v + 100);
  }
  d.bw = bw;
  d.iops = bw;
  ts.usr_cpu = usr;
  ts.sys_cpu = 2 * usr;
  ts.job_runtime_ms = job_runtime;
  ts.elapsed_s = runtime_ms / 1000 + 1;
  ts.ctx = 5;
  ts.io_depth[6] = clat.size();
  ts.io_submit[1] = clat.size();
  ts.io_complete[1] = clat.size();
  ts.total_submit = clat.size();
  ts.total_complete = clat.size();
  ts.lat_us[3] = clat.size();
  return ts;
}

TEST(SumThreadStats, GroupReportingRules) {
  const std::vector<uint64_t> c1 = {1000, 2000, 3000, 4000};
  const std::vector<uint64_t> c2 = {5000, 6000, 7000, 100000, 200};
  const ThreadStat a = Member("a", 1001, 1000, c1, {100, 200, 150.0, 10.0, 4}, 10.0, 1000);
  const ThreadStat b = Member("b", 1002, 1100, c2, {50, 250, 160.0, 20.0, 5}, 20.0, 3000);
  const ThreadStat s = SumThreadStats({a, b});

  EXPECT_EQ(s.name, "a");
  EXPECT_EQ(s.description, "a desc");
  EXPECT_EQ(s.pid, 1001);
  EXPECT_EQ(s.members, 2);
  EXPECT_EQ(s.latency_depth, 1002);  // fio copies it per member: the last one's
  ASSERT_EQ(s.job_options.size(), 1u);
  EXPECT_EQ(s.job_options[0].value, "b");

  const DirStats& d = s.ddir[kRead];
  EXPECT_EQ(d.runtime_ms, 1100u);  // max
  EXPECT_EQ(d.io_bytes, 4096u * 9);
  EXPECT_EQ(d.total_ios, 9u);

  LatStat all;
  for (uint64_t v : c1) all.Record(v);
  for (uint64_t v : c2) all.Record(v);
  EXPECT_EQ(d.clat.n(), 9u);
  EXPECT_EQ(d.clat.min(), 200u);
  EXPECT_EQ(d.clat.max(), 100000u);
  EXPECT_NEAR(d.clat.mean(), all.mean(), 1e-9 * all.mean());
  EXPECT_NEAR(d.clat.stddev(), all.stddev(), 1e-9 * all.stddev());
  EXPECT_EQ(d.clat.buckets(), all.buckets());
  EXPECT_EQ(d.lat.n(), 9u);

  // bw / iops: pure sums; the deviation from the summed squared deviations.
  EXPECT_EQ(d.bw.min, 150u);
  EXPECT_EQ(d.bw.max, 450u);
  EXPECT_DOUBLE_EQ(d.bw.mean, 310.0);
  EXPECT_EQ(d.bw.samples, 9u);
  EXPECT_NEAR(d.bw.stddev, std::sqrt((100.0 * 3 + 400.0 * 4) / 8), 1e-9);
  EXPECT_EQ(d.iops.samples, 9u);

  // CPU: summed CPU time over summed run time.
  EXPECT_DOUBLE_EQ(s.usr_cpu, (10.0 * 1000 + 20.0 * 3000) / 4000);
  EXPECT_DOUBLE_EQ(s.sys_cpu, (20.0 * 1000 + 40.0 * 3000) / 4000);
  EXPECT_EQ(s.job_runtime_ms, 4000u);
  EXPECT_EQ(s.ctx, 10u);
  EXPECT_EQ(s.io_depth[6], 9u);
  EXPECT_EQ(s.total_submit, 9u);
  EXPECT_EQ(s.total_complete, 9u);
  EXPECT_EQ(s.lat_us[3], 9u);
  EXPECT_EQ(s.elapsed_s, 2u);
}

TEST(SumThreadStats, SingleMemberIsUnchanged) {
  const ThreadStat a = Member("a", 1001, 1000, {1000, 3000}, {100, 200, 150.0, 10.0, 4}, 10.0, 1000);
  const ThreadStat s = SumThreadStats({a});
  EXPECT_EQ(s.ddir[kRead].bw.stddev, 10.0);
  EXPECT_EQ(s.ddir[kRead].clat.mean(), a.ddir[kRead].clat.mean());
  EXPECT_EQ(s.ddir[kRead].clat.stddev(), a.ddir[kRead].clat.stddev());
  EXPECT_EQ(s.usr_cpu, 10.0);
  EXPECT_EQ(s.members, 1);
}

TEST(MakeGroupStat, AggregateAndSpread) {
  ThreadStat e1, e2;
  e1.ddir[kRead].io_bytes = 409600;
  e1.ddir[kRead].runtime_ms = 1000;
  e2.ddir[kRead].io_bytes = 1228800;
  e2.ddir[kRead].runtime_ms = 2000;
  const GroupStat g = MakeGroupStat(3, {e1, e2});
  EXPECT_EQ(g.groupid, 3);
  EXPECT_EQ(g.io_bytes[kRead], 1638400u);
  EXPECT_EQ(g.agg_bw[kRead], 819200u);  // all bytes over the longest run
  EXPECT_EQ(g.min_bw[kRead], 409600u);
  EXPECT_EQ(g.max_bw[kRead], 614400u);
  EXPECT_EQ(g.min_run[kRead], 1000u);
  EXPECT_EQ(g.max_run[kRead], 2000u);
  EXPECT_EQ(g.max_run[kWrite], 0u);
  EXPECT_EQ(g.agg_bw[kWrite], 0u);
}

}  // namespace
}  // namespace fio
