// The `viosim` command end to end: output contracts, determinism, exit
// statuses, and what bad input gets (a message naming file:line:column or the
// flag, and the field; exit 2; no partial output file).
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/run_viosim.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using clitest::ReadAll;
using clitest::Result;
using clitest::TmpDir;
using clitest::Viosim;
using clitest::WriteTmp;

constexpr char kShort[] = "--set run.duration=50ms --set run.warmup=1ms";

// A valid little scenario for the error cases to break.
constexpr char kGood[] = R"(name: "t"
workload {
  lockbench {
    threads: 2
    think { exponential { mean: "10us" } }
    hold { exponential { mean: "2us" } }
  }
}
variant { name: "a" overlay { workload { lockbench { threads: 3 } } } }
run { duration: "20ms" warmup: "1ms" }
)";

TEST(CliTest, HelpAndVersionExitZero) {
  Result top = Viosim("--help");
  EXPECT_EQ(top.code, 0) << top.err;
  EXPECT_THAT(top.out, HasSubstr("reproduce"));
  for (const char* sub : {"run", "sweep", "calibrate", "list", "reproduce", "gate"}) {
    Result r = Viosim(absl::StrCat(sub, " --help"));
    EXPECT_EQ(r.code, 0) << sub << r.err;
    EXPECT_THAT(r.out, HasSubstr("--format")) << sub;
    EXPECT_THAT(r.out, HasSubstr("--set")) << sub;
  }
  Result v = Viosim("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_THAT(v.out, HasSubstr("viosim"));
}

TEST(CliTest, BadUsageExitsTwo) {
  EXPECT_EQ(Viosim("").code, 2);
  EXPECT_EQ(Viosim("frobnicate").code, 2);
  EXPECT_EQ(Viosim("run").code, 2);
  EXPECT_EQ(Viosim("run scenarios/lockbench.textproto --format xml").code, 2);
  EXPECT_EQ(Viosim("run scenarios/lockbench.textproto --jobs 0").code, 2);
}

TEST(CliTest, RunJsonFollowsTheContract) {
  Result r = Viosim(absl::StrCat("run scenarios/lockbench.textproto --variant N4 --format json ", kShort));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"scenario\": \"lockbench\""));
  EXPECT_THAT(r.out, HasSubstr("\"name\": \"N4\""));
  EXPECT_THAT(r.out, HasSubstr("\"metrics\": {"));
  EXPECT_THAT(r.out, HasSubstr("\"ci95\": {"));
  EXPECT_THAT(r.out, HasSubstr("\"lock_acquisitions_per_s\": "));
  EXPECT_THAT(r.out, HasSubstr("\"lock_wait_mean_us\": "));
}

// Both virtio cases show every lock's lock_stat row and each vCPU's time
// as the kernel accounts it, with the exits and the guest's share.
// --precision P%: the run goes on until every interval is within P%, and
// says so; a bad percentage, or one with --shard, is refused.
TEST(CliTest, PrecisionRunsOnUntilReachedAndSaysSo) {
  Result r = Viosim("run scenarios/lockbench.textproto --variant N4 --precision 0.5% --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"precision\": {\n"));
  EXPECT_THAT(r.out, HasSubstr("\"target_pct\": 0.5,\n"));
  EXPECT_THAT(r.out, HasSubstr("\"reached\": true"));
  // The planned 2 s were not enough: it doubled once.
  EXPECT_THAT(r.out, HasSubstr("\"duration_s\": 4,\n"));
  Result text = Viosim("run scenarios/lockbench.textproto --variant N4 --precision 0.5%");
  EXPECT_THAT(text.out, HasSubstr("measured 4s in 20 batches"));
  EXPECT_THAT(text.out, HasSubstr("precision 0.5%: every measured interval within it"));
  for (const char* bad : {"0", "101%", "x", "-1%"}) {
    EXPECT_EQ(Viosim(absl::StrCat("run scenarios/lockbench.textproto --precision ", bad)).code, 2) << bad;
  }
  EXPECT_EQ(Viosim("reproduce scenarios/lockbench.textproto --precision 5% --shard 1/2").code, 2);
}

TEST(CliTest, RunOfTheVirtioCasesShowsEveryLockAndTheVcpuTimeColumns) {
  Result k = Viosim(absl::StrCat("run scenarios/virtio_blk_kick_lock.textproto --variant after ", kShort));
  ASSERT_EQ(k.code, 0) << k.err;
  EXPECT_THAT(k.out, HasSubstr("   vq_lock "));
  EXPECT_THAT(k.out, HasSubstr("   qemu_global_mutex "));
  EXPECT_THAT(k.out, HasSubstr("user  system  irq  softirq  idle  spin  poll  exit  guest  irqs-off"));
  EXPECT_THAT(k.out, HasSubstr("vcpu3"));
  Result p = Viosim(absl::StrCat("run scenarios/virtio_blk_poll.textproto --variant randread-4k-hipri1 ", kShort));
  ASSERT_EQ(p.code, 0) << p.err;
  for (int q = 0; q < 4; ++q) EXPECT_THAT(p.out, HasSubstr(absl::StrCat("   vq_lock", q, " ")));
  EXPECT_THAT(p.out, HasSubstr("user  system  irq  softirq  idle  spin  poll  exit  guest  irqs-off"));
}

TEST(CliTest, RunTextShowsLockStatAndSpinShares) {
  Result r = Viosim(absl::StrCat("run scenarios/lockbench.textproto --variant N4 ", kShort));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("con-bounces"));
  EXPECT_THAT(r.out, HasSubstr("holdtime-avg"));
  EXPECT_THAT(r.out, HasSubstr("bench_lock"));
  // The CPU table: the kernel's time columns, with spinning apart.
  EXPECT_THAT(r.out, HasSubstr("user  system  irq  softirq  idle  spin  poll"));
  EXPECT_THAT(r.out, HasSubstr("cpu3"));
}

TEST(CliTest, ReproduceJsonHasEveryCellField) {
  Result r = Viosim("reproduce scenarios/lockbench.textproto --format json --set run.duration=200ms");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* key : {"\"cells\"", "\"scenario\"", "\"variant\"", "\"metric\"", "\"published\"", "\"modeled\"",
                          "\"error_pct\"", "\"role\"", "\"tolerance_pct\"", "\"within\""}) {
    EXPECT_THAT(r.out, HasSubstr(key));
  }
  EXPECT_THAT(r.out, HasSubstr("\"published\": 300828.55"));
}

TEST(CliTest, OutputIsByteIdenticalAcrossRunsAndJobs) {
  const std::string args = absl::StrCat("run scenarios/lockbench.textproto --format json ", kShort);
  Result a = Viosim(args + " --jobs 1");
  Result b = Viosim(args + " --jobs 1");
  Result c = Viosim(args + " --jobs 2");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.out, c.out);
  Result t1 = Viosim(absl::StrCat("run scenarios/lockbench.textproto ", kShort, " --jobs 1"));
  Result t2 = Viosim(absl::StrCat("run scenarios/lockbench.textproto ", kShort, " --jobs 2"));
  EXPECT_EQ(t1.out, t2.out);
}

TEST(CliTest, SeedChangesTheDrawsButNotTheContract) {
  Result a = Viosim(absl::StrCat("run scenarios/lockbench.textproto -v N4 --format csv --seed 1 ", kShort));
  Result b = Viosim(absl::StrCat("run scenarios/lockbench.textproto -v N4 --format csv --seed 2 ", kShort));
  ASSERT_EQ(a.code, 0);
  ASSERT_EQ(b.code, 0);
  EXPECT_NE(a.out, b.out);
  EXPECT_THAT(a.out, HasSubstr("scenario,variant,metric,value,ci95\n"));
}

TEST(CliTest, OutputFileIsWrittenWhole) {
  const std::string path = absl::StrCat(TmpDir(), "/out.json");
  Result r = Viosim(absl::StrCat("run scenarios/lockbench.textproto -v N4 --format json -o ", path, " ", kShort));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_THAT(ReadAll(path), HasSubstr("\"variants\""));
}

TEST(CliTest, TraceIsChromeJson) {
  const std::string path = absl::StrCat(TmpDir(), "/trace.json");
  Result r = Viosim(absl::StrCat("run scenarios/lockbench.textproto -v N4 --trace ", path, " ", kShort));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string trace = ReadAll(path);
  EXPECT_THAT(trace, HasSubstr("\"traceEvents\""));
  EXPECT_THAT(trace, HasSubstr("\"spin\""));
  EXPECT_THAT(trace, HasSubstr("\"bench_lock\""));
}

TEST(CliTest, ListShowsVariantsMetricsAndPublished) {
  Result r = Viosim("list scenarios/lockbench.textproto");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("N64"));
  EXPECT_THAT(r.out, HasSubstr("lock_wait_mean_us"));
  EXPECT_THAT(r.out, HasSubstr("MACHINE_REPAIRMAN_MVA"));
}

// Without a file, `list` indexes the scenarios directory.
TEST(CliTest, ListWithoutAScenarioIndexesTheScenarios) {
  Result r = Viosim("list");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("scenarios/virtio_blk_poll.textproto"));
  EXPECT_THAT(r.out, HasSubstr("virtio_blk_kick_lock"));
  Result j = Viosim("list --format json");
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_THAT(j.out, HasSubstr("\"published\": 32"));
}

