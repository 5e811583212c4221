// `reproduce`, `sweep` and `explain --report DIR` end to end: the charts
// drawn from a real run have one published and one modeled bar per cell (a
// whisker where an interval was computed, a band where the JSON has one),
// the report is the same at any --jobs, DIR is written whole or not at all,
// and the reproduction report committed in docs/ (the README's chart) still
// shows what the command produces.
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "analysis/json_value.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fio_output/test_files.h"

namespace {

using ::analysis::JsonValue;
using ::testing::HasSubstr;

struct Result {
  int code = -1;
  std::string err;
};

std::string TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t != nullptr ? t : "/tmp";
}

Result Viosim(const std::string& args, const std::string& env = "") {
  static int n = 0;
  const std::string out = absl::StrCat(TmpDir(), "/report_stdout.", n), err = absl::StrCat(TmpDir(), "/report_stderr.", n);
  ++n;
  const std::string cmd = absl::StrCat(env, " cli/viosim ", args, " >", out, " 2>", err);
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = fio_test::ReadFile(err);
  return r;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The id report.py gives an element of a cell: KIND.scenario.variant.metric.
std::string CellId(const std::string& kind, const JsonValue& cell) {
  std::string id = kind;
  for (const char* key : {"scenario", "variant", "metric"}) {
    std::string part = cell[key].str;
    for (char& c : part) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
    }
    absl::StrAppend(&id, ".", part);
  }
  return absl::StrCat("id=\"", id, "\"");
}

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Every file of two directories, byte for byte.
void ExpectSameDirs(const std::string& a, const std::string& b) {
  ASSERT_EQ(Files(a), Files(b));
  for (const std::string& f : Files(a)) {
    EXPECT_EQ(fio_test::ReadFile(a + "/" + f), fio_test::ReadFile(b + "/" + f)) << f;
  }
}

// Checks a reproduction report's charts against its data.json: one
// published and one modeled bar per cell in the overview and in its
// scenario's chart; a whisker exactly where an interval was computed.
void ExpectOneBarPerCell(const std::string& dir) {
  absl::StatusOr<JsonValue> data = analysis::JsonReader(fio_test::ReadFile(dir + "/data.json")).Document();
  ASSERT_TRUE(data.ok()) << dir;
  const JsonValue& cells = (*data)["cells"];
  ASSERT_GT(cells.items.size(), 0u);
  const std::string overview = fio_test::ReadFile(dir + "/reproduction.svg");
  std::map<std::string, std::string> charts;
  int bands = 0;
  for (const JsonValue& c : cells.items) {
    const std::string s = c["scenario"].str;
    if (!charts.count(s)) charts[s] = fio_test::ReadFile(absl::StrCat(dir, "/", s, ".svg"));
    for (const std::string* svg : {&overview, static_cast<const std::string*>(&charts[s])}) {
      EXPECT_EQ(Count(*svg, CellId("published", c)), 1) << CellId("published", c);
      EXPECT_EQ(Count(*svg, CellId("modeled", c)), 1) << CellId("modeled", c);
      EXPECT_EQ(Count(*svg, CellId("ci95", c)), c["ci95"].kind == JsonValue::Kind::kNumber ? 1 : 0)
          << CellId("ci95", c);
      EXPECT_EQ(Count(*svg, CellId("band", c)), c.Has("band") ? 1 : 0) << CellId("band", c);
    }
    bands += c.Has("band");
  }
  EXPECT_EQ(Count(overview, "id=\"modeled."), static_cast<int>(cells.items.size()));
  EXPECT_EQ(Count(overview, "id=\"band."), bands);
  const std::string md = fio_test::ReadFile(dir + "/report.md");
  EXPECT_THAT(md, HasSubstr("![every published cell](reproduction.svg)"));
  for (const auto& [s, svg] : charts) EXPECT_THAT(md, HasSubstr(absl::StrCat("](", s, ".svg)")));
  // Nothing in the files says when or with what they were made.
  EXPECT_EQ(Count(overview, "<dc:date>"), 0);
  EXPECT_EQ(Count(overview, "Matplotlib v"), 0);
}

