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
           {a, "points missing: 1:2/N64"},
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