TEST(CliTest, GateChecksPublishedToleranceAndBaseline) {
  // One typed-in cell: 235,000 acquisitions/s (3 threads) within 5%, run
  // long enough that its interval is ~0.5% (the drift allowed is twice it).
  const std::string scenario = WriteTmp("gated.textproto", absl::StrCat(kGood, R"(
published { variant: "a" metric: "lock_acquisitions_per_s" value: 235000 role: CALIBRATION tolerance_pct: 5 }
)"));
  const std::string base = absl::StrCat(TmpDir(), "/baseline.textproto");
  const std::string longer = " --set run.duration=400ms";
  std::filesystem::remove(base);
  Result missing = Viosim(absl::StrCat("gate ", scenario, " --baseline ", base, longer));
  EXPECT_EQ(missing.code, 2) << "no baseline is bad input";

  Result update = Viosim(absl::StrCat("gate ", scenario, " --update-baseline --baseline ", base, longer));
  EXPECT_EQ(update.code, 0) << update.out << update.err;
  EXPECT_THAT(ReadAll(base), HasSubstr("lock_acquisitions_per_s"));
  Result again = Viosim(absl::StrCat("gate ", scenario, " --baseline ", base, longer));
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_THAT(again.out, HasSubstr("gate: PASS"));

  // Slower threads: outside the published 5% and off the baseline.
  Result slower = Viosim(absl::StrCat("gate ", scenario, " --baseline ", base, longer,
                                      " --set workload.lockbench.think.exponential.mean=12us"));
  EXPECT_EQ(slower.code, 1) << slower.out;
  EXPECT_THAT(slower.out, HasSubstr("outside the 5% tolerance"));
  // A shift inside the published tolerance still moves off the baseline.
  Result shifted = Viosim(absl::StrCat("gate ", scenario, " --baseline ", base, longer,
                                       " --set workload.lockbench.think.exponential.mean=10.5us"));
  EXPECT_EQ(shifted.code, 1) << shifted.out;
  EXPECT_THAT(shifted.out, HasSubstr("from the baseline"));

  // The same file without its published cell gates nothing: it is refused
  // as bad input (exit 2), at the file, before anything runs.
  const std::string emptied = WriteTmp("gated.textproto", kGood);
  Result none = Viosim(absl::StrCat("gate ", emptied, " --baseline ", base, longer));
  EXPECT_EQ(none.code, 2) << none.out << none.err;
  EXPECT_THAT(none.err, HasSubstr(absl::StrCat(emptied, ":1:1: field 'published'")));
  EXPECT_THAT(none.err, HasSubstr("no published cell"));
}

TEST(CliTest, AnalyticReferenceRefusesAModelItDoesNotCover) {
  Result r = Viosim("reproduce scenarios/lockbench.textproto --set platform.lock_handoff.value=1us "
                    "--set run.duration=20ms");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("platform.lock_handoff.value"));
}

// --- Bad input -------------------------------------------------------------

struct BadCase {
  const char* name;
  std::string text;       // scenario file contents
  std::string extra;      // extra flags
  std::string expect_at;  // "file:line:col" suffix, or a flag
  std::string field;
  friend void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }
};

class BadInputTest : public testing::TestWithParam<BadCase> {};

TEST_P(BadInputTest, ExitsTwoNamingPlaceAndFieldWithoutPartialOutput) {
  const BadCase& c = GetParam();
  const std::string path = WriteTmp(absl::StrCat(c.name, ".textproto"), c.text);
  const std::string out = absl::StrCat(TmpDir(), "/", c.name, ".out");
  std::filesystem::remove(out);
  Result r = Viosim(absl::StrCat("run ", path, " -o ", out, " ", c.extra));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(c.expect_at.empty() ? path : c.expect_at));
  EXPECT_THAT(r.err, HasSubstr(c.field));
  EXPECT_FALSE(std::filesystem::exists(out)) << "partial output left behind";
  EXPECT_THAT(r.err, Not(HasSubstr("Segmentation")));
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadInputTest,
    testing::Values(
        BadCase{"truncated", std::string(kGood).substr(0, 60), "", ":", "lockbench"},
        BadCase{"unknown_field", Replace(kGood, "threads: 2", "threads: 2 spin_budget: 4"), "", ":4:", "spin_budget"},
        BadCase{"wrong_type", Replace(kGood, "threads: 2", "threads: \"two\""), "", ":4:", "threads"},
        BadCase{"negative_duration", Replace(kGood, "mean: \"10us\"", "mean: \"-10us\""), "", ":5:", "mean"},
        BadCase{"zero_duration", Replace(kGood, "duration: \"20ms\"", "duration: \"0s\""), "", ":10:7:",
                "duration"},
        BadCase{"bad_unit", Replace(kGood, "mean: \"2us\"", "mean: \"2 parsecs\""), "", ":6:", "mean"},
        BadCase{"zero_threads", Replace(kGood, "threads: 2", "threads: 0"), "", ":4:", "threads"},
        BadCase{"unknown_variant", kGood, "--variant nope", "", "nope"},
        BadCase{"bad_set_path", kGood, "--set workload.lockbench.thread=4", "--set", "thread"},
        BadCase{"bad_set_value", kGood, "--set run.duration=fast", "--set", "run.duration"},
        BadCase{"bad_set_negative", kGood, "--set run.warmup=-1000s", "--set", "run.warmup"}),
    [](const testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

// --- viosim sweep ------------------------------------------------------------

constexpr char kThreadSweep[] =
    "sweep scenarios/lockbench.textproto --over workload.lockbench.threads=2,4,8 --variant N4 "
    "--metric lock_wait_mean_us --set run.duration=50ms --set run.warmup=1ms";

TEST(CliSweepTest, OneRowPerValueAndMoreThreadsWaitLonger) {
  Result r = Viosim(absl::StrCat(kThreadSweep, " --format csv"));
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0], "swept_value,variant,metric,value,ci95");
  std::vector<double> wait;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> f = absl::StrSplit(lines[i], ',');
    ASSERT_EQ(f.size(), 5u) << lines[i];
    EXPECT_EQ(f[0], std::vector<std::string>({"2", "4", "8"})[i - 1]);
    EXPECT_EQ(f[1], "N4");
    EXPECT_EQ(f[2], "lock_wait_mean_us");
    EXPECT_FALSE(f[4].empty()) << "lockbench metrics have an interval";
    double w = 0;
    ASSERT_TRUE(absl::SimpleAtod(f[3], &w)) << f[3];
    wait.push_back(w);
  }
  EXPECT_LT(wait[0], wait[1]);
  EXPECT_LT(wait[1], wait[2]);

  Result t = Viosim(kThreadSweep);
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_THAT(t.out, HasSubstr("sweep over workload.lockbench.threads\n"));
  EXPECT_THAT(t.out, testing::ContainsRegex("\nlockbench.threads  N4 lock_wait_mean_us +[+]/-\n"));
  std::vector<std::string> rows = absl::StrSplit(t.out, '\n', absl::SkipEmpty());
  ASSERT_GE(rows.size(), 3u);
  rows.erase(rows.begin(), rows.end() - 3);
  EXPECT_THAT(rows[0], testing::StartsWith("2 "));
  EXPECT_THAT(rows[1], testing::StartsWith("4 "));
  EXPECT_THAT(rows[2], testing::StartsWith("8 "));
}

TEST(CliSweepTest, JsonFollowsTheContract) {
  Result r = Viosim(
      "sweep scenarios/lockbench.textproto --over workload.lockbench.threads=2,3 --format json "
      "--set run.duration=20ms --set run.warmup=1ms");
  ASSERT_EQ(r.code, 0) << r.err;
  // No iops in lockbench: the default metric is the scenario's first.
  for (const char* want : {"\"scenario\": \"lockbench\"", "\"field\": \"workload.lockbench.threads\"",
                           "\"points\": [", "\"value\": \"3\",\n      \"variant\": \"N64\"",
                           "\"metrics\": {\n        \"lock_acquisitions_per_s\": ",
                           "\"ci95\": {\n        \"lock_acquisitions_per_s\": "}) {
    EXPECT_THAT(r.out, HasSubstr(want));
  }
}

TEST(CliSweepTest, DefaultMetricIsIopsWhenTheScenarioHasIt) {
  Result r = Viosim("sweep scenarios/virtio_blk_kick_lock.textproto --over platform.kvm.mmio_exit_user.value=51.5us "
                    "-v before --format csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n51.5us,before,iops,"));
}

TEST(CliSweepTest, OutputIsByteIdenticalAcrossJobs) {
  for (const char* format : {"text", "json", "csv"}) {
    const std::string args = absl::StrCat(
        "sweep scenarios/lockbench.textproto --over workload.lockbench.threads=2,4,6 "
        "-m lock_wait_mean_us -m cpu_spin_pct --set run.duration=20ms --set run.warmup=1ms --format ",
        format);
    Result a = Viosim(args + " --jobs 1");
    Result b = Viosim(args + " --jobs 2");
    Result c = Viosim(args + " --jobs 4");
    ASSERT_EQ(a.code, 0) << a.err;
    EXPECT_EQ(a.out, b.out) << format;
    EXPECT_EQ(a.out, c.out) << format;
  }
}

