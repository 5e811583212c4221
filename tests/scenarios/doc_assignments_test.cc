// The --set assignments and fitted paths the documentation quotes work: a
// user who copies one gets it applied, not "no such field" or "is a
// message". Every page of docs/, the README and the scenario files' comments
// are scanned for
//   - assignments `PATH=VALUE` whose path starts at a field of Scenario
//     (platform, stack, workload, run, variant, published), as `--set` and
//     `--over` take them (an --over list is split at its commas), and
//   - `--fit PATH` and `--refit PATH`;
// each must be accepted by the loader (ApplyOverride, ScalarKindAt) on at
// least one checked-in scenario. Shorthand that starts below the top level
// (a table's `worker_cpu=0`) and placeholders (`FIELD=V1,V2`) are not paths
// of Scenario and are left alone; of a placeholder value (`run.seed=N`,
// `...`) only the path is checked. Quoted error output (a line starting
// "viosim: ") shows refused input on purpose and is skipped.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"
#include "scenarios/scenario.pb.h"
#include "tests/fio_output/test_files.h"

namespace viosim {
namespace {

// The files to scan, relative to the workspace root.
std::vector<std::string> Pages() {
  std::vector<std::string> pages = {"README.md"};
  for (const char* dir : {"docs", "scenarios"}) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const std::string ext = e.path().extension().string();
      if (ext == ".md" || ext == ".textproto") pages.push_back(e.path().string());
    }
  }
  std::sort(pages.begin(), pages.end());
  return pages;
}

bool StartsAtTopLevel(absl::string_view path) {
  const absl::string_view first = path.substr(0, path.find_first_of(".["));
  return Scenario::descriptor()->FindFieldByName(std::string(first)) != nullptr && path.find('.') != path.npos;
}

// Characters of a path: letters, digits, '_', '.', '[' and ']'.
bool PathChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '[' || c == ']';
}

// A value that stands for one: empty (`=...` once its dots are taken as
// punctuation) or capitals only (`N`, `VALUE`).
bool IsPlaceholder(absl::string_view v) {
  for (char c : v) {
    if (!absl::ascii_isupper(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

struct Quote {
  std::string page;
  int line;
  std::string path;
  std::vector<std::string> values;  // empty: the path alone is checked
};

std::vector<Quote> QuotesIn(const std::string& page, const std::string& text) {
  std::vector<Quote> quotes;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (absl::StartsWith(line, "viosim: ")) continue;
    for (size_t eq = line.find('='); eq != line.npos; eq = line.find('=', eq + 1)) {
      size_t start = eq;
      while (start > 0 && PathChar(line[start - 1])) --start;
      const absl::string_view path = line.substr(start, eq - start);
      if (path.empty() || !StartsAtTopLevel(path)) continue;
      size_t end = eq + 1;
      while (end < line.size() && !absl::ascii_isspace(static_cast<unsigned char>(line[end])) && line[end] != '`' &&
             line[end] != '\'' && line[end] != '"' && line[end] != '|') {
        ++end;
      }
      absl::string_view value = line.substr(eq + 1, end - eq - 1);
      // Sentence punctuation after the value.
      while (!value.empty() && absl::StrContains(".,;:)]", value.back())) value.remove_suffix(1);
      Quote q{page, line_no, std::string(path), {}};
      if (!IsPlaceholder(value)) {
        for (absl::string_view v : absl::StrSplit(value, ',')) q.values.emplace_back(v);
      }
      quotes.push_back(std::move(q));
    }
    for (absl::string_view flag : {"--fit ", "--refit "}) {
      for (size_t at = line.find(flag); at != line.npos; at = line.find(flag, at + 1)) {
        size_t end = at + flag.size();
        while (end < line.size() && PathChar(line[end])) ++end;
        const absl::string_view path = line.substr(at + flag.size(), end - at - flag.size());
        if (StartsAtTopLevel(path)) quotes.push_back(Quote{page, line_no, std::string(path), {}});
      }
    }
  }
  return quotes;
}

TEST(DocAssignmentsTest, EveryQuotedPathIsAcceptedByTheLoader) {
  std::vector<ScenarioFile> scenarios;
  for (const auto& e : std::filesystem::directory_iterator("scenarios")) {
    if (e.path().extension() != ".textproto") continue;
    absl::StatusOr<ScenarioFile> f = LoadScenarioFile(e.path().string());
    ASSERT_TRUE(f.ok()) << f.status();
    scenarios.push_back(*std::move(f));
  }
  ASSERT_GE(scenarios.size(), 5u);
  int checked = 0;
  for (const std::string& page : Pages()) {
    for (const Quote& q : QuotesIn(page, fio_test::ReadFile(page))) {
      ++checked;
      std::string why;
      bool accepted = false;
      for (const ScenarioFile& f : scenarios) {
        absl::Status s;
        if (q.values.empty()) {
          s = ScalarKindAt(f.scenario, q.path, "--fit").status();
        } else {
          for (const std::string& v : q.values) {
            Scenario copy = f.scenario;
            s.Update(ApplyOverride(&copy, absl::StrCat(q.path, "=", v)));
          }
        }
        if (s.ok()) {
          accepted = true;
          break;
        }
        if (why.empty() || s.message().size() < why.size()) why = std::string(s.message());
      }
      EXPECT_TRUE(accepted) << q.page << ":" << q.line << ": " << q.path
                            << (q.values.empty() ? "" : absl::StrCat("=", absl::StrJoin(q.values, ",")))
                            << " is refused by every scenario, e.g. " << why;
    }
  }
  // The pages quote many; a scan that finds few has stopped seeing them.
  std::printf("%d quoted paths checked\n", checked);
  EXPECT_GT(checked, 40);  // 65 when written
}

}  // namespace
}  // namespace viosim
