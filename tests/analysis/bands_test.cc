// Prediction bands (analysis/bands.h): the exactness check against mean
// value analysis, determinism whatever the threads, the Latin hypercube's
// strata, and the refit at every point.
#include "analysis/bands.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analysis/format.h"
#include "analysis/mva.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"

namespace analysis {
namespace {

constexpr char kHoldOnly[] = "tests/analysis/testdata/hold_band.textproto";

// The same with think FITTED to a typed-in CALIBRATION cell at N2 and the
// hold drawn times or divided by 1.5: every point refits think before N4
// runs.
std::string ReadHoldOnly() {
  absl::StatusOr<viosim::ScenarioFile> f = viosim::LoadScenarioFile(kHoldOnly);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? f->text : "";
}

std::string WithFit() {
  std::string text = ReadHoldOnly();
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"source { kind: DEFINED ref: \"t\" } }\n    hold",
            "source { kind: FITTED ref: \"t\" fit { field: \"workload.lockbench.think.exponential.mean\" "
            "cell: \"N2/lock_acquisitions_per_s\" range: \"2us,40us\" } } }\n    hold"},
           {"range { lo: \"1us\" hi: \"3us\" }", "factor: 1.5"},
           {"duration: \"200ms\"", "duration: \"50ms\""}}) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  return absl::StrCat(text, R"(variant { name: "N2" overlay { workload { lockbench { threads: 2 } } } }
published { variant: "N2" metric: "lock_acquisitions_per_s" value: 166000 role: CALIBRATION tolerance_pct: 1 }
)");
}

std::vector<double> ValuesOf(const std::vector<BandPoint>& points) {
  std::vector<double> v;
  for (const BandPoint& p : points) v.push_back(*p.values[0]);
  std::sort(v.begin(), v.end());
  return v;
}

viosim::ScenarioFile Load(const std::string& text) {
  absl::StatusOr<viosim::ScenarioFile> f = viosim::ParseScenarioText("band_test.textproto", text);
  EXPECT_TRUE(f.ok()) << f.status();
  return *f;
}

Reproduction RunWithBands(const viosim::ScenarioFile& file, const BandSpec& spec, int jobs, BandPlan* plan,
                 std::vector<BandPoint>* points) {
  RunRequest request;
  request.jobs = jobs;
  absl::StatusOr<Reproduction> rep = Reproduce(file, request);
  EXPECT_TRUE(rep.ok()) << rep.status();
  absl::Status s = RunBands(file, spec, request, &*rep, plan, points);
  EXPECT_TRUE(s.ok()) << s;
  return *rep;
}

TEST(BandsTest, HoldOnlyBandEndpointsAreTheMvaThroughputAtTheHoldQuantiles) {
  const viosim::ScenarioFile file = Load(ReadHoldOnly());
  BandSpec spec;
  spec.k = 16;
  BandPlan plan;
  std::vector<BandPoint> points;
  const Reproduction rep = RunWithBands(file, spec, 2, &plan, &points);
  ASSERT_EQ(plan.fields.size(), 1u);
  ASSERT_EQ(points.size(), 16u);
  const Cell* cell = nullptr;
  for (const Cell& c : rep.cells) {
    if (c.band) cell = &c;
  }
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(cell->band->points, 16);
  EXPECT_EQ(cell->band->refit_failed, 0);

  std::vector<double> holds;  // microseconds
  for (const auto& f : plan.factors) holds.push_back(2 * f[0]);
  std::vector<double> sorted = holds;
  std::sort(sorted.begin(), sorted.end());
  // One point per stratum of the hold's range.
  for (size_t i = 0; i < sorted.size(); ++i) {
    EXPECT_GE(sorted[i], 1 + 2.0 * i / 16) << i;
    EXPECT_LE(sorted[i], 1 + 2.0 * (i + 1) / 16) << i;
  }
  // Throughput falls as the hold grows: the cell's r-th smallest value is
  // the MVA throughput at the hold's r-th largest, within the runs'
  // intervals (r = ceil(p n / 100), the nearest rank).
  for (const double p_cell : {5.0, 50.0, 95.0}) {
    const size_t r = static_cast<size_t>(std::ceil(p_cell / 100 * 16));
    const double hold = sorted[16 - r];
    const size_t at = static_cast<size_t>(std::find(holds.begin(), holds.end(), hold) - holds.begin());
    ASSERT_LT(at, points.size());
    ASSERT_TRUE(points[at].ci95[0].has_value());
    const double mva = MachineRepairman(4, 10e-6, hold * 1e-6).throughput;
    const double band = p_cell == 5 ? cell->band->p5 : p_cell == 95 ? cell->band->p95 : cell->band->p50;
    EXPECT_EQ(band, NearestRank(ValuesOf(points), p_cell));
    double ci = *points[at].ci95[0];
    for (size_t i = 0; i < points.size(); ++i) {
      if (*points[i].values[0] == band && points[i].ci95[0]) ci = std::max(ci, *points[i].ci95[0]);
    }
    SCOPED_TRACE(absl::StrCat("p", p_cell, ": band ", band, ", MVA ", mva, " at hold ", hold, "us, ci95 ", ci));
    EXPECT_LE(std::fabs(band - mva), 1.5 * ci);
  }
  // The published value is MVA at the file's hold, 2us, the middle of the
  // range: inside the band.
  EXPECT_TRUE(cell->band->inside);
  ASSERT_FALSE(cell->band->drivers.empty());
  EXPECT_LT(cell->band->drivers[0].rank_corr, -0.9);
}