TEST(CliSweepTest, OutputFileIsWrittenWhole) {
  const std::string path = absl::StrCat(TmpDir(), "/sweep.csv");
  Result r = Viosim(absl::StrCat(kThreadSweep, " --format csv -o ", path));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_THAT(ReadAll(path), HasSubstr("\n8,N4,lock_wait_mean_us,"));
}

// Bad flags to a command on a good scenario.
struct FlagsBadCase {
  const char* name;
  std::string flags;
  std::vector<std::string> expect;  // each in the message
  friend void PrintTo(const FlagsBadCase& c, std::ostream* os) { *os << c.name; }
};

std::string FlagsBadCaseName(const testing::TestParamInfo<FlagsBadCase>& info) { return info.param.name; }

// `command` (the subcommand and its scenario) with the case's flags exits 2
// naming what `expect` lists, and writes no output file.
void ExpectRefusedWithoutOutput(const std::string& command, const FlagsBadCase& c) {
  const std::string out = absl::StrCat(TmpDir(), "/bad_", c.name, ".out");
  std::filesystem::remove(out);
  Result r = Viosim(absl::StrCat(command, " -o ", out, " ", c.flags));
  EXPECT_EQ(r.code, 2) << r.err;
  for (const std::string& e : c.expect) EXPECT_THAT(r.err, HasSubstr(e));
  EXPECT_FALSE(std::filesystem::exists(out)) << "output written for bad input";
}

class SweepBadInputTest : public testing::TestWithParam<FlagsBadCase> {};

TEST_P(SweepBadInputTest, ExitsTwoBeforeRunningWithoutOutput) {
  ExpectRefusedWithoutOutput("sweep scenarios/lockbench.textproto", GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SweepBadInputTest,
    testing::Values(
        FlagsBadCase{"bad_field", "--over workload.lockbench.thread=2,4",
                     {"--over 'workload.lockbench.thread=2'", "field 'workload.lockbench.thread'", "threads"}},
        FlagsBadCase{"bad_value", "--over workload.lockbench.threads=2,two",
                     {"--over 'workload.lockbench.threads=two'", "field 'workload.lockbench.threads'", "'two'"}},
        FlagsBadCase{"out_of_bounds", "--over workload.lockbench.threads=0",
                     {"--over 'workload.lockbench.threads=0'", "field 'workload.lockbench.threads'"}},
        FlagsBadCase{"empty_value", "--over workload.lockbench.threads=2,,4", {"--over", "empty value"}},
        FlagsBadCase{"no_values", "--over workload.lockbench.threads", {"--over", "FIELD=V1,V2"}},
        FlagsBadCase{"unknown_metric", "--over workload.lockbench.threads=2 --metric iops",
                     {"--metric 'iops'", "lock_acquisitions_per_s, lock_wait_mean_us, lock_hold_mean_us"}},
        FlagsBadCase{"unknown_variant", "--over workload.lockbench.threads=2 --variant nope", {"nope", "N64"}},
        FlagsBadCase{"missing_over", "", {"--over"}}),
    FlagsBadCaseName);

// --- viosim calibrate --------------------------------------------------------

// kGood with typed-in cells for variant "a" (3 threads): a CALIBRATION cell
// near what think = 10us gives, and a PREDICTION.
std::string CalibrationScenario() {
  return WriteTmp("calibrated.textproto", absl::StrCat(kGood, R"(
published {
  variant: "a" metric: "lock_acquisitions_per_s" value: 235000 role: CALIBRATION tolerance_pct: 5 source: "typed in"
}
published { variant: "a" metric: "lock_wait_mean_us" value: 1 role: PREDICTION tolerance_pct: 5 }
)"));
}

constexpr char kFitThink[] =
    " --fit workload.lockbench.think.exponential.mean --cell a/lock_acquisitions_per_s --range 5us,20us";

TEST(CliCalibrateTest, FitsTheCellAndTheFitReproducesIt) {
  const std::string scenario = CalibrationScenario();
  Result r = Viosim(absl::StrCat("calibrate ", scenario, kFitThink, " --format csv"));
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0], "step,value,modeled,ci95,error_pct,note");
  EXPECT_THAT(lines[1], testing::StartsWith("lo,5us,"));
  EXPECT_THAT(lines[2], testing::StartsWith("hi,20us,"));
  std::vector<std::string> fit = absl::StrSplit(lines.back(), absl::MaxSplits(',', 5));
  ASSERT_EQ(fit.size(), 6u) << lines.back();
  EXPECT_EQ(fit[0], "fitted");
  double modeled = 0, error = 0;
  ASSERT_TRUE(absl::SimpleAtod(fit[2], &modeled)) << fit[2];
  ASSERT_TRUE(absl::SimpleAtod(fit[4], &error)) << fit[4];
  EXPECT_LE(std::abs(error), 0.5);
  EXPECT_THAT(fit[5], HasSubstr(absl::StrCat("fitted workload.lockbench.think.exponential.mean = ", fit[1], ": ")));

  // The fitted value, set by hand, gives the same modeled value.
  Result run = Viosim(absl::StrCat("run ", scenario, " -v a --format csv ",
                                   "--set workload.lockbench.think.exponential.mean=", fit[1]));
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat(",a,lock_acquisitions_per_s,", fit[2], ",")));
  EXPECT_NEAR(modeled, 235000, 235000 * 0.005);

  // Deterministic, and the text ends with the fit.
  Result a = Viosim(absl::StrCat("calibrate ", scenario, kFitThink));
  Result b = Viosim(absl::StrCat("calibrate ", scenario, kFitThink));
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_THAT(a.out, HasSubstr("bisection on a log scale"));
  EXPECT_THAT(a.out, HasSubstr(absl::StrCat("\nfitted workload.lockbench.think.exponential.mean = ", fit[1],
                                            ": modeled ")));
  EXPECT_THAT(a.out, HasSubstr("vs published 235000 (CALIBRATION, source typed in)\n"));
}

TEST(CliCalibrateTest, UnbracketedRangeExitsOneWithBothValues) {
  const std::string path = absl::StrCat(TmpDir(), "/unbracketed.json");
  Result r = Viosim(absl::StrCat("calibrate ", CalibrationScenario(),
                                 " --fit workload.lockbench.think.exponential.mean --cell a/lock_acquisitions_per_s "
                                 "--range 20us,40us --format json -o ",
                                 path));
  EXPECT_EQ(r.code, 1) << r.err;
  const std::string out = ReadAll(path);
  EXPECT_THAT(out, HasSubstr("\"outcome\": \"not_bracketed\""));
  EXPECT_THAT(out, HasSubstr("\"step\": \"lo\""));
  EXPECT_THAT(out, HasSubstr("\"step\": \"hi\""));
  EXPECT_THAT(r.err, HasSubstr("not bracketed: modeled lock_acquisitions_per_s is "));
  EXPECT_THAT(r.err, HasSubstr(" at 40us; published 235000"));
}

TEST(CliCalibrateTest, NotConvergedWithinMaxIterExitsOne) {
  Result r = Viosim(absl::StrCat("calibrate ", CalibrationScenario(), kFitThink, " --max-iter 1 --tolerance 0.01"));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n1     "));
  EXPECT_THAT(r.out, HasSubstr("\nnot converged within 0.01% after 1 iterations; closest "));
}

class CalibrateBadInputTest : public testing::TestWithParam<FlagsBadCase> {};

