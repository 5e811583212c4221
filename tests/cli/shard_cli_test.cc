// Sharded runs end to end: `--shard K/N --format jsonl` parts joined by
// `viosim merge` print byte for byte what the unsharded command prints, for
// N = 1, 2, 3 and 7 and every output format; bad shard specs and bad parts
// exit 2 with a message naming the problem and leave no output file.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/run_viosim.h"

namespace clitest {
namespace {

using ::testing::HasSubstr;

constexpr char kShort[] = "--set run.duration=20ms --set run.warmup=1ms";

// Typed-in published cells over four variants: eight runs for reproduce
// (each variant at two seeds), beside lockbench's four.
constexpr char kTable[] = R"(name: "shardtable"
workload { lockbench { threads: 2 think { exponential { mean: "9us" } } hold { exponential { mean: "2us" } } } }
variant { name: "t3" overlay { workload { lockbench { threads: 3 } } } }
variant { name: "t5" overlay { workload { lockbench { threads: 5 } } } }
variant { name: "t8" overlay { workload { lockbench { threads: 8 } } } }
published { variant: "base" metric: "lock_acquisitions_per_s" value: 160000 role: CALIBRATION tolerance_pct: 50 source: "made up" }
published { variant: "t3" metric: "lock_acquisitions_per_s" value: 230000 role: PREDICTION tolerance_pct: 50 source: "made up" }
published { variant: "t5" metric: "lock_wait_mean_us" value: 1.5 role: PREDICTION tolerance_pct: 50 source: "made up" }
published { variant: "t8" metric: "lock_acquisitions_per_s" value: 450000 role: PREDICTION tolerance_pct: 50 source: "made up" }
run { duration: "20ms" warmup: "1ms" }
)";

// Lockbench whose think time is FITTED to the base cell and whose hold time
// is uncertain: each band point draws the hold, refits the think time and
// runs the prediction. The think range is narrow, so that at a short hold
// the refit cannot reach the cell (a refit failure, carried by the parts).
constexpr char kBanded[] = R"(name: "shardbands"
platform { cpus: 8 lock_handoff { value: "0ns" source { kind: DEFINED ref: "t" } } }
stack { lock { kind: TICKET } }
workload {
  lockbench {
    threads: 2
    think {
      exponential { mean: "9us" }
      source { kind: FITTED ref: "t" fit { field: "workload.lockbench.think.exponential.mean" cell: "base/lock_acquisitions_per_s" range: "8us,10us" } }
    }
    hold {
      exponential { mean: "2us" }
      source { kind: ESTIMATED ref: "t" uncertainty { range { lo: "1us" hi: "3us" } reason: "test" } }
    }
  }
}
variant { name: "t5" overlay { workload { lockbench { threads: 5 } } } }
published { variant: "base" metric: "lock_acquisitions_per_s" value: 160000 role: CALIBRATION tolerance_pct: 50 source: "made up" }
published { variant: "t5" metric: "lock_acquisitions_per_s" value: 330000 role: PREDICTION tolerance_pct: 50 source: "made up" }
published { variant: "t5" metric: "lock_wait_mean_us" value: 2 role: PREDICTION tolerance_pct: 50 source: "made up" }
run { duration: "20ms" warmup: "1ms" }
)";

// Runs `command` unsharded in each format and as N shards merged, for each
// N, and expects the same bytes and the same exit status.
void ExpectMergeRoundTrip(const std::string& name, const std::string& command) {
  std::vector<std::pair<std::string, Result>> whole;
  for (const char* format : {"text", "json", "csv"}) {
    Result r = Viosim(absl::StrCat(command, " --format ", format));
    ASSERT_LE(r.code, 1) << r.err;
    ASSERT_FALSE(r.out.empty());
    whole.emplace_back(format, r);
  }
  for (int n : {1, 2, 3, 7}) {
    std::string parts;
    // Shards written last to first: merge takes the parts in any order.
    for (int k = n - 1; k >= 0; --k) {
      const std::string part = absl::StrCat(TmpDir(), "/", name, ".", k, "of", n, ".jsonl");
      Result r = Viosim(absl::StrCat(command, " --shard ", k, "/", n, " --format jsonl --jobs 2 -o ", part));
      ASSERT_EQ(r.code, 0) << r.err;
      absl::StrAppend(&parts, " ", part);
    }
    for (const auto& [format, expected] : whole) {
      Result m = Viosim(absl::StrCat("merge --format ", format, parts));
      EXPECT_EQ(m.code, expected.code) << m.err;
      EXPECT_EQ(m.out, expected.out) << name << ": N=" << n << ", --format " << format;
    }
  }
}