constexpr char kShort[] = "--set run.duration=20ms --set run.warmup=1ms";

// The whole reproduction, as the README's chart is drawn: one bar per cell.
// The same run's report is compared with the one committed in docs/.
TEST(ReportTest, ReproductionChartHasOneBarPerCellAndMatchesTheCommittedOne) {
  const std::string dir = TmpDir() + "/full";
  const Result r = Viosim(absl::StrCat("reproduce --jobs 2 --report ", dir));
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectOneBarPerCell(dir);

  // docs/reproduction is `viosim reproduce --jobs 2 --report docs/reproduction`
  // run at some commit. Its cells must be this run's cells, its published
  // values these, and each modeled value within the gate's drift tolerance of
  // this run's (max(0.5%, 2 x the 95% half-width), at most 10%): a chart
  // cannot show a smaller difference, and a bigger one means it is stale.
  const std::string committed = "docs/reproduction";
  ExpectOneBarPerCell(committed);
  absl::StatusOr<JsonValue> now = analysis::JsonReader(fio_test::ReadFile(dir + "/data.json")).Document();
  absl::StatusOr<JsonValue> then = analysis::JsonReader(fio_test::ReadFile(committed + "/data.json")).Document();
  ASSERT_TRUE(now.ok() && then.ok());
  const auto& a = (*now)["cells"].items;
  const auto& b = (*then)["cells"].items;
  ASSERT_EQ(a.size(), b.size()) << "regenerate: viosim reproduce --jobs 2 --report docs/reproduction";
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string name = absl::StrCat(a[i]["scenario"].str, "/", a[i]["variant"].str, "/", a[i]["metric"].str);
    EXPECT_EQ(name, absl::StrCat(b[i]["scenario"].str, "/", b[i]["variant"].str, "/", b[i]["metric"].str));
    EXPECT_EQ(a[i]["published"].str, b[i]["published"].str) << name;
    EXPECT_EQ(a[i]["role"].str, b[i]["role"].str) << name;
    EXPECT_EQ(a[i]["known_gap"].str.empty(), b[i]["known_gap"].str.empty()) << name;
    EXPECT_EQ(a[i].Has("band"), b[i].Has("band")) << name;
    const double m = a[i]["modeled"].Num();
    const double ci = a[i]["ci95"].kind == JsonValue::Kind::kNumber ? a[i]["ci95"].Num() : 0;
    const double tol_pct = std::min(10.0, std::max(0.5, 100 * 2 * ci / std::abs(m)));
    EXPECT_NEAR(b[i]["modeled"].Num(), m, std::abs(m) * tol_pct / 100)
        << name << ": the committed chart is stale; regenerate: viosim reproduce --jobs 2 --report docs/reproduction";
  }
}

TEST(ReportTest, SameReportAtAnyJobs) {
  const std::string one = TmpDir() + "/jobs1", two = TmpDir() + "/jobs2";
  const std::string args = absl::StrCat("reproduce scenarios/lockbench.textproto scenarios/virtio_blk_kick_lock.textproto ",
                                        kShort, " --report ");
  Result r = Viosim(absl::StrCat(args, one, " --jobs 1"));
  ASSERT_EQ(r.code, 0) << r.err;
  r = Viosim(absl::StrCat(args, two, " --jobs 2"));
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectSameDirs(one, two);
  ExpectOneBarPerCell(one);
  EXPECT_EQ(Files(one), (std::vector<std::string>{"data.json", "effects.svg", "lockbench.svg", "report.md",
                                                  "reproduction.svg", "virtio_blk_kick_lock.svg"}));
}

