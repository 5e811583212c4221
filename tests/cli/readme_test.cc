// The README's figures in step with the committed reproduction report
// (docs/reproduction/data.json, which report_test holds against a fresh
// run): the cell counts, every row of the headline table (published,
// modeled, error, role, known gap) and the kick-lock band it quotes.
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "analysis/json_value.h"
#include "gtest/gtest.h"
#include "tests/fio_output/test_files.h"

namespace {

using analysis::JsonValue;

struct CellKey {
  std::string scenario, variant, metric;
};

// Which report cell each headline row stands for: (case, cell) as the
// README words them. A row the test does not know fails, so a new row
// comes with its key here.
const std::map<std::pair<std::string, std::string>, CellKey>& RowKeys() {
  static const auto* keys = new std::map<std::pair<std::string, std::string>, CellKey>{
      {{"kick-lock", "before, IOPS"}, {"virtio_blk_kick_lock", "before", "iops"}},
      {{"kick-lock", "after, IOPS"}, {"virtio_blk_kick_lock", "after", "iops"}},
      {{"blk-poll", "4k randread, interrupt, IOPS"}, {"virtio_blk_poll", "randread-4k-hipri0", "iops"}},
      {{"blk-poll", "4k randread, polled, IOPS"}, {"virtio_blk_poll", "randread-4k-hipri1", "iops"}},
      {{"vhost-wake", "64 streams, original, vhost CPU %"},
       {"vhost_work_queue", "streams64-original", "vhost_cpu_pct"}},
      {{"vhost-wake", "64 streams, modified, vhost CPU %"},
       {"vhost_work_queue", "streams64-modified", "vhost_cpu_pct"}},
      {{"raid10-unplug", "before, read IOPS"}, {"raid10_unplug", "before", "read_iops"}},
      {{"raid10-unplug", "after, read IOPS"}, {"raid10_unplug", "after", "read_iops"}},
      {{"lockbench", "64 CPUs, acquisitions/s (exact: M/M/1//N)"}, {"lockbench", "N64", "lock_acquisitions_per_s"}},
  };
  return *keys;
}

// "14,003" -> 14003, "+27.6%" -> 27.6.
std::optional<double> Number(absl::string_view text) {
  std::string s = absl::StrReplaceAll(absl::StripAsciiWhitespace(text), {{",", ""}, {"%", ""}});
  if (absl::StartsWith(s, "+")) s.erase(0, 1);
  double v = 0;
  if (!absl::SimpleAtod(s, &v)) return std::nullopt;
  return v;
}

// The digits after the point a figure was written with ("45.87" -> 2).
int Decimals(absl::string_view text) {
  const size_t dot = text.find('.');
  if (dot == absl::string_view::npos) return 0;
  size_t n = 0;
  for (size_t i = dot + 1; i < text.size() && absl::ascii_isdigit(text[i]); ++i) ++n;
  return static_cast<int>(n);
}

// Whether `shown`, written to its own precision, is `value` rounded to it;
// a figure written to whole hundreds (9,013,400) is checked to those.
bool ShowsRounded(absl::string_view shown, double value) {
  const std::optional<double> v = Number(shown);
  if (!v) return false;
  const double unit = std::pow(10.0, -Decimals(shown));
  return std::fabs(*v - value) <= 0.5 * unit + 1e-9 * std::fabs(value);
}

struct Report {
  JsonValue json;
  const JsonValue* Cell(const CellKey& k) const {
    for (const JsonValue& c : json["cells"].items) {
      if (c["scenario"].str == k.scenario && c["variant"].str == k.variant && c["metric"].str == k.metric) return &c;
    }
    return nullptr;
  }
};

class ReadmeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    readme_ = fio_test::ReadFile("README.md");
    ASSERT_FALSE(readme_.empty());
    absl::StatusOr<JsonValue> j = analysis::JsonReader(fio_test::ReadFile("docs/reproduction/data.json")).Document();
    ASSERT_TRUE(j.ok()) << "docs/reproduction/data.json does not parse";
    report_.json = std::move(*j);
    ASSERT_FALSE(report_.json["cells"].items.empty());
  }
  std::string readme_;
  Report report_;
};