TEST_P(CalibrateBadInputTest, ExitsTwoBeforeRunningWithoutOutput) {
  ExpectRefusedWithoutOutput(absl::StrCat("calibrate ", CalibrationScenario()), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CalibrateBadInputTest,
    testing::Values(
        FlagsBadCase{"prediction",
                     "--fit workload.lockbench.think.exponential.mean --cell a/lock_wait_mean_us --range 5us,20us",
                     {"--cell 'a/lock_wait_mean_us'", "PREDICTION", "fitting to a prediction is not calibration"}},
        FlagsBadCase{"bad_fit_field",
                     "--fit workload.lockbench.think.exponential.mena --cell a/lock_acquisitions_per_s "
                     "--range 5us,20us",
                     {"--fit", "field 'workload.lockbench.think.exponential.mena'", "mean"}},
        FlagsBadCase{"not_a_number", "--fit stack.lock.kind --cell a/lock_acquisitions_per_s --range 5us,20us",
                     {"--fit 'stack.lock.kind'", "neither a duration nor a number"}},
        FlagsBadCase{"bad_range_value",
                     "--fit workload.lockbench.think.exponential.mean --cell a/lock_acquisitions_per_s "
                     "--range 5us,fast",
                     {"--range", "field 'workload.lockbench.think.exponential.mean'", "fast"}},
        FlagsBadCase{"reversed_range",
                     "--fit workload.lockbench.think.exponential.mean --cell a/lock_acquisitions_per_s "
                     "--range 20us,5us",
                     {"--range '20us,5us'", "LO must be below HI"}},
        FlagsBadCase{"malformed_range", "--fit workload.lockbench.threads --cell a/lock_acquisitions_per_s --range 2",
                     {"--range '2'", "LO,HI"}},
        FlagsBadCase{"ambiguous_cell", "--fit workload.lockbench.threads --cell a --range 2,8",
                     {"--cell 'a'", "2 published cells", "lock_acquisitions_per_s, lock_wait_mean_us"}},
        FlagsBadCase{"no_such_cell", "--fit workload.lockbench.threads --cell b/iops --range 2,8",
                     {"--cell 'b/iops'", "no published cell for variant 'b'", "a/lock_acquisitions_per_s"}},
        FlagsBadCase{"published_field", "--fit published[0].value --cell a/lock_acquisitions_per_s --range 1,2",
                     {"--fit 'published[0].value'", "the target"}},
        FlagsBadCase{"missing_range", "--fit workload.lockbench.threads --cell a", {"--range"}}),
    FlagsBadCaseName);

// --- viosim sweep --refit ----------------------------------------------------

// At each hold time, think is refitted so that variant "a" keeps its
// published 235,000 acquisitions/s. A 5us hold caps it at 200,000: no think
// time in the range reaches the cell.
constexpr char kRefitThink[] =
    " --variant a -m lock_acquisitions_per_s -m lock_wait_mean_us --refit workload.lockbench.think.exponential.mean "
    "--cell a/lock_acquisitions_per_s --range 5us,20us";

std::string RefitSweep(const std::string& holds) {
  return absl::StrCat("sweep ", CalibrationScenario(), " --over workload.lockbench.hold.exponential.mean=", holds,
                      kRefitThink);
}

TEST(CliSweepRefitTest, KeepsTheCellWithinTheToleranceAtEveryValue) {
  Result r = Viosim(RefitSweep("1.5us,2us,2.5us") + " --format csv");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 7u) << r.out;
  EXPECT_EQ(lines[0],
            "swept_value,refit_outcome,refit_value,cell_modeled,cell_ci95,cell_error_pct,variant,metric,value,ci95,"
            "refit_note");
  std::vector<double> think;
  for (size_t i = 1; i < lines.size(); i += 2) {
    std::vector<std::string> f = absl::StrSplit(lines[i], ',');
    ASSERT_EQ(f.size(), 11u) << lines[i];
    EXPECT_EQ(f[0], std::vector<std::string>({"1.5us", "2us", "2.5us"})[i / 2]);
    EXPECT_EQ(f[1], "fitted");
    double error = 0, t = 0;
    ASSERT_TRUE(absl::SimpleAtod(f[5], &error)) << f[5];
    EXPECT_LE(std::abs(error), 0.5) << lines[i];
    ASSERT_TRUE(absl::EndsWith(f[2], "us") && absl::SimpleAtod(f[2].substr(0, f[2].size() - 2), &t)) << f[2];
    think.push_back(t);
    // The variants ran at the fit: the cell's own metric is the fit's value.
    EXPECT_EQ(f[7], "lock_acquisitions_per_s");
    EXPECT_EQ(f[8], f[3]) << lines[i];
    EXPECT_THAT(lines[i + 1], testing::StartsWith(absl::StrCat(f[0], ",fitted,", f[2], ",")));
    EXPECT_THAT(lines[i + 1], HasSubstr(",a,lock_wait_mean_us,"));
  }
  // A longer hold leaves less time to think at the same throughput.
  EXPECT_GT(think[0], think[1]);
  EXPECT_GT(think[1], think[2]);

  Result t = Viosim(RefitSweep("1.5us,2us,2.5us"));
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_THAT(t.out, HasSubstr("\nat each value workload.lockbench.think.exponential.mean is refitted to "
                               "a/lock_acquisitions_per_s, published 235000 (CALIBRATION, tolerance 5%, source typed "
                               "in):\nbisection over 5us..20us on a log scale;"));
  EXPECT_THAT(t.out, testing::ContainsRegex("\nhold.exponential.mean  think.exponential.mean  "
                                            "a/lock_acquisitions_per_s +error  a lock_acquisitions_per_s +[+]/-  "
                                            "a lock_wait_mean_us +[+]/-\n1.5us +"));
}

TEST(CliSweepRefitTest, AValueThatCannotBeBracketedIsReportedAndExitsOne) {
  Result r = Viosim(RefitSweep("2us,5us"));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, testing::ContainsRegex("\n2us +[0-9.]+us +[0-9]+ +[+-][0-9.]+%  "));
  EXPECT_THAT(r.out, testing::ContainsRegex("\n5us( +-){7}  not fitted: not bracketed: a/lock_acquisitions_per_s "
                                            "is [0-9]+ at 5us and [0-9]+ at 20us, published 235000 is not between "
                                            "them\n"));
  const std::string path = absl::StrCat(TmpDir(), "/refit.json");
  Result j = Viosim(RefitSweep("2us,5us") + " --format json -o " + path);
  EXPECT_EQ(j.code, 1) << j.err;
  const std::string out = ReadAll(path);
  EXPECT_THAT(out, HasSubstr("\"outcome\": \"fitted\""));
  EXPECT_THAT(out, HasSubstr("\"value\": \"5us\",\n      \"refit\": {\n        \"outcome\": \"not_bracketed\",\n"
                             "        \"value\": null,"));
  EXPECT_THAT(j.err, HasSubstr("workload.lockbench.think.exponential.mean not fitted at "
                               "workload.lockbench.hold.exponential.mean = 5us"));
  // Not converged is a failure to fit too.
  Result stuck = Viosim(RefitSweep("2us") + " --tolerance 0.01 --max-iter 1");
  EXPECT_EQ(stuck.code, 1) << stuck.err;
  EXPECT_THAT(stuck.out, HasSubstr("  not fitted: not converged within 0.01% after 1 iterations; closest "));
}

TEST(CliSweepRefitTest, OutputIsByteIdenticalAcrossJobs) {
  for (const char* format : {"text", "json", "csv"}) {
    const std::string args = RefitSweep("1.5us,2us,5us") + " --format " + format;
    Result a = Viosim(args + " --jobs 1");
    Result b = Viosim(args + " --jobs 2");
    EXPECT_EQ(a.code, 1) << a.err;
    EXPECT_EQ(b.code, 1) << b.err;
    EXPECT_EQ(a.out, b.out) << format;
  }
}

class SweepRefitBadInputTest : public testing::TestWithParam<FlagsBadCase> {};

TEST_P(SweepRefitBadInputTest, ExitsTwoBeforeRunningWithoutOutput) {
  ExpectRefusedWithoutOutput(absl::StrCat("sweep ", CalibrationScenario()), GetParam());
}

// Each case's flags: kHolds (--over), then --refit (kThink) or its flags.
constexpr char kHolds[] = "--over workload.lockbench.hold.exponential.mean=2us,3us ";
constexpr char kThink[] = "--refit workload.lockbench.think.exponential.mean ";

INSTANTIATE_TEST_SUITE_P(
    Cases, SweepRefitBadInputTest,
    testing::Values(
        FlagsBadCase{"cell_without_refit", absl::StrCat(kHolds, "--cell a/lock_acquisitions_per_s"),
                     {"--cell is for --refit FIELD"}},
        FlagsBadCase{"range_without_refit", absl::StrCat(kHolds, "--range 5us,20us"),
                     {"--range is for --refit FIELD"}},
        FlagsBadCase{"tolerance_without_refit", absl::StrCat(kHolds, "--tolerance 1"),
                     {"--tolerance is for --refit FIELD"}},
        FlagsBadCase{"refit_without_cell", absl::StrCat(kHolds, kThink, "--range 5us,20us"),
                     {"--refit 'workload.lockbench.think.exponential.mean' needs --cell", "--cell is not given"}},
        FlagsBadCase{"refit_without_range", absl::StrCat(kHolds, kThink, "--cell a/lock_acquisitions_per_s"),
                     {"needs --cell VARIANT[/METRIC] and --range LO,HI", "--range is not given"}},
        FlagsBadCase{"refit_the_swept_field",
                     absl::StrCat(kHolds, "--refit workload.lockbench.hold.exponential.mean "
                                          "--cell a/lock_acquisitions_per_s --range 1us,3us"),
                     {"--refit 'workload.lockbench.hold.exponential.mean'", "the field --over sweeps"}},
        FlagsBadCase{"refit_bad_field",
                     absl::StrCat(kHolds, "--refit workload.lockbench.think.exponential.mena "
                                          "--cell a/lock_acquisitions_per_s --range 5us,20us"),
                     {"--refit", "field 'workload.lockbench.think.exponential.mena'"}},
        FlagsBadCase{"refit_prediction", absl::StrCat(kHolds, kThink, "--cell a/lock_wait_mean_us --range 5us,20us"),
                     {"--cell 'a/lock_wait_mean_us'", "fitting to a prediction is not calibration"}},
        FlagsBadCase{"refit_reversed_range",
                     absl::StrCat(kHolds, kThink, "--cell a/lock_acquisitions_per_s --range 20us,5us"),
                     {"--range '20us,5us'", "LO must be below HI"}},
        FlagsBadCase{"refit_malformed_cell", absl::StrCat(kHolds, kThink, "--cell a/ --range 5us,20us"),
                     {"--cell 'a/'", "VARIANT/METRIC"}},
        FlagsBadCase{"refit_bad_over_value",
                     "--over workload.lockbench.hold.exponential.mean=2us,slow --refit "
                     "workload.lockbench.think.exponential.mean --cell a/lock_acquisitions_per_s --range 5us,20us",
                     {"--over 'workload.lockbench.hold.exponential.mean=slow'"}}),
    FlagsBadCaseName);