TEST(ReportTest, SweepDrawsOneLinePerVariantPerMetric) {
  const std::string dir = TmpDir() + "/sweep";
  const Result r = Viosim(absl::StrCat("sweep scenarios/lockbench.textproto ", kShort,
                                       " --over workload.lockbench.threads=2,4,8 --metric lock_wait_mean_us "
                                       "--metric lock_acquisitions_per_s --jobs 2 --report ",
                                       dir));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Files(dir), (std::vector<std::string>{"data.json", "report.md", "sweep_lock_acquisitions_per_s.svg",
                                                  "sweep_lock_wait_mean_us.svg"}));
  for (const std::string m : {"lock_wait_mean_us", "lock_acquisitions_per_s"}) {
    const std::string svg = fio_test::ReadFile(absl::StrCat(dir, "/sweep_", m, ".svg"));
    EXPECT_EQ(Count(svg, absl::StrCat("id=\"line.N4.", m, "\"")), 1) << m;
    EXPECT_EQ(Count(svg, absl::StrCat("id=\"line.N64.", m, "\"")), 1) << m;
    EXPECT_EQ(Count(svg, "id=\"line."), 2) << m;
  }
  const std::string md = fio_test::ReadFile(dir + "/report.md");
  EXPECT_THAT(md, HasSubstr("| workload.lockbench.threads | N4 lock_wait_mean_us |"));
  EXPECT_THAT(md, HasSubstr("![lock_wait_mean_us](sweep_lock_wait_mean_us.svg)"));
}

// A grid sweep (--over twice): a heat map per variant and metric, each
// square an image cell, and with two variants the gain's map; the same at
// any --jobs.
TEST(ReportTest, AGridSweepDrawsHeatMapsAndTheGainsMap) {
  const std::string one = TmpDir() + "/grid1", two = TmpDir() + "/grid2";
  const std::string args = absl::StrCat(
      "sweep scenarios/lockbench.textproto ", kShort,
      " --over workload.lockbench.hold.exponential.mean=1us,3us --over platform.lock_handoff.value=100ns,400ns "
      "--report ");
  const Result r = Viosim(absl::StrCat(args, one, " --jobs 1"));
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(Viosim(absl::StrCat(args, two, " --jobs 2")).code, 0);
  ExpectSameDirs(one, two);
  EXPECT_EQ(Files(one), (std::vector<std::string>{"data.json", "grid_N4.lock_acquisitions_per_s.svg",
                                                  "grid_N64.lock_acquisitions_per_s.svg",
                                                  "grid_gain_lock_acquisitions_per_s.svg", "report.md"}));
  const std::string svg = fio_test::ReadFile(one + "/grid_gain_lock_acquisitions_per_s.svg");
  EXPECT_EQ(Count(svg, "id=\"heat."), 1);
  const std::string md = fio_test::ReadFile(one + "/report.md");
  EXPECT_THAT(md, HasSubstr("over workload.lockbench.hold.exponential.mean x platform.lock_handoff.value"));
}

// explain's tornado chart: one bar per varied cost (with its whisker), the
// costs in the table in rank order, the same at any --jobs.
TEST(ReportTest, ExplainDrawsOneBarPerVariedCost) {
  const std::string one = TmpDir() + "/explain1", two = TmpDir() + "/explain2";
  const std::string args =
      absl::StrCat("explain scenarios/lockbench.textproto --variant N4 ", kShort, " --report ");
  const Result r = Viosim(absl::StrCat(args, one, " --jobs 1"));
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(Viosim(absl::StrCat(args, two, " --jobs 2")).code, 0);
  ExpectSameDirs(one, two);
  EXPECT_EQ(Files(one),
            (std::vector<std::string>{"data.json", "explain_N4.lock_acquisitions_per_s.svg", "report.md"}));
  const std::string svg = fio_test::ReadFile(one + "/explain_N4.lock_acquisitions_per_s.svg");
  absl::StatusOr<JsonValue> data = analysis::JsonReader(fio_test::ReadFile(one + "/data.json")).Document();
  ASSERT_TRUE(data.ok());
  const std::vector<JsonValue>& costs = (*data)["costs"].items;
  ASSERT_EQ(costs.size(), 2u);  // think and hold; the zero hand-off is not varied
  EXPECT_EQ(Count(svg, "id=\"elasticity."), 2);
  EXPECT_EQ(Count(svg, "id=\"ci95."), 2);
  const std::string md = fio_test::ReadFile(one + "/report.md");
  size_t last = 0;
  for (const JsonValue& c : costs) {
    std::string id = c["field"].str;  // as report.py's safe_id writes it
    for (char& ch : id) {
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') ch = '_';
    }
    EXPECT_EQ(Count(svg, absl::StrCat("id=\"elasticity.", id, "\"")), 1) << id;
    const size_t at = md.find(absl::StrCat("| `", c["field"].str, "` |"));
    ASSERT_NE(at, std::string::npos) << c["field"].str;
    EXPECT_GT(at, last) << "the table keeps the ranking";
    last = at;
  }
  EXPECT_THAT(md, HasSubstr("`platform.lock_handoff.value` (defined, 0ps): zero: no relative step"));
}