TEST_F(ReadmeTest, CellCountsAreTheReports) {
  int within = 0;
  for (const JsonValue& c : report_.json["cells"].items) within += c["within"].b ? 1 : 0;
  const std::string said = absl::StrCat("all ", report_.json["cells"].items.size(), " are in the report; ", within,
                                        " within tolerance");
  EXPECT_TRUE(absl::StrContains(absl::StrReplaceAll(readme_, {{"\n", " "}}), said))
      << "the README should say \"" << said << "\"";
}

TEST_F(ReadmeTest, EveryHeadlineRowIsItsReportCell) {
  int rows = 0;
  for (absl::string_view line : absl::StrSplit(readme_, '\n')) {
    if (!absl::StartsWith(line, "| ") || absl::StartsWith(line, "| case ") || absl::StartsWith(line, "|---")) continue;
    std::vector<std::string> f;
    for (absl::string_view part : absl::StrSplit(line, '|')) f.emplace_back(absl::StripAsciiWhitespace(part));
    // "", case, cell, published, modeled, error, role, ""
    ASSERT_EQ(f.size(), 8u) << line;
    ++rows;
    const auto key = RowKeys().find({f[1], f[2]});
    ASSERT_NE(key, RowKeys().end()) << "a headline row the test does not know: " << line;
    const JsonValue* cell = report_.Cell(key->second);
    ASSERT_NE(cell, nullptr) << "no report cell " << key->second.scenario << "/" << key->second.variant << "/"
                             << key->second.metric;
    EXPECT_TRUE(ShowsRounded(f[3], (*cell)["published"].Num())) << line << ": published " << (*cell)["published"].str;
    EXPECT_TRUE(ShowsRounded(f[4], (*cell)["modeled"].Num())) << line << ": modeled " << (*cell)["modeled"].str;
    // The error to the precision shown, or to a whole percent above 100%.
    const std::optional<double> err = Number(f[5]);
    ASSERT_TRUE(err.has_value()) << line;
    const double model_err = (*cell)["error_pct"].Num();
    const double unit = std::pow(10.0, -Decimals(f[5]));
    EXPECT_LE(std::fabs(*err - model_err), 0.5 * unit + 1e-9) << line << ": error " << model_err;
    EXPECT_TRUE(absl::StartsWith(f[6], (*cell)["role"].str)) << line << ": role " << (*cell)["role"].str;
    EXPECT_EQ(absl::StrContains(f[6], "known gap"), !(*cell)["known_gap"].str.empty()) << line;
  }
  EXPECT_EQ(rows, static_cast<int>(RowKeys().size()));
}

// The README quotes the kick-lock band as the case's page gives it: the
// row "| after / iops | published | point | p5 | p50 | p95 |" of
// docs/virtio_blk_kick_lock.md, p5 and p95 in thousands to one decimal.
TEST_F(ReadmeTest, TheQuotedBandIsTheCasePagesOwn) {
  const std::string page = fio_test::ReadFile("docs/virtio_blk_kick_lock.md");
  const size_t row = page.find("| after / iops |");
  ASSERT_NE(row, std::string::npos) << "the page no longer has the band's row";
  const std::vector<std::string> f = absl::StrSplit(page.substr(row, page.find('\n', row) - row), '|');
  ASSERT_GE(f.size(), 7u);
  const std::optional<double> p5 = Number(f[4]);
  const std::optional<double> p95 = Number(f[6]);
  ASSERT_TRUE(p5.has_value() && p95.has_value()) << f[4] << " " << f[6];
  const std::string flat = absl::StrReplaceAll(readme_, {{"\n", " "}});
  const size_t at = flat.find("`after` band is ");
  ASSERT_NE(at, std::string::npos) << "the README no longer quotes the band";
  const std::vector<std::string> ends =
      absl::StrSplit(flat.substr(at + 16, flat.find(',', at) - at - 16), '-');
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0], absl::StrFormat("%.1fK", *p5 / 1000)) << f[4];
  EXPECT_EQ(ends[1], absl::StrFormat("%.1fK", *p95 / 1000)) << f[6];
}

}  // namespace
