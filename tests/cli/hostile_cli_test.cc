// Broken inputs as a new user gives them, swept over every subcommand (and
// every output flag) that could take them: each is exit status 2 with the
// file, the line and the field (or the flag), and nothing is written.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/run_viosim.h"

namespace {

using clitest::Result;
using clitest::Viosim;
using clitest::WriteTmp;
using ::testing::HasSubstr;

// The files in `dir`, to see that a refused command wrote none.
std::set<std::string> Listing(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!absl::StartsWith(name, "stdout.") && !absl::StartsWith(name, "stderr.")) out.insert(name);
  }
  return out;
}

// The lines of `help` in the section headed `title` ("Subcommands:").
std::vector<std::string> Section(const std::string& help, absl::string_view title) {
  std::vector<std::string> out;
  bool in = false;
  for (absl::string_view line : absl::StrSplit(help, '\n')) {
    if (!in) {
      in = absl::StripAsciiWhitespace(line) == title;
      continue;
    }
    if (absl::StripAsciiWhitespace(line).empty()) {
      if (!out.empty()) break;
      continue;
    }
    if (line[0] != ' ') break;
    out.emplace_back(line);
  }
  return out;
}

// Every subcommand, from `viosim --help`.
std::vector<std::string> Subcommands() {
  std::vector<std::string> out;
  for (const std::string& line : Section(Viosim("--help").out, "Subcommands:")) {
    const absl::string_view entry = absl::StripAsciiWhitespace(line);
    out.emplace_back(entry.substr(0, entry.find(' ')));
  }
  return out;
}

// A command line for `sub` on scenario `scenario` that needs nothing else
// of its own to be read (the required flags given).
std::string CommandOn(const std::string& sub, const std::string& scenario) {
  if (sub == "sweep") return absl::StrCat("sweep ", scenario, " --over run.seed=1,2");
  if (sub == "calibrate") return absl::StrCat("calibrate ", scenario, " --fit run.seed --cell base --range 1,2");
  if (sub == "gate") return absl::StrCat("gate ", scenario, " --baseline analysis/baseline.textproto");
  if (sub == "fio") return absl::StrCat("fio --stack ", scenario, " scenarios/fio/kick-lock.fio");
  if (sub == "merge") return "";  // reads parts, not scenarios
  if (sub == "teach") return absl::StrCat("teach ", scenario, " -o ", ::testing::TempDir(), "/teach.html");
  return absl::StrCat(sub, " ", scenario);
}

TEST(HostileCliTest, EverySubcommandIsSwept) {
  const std::vector<std::string> subs = Subcommands();
  EXPECT_GE(subs.size(), 9u);
  for (const char* known : {"run", "sweep", "calibrate", "list", "reproduce", "merge", "gate", "explain", "fio"}) {
    EXPECT_NE(std::find(subs.begin(), subs.end(), known), subs.end()) << known;
  }
}

TEST(HostileCliTest, EmptyAndCommentOnlyScenariosAreRefusedByEverySubcommandAtLineOne) {
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"empty.textproto", ""}, {"comments.textproto", "# nothing\n\n# at all\n"}}) {
    const std::string path = WriteTmp(name, text);
    for (const std::string& sub : Subcommands()) {
      const std::string cmd = CommandOn(sub, path);
      if (cmd.empty()) continue;
      const Result r = Viosim(cmd);
      EXPECT_EQ(r.code, 2) << cmd << "\n" << r.err;
      EXPECT_THAT(r.err, HasSubstr(absl::StrCat(path, ":1:1: field 'workload': the file sets no field"))) << cmd;
      EXPECT_TRUE(r.out.empty()) << cmd;
    }
  }
}

TEST(HostileCliTest, APublishedMetricTheVariantDoesNotReportIsRefusedByEverySubcommandAtItsLine) {
  const std::string path = WriteTmp("bad_metric.textproto",
                                    "name: \"m\"\n"
                                    "workload { lockbench { threads: 2 think { exponential { mean: \"10us\" } }\n"
                                    "  hold { exponential { mean: \"2us\" } } } }\n"
                                    "run { duration: \"1ms\" warmup: \"0s\" }\n"
                                    "published { metric: \"iops\" value: 1 role: CALIBRATION tolerance_pct: 5 }\n");
  for (const std::string& sub : Subcommands()) {
    const std::string cmd = CommandOn(sub, path);
    if (cmd.empty()) continue;
    const Result r = Viosim(cmd);
    EXPECT_EQ(r.code, 2) << cmd << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat(path, ":5:13: field 'published[0].metric': 'iops' is not a metric")))
        << cmd << "\n" << r.err;
  }
}