TEST(CliCalibrateTest, AnalyticCellHasNothingToFit) {
  Result r = Viosim("calibrate scenarios/lockbench.textproto --set published[1].role=CALIBRATION "
                    "--fit workload.lockbench.think.exponential.mean --cell N4/lock_wait_mean_us --range 5us,20us");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("analytic (MACHINE_REPAIRMAN_MVA)"));
  EXPECT_THAT(r.err, HasSubstr("nothing to fit"));
}

// --seed N and --set run.seed=N are one rule, in every subcommand that has them.
TEST(CliTest, SeedFlagAndSetRunSeedRefuseTheSameSeeds) {
  for (const std::string seed : {"-1", "18446744073709551616", "99999999999999999999999", "abc", "1e3"}) {
    for (const std::string cmd : {"run scenarios/lockbench.textproto", "list scenarios/lockbench.textproto",
                                  "reproduce scenarios/lockbench.textproto"}) {
      Result by_flag = Viosim(absl::StrCat(cmd, " --seed '", seed, "'"));
      Result by_set = Viosim(absl::StrCat(cmd, " --set 'run.seed=", seed, "'"));
      EXPECT_EQ(by_flag.code, 2) << cmd << " --seed " << seed;
      EXPECT_EQ(by_set.code, 2) << cmd << " --set run.seed=" << seed;
      EXPECT_THAT(by_flag.err, HasSubstr(absl::StrCat("--seed 'run.seed=", seed, "': field 'run.seed'")));
      EXPECT_THAT(by_set.err, HasSubstr(absl::StrCat("--set 'run.seed=", seed, "': field 'run.seed'")));
      EXPECT_TRUE(by_flag.out.empty());
    }
  }
  Result r = Viosim("list scenarios/lockbench.textproto --seed 18446744073709551615");
  EXPECT_EQ(r.code, 0) << r.err;
}

// One validation for every subcommand: what `run` refuses, `list` refuses
// with the same message.
TEST(CliTest, ListRefusesWhatRunRefusesWithTheSameMessage) {
  for (const std::string set : {"stack.virtio_blk.ring_size=100", "stack.virtio_blk.irq_cpu=99",
                                "stack.virtio_blk.ring_size=16", "workload.fio.job_file=missing.fio",
                                "platform.host_profile=opteron", "variant[1].overlay.stack.virtio_blk.ring_size=3"}) {
    const std::string args = absl::StrCat("scenarios/virtio_blk_kick_lock.textproto --set ", set);
    Result run = Viosim(absl::StrCat("run ", args, " ", kShort));
    Result list = Viosim(absl::StrCat("list ", args, " ", kShort));
    EXPECT_EQ(run.code, 2) << set << "\n" << run.err;
    EXPECT_EQ(list.code, 2) << set << "\n" << list.err;
    EXPECT_EQ(list.err, run.err) << set;
  }
}

// The memory budget is checked before anything is built, names every
// factor and the budget, and is raised by --set like any field.
TEST(CliTest, MemoryBudgetRefusesLargeRunsBeforeStartingAndCanBeRaised) {
  const std::string base =
      "list scenarios/virtio_blk_poll.textproto --set stack.virtio_blk_mq.ring_size=32768 --set platform.cpus=";
  for (const int cpus : {513, 1024, 4096}) {
    Result r = Viosim(absl::StrCat(base, cpus));
    EXPECT_EQ(r.code, 2) << cpus;
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat("field 'platform.cpus' (", cpus, ") x field "
                                              "'stack.virtio_blk_mq.ring_size' (32768")));
    EXPECT_THAT(r.err, HasSubstr("more than field 'run.max_request_slots' (16777216, by default)"));
  }
  Result r = Viosim(absl::StrCat(base, 512));  // exactly the budget
  EXPECT_EQ(r.code, 0) << r.err;
  r = Viosim(absl::StrCat(base, 1024, " --set run.max_request_slots=33554432"));
  EXPECT_EQ(r.code, 0) << r.err;
}

// -o writes a symlink's target, a device or a FIFO in place; it never
// replaces them with a regular file. A FIFO nobody reads is an error, not a
// wait, and a failed run leaves no trace file behind.
TEST(CliTest, OutputToSpecialFilesIsWrittenInPlaceNeverReplaced) {
  namespace fs = std::filesystem;
  const std::string target = absl::StrCat(TmpDir(), "/target.txt"), link = absl::StrCat(TmpDir(), "/link.txt");
  fs::remove(link);
  std::ofstream(target) << "STALE";
  fs::create_symlink(target, link);
  Result r = Viosim(absl::StrCat("list scenarios/lockbench.textproto -o ", link));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_THAT(ReadAll(target), HasSubstr("scenario lockbench"));
  EXPECT_THAT(ReadAll(target), Not(HasSubstr("STALE")));

  r = Viosim("list scenarios/lockbench.textproto -o /dev/null");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_character_file("/dev/null"));

  const std::string fifo = absl::StrCat(TmpDir(), "/out.fifo"), trace = absl::StrCat(TmpDir(), "/t.json");
  fs::remove(fifo);
  fs::remove(trace);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  r = Viosim(absl::StrCat("run scenarios/lockbench.textproto -v N4 --trace ", trace, " -o ", fifo, " ", kShort));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(fifo, ": cannot open for writing: a FIFO with no reader")));
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_FALSE(fs::exists(trace));
}

TEST(CliTest, MissingScenarioFileExitsTwo) {
  Result r = Viosim("run does/not/exist.textproto");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("does/not/exist.textproto"));
}

TEST(CliTest, UnwritableOutputFailsBeforeRunning) {
  Result r = Viosim("run scenarios/lockbench.textproto -o /nonexistent-dir/x.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent-dir"));
}

}  // namespace

// --- viosim fio ------------------------------------------------------------

namespace {

constexpr char kFioJob[] = R"([global]
ioengine=libaio
iodepth=8
direct=1
runtime=2
time_based

[rr]
rw=randread
bs=4k
)";

TEST(CliFioTest, NormalOutputHasFiosLayout) {
  const std::string job = WriteTmp("rr.fio", kFioJob);
  Result r = Viosim(absl::StrCat("fio ", job));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("rr: (g=0): rw=randread, bs=(R) 4096B-4096B"));
  EXPECT_THAT(r.out, HasSubstr("  read: IOPS="));
  EXPECT_THAT(r.out, HasSubstr("    clat percentiles ("));
  EXPECT_THAT(r.out, HasSubstr("Run status group 0 (all jobs):"));
  // How much was simulated, said on stderr.
  EXPECT_THAT(r.err, HasSubstr("of the 2.000 s the job asks for"));
}

TEST(CliFioTest, JsonAndJsonPlusAreFiosTreeAndDeterministic) {
  const std::string job = WriteTmp("rr2.fio", kFioJob);
  Result a = Viosim(absl::StrCat("fio ", job, " --output-format=json"));
  Result b = Viosim(absl::StrCat("fio ", job, " --output-format=json"));
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_THAT(a.out, HasSubstr("\"fio version\" : \"viosim-"));
  EXPECT_THAT(a.out, HasSubstr("\"clat_ns\" : {"));
  EXPECT_THAT(a.out, HasSubstr("\"simulated_s\""));
  EXPECT_THAT(a.out, Not(HasSubstr("\"bins\"")));
  Result plus = Viosim(absl::StrCat("fio ", job, " --output-format=json+"));
  EXPECT_THAT(plus.out, HasSubstr("\"bins\" : {"));
}

TEST(CliFioTest, PageCacheIsNotModeledAndSaidOnce) {
  const std::string job = WriteTmp("buffered.fio", "[a]\nrw=read\nsize=4m\n[b]\nrw=read\nsize=4m\n");
  Result r = Viosim(absl::StrCat("fio ", job));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string note = "is not modeled";
  ASSERT_THAT(r.err, HasSubstr(note));
  EXPECT_EQ(r.err.find(note), r.err.rfind(note)) << r.err;
}

// A stack scenario's variant; the disk stats name the job's device; an
// engine the stack's kernel lacks is refused; a misspelt option gets the
// nearest names.
TEST(CliFioTest, VariantDeviceNameKernelAndSpelling) {
  const std::string job =
      WriteTmp("vdc.fio", "[j]\nioengine=libaio\niodepth=8\ndirect=1\nfilename=/dev/vdc\nrw=randread\nruntime=0.2\n"
                          "time_based\n");
  const std::string stack = " --stack scenarios/virtio_blk_kick_lock.textproto";
  Result before = Viosim(absl::StrCat("fio ", job, stack, " --output-format=json"));
  Result after = Viosim(absl::StrCat("fio ", job, stack, " --variant after --output-format=json"));
  ASSERT_EQ(before.code, 0) << before.err;
  ASSERT_EQ(after.code, 0) << after.err;
  EXPECT_NE(before.out, after.out);
  EXPECT_THAT(before.out, HasSubstr("\"name\" : \"vdc\""));
  Result unknown = Viosim(absl::StrCat("fio ", job, stack, " --variant aftr"));
  EXPECT_EQ(unknown.code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("unknown variant 'aftr' (variants: before, after)"));
  const std::string uring = WriteTmp("uring.fio", "[j]\nioengine=io_uring\nrw=randread\nruntime=0.2\ntime_based\n");
  Result refused = Viosim(absl::StrCat("fio ", uring, stack));
  EXPECT_EQ(refused.code, 2);
  EXPECT_THAT(refused.err, HasSubstr("io_uring came with Linux 5.1; the stack 'virtio_blk' models Linux 3.15"));
  Result spelt = Viosim("fio -- --name=x --rw=randread --iodpeth=4");
  EXPECT_EQ(spelt.code, 2);
  EXPECT_THAT(spelt.err, HasSubstr("unknown option 'iodpeth'; did you mean iodepth?"));
}

