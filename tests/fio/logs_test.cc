// `viosim fio`'s log files against real fio 3.33's (tests/fio/logs/): for
// the same job files, the same file names and the same columns on every
// line; fio's own tools (fio2gnuplot, fio_generate_plots, fiologparser.py,
// fiologparser_hist.py from Debian's fio package) read both alike; and a
// log's mean over the run is the JSON output's mean (bw, iops, clat), in
// viosim's output as in fio's.
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "analysis/json_value.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fio_output/test_files.h"

namespace {

namespace fs = std::filesystem;
using ::analysis::JsonValue;

const char kJobs[] = "tests/fio/logs";
const char kReference[] = "tests/fio/logs/fio-3.33";
const std::vector<std::string> kJobNames = {"per_io", "avg", "shared", "hist"};

std::string TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t != nullptr ? t : "/tmp";
}

struct Outcome {
  int code = -1;
  std::string out, err;
};

// Runs `cmd` in `dir` under sh.
Outcome Shell(const std::string& dir, const std::string& cmd) {
  static int n = 0;
  const std::string out = absl::StrCat(TmpDir(), "/sh_out.", n), err = absl::StrCat(TmpDir(), "/sh_err.", n);
  ++n;
  const std::string line = absl::StrCat("cd '", dir, "' && ", cmd, " >", out, " 2>", err);
  const int status = std::system(line.c_str());
  Outcome r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = fio_test::ReadFile(out);
  r.err = fio_test::ReadFile(err);
  return r;
}

std::string Python() {
  const char* p = std::getenv("VIOSIM_PYTHON");
  return p != nullptr ? p : "/usr/bin/python3";
}

// viosim's logs and JSON report of job `name`, in a directory of their own
// (made once per job).
std::string ViosimRun(const std::string& name) {
  static std::map<std::string, std::string> done;
  if (auto it = done.find(name); it != done.end()) return it->second;
  const std::string dir = absl::StrCat(TmpDir(), "/viosim_", name);
  fs::create_directories(dir);
  const std::string cwd = fs::current_path().string();
  const Outcome r = Shell(cwd, absl::StrCat("cli/viosim fio ", kJobs, "/", name, ".fio --full --output-format=json --output=",
                                        dir, "/", name, ".json --log-dir ", dir));
  EXPECT_EQ(r.code, 0) << r.err;
  done[name] = dir;
  return dir;
}

std::set<std::string> LogNames(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.size() > 4 && n.substr(n.size() - 4) == ".log") names.insert(n);
  }
  return names;
}

std::vector<std::vector<std::string>> Lines(const std::string& path) {
  std::vector<std::vector<std::string>> lines;
  for (absl::string_view line : absl::StrSplit(fio_test::ReadFile(path), '\n', absl::SkipEmpty())) {
    lines.push_back(absl::StrSplit(line, ", "));
  }
  return lines;
}

// A line's form: its field count and each field's kind, an unsigned
// decimal ("n") or a 0x%04x priority ("x").
std::string Form(const std::vector<std::string>& fields) {
  std::string form = absl::StrCat(fields.size(), ":");
  for (const std::string& f : fields) {
    uint64_t v;
    if (absl::SimpleAtoi(f, &v) && f.find_first_not_of("0123456789") == std::string::npos) {
      form += "n";
    } else if (f.size() == 6 && f.substr(0, 2) == "0x" && f.find_first_not_of("0123456789abcdef", 2) == std::string::npos) {
      form += "x";
    } else {
      form += "?";
    }
  }
  return form;
}

std::set<std::string> Forms(const std::string& path) {
  std::set<std::string> forms;
  for (const auto& l : Lines(path)) forms.insert(Form(l));
  return forms;
}

// The values of column `col` on every line.
std::set<std::string> Column(const std::string& path, size_t col) {
  std::set<std::string> v;
  for (const auto& l : Lines(path)) {
    if (col < l.size()) v.insert(l[col]);
  }
  return v;
}

// The mean of the value column over lines of direction `ddir`; -1 when none.
double Mean(const std::string& path, int ddir) {
  double sum = 0;
  int n = 0;
  for (const auto& l : Lines(path)) {
    if (l.size() < 3 || l[2] != absl::StrCat(ddir)) continue;
    sum += std::strtod(l[1].c_str(), nullptr);
    ++n;
  }
  return n > 0 ? sum / n : -1;
}