TEST(HostileCliTest, InvalidUtf8IsRefusedInEveryInputTheCommandLineNames) {
  const std::string scenario = WriteTmp("utf8.textproto", "# ok\nname: \"caf\\303\"\n");
  for (const std::string& sub : Subcommands()) {
    const std::string cmd = CommandOn(sub, scenario);
    if (cmd.empty()) continue;
    const Result r = Viosim(cmd);
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat(scenario, ":2:1: field 'name': not valid UTF-8"))) << cmd << r.err;
  }
  // --set, on every subcommand that takes it.
  for (const std::string& sub : Subcommands()) {
    const std::string cmd =
        absl::StrReplaceAll(CommandOn(sub, "scenarios/raid10_unplug.textproto"), {{"--cell base", "--cell before/write_iops"}});
    if (cmd.empty()) continue;
    const Result r = Viosim(absl::StrCat(cmd, " --set \"$(printf 'name=caf\\303')\""));
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_THAT(r.err, HasSubstr("field 'name': not valid UTF-8")) << cmd << r.err;
  }
  const std::string job = WriteTmp("utf8.fio", "[global]\nrw=read\n[j\xff]\nsize=1m\n");
  Result r = Viosim(absl::StrCat("fio ", job));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(job, ":3: section header: not valid UTF-8"))) << r.err;
  r = Viosim("fio -- --name=j --rw=read \"$(printf -- '--filename=\\377')\"");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("not valid UTF-8")) << r.err;
  const std::string baseline = WriteTmp("utf8_baseline.textproto", "cell {\n  scenario: \"\\377\"\n}\n");
  r = Viosim(absl::StrCat("gate scenarios/lockbench.textproto --set run.duration=1ms --baseline ", baseline));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(baseline, ":2:3: field 'cell[0].scenario': not valid UTF-8"))) << r.err;
  const std::string part = WriteTmp("utf8.jsonl", "{\"a\": 1}\n{\"b\": \"\xff\"}\n");
  r = Viosim(absl::StrCat("merge ", part));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(part, ":2: not valid UTF-8"))) << r.err;
}

TEST(HostileCliTest, EveryOutputFlagOfEverySubcommandRefusesAnEmptyPathAndAMissingDirectory) {
  const std::string dir = clitest::TmpDir();
  int swept = 0;
  for (const std::string& sub : Subcommands()) {
    const std::string help = Viosim(absl::StrCat(sub, " --help")).out;
    std::string cmd = CommandOn(sub, "scenarios/lockbench.textproto");
    if (sub == "merge") cmd = "merge scenarios/lockbench.textproto";
    for (const std::string& line : Section(help, "Output:")) {
      absl::string_view flag = absl::StripAsciiWhitespace(line);
      if (!absl::StartsWith(flag, "-")) continue;  // a description's second line
      flag = flag.substr(0, flag.find(' '));
      if (const size_t comma = flag.find(','); comma != absl::string_view::npos) flag = flag.substr(comma + 1);
      const std::set<std::string> before = Listing(dir);
      for (const std::string& value : {std::string("''"), absl::StrCat(dir, "/no_such_dir/out")}) {
        const std::string full = absl::StrCat(cmd, " ", flag, " ", value);
        const Result r = Viosim(full);
        EXPECT_EQ(r.code, 2) << full << "\n" << r.err;
        EXPECT_THAT(r.err, HasSubstr(std::string(flag))) << full << "\n" << r.err;
        EXPECT_TRUE(r.out.empty()) << full;
        ++swept;
      }
      EXPECT_EQ(Listing(dir), before) << sub << " " << flag;
      EXPECT_FALSE(std::filesystem::exists(absl::StrCat(dir, "/no_such_dir")));
    }
  }
  // --output on 9 subcommands, --trace, --report on 3, --baseline: both values each.
  EXPECT_GE(swept, 2 * 14);
}

}  // namespace