TEST(ShardCliTest, SweepMergedFromShardsIsTheUnshardedOutput) {
  ExpectMergeRoundTrip("sweep", absl::StrCat("sweep scenarios/lockbench.textproto ", kShort,
                                             " --over workload.lockbench.threads=2,3,4,6 --metric "
                                             "lock_acquisitions_per_s --metric lock_wait_mean_us"));
}

TEST(ShardCliTest, ReproduceMergedFromShardsIsTheUnshardedOutput) {
  const std::string table = WriteTmp("shardtable.textproto", kTable);
  ExpectMergeRoundTrip("reproduce",
                       absl::StrCat("reproduce scenarios/lockbench.textproto ", table, " ", kShort, " --seed 7"));
}

// The gate's verdict comes out of the merge, exit status included: 0 with a
// baseline taken from the same run, 1 once a baseline value is moved.
TEST(ShardCliTest, GateMergedFromShardsIsTheUnshardedGate) {
  const std::string table = WriteTmp("gatetable.textproto", kTable);
  const std::string baseline = absl::StrCat(TmpDir(), "/baseline.textproto");
  const std::string gate = absl::StrCat("gate ", table, " ", kShort, " --seed 3 --baseline ", baseline);
  ASSERT_EQ(Viosim(absl::StrCat(gate, " --update-baseline")).code, 0);
  ASSERT_EQ(Viosim(gate).code, 0);
  ExpectMergeRoundTrip("gate", gate);
  std::string moved = ReadAll(baseline);
  const size_t at = moved.find("modeled: ");
  ASSERT_NE(at, std::string::npos) << moved;
  moved.insert(at + 9, "1");  // a leading digit: the value grows tenfold or more
  WriteTmp("baseline.textproto", moved);
  ASSERT_EQ(Viosim(gate).code, 1);
  ExpectMergeRoundTrip("gate_failing", gate);
}

// The band points (draw, refit, predict) are points of their own beside
// reproduce's runs, and the merge prints the bands, CSV columns included.
TEST(ShardCliTest, BandsMergedFromShardsAreTheUnshardedBands) {
  const std::string table = WriteTmp("shardbands.textproto", kBanded);
  const std::string bands = absl::StrCat("reproduce ", table, " --bands 3 --band-seed 5");
  Result list = Viosim(absl::StrCat(bands, " --list"));
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr(absl::StrCat("6:", table, "/band-point-2-of-3@band-seed=5\n")));
  Result csv = Viosim(absl::StrCat(bands, " --format csv"));
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_THAT(csv.out, HasSubstr(",band_p5,band_p50,band_p95,band_k,band_refit_failed,band_points,band_inside,"));
  EXPECT_THAT(csv.out, HasSubstr(",3,")) << "k of each PREDICTION row";
  ExpectMergeRoundTrip("bands", bands);
}

// A refit sweep's point is one value: its search and the variants run after
// it. A value whose refit is not fitted (hold 40us: the cell is out of
// reach) makes the merge exit 1, as the unsharded sweep does.
TEST(ShardCliTest, RefitSweepMergedFromShardsIsTheUnshardedOutput) {
  const std::string table = WriteTmp("refittable.textproto", kTable);
  const std::string sweep =
      absl::StrCat("sweep ", table, " ", kShort,
                   " --over workload.lockbench.hold.exponential.mean=1us,1500ns,2us,2500ns,3us,4us,40us"
                   " --variant t3 --variant t8 --refit workload.lockbench.think.exponential.mean"
                   " --cell base/lock_acquisitions_per_s --range 2us,40us --tolerance 1");
  Result list = Viosim(absl::StrCat(sweep, " --list"));
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(list.out, "0:1us/refit\n1:1500ns/refit\n2:2us/refit\n3:2500ns/refit\n4:3us/refit\n5:4us/refit\n6:40us/refit\n");
  ASSERT_EQ(Viosim(sweep).code, 1);
  ExpectMergeRoundTrip("refit", sweep);
}