TEST(BandsTest, TheSameWhateverTheJobsAndRefitsEveryPoint) {
  const viosim::ScenarioFile file = Load(WithFit());
  BandSpec spec;
  spec.k = 6;
  spec.passes = 1;
  BandPlan plan;
  std::vector<BandPoint> one, two;
  const Reproduction a = RunWithBands(file, spec, 1, &plan, &one);
  const Reproduction b = RunWithBands(file, spec, 2, nullptr, &two);
  ASSERT_EQ(plan.fits.size(), 1u);
  EXPECT_EQ(plan.fits[0].spec.field, "workload.lockbench.think.exponential.mean");
  EXPECT_EQ(FormatCells({a}, Format::kJson), FormatCells({b}, Format::kJson));
  EXPECT_EQ(FormatCells({a}, Format::kText), FormatCells({b}, Format::kText));
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].assignments, two[i].assignments);
    ASSERT_TRUE(one[i].refitted) << one[i].failure;
    // The last assignment is the refitted think time.
    EXPECT_EQ(one[i].assignments.back().rfind("workload.lockbench.think.exponential.mean=", 0), 0u);
  }
  // A longer hold needs a longer think to keep N2 at its cell: the refit
  // follows the draw.
  EXPECT_NE(one[0].assignments.back(), one[1].assignments.back());
  // Another seed draws other points.
  spec.seed = 2;
  absl::StatusOr<BandPlan> other = PlanBands(file, spec, RunRequest{});
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->factors, plan.factors);
}

// Over alternatives the band still names its drivers, from the kept
// alternatives' points pooled: the hold sets the throughput under both.
TEST(BandsTest, AlternativesPoolTheirPointsForTheDrivers) {
  const viosim::ScenarioFile file = Load(absl::StrCat(ReadHoldOnly(), R"(
alternative { name: "as_written" description: "t" }
alternative { name: "longer_think" description: "t" overlay { workload { lockbench { think { exponential { mean: "12us" } } } } } }
)"));
  BandSpec spec;
  spec.k = 8;
  const Reproduction rep = RunWithBands(file, spec, 2, nullptr, nullptr);
  ASSERT_EQ(rep.cells.size(), 1u);
  ASSERT_TRUE(rep.cells[0].band.has_value());
  const CellBand& band = *rep.cells[0].band;
  EXPECT_EQ(band.alternatives.size(), 2u);
  EXPECT_EQ(band.points, 16);
  ASSERT_FALSE(band.drivers.empty());
  EXPECT_EQ(band.drivers[0].field, "workload.lockbench.hold.exponential.mean");
  EXPECT_LT(band.drivers[0].rank_corr, -0.5);  // a longer hold, fewer acquisitions
  const std::string text = FormatCells({rep}, Format::kText, /*band_columns=*/true);
  EXPECT_NE(text.find("lock_acquisitions_per_s: workload.lockbench.hold.exponential.mean -"), std::string::npos)
      << text;
}

// With nothing uncertain (the hold's range removed, every cost DEFINED) a
// band would be K copies of the point: no point runs, the cells get no
// band, and the text says why.
TEST(BandsTest, NothingUncertainGivesNoBandAndSaysWhy) {
  std::string text = ReadHoldOnly();
  const std::string hold =
      "source { kind: ESTIMATED ref: \"t\" uncertainty { range { lo: \"1us\" hi: \"3us\" } reason: \"test\" } }";
  const size_t at = text.find(hold);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, hold.size(), "source { kind: DEFINED ref: \"t\" }");
  const viosim::ScenarioFile file = Load(text);
  BandSpec spec;
  spec.k = 8;
  BandPlan plan;
  std::vector<BandPoint> points;
  const Reproduction rep = RunWithBands(file, spec, 2, &plan, &points);
  EXPECT_TRUE(plan.fields.empty());
  EXPECT_TRUE(plan.cells.empty());
  EXPECT_TRUE(points.empty());
  for (const Cell& c : rep.cells) EXPECT_FALSE(c.band.has_value()) << c.variant;
  const std::string out = FormatCells({rep}, Format::kText, /*band_columns=*/true);
  EXPECT_NE(out.find("no band: none of its costs carries an uncertainty"), std::string::npos) << out;
  EXPECT_EQ(FormatCells({rep}, Format::kText, /*band_columns=*/false).find("no band"), std::string::npos);
}