// A rate floor not met ends the job with fio's EIO after its 2 s settle
// and one rate_cycle, says so on stderr and exits 1, as fio does; rate
// options fio refuses, or dies on, are refused.
TEST(CliFioTest, RateFloorAndRefusedRates) {
  const std::string floor = WriteTmp(
      "floor.fio",
      "[j]\nioengine=psync\ndirect=1\nrw=randread\nruntime=6\ntime_based\nthinktime=10ms\nrate_iops=1000\n"
      "rate_iops_min=500\n");
  Result r = Viosim(absl::StrCat("fio ", floor, " --full"));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("j: rate_iops_min=500 not met, got 100 IOPS"));
  EXPECT_THAT(r.out, HasSubstr("err= 5 (file:backend.c:1131, func=check_min_rate"));
  EXPECT_THAT(r.out, HasSubstr("(1200KiB/3003msec)"));
  const std::string both = WriteTmp("both.fio", "[j]\nrate=1m\nrate_iops=100\n");
  r = Viosim(absl::StrCat("fio ", both));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("rate and rate_iops are mutually exclusive"));
  const std::string poisson = WriteTmp("poisson.fio", "[j]\nrw=randrw\nrate_iops=,1000\nrate_process=poisson\n");
  r = Viosim(absl::StrCat("fio ", poisson));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("rate_process=poisson with no rate for reads"));
}

struct FioBadCase {
  const char* name;
  std::string text;
  std::string expect;
  friend void PrintTo(const FioBadCase& c, std::ostream* os) { *os << c.name; }
};

class FioBadInputTest : public testing::TestWithParam<FioBadCase> {};

TEST_P(FioBadInputTest, ExitsTwoWithFileAndLine) {
  const FioBadCase& c = GetParam();
  const std::string job = WriteTmp(absl::StrCat(c.name, ".fio"), c.text);
  const std::string out = absl::StrCat(TmpDir(), "/", c.name, ".fio.out");
  std::filesystem::remove(out);
  Result r = Viosim(absl::StrCat("fio ", job, " -o ", out));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(job, ":", c.expect)));
  EXPECT_FALSE(std::filesystem::exists(out));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FioBadInputTest,
    testing::Values(
        FioBadCase{"unknown", "[j]\nrw=read\nxyz=1\n", "3: unknown option 'xyz'"},
        FioBadCase{"not_modeled", "[j]\nrw=read\nrate_ignore_thinktime=1\n",
                   "3: option 'rate_ignore_thinktime' is understood by fio but not modeled by viosim"},
        FioBadCase{"bad_value", "[j]\nrw=randomread\n", "2:"},
        FioBadCase{"outside_section", "rw=read\n[j]\n", "1:"},
        FioBadCase{"absurd_depth", "[j]\nioengine=libaio\niodepth=100000000\n", "3:"},
        FioBadCase{"cpu_missing", "[j]\nrw=read\ncpus_allowed=99\n", "3: cpus_allowed"}),
    [](const testing::TestParamInfo<FioBadCase>& info) { return std::string(info.param.name); });

}  // namespace

namespace {

TEST(CliFioTest, ScenarioWithAnFioWorkloadRunsThroughViosimRun) {
  WriteTmp("sc_rr.fio", "[rr]\nioengine=libaio\niodepth=4\nrw=randread\nbs=4k\nruntime=1\ntime_based\n");
  const std::string scenario = WriteTmp("sc.textproto", R"(name: "sc"
stack { nvme { profile: "optane_p4800x" } }
workload { fio { job_file: "sc_rr.fio" } }
variant { name: "qd4" }
variant { name: "qd4_slow_device" overlay { stack { nvme { read_latency { value: "20us" } } } } }
)");
  Result r = Viosim(absl::StrCat("run ", scenario, " --format json"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"iops\": "));
  EXPECT_THAT(r.out, HasSubstr("\"clat_mean_us\": "));
  EXPECT_THAT(r.out, HasSubstr("\"name\": \"qd4_slow_device\""));
}

}  // namespace

namespace {

TEST(CliFioTest, JobFromFiosCommandLineForm) {
  Result r = Viosim("fio -- --name=cl --rw=randread --ioengine=libaio --iodepth=4 --direct=1 --runtime=1 "
                    "--time_based --output-format=json");
  // fio's own --output-format is viosim's flag, not part of the job.
  EXPECT_EQ(r.code, 2) << r.err;
  Result ok = Viosim("fio --output-format=json -- --name=cl --rw=randread --ioengine=libaio --iodepth=4 "
                     "--direct=1 --runtime=1 --time_based");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("\"jobname\" : \"cl\""));
  Result bad = Viosim("fio -- --name=cl --rate_ignore_thinktime=1");
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err,
              HasSubstr("<command line>:2: option 'rate_ignore_thinktime' is understood by fio but not modeled"));
}

}  // namespace

// --- combinations the models cannot run -------------------------------------