// Parts of a banded or refit run do not mix with parts of another run: no
// bands, another K or band seed, no refit; a band point missing or twice.
TEST(ShardCliTest, MergeRefusesBandAndRefitPartsOfAnotherRun) {
  const std::string table = WriteTmp("mixbands.textproto", kBanded);
  const std::string reproduce = absl::StrCat("reproduce ", table);
  auto part = [](const std::string& command, const std::string& shard, const std::string& name) {
    const std::string path = absl::StrCat(TmpDir(), "/", name, ".jsonl");
    const Result r = Viosim(absl::StrCat(command, " --shard ", shard, " --format jsonl -o ", path));
    EXPECT_EQ(r.code, 0) << r.err;
    return path;
  };
  const std::string b0 = part(absl::StrCat(reproduce, " --bands 3"), "0/2", "b0");
  const std::string b1 = part(absl::StrCat(reproduce, " --bands 3"), "1/2", "b1");
  const std::string plain1 = part(reproduce, "1/2", "plain1");
  const std::string k4 = part(absl::StrCat(reproduce, " --bands 4"), "1/2", "k4");
  const std::string seed2 = part(absl::StrCat(reproduce, " --bands 3 --band-seed 2"), "1/2", "seed2");
  ASSERT_EQ(Viosim(absl::StrCat("merge ", b0, " ", b1)).code, 0);

  const std::string sweep = absl::StrCat("sweep ", table, " --over workload.lockbench.hold.exponential.mean=2us,3us");
  const std::string refit = absl::StrCat(sweep, " --refit workload.lockbench.think.exponential.mean"
                                                " --cell base --range 2us,40us");
  const std::string r0 = part(refit, "0/2", "r0");
  const std::string s1 = part(sweep, "1/2", "s1");
  // Forged results: a band point with a value more than the cells, a refit
  // whose fitted step is not one of its steps, a step whose bracket is not
  // before it.
  auto forged = [](const std::string& path, const std::string& from, const std::string& to, const std::string& name) {
    std::string text = ReadAll(path);
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
    return WriteTmp(name, text);
  };
  const std::string b1_more = forged(forged(b1, "\"values\":[", "\"values\":[1,", "b1_more.jsonl"),
                                     "\"ci95\":[", "\"ci95\":[1,", "b1_more.jsonl");
  const std::string b1_uneven = forged(b1, "\"values\":[", "\"values\":[1,", "b1_uneven.jsonl");
  const std::string r0_best = forged(r0, "\"best\":", "\"best\":9", "r0_best.jsonl");
  const std::string r0_bracket = forged(r0, "\"bracket_lo\":-1", "\"bracket_lo\":7", "r0_bracket.jsonl");
  const std::string r1 = part(refit, "1/2", "r1");
  const std::string out = absl::StrCat(TmpDir(), "/mixed.txt");
  struct Case {
    std::string files;
    std::vector<std::string> says;
  };
  for (const Case& c : std::vector<Case>{
           {absl::StrCat(b0, " ", plain1), {"plain1.jsonl:1 (point 1:", "field 'args'"}},
           {absl::StrCat(b0, " ", k4), {"k4.jsonl:1 (point ", "field 'args'", "\"bands\":[\"4\"]"}},
           {absl::StrCat(b0, " ", seed2), {"seed2.jsonl:1 (point ", "field 'args'", "\"band-seed\":[\"2\"]"}},
           {b0, {"points missing (index 1, 3, 5", "--shard 1/2)"}},
           {absl::StrCat(b0, " ", b1, " ", b1), {"is duplicated", "point 1:"}},
           {absl::StrCat(r0, " ", s1), {"s1.jsonl:1 (point 1:", "field 'args'"}},
           {absl::StrCat(b0, " ", b1_more), {"point 5:", "3 cell values, but the scenario has 2 PREDICTION cells"}},
           {absl::StrCat(b0, " ", b1_uneven), {"b1_uneven.jsonl:3 (point 5:", "values and ci95 differ"}},
           {absl::StrCat(r0_best, " ", r1), {"r0_best.jsonl:1 (point 0:2us/refit)", "'refit.best'"}},
           {absl::StrCat(r0_bracket, " ", r1), {"r0_bracket.jsonl:1 (point 0:2us/refit)", "step 0's bracket"}},
       }) {
    std::filesystem::remove(out);
    Result r = Viosim(absl::StrCat("merge -o ", out, " ", c.files));
    EXPECT_EQ(r.code, 2) << c.files;
    for (const std::string& says : c.says) EXPECT_THAT(r.err, HasSubstr(says)) << c.files;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.files;
  }
}