JsonValue Report(const std::string& path) {
  absl::StatusOr<JsonValue> j = analysis::JsonReader(fio_test::ReadFile(path)).Document();
  EXPECT_TRUE(j.ok()) << path;
  return j.value_or(JsonValue());
}

TEST(FioLogs, SameFilesAndColumnsAsRealFio) {
  for (const std::string& name : kJobNames) {
    SCOPED_TRACE(name);
    const std::string ours = ViosimRun(name), theirs = absl::StrCat(kReference, "/", name);
    const std::set<std::string> files = LogNames(theirs);
    ASSERT_FALSE(files.empty());
    EXPECT_EQ(LogNames(ours), files);
    for (const std::string& f : files) {
      SCOPED_TRACE(f);
      const std::string a = absl::StrCat(ours, "/", f), b = absl::StrCat(theirs, "/", f);
      // Same line forms (an empty slat log of a sync engine stays empty).
      EXPECT_EQ(Forms(a), Forms(b));
      // The direction and block size columns are the job's, not measured.
      EXPECT_EQ(Column(a, 2), Column(b, 2)) << "directions";
      if (f.find("clat_hist") != std::string::npos) {
        EXPECT_EQ(Column(a, 1), Column(b, 1)) << "histogram directions";
      } else {
        EXPECT_EQ(Column(a, 3), Column(b, 3)) << "block sizes";
      }
      EXPECT_EQ(Lines(a).empty(), Lines(b).empty());
    }
  }
}

TEST(FioLogs, PerIoLogsHaveALinePerCompletionAndTheSameRun) {
  const std::string ours = ViosimRun("per_io");
  // 1 MiB in 4 KiB reads: 256 lines, as fio's.
  for (const char* f : {"per_io_bw.1.log", "per_io_clat.1.log", "per_io_iops.1.log", "per_io_lat.1.log"}) {
    EXPECT_EQ(Lines(absl::StrCat(ours, "/", f)).size(), 256u) << f;
  }
  // The offset column (log_offset=1): each a 4 KiB block of the 1 MiB file.
  for (const std::string& off : Column(absl::StrCat(ours, "/per_io_clat.1.log"), 4)) {
    const uint64_t v = std::strtoull(off.c_str(), nullptr, 10);
    EXPECT_EQ(v % 4096, 0u);
    EXPECT_LT(v, 1u << 20);
  }
  // per_job_logs=0: both clones' 128 writes in one file.
  EXPECT_EQ(Lines(absl::StrCat(ViosimRun("shared"), "/shared_bw.log")).size(), 256u);
  // Deterministic: the same run again writes the same bytes.
  const std::string again = absl::StrCat(TmpDir(), "/viosim_per_io_again");
  fs::create_directories(again);
  const Outcome r = Shell(fs::current_path().string(),
                      absl::StrCat("cli/viosim fio ", kJobs, "/per_io.fio --full --output=/dev/null --log-dir ", again));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const std::string& f : LogNames(ours)) {
    EXPECT_EQ(fio_test::ReadFile(absl::StrCat(again, "/", f)), fio_test::ReadFile(absl::StrCat(ours, "/", f))) << f;
  }
}