namespace {

// Each command used to abort, trap, hang or misread its input; now it exits
// 2 before anything runs, naming the place and the fields.
struct CombinationCase {
  const char* name;
  std::string args;
  std::vector<std::string> expect;  // each in the message
  friend void PrintTo(const CombinationCase& c, std::ostream* os) { *os << c.name; }
};

class BadCombinationTest : public testing::TestWithParam<CombinationCase> {};

TEST_P(BadCombinationTest, ExitsTwoNamingTheFieldsWithoutCrashing) {
  const CombinationCase& c = GetParam();
  Result r = Viosim(c.args);
  EXPECT_LT(r.code, 128) << "killed by signal " << r.code - 128;
  EXPECT_EQ(r.code, 2) << r.err;
  for (const std::string& e : c.expect) EXPECT_THAT(r.err, HasSubstr(e));
  EXPECT_EQ(r.out, "");
}

constexpr char kKick[] = "scenarios/virtio_blk_kick_lock.textproto";
constexpr char kPoll[] = "scenarios/virtio_blk_poll.textproto";

std::string ZeroCostKickLock() {
  std::string args = absl::StrCat("run ", kKick, " --variant after");
  for (const char* f : {"platform.fio.per_io", "stack.virtio_blk.submit", "stack.virtio_blk.map_sg",
                        "stack.virtio_blk.add_sgs", "stack.virtio_blk.complete", "stack.virtio_blk.qemu_pop_submit",
                        "stack.virtio_blk.qemu_complete", "stack.virtio_blk.disk_latency_exp_mean",
                        "stack.virtio_blk.disk_latency"}) {
    absl::StrAppend(&args, " --set ", f, ".value=0ns");
  }
  return args;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadCombinationTest,
    testing::Values(
        CombinationCase{"queue_depth_over_ring",
                        absl::StrCat("run ", kKick, " --set stack.virtio_blk.queue_depth=256"),
                        {absl::StrCat(kKick, " (variant 'before'): --set 'stack.virtio_blk.queue_depth=256': field "
                                      "'stack.virtio_blk.queue_depth' (256) exceeds what field "
                                      "'stack.virtio_blk.ring_size' (128, at ",
                                      kKick, ":")}},
        CombinationCase{"queue_depth_over_ring_swept",
                        absl::StrCat("sweep ", kKick, " --variant after --over stack.virtio_blk.queue_depth=64,256"),
                        {"--over 'stack.virtio_blk.queue_depth=256': field 'stack.virtio_blk.queue_depth' (256)"}},
        CombinationCase{"queue_depth_over_ring_calibrated",
                        absl::StrCat("calibrate ", kKick,
                                     " --fit stack.virtio_blk.queue_depth --cell before/iops --range 32,256"),
                        {"--range 'stack.virtio_blk.queue_depth=256'"}},
        CombinationCase{"ring_smaller_than_a_request",
                        absl::StrCat("run ", kKick, " --variant after --set stack.virtio_blk.ring_size=2"),
                        {"field 'stack.virtio_blk.ring_size' (2) has fewer entries than the 3 descriptors"}},
        CombinationCase{"blk_poll_ring_smaller_than_a_request",
                        absl::StrCat("run ", kPoll, " --variant randread-4k-hipri0 --set stack.virtio_blk_mq.ring_size=2"),
                        {"field 'stack.virtio_blk_mq.ring_size' (2) has fewer entries"}},
        CombinationCase{"blk_poll_pollers_sharing_a_vcpu",
                        absl::StrCat("run ", kPoll, " --variant randread-4k-hipri1 --set platform.cpus=1"),
                        {"scenarios/fio/blk-poll-hipri.fio:", "shares vCPU 0",
                         "field 'platform.cpus' (1, from --set 'platform.cpus=1')"}},
        CombinationCase{"blk_poll_sleepers_sharing_a_vcpu",
                        absl::StrCat("run ", kPoll, " --variant randread-4k-hipri0 --set platform.cpus=2"),
                        {"scenarios/fio/blk-poll-irq.fio:", "shares vCPU"}},
        CombinationCase{"blk_poll_queue_depth",
                        absl::StrCat("fio --stack ", kPoll,
                                     " -- --name=x --rw=randread --ioengine=libaio --iodepth=2 --direct=1"),
                        {"<command line>:1: job 'x' on scenarios/virtio_blk_poll.textproto: ioengine=libaio with "
                         "iodepth=2 keeps up to 2 I/Os in flight"}},
        CombinationCase{"group_time_below_its_batches",
                        absl::StrCat("run ", kKick, " --variant after --set workload.fio.max_group_time=1ps"),
                        {"field 'workload.fio.max_group_time' (1ps) is too short to measure in 20 batches"}},
        CombinationCase{"costless_requests", ZeroCostKickLock(),
                        {"every cost a request pays is zero", "simulated time would never advance"}},
        CombinationCase{"lock_bench_without_time",
                        "run scenarios/lockbench.textproto --variant N4 --set "
                        "workload.lockbench.think.constant.value=0ns --set workload.lockbench.hold.constant.value=0ns",
                        {"field 'workload.lockbench.think' (mean 0s) and field 'workload.lockbench.hold' (mean 0s"}},
        CombinationCase{"run_past_the_horizon",
                        "run scenarios/lockbench.textproto --variant N4 --set run.warmup=600000s "
                        "--set run.duration=600000s",
                        {"add up to more than 1000000s"}},
        CombinationCase{"fio_runtime_past_the_horizon",
                        "fio --full -- --name=x --rw=randread --direct=1 --runtime=365d --time_based",
                        {"<command line>:1: job 'x' on ", "runtime (31536000s) exceed 1000000s"}},
        CombinationCase{"fio_io_units_beyond_memory",
                        "fio -- --name=x --rw=randread --direct=1 --ioengine=libaio --iodepth=65536 --numjobs=4096",
                        {"numjobs=4096 with iodepth=65536 brings the jobs (4240 slots each) and their I/O units to 285802496"}},
        CombinationCase{"fio_jobs_waiting_for_each_other",
                        "fio -- --name=a --rw=randread --wait_for=b --name=b --rw=randread --wait_for=a",
                        {"<command line>:1: job 'a' on ", "wait_for=b leads back to this job"}},
        CombinationCase{"blk_mq_tags_beyond_memory",
                        "fio --set platform.cpus=4096 --set stack.nvme.queue_depth=65536 --stack "
                        "scenarios/baremetal_optane.textproto -- --name=x --rw=randread --direct=1",
                        {"field 'platform.cpus' (4096) x field 'stack.nvme.queue_depth' (65536, from --set"}}),
    [](const testing::TestParamInfo<CombinationCase>& info) { return std::string(info.param.name); });

// A slow I/O no longer drains one short batch at a time: a 1000s disk
// behind a 1us group cap finishes at once.
TEST(CliTest, ASlowIoDrainsWithoutSteppingEveryBatch) {
  Result r = Viosim(absl::StrCat("run ", kKick, " --variant after --set stack.virtio_blk.disk_latency.value=1000s"));
  EXPECT_EQ(r.code, 0) << r.err;
}

// explain: the JSON contract, the same bytes whatever --jobs, and bad
// input (a step out of range, an unknown metric) exits 2 naming the flag.
TEST(CliTest, ExplainKeepsItsContractAndIsDeterministic) {
  const std::string args = absl::StrCat("explain scenarios/lockbench.textproto --variant N4 --format json ", kShort);
  Result one = Viosim(absl::StrCat(args, " --jobs 1"));
  ASSERT_EQ(one.code, 0) << one.err;
  for (const char* key : {"\"scenario\": \"lockbench\"", "\"variant\": \"N4\"",
                          "\"metric\": \"lock_acquisitions_per_s\"", "\"value\": ", "\"costs\": [",
                          "\"field\": \"workload.lockbench.hold.exponential.mean\"", "\"source\": \"defined\"",
                          "\"elasticity\": ", "\"ci95\": ", "\"mechanism\": {"}) {
    EXPECT_THAT(one.out, HasSubstr(key));
  }
  Result two = Viosim(absl::StrCat(args, " --jobs 2"));
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_EQ(one.out, two.out);
}

TEST(CliTest, ExplainRefusesABadStepOrMetric) {
  Result r = Viosim(absl::StrCat("explain scenarios/lockbench.textproto --step 150% ", kShort));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--step '150%'"));
  r = Viosim(absl::StrCat("explain scenarios/lockbench.textproto --metric iops ", kShort));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--metric 'iops'"));
  EXPECT_EQ(r.out, "");
  // A stack without a workload has nothing to measure.
  r = Viosim("explain scenarios/baremetal_optane.textproto");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("has no workload"));
}

// Lockbench with its hold time uncertain, for `reproduce --bands`, with a
// short run.
std::string Banded() {
  std::string text = ReadAll("tests/analysis/testdata/hold_band.textproto");
  const std::string run = "duration: \"200ms\"";
  text.replace(text.find(run), run.size(), "duration: \"20ms\"");
  return text;
}

TEST(CliTest, ReproduceBandsAreTheSameWhateverTheJobs) {
  const std::string path = WriteTmp("banded.textproto", Banded());
  const Result one = Viosim(absl::StrCat("reproduce ", path, " --bands 6 --band-seed 3 --jobs 1 --format json"));
  const Result two = Viosim(absl::StrCat("reproduce ", path, " --bands 6 --band-seed 3 --jobs 2 --format json"));
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out, two.out);
  EXPECT_THAT(one.out, HasSubstr("\"band\": {"));
  EXPECT_THAT(one.out, HasSubstr("\"field\": \"workload.lockbench.hold.exponential.mean\""));
  const Result text = Viosim(absl::StrCat("reproduce ", path, " --bands 6"));
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("prediction bands"));
  // Without --bands nothing of it shows.
  EXPECT_THAT(Viosim(absl::StrCat("reproduce ", path)).out, Not(HasSubstr("prediction band")));
}

TEST(CliTest, BadBandSpecsExitTwo) {
  const std::string path = WriteTmp("banded2.textproto", Banded());
  for (const char* flags : {"--bands 1", "--bands -3", "--bands x", "--band-seed 4", "--bands 4 --band-passes 0",
                            "--bands 4 --band-passes 9"}) {
    const Result r = Viosim(absl::StrCat("reproduce ", path, " ", flags));
    EXPECT_EQ(r.code, 2) << flags;
    EXPECT_THAT(r.err, HasSubstr("band")) << flags;
    EXPECT_EQ(r.out, "") << flags;
  }
  // An uncertainty without its reason, and a range in the wrong order:
  // FILE:LINE:COL and the field.
  std::string bad = Banded();
  const std::string own = "uncertainty { range { lo: \"1us\" hi: \"3us\" } reason: \"test\" }";
  bad.replace(bad.find(own), own.size(), "uncertainty { range { lo: \"3us\" hi: \"1us\" } }");
  const Result r = Viosim(absl::StrCat("reproduce ", WriteTmp("banded3.textproto", bad), " --bands 4"));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("banded3.textproto:16:"));
  EXPECT_THAT(r.err, HasSubstr("workload.lockbench.hold.source.uncertainty.reason"));
  EXPECT_THAT(r.err, HasSubstr("lo (3us) must be below hi (1us)"));
  // An uncertainty on a DEFINED value.
  std::string defined = Banded();
  const std::string think = "source { kind: DEFINED ref: \"t\" } }\n    hold";
  defined.replace(defined.find(think), think.size(),
                  "source { kind: DEFINED ref: \"t\" uncertainty { factor: 2 reason: \"x\" } } }\n    hold");
  const Result d = Viosim(absl::StrCat("reproduce ", WriteTmp("banded4.textproto", defined)));
  EXPECT_EQ(d.code, 2);
  EXPECT_THAT(d.err, HasSubstr("banded4.textproto:13:"));
  EXPECT_THAT(d.err, HasSubstr("a DEFINED value is a parameter of the experiment"));
}

}  // namespace