TEST(BandsTest, BadSpecsAndRangesAreRefused) {
  const viosim::ScenarioFile file = Load(ReadHoldOnly());
  BandSpec spec;
  spec.k = 1;
  EXPECT_FALSE(PlanBands(file, spec, RunRequest{}).ok());
  spec.k = 8;
  spec.passes = 0;
  EXPECT_FALSE(PlanBands(file, spec, RunRequest{}).ok());
  spec.passes = 2;
  // A range that does not hold the value the file carries.
  RunRequest moved;
  moved.overrides = {"workload.lockbench.hold.exponential.mean=5us"};
  absl::StatusOr<BandPlan> p = PlanBands(file, spec, moved);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("workload.lockbench.hold.source.uncertainty"), std::string::npos)
      << p.status();
}

// The CSV contract of reproduce --bands: the band columns after the cell's,
// empty on a cell without a band, the percentiles and `inside` empty when no
// point succeeded, three drivers at most and empty places for missing ones.
TEST(BandsTest, CsvBandColumnsFollowTheContract) {
  Reproduction rep;
  Cell calibration;
  calibration.scenario = "s";
  calibration.variant = "before";
  calibration.metric = "iops";
  calibration.published = 100;
  calibration.modeled = 101;
  calibration.role = "calibration";
  Cell banded = calibration;
  banded.variant = "after";
  banded.role = "prediction";
  banded.band = CellBand{.p5 = 90, .p50 = 100.5, .p95 = 120, .k = 8, .refit_failed = 1, .points = 7,
                         .inside = true, .drivers = {{"a.b", -0.75}, {"c,d", 0.5}}};
  Cell empty = banded;
  empty.metric = "bw";
  empty.band->points = 0;
  empty.band->refit_failed = 8;
  empty.band->drivers.clear();
  rep.cells = {calibration, banded, empty};
  const std::string csv = FormatCells({rep}, Format::kCsv, /*band_columns=*/true);
  const std::vector<std::string> lines = absl::StrSplit(csv, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u) << csv;
  EXPECT_EQ(lines[0], absl::StrCat("scenario,variant,metric,published,modeled,ci95,error_pct,role,tolerance_pct,within,"
                                   "ci95_informative,",
                                   kBandCsvColumns));
  const std::string cell = "s,before,iops,100,101,,0,calibration,0,false,true";
  EXPECT_EQ(lines[1], absl::StrCat(cell, ",,,,,,,,,,,,,"));
  EXPECT_EQ(lines[2], "s,after,iops,100,101,,0,prediction,0,false,true,90,100.5,120,8,1,7,true,a.b,-0.75,\"c,d\",0.5,,");
  EXPECT_EQ(lines[3], "s,after,bw,100,101,,0,prediction,0,false,true,,,,8,8,0,,,,,,,");
  // Without the band columns the CSV is reproduce's own.
  EXPECT_EQ(FormatCells({rep}, Format::kCsv).find("band_"), std::string::npos);
}

TEST(BandsTest, NearestRankAndRankCorrelation) {
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  EXPECT_EQ(NearestRank(v, 5), 1);
  EXPECT_EQ(NearestRank(v, 50), 10);
  EXPECT_EQ(NearestRank(v, 95), 19);
  EXPECT_DOUBLE_EQ(RankCorrelation({1, 2, 3, 4}, {10, 20, 30, 45}), 1);
  EXPECT_DOUBLE_EQ(RankCorrelation({1, 2, 3, 4}, {4, 3, 2, 1}), -1);
  EXPECT_DOUBLE_EQ(RankCorrelation({1, 1, 1, 1}, {4, 3, 2, 1}), 0);
}

}  // namespace
}  // namespace analysis

namespace analysis {
namespace {

// The class of bands that miss their own point estimate: every PREDICTION
// cell's point lies in its band, or the band says why (the blk-poll table's
// bandwidth-bound cells sit just outside by the fits' slack: each point
// refits the bandwidth to within 0.5% of its cell from either side).
TEST(BandPointTest, EveryPointIsInsideItsBandOrTheBandSaysWhy) {
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile("scenarios/virtio_blk_poll.textproto");
  ASSERT_TRUE(file.ok()) << file.status();
  RunRequest req;
  req.jobs = 2;
  absl::StatusOr<Reproduction> rep = Reproduce(*file, req);
  ASSERT_TRUE(rep.ok()) << rep.status();
  BandSpec spec;
  spec.k = 8;
  ASSERT_TRUE(RunBands(*file, spec, req, &*rep).ok());
  int outside = 0;
  for (const Cell& c : rep->cells) {
    if (!c.band) continue;
    const CellBand& b = *c.band;
    EXPECT_EQ(b.point_inside, b.p5 <= c.modeled && c.modeled <= b.p95) << c.variant;
    if (b.point_inside) {
      EXPECT_TRUE(b.outside_why.empty()) << c.variant;
      continue;
    }
    ++outside;
    ASSERT_FALSE(b.outside_why.empty()) << c.variant;
    // The points the band holds: K per alternative, less the failed refits.
    EXPECT_THAT(b.outside_why.back(), ::testing::HasSubstr(absl::StrCat(b.points, " points")));
    if (c.variant == "write-64k-hipri1") {
      EXPECT_THAT(absl::StrJoin(b.outside_why, "; "), ::testing::HasSubstr("the fits' slack"));
    }
  }
  EXPECT_GT(outside, 0);  // the table has some: the test sees the class
}

}  // namespace
}  // namespace analysis