// The log means the JSON reports, checked on fio's own files first (the
// rule is fio's), then on viosim's.
void ExpectMeansAgree(const std::string& dir, const std::string& name) {
  const JsonValue report = Report(absl::StrCat(dir, "/", name, ".json"));
  const std::vector<JsonValue>& jobs = report["jobs"].items;
  if (name == "per_io") {
    // Per-I/O logs: clat and lat in ns, bw as each I/O's bytes * 10^6 /
    // clat_ns, iops 1: their means are the JSON's clat_ns, lat_ns, bw and
    // iops means, to the JSON's six decimals.
    ASSERT_EQ(jobs.size(), 1u);
    for (int k = 0; k < 1; ++k) {
      const JsonValue& rd = jobs[k]["read"];
      const std::string n = absl::StrCat(".", k + 1, ".log");
      EXPECT_NEAR(Mean(absl::StrCat(dir, "/per_io_clat", n), 0), rd["clat_ns"]["mean"].Num(), 1e-6) << dir;
      EXPECT_NEAR(Mean(absl::StrCat(dir, "/per_io_lat", n), 0), rd["lat_ns"]["mean"].Num(), 1e-6) << dir;
      EXPECT_NEAR(Mean(absl::StrCat(dir, "/per_io_bw", n), 0), rd["bw_mean"].Num(), 1e-6) << dir;
      EXPECT_NEAR(Mean(absl::StrCat(dir, "/per_io_iops", n), 0), rd["iops_mean"].Num(), 1e-6) << dir;
      EXPECT_EQ(rd["bw_samples"].U64(), rd["total_ios"].U64()) << "a bw sample per I/O";
    }
  } else if (name == "avg") {
    // Windowed bw and iops logs (log_avg_msec=100): an entry per window
    // and direction, the window's rate, which is also the JSON's sample;
    // the mean agrees to fio's rounding of a window's mean (+0.5, down).
    ASSERT_EQ(jobs.size(), 2u);
    const char* prefix[] = {"avg", "max"};
    for (int k = 0; k < 2; ++k) {
      for (int d = 0; d < 2; ++d) {
        const JsonValue& s = jobs[k][d == 0 ? "read" : "write"];
        const std::string n = absl::StrCat(".", k + 1, ".log");
        EXPECT_NEAR(Mean(absl::StrCat(dir, "/", prefix[k], "_bw", n), d), s["bw_mean"].Num(), 0.5) << dir;
        EXPECT_NEAR(Mean(absl::StrCat(dir, "/", prefix[k], "_iops", n), d), s["iops_mean"].Num(), 0.5) << dir;
        int entries = 0;
        for (const auto& l : Lines(absl::StrCat(dir, "/", prefix[k], "_bw", n))) entries += l[2] == absl::StrCat(d);
        EXPECT_EQ(static_cast<uint64_t>(entries), s["bw_samples"].U64()) << dir;
      }
    }
  } else if (name == "hist") {
    // Each histogram entry counts the completions since the one before:
    // never more than the run's, and some.
    ASSERT_EQ(jobs.size(), 1u);
    uint64_t counted = 0;
    for (const auto& l : Lines(absl::StrCat(dir, "/hist_clat_hist.1.log"))) {
      EXPECT_EQ(l.size(), 3u + 1856 / 4) << "log_hist_coarseness=2: 464 columns";
      for (size_t i = 3; i < l.size(); ++i) counted += std::strtoull(l[i].c_str(), nullptr, 10);
    }
    EXPECT_GT(counted, 0u);
    EXPECT_LE(counted, jobs[0]["read"]["clat_ns"]["N"].U64());
  }
}

TEST(FioLogs, MeansAgreeWithTheJsonReport) {
  for (const std::string& name : {"per_io", "avg", "hist"}) {
    SCOPED_TRACE(name);
    ExpectMeansAgree(absl::StrCat(kReference, "/", name), name);
    ExpectMeansAgree(ViosimRun(name), name);
  }
}

// Copies the logs of `from` into a fresh directory for a tool to run in.
std::string Scratch(const std::string& from, const std::string& tag) {
  const std::string dir = absl::StrCat(TmpDir(), "/tool_", tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const std::string& f : LogNames(from)) fs::copy_file(absl::StrCat(from, "/", f), absl::StrCat(dir, "/", f));
  return dir;
}

// The tools shipped gzipped in the fio package, unpacked into the test's
// temporary directory.
std::string Unpacked(const std::string& script) {
  const std::string path = absl::StrCat(TmpDir(), "/", script);
  if (!fs::exists(path)) {
    const Outcome r = Shell(TmpDir(), absl::StrCat("sh -c 'gzip -dc /usr/share/doc/fio/", script, ".gz > ", script, "'"));
    EXPECT_EQ(r.code, 0) << r.err;
  }
  return path;
}