TEST(ReportTest, ARunReplacesOnlyAReportItWroteBefore) {
  const std::string dir = TmpDir() + "/again";
  const std::string args = absl::StrCat("reproduce scenarios/lockbench.textproto ", kShort, " --report ", dir);
  ASSERT_EQ(Viosim(args).code, 0);
  std::ofstream(dir + "/stale.svg") << "old";
  ASSERT_EQ(Viosim(args).code, 0);
  EXPECT_FALSE(std::filesystem::exists(dir + "/stale.svg"));

  const std::string other = TmpDir() + "/not_a_report";
  std::filesystem::create_directories(other);
  std::ofstream(other + "/keep.txt") << "mine";
  const Result r = Viosim(absl::StrCat("reproduce scenarios/lockbench.textproto ", kShort, " --report ", other));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--report " + other + ": is a directory without report.md"));
  EXPECT_EQ(fio_test::ReadFile(other + "/keep.txt"), "mine");

  const std::string file = TmpDir() + "/a_file";
  std::ofstream(file) << "x";
  EXPECT_EQ(Viosim(absl::StrCat("sweep scenarios/lockbench.textproto --over run.seed=1,2 --report ", file)).code, 2);
  const Result empty = Viosim("reproduce --report ''");
  EXPECT_EQ(empty.code, 2);
  EXPECT_THAT(empty.err, HasSubstr("--report: an empty path names no file"));
  const Result missing = Viosim(absl::StrCat("reproduce --report ", TmpDir(), "/no/such/dir"));
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.err, HasSubstr("does not exist"));
}

TEST(ReportTest, NoPlotterIsAClearErrorBeforeAnythingRuns) {
  const std::string dir = TmpDir() + "/noplot";
  const Result r = Viosim(absl::StrCat("reproduce --report ", dir), "VIOSIM_PYTHON=/bin/false");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--report needs a Python 3 with matplotlib; none of /bin/false imports it"));
  EXPECT_THAT(r.err, HasSubstr("python3-matplotlib"));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// A plotter that fails half-way leaves neither DIR nor its scratch directory.
TEST(ReportTest, AFailedDrawingLeavesNothing) {
  const std::string parent = TmpDir() + "/failing";
  std::filesystem::create_directories(parent);
  const std::string fake = TmpDir() + "/fake_python";
  std::ofstream(fake) << "#!/bin/sh\n"
                         "case \"$*\" in *'import matplotlib') exit 0 ;; esac\n"
                         "for a; do last=$a; done\n"
                         "echo half > \"$last/reproduction.svg\"\n"
                         "echo 'plot: something broke' >&2\n"
                         "exit 3\n";
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  const Result r = Viosim(absl::StrCat("reproduce scenarios/lockbench.textproto ", kShort, " --report ", parent, "/r"),
                          absl::StrCat("VIOSIM_PYTHON=", fake));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("drawing the report failed"));
  EXPECT_THAT(r.err, HasSubstr("exited 3): plot: something broke"));
  EXPECT_TRUE(Files(parent).empty());
}

}  // namespace