TEST(ShardCliTest, ListGivesOneStableIdPerPointAndShardsSplitThem) {
  const std::string sweep = "sweep scenarios/lockbench.textproto --over workload.lockbench.threads=2,3,4";
  Result all = Viosim(absl::StrCat(sweep, " --list"));
  ASSERT_EQ(all.code, 0) << all.err;
  const std::vector<std::string> ids = absl::StrSplit(all.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(ids.size(), 6u);  // three values x two variants
  EXPECT_EQ(ids[0], "0:2/N4");
  EXPECT_EQ(Viosim(absl::StrCat(sweep, " --list")).out, all.out);
  std::vector<std::string> joined;
  for (int k = 0; k < 4; ++k) {
    Result r = Viosim(absl::StrCat(sweep, " --list --shard ", k, "/4"));
    ASSERT_EQ(r.code, 0) << r.err;
    for (absl::string_view id : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) joined.emplace_back(id);
  }
  std::sort(joined.begin(), joined.end());
  std::vector<std::string> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(joined, sorted);
}

TEST(ShardCliTest, BadShardSpecsExitTwoWithAMessage) {
  const std::string sweep = "sweep scenarios/lockbench.textproto --over workload.lockbench.threads=2,3 --format jsonl";
  for (const char* spec : {"3/2", "0/0", "a/b", "-1/2", "1", "2/2", "0/5"}) {
    Result r = Viosim(absl::StrCat(sweep, " --shard=", spec));
    EXPECT_EQ(r.code, 2) << spec;
    EXPECT_THAT(r.err, HasSubstr("--shard")) << spec;
    EXPECT_TRUE(r.out.empty()) << spec;
  }
  Result no_jsonl = Viosim("sweep scenarios/lockbench.textproto --over workload.lockbench.threads=2,3 --shard 0/2");
  EXPECT_EQ(no_jsonl.code, 2);
  EXPECT_THAT(no_jsonl.err, HasSubstr("--format jsonl"));
}

TEST(ShardCliTest, MergeRefusesMissingDuplicatedAndMismatchedParts) {
  const std::string sweep =
      absl::StrCat("sweep scenarios/lockbench.textproto ", kShort, " --over workload.lockbench.threads=2,3");
  const std::string a = absl::StrCat(TmpDir(), "/m0.jsonl"), b = absl::StrCat(TmpDir(), "/m1.jsonl"),
                    other = absl::StrCat(TmpDir(), "/other.jsonl");
  ASSERT_EQ(Viosim(absl::StrCat(sweep, " --shard 0/2 --format jsonl -o ", a)).code, 0);
  ASSERT_EQ(Viosim(absl::StrCat(sweep, " --shard 1/2 --format jsonl -o ", b)).code, 0);
  ASSERT_EQ(Viosim(absl::StrCat(sweep, " --seed 9 --shard 1/2 --format jsonl -o ", other)).code, 0);
  ASSERT_EQ(Viosim(absl::StrCat("merge ", a, " ", b)).code, 0);
  const std::string out = absl::StrCat(TmpDir(), "/merged.txt");

  struct Case {
    std::string files;
    std::string says;
  };
  const std::string cut = WriteTmp("cut.jsonl", ReadAll(b).substr(0, 40));
  const std::string foreign = WriteTmp("foreign.jsonl", "{\"name\": \"x\"}\n");
  const std::string other_binary =
      WriteTmp("old.jsonl", absl::StrCat("{\"viosim\":\"viosim 0.0.9\"", ReadAll(b).substr(ReadAll(b).find(','))));
  for (const Case& c : std::vector<Case>{
           {a, "2 of 4 points missing (index 1, 3; written by --shard 1/2)"},
           {absl::StrCat(a, " ", b, " ", b), "is duplicated"},
           {absl::StrCat(a, " ", other), "field 'scenarios'"},
           {absl::StrCat(a, " ", cut), "cut.jsonl:1: not a viosim point"},
           {absl::StrCat(a, " ", foreign), "foreign.jsonl:1: not a viosim point"},
           {absl::StrCat(a, " ", other_binary), "field 'viosim'"},
           {absl::StrCat(a, " ", TmpDir(), "/absent.jsonl"), "absent.jsonl"},
       }) {
    std::filesystem::remove(out);
    Result r = Viosim(absl::StrCat("merge -o ", out, " ", c.files));
    EXPECT_EQ(r.code, 2) << c.files;
    EXPECT_THAT(r.err, HasSubstr(c.says)) << c.files;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.files;
  }
}

// Merge re-plans the command its parts name, and planning checks every
// point (a resolve per band point, per sweep value and variant). A part
// is a few hundred bytes, so merge plans no more points than its parts
// hold: a command naming more, or parts claiming more than they hold, are
// refused before the checks. The messages show which path refused them:
// the count, not a plan's failure.
TEST(ShardCliTest, MergePlansNoMorePointsThanItsPartsHold) {
  const std::string table = WriteTmp("manypoints.textproto", kBanded);
  const std::string bands = absl::StrCat(TmpDir(), "/bands3.jsonl");
  ASSERT_EQ(Viosim(absl::StrCat("reproduce ", table, " --bands 3 --shard 0/1 --format jsonl -o ", bands)).code, 0);
  const std::string sweep = absl::StrCat(TmpDir(), "/sweep2.jsonl");
  ASSERT_EQ(Viosim(absl::StrCat("sweep ", table, " --over workload.lockbench.hold.exponential.mean=2us,3us",
                                " --shard 0/1 --format jsonl -o ", sweep))
                .code,
            0);
  auto forged = [](const std::string& path, const std::string& from, const std::string& to, const std::string& name) {
    std::string text = ReadAll(path);
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
    return WriteTmp(name, text);
  };
  std::string values = "2us";
  for (int i = 0; i < 5000; ++i) absl::StrAppend(&values, ",3us");
  struct Case {
    std::string file;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           // 7 points claimed and held; the command names 2 x 2 runs and
           // 100000 band points.
           {forged(bands, "\"bands\":[\"3\"]", "\"bands\":[\"100000\"]", "bands100k.jsonl"),
            "bands100k.jsonl:1: field 'points' is 7 but the command names at least 100004 points"},
           // 2 points claimed and held (a value each); 5001 values.
           {forged(sweep, "mean=2us,3us", absl::StrCat("mean=", values), "values5001.jsonl"),
            "values5001.jsonl:1: field 'points' is 2 but the command names at least 5001 points"},
           // 7 held of a billion claimed: found from the parts' indices.
           {forged(bands, "\"points\":7", "\"points\":1000000000", "billion.jsonl"),
            "999999993 of 1000000000 points missing (index 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, and 999999983 more; "
            "written by --shard 0/1)"},
           {forged(bands, "\"points\":7", "\"points\":0", "zero.jsonl"), "field 'points' is 0, not a number of points"},
           {forged(bands, "\"index\":6", "\"index\":7", "index7.jsonl"),
            "index7.jsonl:7: field 'index' missing or not from 0 to 6"},
       }) {
    Result r = Viosim(absl::StrCat("merge ", c.file));
    EXPECT_EQ(r.code, 2) << c.file;
    EXPECT_THAT(r.err, HasSubstr(c.says)) << c.file;
  }
}

TEST(ShardCliTest, MergeRefusesAScenarioChangedSinceTheParts) {
  const std::string table = WriteTmp("changing.textproto", kTable);
  const std::string part = absl::StrCat(TmpDir(), "/changing.jsonl");
  ASSERT_EQ(Viosim(absl::StrCat("reproduce ", table, " --format jsonl -o ", part)).code, 0);
  ASSERT_EQ(Viosim(absl::StrCat("merge ", part)).code, 0);
  WriteTmp("changing.textproto", absl::StrCat(kTable, "# edited\n"));
  Result r = Viosim(absl::StrCat("merge ", part));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("has changed since the parts were written"));
}

}  // namespace
}  // namespace clitest