namespace {

// What-ifs that cannot silently mislead (the four examples of the issue
// that asked for them): a path no variant reads is refused naming the
// closest ones it reads; a path into another stack is refused, not swapped
// in; a relative value runs what its absolute value runs; the scenario's
// fio job takes its options by path; every command that takes --set
// refuses an unread path.
TEST(WhatIfTest, AnUnreadPathIsRefusedWithTheClosestReadOnes) {
  Result r = Viosim("run scenarios/virtio_blk_poll.textproto --variant randread-4k-hipri0 "
                    "--set platform.kvm.mmio_exit_user.value=1ms");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("field 'platform.kvm.mmio_exit_user.value' is not read by variant "
                               "'randread-4k-hipri0' of scenarios/virtio_blk_poll.textproto"));
  EXPECT_THAT(r.err, HasSubstr("did you mean platform.kvm.mmio_exit_kernel.value"));
  EXPECT_TRUE(r.out.empty());
  // Every command that takes --set refuses it, before anything runs.
  for (const std::string& cmd :
       {std::string("run scenarios/lockbench.textproto"),
        std::string("sweep scenarios/lockbench.textproto --over workload.lockbench.threads=2,4"),
        std::string("explain scenarios/lockbench.textproto --variant N4"),
        std::string("calibrate scenarios/virtio_blk_kick_lock.textproto --fit platform.kvm.mmio_exit_user.value "
                    "--cell before/iops --range 1us,80us"),
        std::string("list --params scenarios/lockbench.textproto"),
        absl::StrCat("teach scenarios/lockbench.textproto -o ", TmpDir(), "/page.html"),
        std::string("reproduce scenarios/lockbench.textproto"), std::string("gate scenarios/lockbench.textproto")}) {
    Result u = Viosim(absl::StrCat(cmd, " --set stack.virtio_blk_mq.poll_window.value=1us"));
    EXPECT_EQ(u.code, 2) << cmd << "\n" << u.err;
    EXPECT_THAT(u.err, HasSubstr("stack.virtio_blk_mq.poll_window.value")) << cmd;
  }
  // --over, --fit and --refit name a path too.
  Result over = Viosim("sweep scenarios/lockbench.textproto --over platform.kvm.irq_inject.value=1us,2us");
  EXPECT_EQ(over.code, 2);
  EXPECT_THAT(over.err, HasSubstr("--over 'platform.kvm.irq_inject.value': field 'platform.kvm.irq_inject.value' is "
                                  "not read"));
  Result fit = Viosim("calibrate scenarios/virtio_blk_kick_lock.textproto --fit platform.kvm.mmio_exit_kernel.value "
                      "--cell before/iops --range 1us,80us");
  EXPECT_EQ(fit.code, 2);
  EXPECT_THAT(fit.err, HasSubstr("--fit 'platform.kvm.mmio_exit_kernel.value': field "
                                 "'platform.kvm.mmio_exit_kernel.value' is not read by variant 'before'"));
  // Read on the branch that takes it: with ioeventfd on, it is.
  Result branch = Viosim("run scenarios/virtio_blk_kick_lock.textproto --variant before --set platform.kvm.ioeventfd=true "
                         "--set platform.kvm.mmio_exit_kernel.value=1us --set run.duration=2ms --set run.warmup=1ms");
  EXPECT_EQ(branch.code, 0) << branch.err;
}

TEST(WhatIfTest, APathIntoAnotherStackIsRefusedAndTheGateAppliesItWhereRead) {
  Result r = Viosim("run scenarios/raid10_unplug.textproto --set stack.virtio_blk.qemu_pop_submit.value=13us");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("field 'stack.virtio_blk': the scenario's stack is 'raid10'"));
  EXPECT_THAT(r.err, Not(HasSubstr("mmio_exit_user")));
  // The gate gates it where read (kick-lock, which moves) and says where not.
  Result g = Viosim("gate --set stack.virtio_blk.qemu_pop_submit.value=13us");
  EXPECT_EQ(g.code, 1) << g.err;  // kick-lock moves off its baseline
  EXPECT_THAT(g.err, HasSubstr("--set 'stack.virtio_blk.qemu_pop_submit.value=13us': not read by "
                               "scenarios/lockbench.textproto, scenarios/raid10_unplug.textproto"));
  EXPECT_THAT(g.out, HasSubstr("virtio_blk_kick_lock / before / iops: modeled"));
  EXPECT_THAT(g.out, Not(HasSubstr("raid10_unplug / before")));
}

TEST(WhatIfTest, RelativeValuesAndFioOptionsRunWhatTheirAbsoluteFormsRun) {
  const std::string kick = "run scenarios/virtio_blk_kick_lock.textproto --variant before --format json";
  Result half = Viosim(absl::StrCat(kick, " --set 'platform.kvm.exit_unexplained.value=*0.5'"));
  Result abs = Viosim(absl::StrCat(kick, " --set platform.kvm.exit_unexplained.value=21.25us"));
  ASSERT_EQ(half.code, 0) << half.err;
  EXPECT_EQ(half.out, abs.out);
  // numjobs by path equals a job file with numjobs=100.
  const std::string dir = ::testing::TempDir();
  std::ifstream in("scenarios/fio/raid10-unplug.fio");
  std::stringstream job;
  job << in.rdbuf();
  std::string text = job.str();
  const size_t at = text.find("numjobs=400");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 11, "numjobs=100");
  std::ofstream(dir + "/jobs100.fio") << text;
  const std::string raid = "run scenarios/raid10_unplug.textproto --variant after --format json";
  Result by_path = Viosim(absl::StrCat(raid, " --set workload.fio.numjobs=100"));
  Result by_file = Viosim(absl::StrCat(raid, " --set workload.fio.job_file=", dir, "/jobs100.fio"));
  ASSERT_EQ(by_path.code, 0) << by_path.err;
  ASSERT_EQ(by_file.code, 0) << by_file.err;
  EXPECT_EQ(by_path.out, by_file.out);
  // The job file's rules hold: a misspelt or unmodeled option is refused.
  Result typo = Viosim(absl::StrCat(raid, " --set workload.fio.iodpeth=4"));
  EXPECT_EQ(typo.code, 2);
  EXPECT_THAT(typo.err, HasSubstr("field 'workload.fio.iodpeth' (4): unknown option 'iodpeth'"));
  Result section = Viosim(absl::StrCat(raid, " --set workload.fio.job.nope.iodepth=4"));
  EXPECT_EQ(section.code, 2);
  EXPECT_THAT(section.err, HasSubstr("no job section 'nope'"));
}

TEST(WhatIfTest, ListParamsShowsWhatEachVariantReads) {
  Result r = Viosim("list --params scenarios/raid10_unplug.textproto --variant after --format csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("raid10_unplug,after,stack.raid10.lock_word_transfers,4.892,FITTED,"));
  EXPECT_THAT(r.out, HasSubstr("raid10_unplug,after,platform.cache_lines.service_ratio,0.711,FITTED,"));
  EXPECT_THAT(r.out, HasSubstr("raid10_unplug,after,stack.raid10.brd_copy_page.value,3.8us,DERIVED,3.04us,4.56us,"));
  EXPECT_THAT(r.out, Not(HasSubstr("platform.kvm")));
  EXPECT_THAT(r.out, Not(HasSubstr("nvme_queue_rq")));  // a bare-metal NVMe cost raid10 never charges
  // The old placement booleans are refused with their new spelling.
  Result old = Viosim("run scenarios/virtio_blk_kick_lock.textproto --set stack.virtio_blk.kick_outside_lock=true");
  EXPECT_EQ(old.code, 2);
  EXPECT_THAT(old.err, HasSubstr("'kick_outside_lock' is now 'notify': AFTER_UNLOCK for true"));
}

}  // namespace

namespace {

// Gains: two variants' run ends with B against A per metric, the ratio and
// the difference with intervals from paired batches, in every format.
TEST(GainsTest, ARunOfTwoVariantsShowsTheGainsWithIntervals) {
  Result t = Viosim("run scenarios/virtio_blk_kick_lock.textproto");
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_THAT(t.out, HasSubstr("== gains: after against before (95% intervals from the runs' batches, paired)"));
  EXPECT_THAT(t.out, HasSubstr("2.712 +/-"));  // after / before IOPS
  Result j = Viosim("run scenarios/virtio_blk_kick_lock.textproto --format json");
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_THAT(j.out, HasSubstr("\"gains\": {"));
  EXPECT_THAT(j.out, HasSubstr("\"ratio_ci95\": "));
  Result c = Viosim("run scenarios/virtio_blk_kick_lock.textproto --format csv --compare after/before");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_THAT(c.out, HasSubstr("virtio_blk_kick_lock,after/before,iops:ratio,2.712"));
  Result flipped = Viosim("run scenarios/virtio_blk_kick_lock.textproto --format csv --compare before/after");
  EXPECT_THAT(flipped.out, HasSubstr("virtio_blk_kick_lock,before/after,iops:ratio,0.3687"));
  Result bad = Viosim("run scenarios/virtio_blk_kick_lock.textproto --compare nope/before");
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--compare 'nope/before': 'nope' is not a variant of the run (it runs: before, after)"));
  Result one = Viosim("run scenarios/virtio_blk_kick_lock.textproto --variant before");
  EXPECT_THAT(one.out, Not(HasSubstr("== gains")));
}

}  // namespace

namespace {

// A sweep of two variants ends with the second's gain over the first at
// each value, and the same from shards as from one process.
TEST(GainsTest, ASweepOfTwoVariantsShowsTheGainAtEachValue) {
  const std::string args =
      "sweep scenarios/virtio_blk_kick_lock.textproto --over platform.kvm.mmio_exit_user.value=10us,50us "
      "--set run.duration=20ms --set run.warmup=5ms";
  Result t = Viosim(args);
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_THAT(t.out, HasSubstr("gains (the ratio; its 95% interval from the two runs' batches, paired)"));
  EXPECT_THAT(t.out, HasSubstr("after/before iops"));
  Result j = Viosim(absl::StrCat(args, " --format json"));
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_THAT(j.out, HasSubstr("\"gains\": ["));
  Result lines = Viosim(absl::StrCat(args, " --format jsonl"));
  ASSERT_EQ(lines.code, 0) << lines.err;
}

}  // namespace