TEST(FioLogs, FioToolsReadThemAsTheyReadRealFios) {
  const std::string cwd = fs::current_path().string();
  for (const std::string& name : {"per_io", "avg", "shared", "hist"}) {
    SCOPED_TRACE(name);
    const std::string ours = ViosimRun(name), theirs = absl::StrCat(cwd, "/", kReference, "/", name);
    for (const auto& [tag, source] : {std::pair{"viosim", ours}, std::pair{"fio", theirs}}) {
      SCOPED_TRACE(tag);
      if (name != "hist") {
        // fio2gnuplot: bandwidth and iops traces rendered by gnuplot.
        for (const char* kind : {"bw", "iops"}) {
          const std::string dir = Scratch(source, absl::StrCat(name, "_", tag, "_", kind));
          const Outcome r = Shell(dir, absl::StrCat(Python(), " /usr/bin/fio2gnuplot -g -d out -p '*_", kind, "*.log'"));
          EXPECT_EQ(r.code, 0) << r.out << r.err;
          EXPECT_THAT(r.out, ::testing::HasSubstr("Rendering traces are available"));
          bool png = false;
          for (const auto& e : fs::directory_iterator(absl::StrCat(dir, "/out"))) png |= e.path().extension() == ".png";
          EXPECT_TRUE(png) << kind;
        }
      }
      if (name == "per_io" || name == "avg") {
        // fio_generate_plots: an SVG per log type (it needs all five).
        const std::string dir = Scratch(source, absl::StrCat(name, "_", tag, "_plots"));
        const Outcome r = Shell(dir, "fio_generate_plots logs");
        EXPECT_EQ(r.code, 0) << r.out << r.err;
        for (const char* kind : {"lat", "clat", "bw", "iops"}) {
          EXPECT_GT(fs::file_size(absl::StrCat(dir, "/logs-", kind, ".svg")), 1000u) << kind;
        }
      }
      if (name == "hist") {
        const Outcome r = Shell(source, absl::StrCat(Python(), " ", Unpacked("fiologparser_hist.py"), " hist_clat_hist.1.log"));
        EXPECT_EQ(r.code, 0) << r.err;
        const std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
        ASSERT_EQ(lines.size(), 2u) << r.out;
        EXPECT_EQ(lines[0], "end-time, samples, min, avg, median, 90%, 95%, 99%, max");
        EXPECT_EQ(std::vector<std::string>(absl::StrSplit(lines[1], ", ")).size(), 9u);
      }
    }
  }
}

// fiologparser.py (fio 3.33's copy) splits a line into the four columns
// logs had before fio added the priority column, so it stops at the first
// line of any 3.33 log, fio's or viosim's, with the same error.
TEST(FioLogs, FiologparserFailsOnFio333LogsAlike) {
  const std::string cwd = fs::current_path().string();
  const std::string script = Unpacked("fiologparser.py");
  for (const char* file : {"avg_bw.1.log", "avg_clat.1.log"}) {
    const Outcome a = Shell(ViosimRun("avg"), absl::StrCat(Python(), " ", script, " -A ", file));
    const Outcome b = Shell(absl::StrCat(cwd, "/", kReference, "/avg"), absl::StrCat(Python(), " ", script, " -A ", file));
    EXPECT_EQ(a.code, b.code) << file;
    EXPECT_NE(b.code, 0);
    EXPECT_THAT(a.err, ::testing::HasSubstr("ValueError: too many values to unpack (expected 4)"));
    EXPECT_THAT(b.err, ::testing::HasSubstr("ValueError: too many values to unpack (expected 4)"));
  }
}

TEST(FioLogs, NothingIsWrittenWhenALogCannotBe) {
  const std::string cwd = fs::current_path().string();
  // A --log-dir that does not exist: refused before the run.
  Outcome r = Shell(cwd, absl::StrCat("cli/viosim fio ", kJobs, "/per_io.fio --output=/dev/null --log-dir ", TmpDir(),
                                  "/no/such/dir"));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, ::testing::HasSubstr(absl::StrCat("--log-dir: '", TmpDir(), "/no/such/dir'")));
  EXPECT_THAT(r.err, ::testing::HasSubstr("does not exist"));
  // A prefix naming a directory that does not exist under --log-dir.
  const std::string dir = absl::StrCat(TmpDir(), "/empty_logs");
  fs::create_directories(dir);
  r = Shell(cwd, absl::StrCat("cli/viosim fio --log-dir ", dir,
                              " --output=/dev/null -- --name=x --rw=randread --size=64k --write_bw_log=sub/x"));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, ::testing::HasSubstr("job 'x': log directory"));
  EXPECT_TRUE(fs::is_empty(dir));
  // A job without logs writes none.
  r = Shell(dir, absl::StrCat(cwd, "/cli/viosim fio --output=/dev/null -- --name=x --rw=randread --size=64k"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_empty(dir));
}

}  // namespace
