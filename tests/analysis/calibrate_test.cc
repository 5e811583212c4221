// `viosim calibrate`'s pure parts: the bisection on synthetic functions,
// parsing --cell and --range, and the three output formats; and those of
// `viosim sweep --refit`, whose every value is such a calibration.
#include <cmath>
#include <functional>
#include <utility>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "analysis/calibrate.h"
#include "analysis/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace analysis {
namespace {

using ::testing::HasSubstr;

// A decreasing function, like IOPS against a per-request cost.
absl::StatusOr<Evaluation> Inverse(double x) { return Evaluation{1000.0 / x, std::nullopt}; }

BisectionOptions Options(double lo, double hi, double target) {
  BisectionOptions o;
  o.lo = lo;
  o.hi = hi;
  o.target = target;
  return o;
}

TEST(BisectTest, FitsAMonotonicFunctionWithinTheTolerance) {
  BisectionOptions o = Options(1, 80, 1000.0 / 51.5);
  o.tolerance_pct = 0.1;
  absl::StatusOr<Bisection> b = Bisect(o, Inverse);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->outcome, BisectionOutcome::kFitted);
  ASSERT_GE(b->best, 2);
  const BisectionStep& s = b->steps[b->best];
  EXPECT_LE(std::fabs(s.error_pct), 0.1);
  EXPECT_NEAR(s.x, 51.5, 51.5 * 0.002);
  EXPECT_EQ(b->steps[0].at, BisectionStep::At::kLo);
  EXPECT_EQ(b->steps[1].at, BisectionStep::At::kHi);
  for (size_t i = 2; i < b->steps.size(); ++i) {
    EXPECT_EQ(b->steps[i].iteration, static_cast<int>(i) - 1);
    EXPECT_FALSE(b->steps[i].non_monotonic);
  }
}

TEST(BisectTest, LogScaleTakesGeometricMidpointsAndLinearArithmetic) {
  BisectionOptions o = Options(1, 100, 1000.0 / 3);
  o.max_iter = 1;
  o.log_scale = true;
  absl::StatusOr<Bisection> log = Bisect(o, Inverse);
  ASSERT_TRUE(log.ok());
  EXPECT_DOUBLE_EQ(log->steps[2].x, 10);
  o.log_scale = false;
  absl::StatusOr<Bisection> lin = Bisect(o, Inverse);
  ASSERT_TRUE(lin.ok());
  EXPECT_DOUBLE_EQ(lin->steps[2].x, 50.5);
  EXPECT_EQ(lin->outcome, BisectionOutcome::kNotConverged);
  EXPECT_FALSE(lin->at_resolution);
}

TEST(BisectTest, AnEndWithinTheToleranceIsTheFit) {
  absl::StatusOr<Bisection> b = Bisect(Options(1, 80, 1000.0 / 80), Inverse);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->outcome, BisectionOutcome::kFitted);
  EXPECT_EQ(b->steps.size(), 2u);
  EXPECT_EQ(b->best, 1);
}

TEST(BisectTest, UnbracketedTargetEvaluatesOnlyTheEnds) {
  absl::StatusOr<Bisection> b = Bisect(Options(1, 80, 5000), Inverse);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->outcome, BisectionOutcome::kNotBracketed);
  EXPECT_EQ(b->steps.size(), 2u);
  EXPECT_EQ(b->best, -1);
}

TEST(BisectTest, StopsAtTheResolutionAndKeepsTheClosest) {
  // A step function: no value within the tolerance exists.
  auto step = [](double x) -> absl::StatusOr<Evaluation> { return Evaluation{x < 10 ? 0.0 : 100.0, 1.0}; };
  BisectionOptions o = Options(0, 64, 50);
  o.snap = [](double x) { return std::round(x); };
  absl::StatusOr<Bisection> b = Bisect(o, step);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->outcome, BisectionOutcome::kNotConverged);
  EXPECT_TRUE(b->at_resolution);
  // 32, 16, 8, 12, 10, 9: then 9..10 has no integer inside.
  ASSERT_EQ(b->steps.size(), 8u);
  EXPECT_EQ(b->steps.back().x, 9);
  EXPECT_GE(b->best, 0);
  EXPECT_DOUBLE_EQ(std::fabs(b->steps[b->best].error_pct), 100);
}

TEST(BisectTest, MarksANonMonotonicMidpointAndKeepsTheBracketingSide) {
  // Decreasing, with a bump at [40, 45) that rises above the value at 1.
  auto bumpy = [](double x) -> absl::StatusOr<Evaluation> {
    return Evaluation{x >= 40 && x < 45 ? 2000.0 : 1000.0 / x, std::nullopt};
  };
  BisectionOptions o = Options(1, 81, 1000.0 / 60);
  o.max_iter = 40;
  absl::StatusOr<Bisection> b = Bisect(o, bumpy);
  ASSERT_TRUE(b.ok());
  // First midpoint: 41, on the bump, above the value at 1.
  ASSERT_GE(b->steps.size(), 3u);
  EXPECT_EQ(b->steps[2].x, 41);
  EXPECT_TRUE(b->steps[2].non_monotonic);
  EXPECT_EQ(b->steps[2].bracket_lo, 0);
  EXPECT_EQ(b->steps[2].bracket_hi, 1);
  // [41, 81] still brackets the target (2000 .. 12.3 around 16.7): kept.
  EXPECT_EQ(b->outcome, BisectionOutcome::kFitted);
  EXPECT_NEAR(b->steps[b->best].x, 60, 60 * 0.01);
  for (size_t i = 3; i < b->steps.size(); ++i) EXPECT_FALSE(b->steps[i].non_monotonic) << i;
}

TEST(BisectTest, AnEvaluationErrorEndsTheSearch) {
  int calls = 0;
  auto failing = [&calls](double x) -> absl::StatusOr<Evaluation> {
    if (++calls == 3) return absl::InternalError("boom");
    return Evaluation{1000.0 / x, std::nullopt};
  };
  absl::StatusOr<Bisection> b = Bisect(Options(1, 80, 20), failing);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInternal);
}

// Every search Bisect returns has the shape CheckBisection asks for (the
// formats index steps by it), and each way of breaking that shape -- what a
// hand-edited or corrupted part file may carry -- is refused.
TEST(CheckBisectionTest, AcceptsEverySearchBisectReturnsAndRefusesEachBrokenShape) {
  // A step function, so that some searches stop at the resolution.
  auto step = [](double x) -> absl::StatusOr<Evaluation> { return Evaluation{x < 40 ? 30.0 : 10.0, std::nullopt}; };
  BisectionOptions snapped = Options(1, 80, 20);
  snapped.snap = [](double x) { return std::round(x); };
  std::vector<Bisection> searches;
  for (const auto& [o, f] : std::vector<std::pair<BisectionOptions, std::function<absl::StatusOr<Evaluation>(double)>>>{
           {Options(1, 80, 1000.0 / 51.5), Inverse},  // fitted at a midpoint
           {Options(1, 80, 1000.0 / 80), Inverse},    // fitted at an end
           {Options(1, 80, 5000), Inverse},           // not bracketed
           {snapped, step},                           // not converged, at the resolution
       }) {
    absl::StatusOr<Bisection> b = Bisect(o, f);
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_TRUE(CheckBisection(*b).ok()) << CheckBisection(*b);
    searches.push_back(*b);
  }
  BisectionOptions few = Options(1, 80, 1000.0 / 51.5);
  few.max_iter = 2;  // not converged, out of iterations
  absl::StatusOr<Bisection> cut = Bisect(few, Inverse);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->outcome, BisectionOutcome::kNotConverged);
  EXPECT_TRUE(CheckBisection(*cut).ok()) << CheckBisection(*cut);

  const Bisection& mid = searches[0];  // lo, hi and at least two midpoints
  ASSERT_GE(mid.steps.size(), 4u);
  const Bisection& unbracketed = searches[2];
  std::vector<std::pair<std::string, Bisection>> broken;
  auto add = [&](const std::string& what, const Bisection& from, const std::function<void(Bisection&)>& change) {
    Bisection b = from;
    change(b);
    broken.emplace_back(what, b);
  };
  add("one step", unbracketed, [](Bisection& b) { b.steps.pop_back(); });
  add("no step", unbracketed, [](Bisection& b) { b.steps.clear(); });
  add("ends swapped", mid, [](Bisection& b) { std::swap(b.steps[0], b.steps[1]); });
  add("an end as a midpoint", mid, [](Bisection& b) { b.steps[1].at = BisectionStep::At::kMid; });
  add("midpoints out of order", mid, [](Bisection& b) { std::swap(b.steps[2], b.steps[3]); });
  add("an end with a bracket", mid, [](Bisection& b) { b.steps[1].bracket_lo = 0; });
  add("an end non-monotonic", mid, [](Bisection& b) { b.steps[0].non_monotonic = true; });
  add("a midpoint without a bracket", mid, [](Bisection& b) { b.steps[2].bracket_hi = -1; });
  add("a bracket ahead of its midpoint", mid, [](Bisection& b) { b.steps[2].bracket_hi = 2; });
  add("a bracket of one step", mid, [](Bisection& b) { b.steps[3].bracket_lo = b.steps[3].bracket_hi; });
  add("best past the steps", mid, [](Bisection& b) { b.best = static_cast<int>(b.steps.size()); });
  add("fitted without a best", mid, [](Bisection& b) { b.best = -1; });
  add("not converged without a best", mid, [](Bisection& b) {
    b.outcome = BisectionOutcome::kNotConverged;
    b.best = -1;
  });
  add("not bracketed with a best", unbracketed, [](Bisection& b) { b.best = 0; });
  add("not bracketed with midpoints", mid, [](Bisection& b) {
    b.outcome = BisectionOutcome::kNotBracketed;
    b.best = -1;
  });
  for (const auto& [what, b] : broken) EXPECT_FALSE(CheckBisection(b).ok()) << what;
}

TEST(ParseCellAndRangeTest, SplitsVariantMetricAndEnds) {
  CalibrateSpec s;
  ASSERT_TRUE(ParseCellAndRange("randread-4k-hipri0/iops", "2us, 16us", &s).ok());
  EXPECT_EQ(s.variant, "randread-4k-hipri0");
  EXPECT_EQ(s.metric, "iops");
  EXPECT_EQ(s.lo, "2us");
  EXPECT_EQ(s.hi, "16us");
  ASSERT_TRUE(ParseCellAndRange("before", "2e9,2.6e9", &s).ok());
  EXPECT_EQ(s.variant, "before");
  EXPECT_EQ(s.metric, "");
  EXPECT_EQ(s.hi, "2.6e9");
  // Ends in a scenario file's quotes, as --set takes a value.
  ASSERT_TRUE(ParseCellAndRange("before", R"("2us", '16us')", &s).ok());
  EXPECT_EQ(s.lo, "2us");
  EXPECT_EQ(s.hi, "16us");
}

TEST(ParseCellAndRangeTest, RefusesMalformedFlagsNamingThem) {
  CalibrateSpec s;
  for (const char* cell : {"", "/iops", "before/"}) {
    absl::Status st = ParseCellAndRange(cell, "1us,2us", &s);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << cell;
    EXPECT_THAT(st.message(), HasSubstr("--cell")) << cell;
  }
  for (const char* range : {"1us", "1us,", ",2us", "1us,2us,3us", R"("",2us)", R"(1us,"2us,3us")"}) {
    absl::Status st = ParseCellAndRange("before", range, &s);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << range;
    EXPECT_THAT(st.message(), HasSubstr(std::string("--range '") + range + "'")) << range;
  }
}

Calibration Example() {
  Calibration c;
  c.scenario = "sc";
  c.field = "platform.kvm.mmio_exit_user.value";
  c.variant = "before";
  c.metric = "iops";
  c.published = 14000;
  c.source = "commit, 14K";
  c.cell_tolerance_pct = 5;
  c.tolerance_pct = 0.5;
  c.max_iter = 30;
  c.scale = "log";
  c.resolution = "1ns";
  c.values = {"1us", "80us", "8.944us"};
  auto step = [](BisectionStep::At at, int it, double v, std::optional<double> ci, double err) {
    BisectionStep s;
    s.at = at;
    s.iteration = it;
    s.eval = Evaluation{v, ci};
    s.error_pct = err;
    return s;
  };
  c.search.steps = {step(BisectionStep::At::kLo, 0, 34732.2, 344.6, 148.09),
                    step(BisectionStep::At::kHi, 0, 10012.9, std::nullopt, -28.48),
                    step(BisectionStep::At::kMid, 1, 14050, 140.0, 0.36)};
  c.search.steps[2].bracket_lo = 0;
  c.search.steps[2].bracket_hi = 1;
  c.search.outcome = BisectionOutcome::kFitted;
  c.search.best = 2;
  return c;
}

// Example() with the target outside the ends' values.
Calibration NotBracketed() {
  Calibration c = Example();
  c.search.steps.pop_back();
  c.search.outcome = BisectionOutcome::kNotBracketed;
  c.search.best = -1;
  return c;
}

TEST(FormatCalibrationTest, TextShowsEveryStepAndTheFit) {
  const std::string t = FormatCalibration(Example(), Format::kText);
  EXPECT_THAT(t, HasSubstr("step  mmio_exit_user.value     iops     +/-     error\n"
                           "lo    1us                   34732.2  344.60  +148.09%\n"
                           "hi    80us                  10012.9       -   -28.48%\n"
                           "1     8.944us               14050.0  140.00    +0.36%\n"));
  EXPECT_THAT(t, HasSubstr("\nfitted platform.kvm.mmio_exit_user.value = 8.944us: modeled 14050.0 (error +0.36%) "
                           "vs published 14000.0 (CALIBRATION, source commit, 14K)\n"));
  Calibration bumpy = Example();
  bumpy.search.steps[2].non_monotonic = true;
  EXPECT_THAT(FormatCalibration(bumpy, Format::kText), HasSubstr("+0.36%  not monotonic between 1us and 80us\n"));
}

TEST(FormatCalibrationTest, JsonAndCsvCarryTheStepsAndTheOutcome) {
  const std::string j = FormatCalibration(Example(), Format::kJson);
  EXPECT_THAT(j, HasSubstr("\"step\": \"hi\",\n      \"value\": \"80us\",\n      \"modeled\": 10012.9,\n"
                           "      \"ci95\": null,\n"));
  EXPECT_THAT(j, HasSubstr("\"outcome\": \"fitted\",\n  \"result\": {\n    \"value\": \"8.944us\",\n"));
  EXPECT_EQ(FormatCalibration(Example(), Format::kCsv),
            "step,value,modeled,ci95,error_pct,note\n"
            "lo,1us,34732.2,344.6,148.09,\n"
            "hi,80us,10012.9,,-28.48,\n"
            "1,8.944us,14050,140,0.36,\n"
            "fitted,8.944us,14050,140,0.36,"
            "\"fitted platform.kvm.mmio_exit_user.value = 8.944us: modeled 14050.0 (error +0.36%) vs published "
            "14000.0 (CALIBRATION, source commit, 14K)\"\n");
  const Calibration none = NotBracketed();
  EXPECT_THAT(FormatCalibration(none, Format::kJson), HasSubstr("\"outcome\": \"not_bracketed\",\n  \"result\": null"));
  EXPECT_THAT(FormatCalibration(none, Format::kCsv), HasSubstr("\nnot_bracketed,,,,,\"not bracketed: modeled iops is "
                                                               "34732.2 at platform.kvm.mmio_exit_user.value = 1us "
                                                               "and 10012.9 at 80us;"));
}

// A sweep of qemu_exit_userspace refitting Example()'s field at each value,
// variant after: at 1.7us the refit is fitted (after a midpoint taken as not
// monotonic), at 20us it does not converge, at 40us it is not bracketed.
RefitSweep Refitted() {
  RefitSweep r;
  r.fits = {Example(), Example(), NotBracketed()};
  r.fits[0].search.steps[2].non_monotonic = true;
  r.fits[1].search.outcome = BisectionOutcome::kNotConverged;
  r.fits[1].search.at_resolution = true;
  Sweep& s = r.sweep;
  s.scenario = "sc";
  s.field = "stack.virtio_blk.qemu_exit_userspace.value";
  s.values = {"1.7us", "20us", "40us"};
  s.variants = {"after"};
  s.metrics = {"iops"};
  sim::MetricEstimate iops;
  iops.name = "iops";
  iops.value = 43352.8;
  iops.ci95 = 430.48;
  s.points = {SweepPoint{"1.7us", "after", {iops}}, SweepPoint{"20us", "after", {}},
              SweepPoint{"40us", "after", {}}};
  return r;
}

TEST(FormatRefitSweepTest, TextHasTheFitTheCellAndANoteOnEachRow) {
  const RefitSweep sweep = Refitted();
  const std::string t = FormatRefitSweep(sweep, Format::kText);
  EXPECT_THAT(t, HasSubstr("sweep over stack.virtio_blk.qemu_exit_userspace.value\nat each value "
                           "platform.kvm.mmio_exit_user.value is refitted to before/iops, published 14000.0 "
                           "(CALIBRATION, tolerance 5%, source commit, 14K):\nbisection over 1us..80us on a log "
                           "scale; stops within 0.5% of published, at the field's resolution (1ns) or after 30 "
                           "iterations\n"));
  EXPECT_THAT(t, HasSubstr(
                     "\nqemu_exit_userspace.value  mmio_exit_user.value  before/iops   error  after iops     +/-\n"
                     "1.7us                      8.944us                   14050.0  +0.36%     43352.8  430.48  "
                     "not monotonic between 1us and 80us\n"
                     "20us                       -                               -       -           -       -  "
                     "not fitted: not converged within 0.5% (the bracket is below the field's resolution, 1ns, after 1 "
                     "iterations); closest 8.944us: 14050.0 (+0.36%)\n"
                     "40us                       -                               -       -           -       -  "
                     "not fitted: not bracketed: before/iops is 34732.2 at 1us and 10012.9 at 80us, published 14000.0 "
                     "is not between them\n"));
}

TEST(FormatRefitSweepTest, JsonCarriesTheCalibrationAndTheRefitOfEveryPoint) {
  const std::string j = FormatRefitSweep(Refitted(), Format::kJson);
  EXPECT_THAT(j, HasSubstr("\"field\": \"stack.virtio_blk.qemu_exit_userspace.value\",\n  \"calibration\": {\n"
                           "    \"field\": \"platform.kvm.mmio_exit_user.value\",\n"));
  EXPECT_THAT(j, HasSubstr("\"resolution\": \"1ns\",\n    \"lo\": \"1us\",\n    \"hi\": \"80us\"\n  },\n"));
  EXPECT_THAT(j, HasSubstr("\"value\": \"1.7us\",\n      \"refit\": {\n        \"outcome\": \"fitted\",\n"
                           "        \"value\": \"8.944us\",\n        \"modeled\": 14050,\n        \"ci95\": 140,\n"
                           "        \"error_pct\": 0.36,\n        \"iterations\": 1,\n"
                           "        \"notes\": [\n          \"not monotonic between 1us and 80us\"\n        ],\n"));
  EXPECT_THAT(j, HasSubstr("\"value\": \"40us\",\n      \"refit\": {\n        \"outcome\": \"not_bracketed\",\n"
                           "        \"value\": null,\n        \"modeled\": null,\n        \"ci95\": null,\n"
                           "        \"error_pct\": null,\n        \"iterations\": 0,\n        \"notes\": [],\n"
                           "        \"summary\": \"not bracketed: "));
  EXPECT_THAT(j, HasSubstr("\"variant\": \"after\",\n      \"metrics\": {},\n      \"ci95\": {}\n"));
}

// One row per (value, variant, metric), the refit repeated on each; a value
// not fitted has no metric values.
TEST(FormatRefitSweepTest, CsvRepeatsTheRefitOnEachRow) {
  EXPECT_EQ(FormatRefitSweep(Refitted(), Format::kCsv),
            "swept_value,refit_outcome,refit_value,cell_modeled,cell_ci95,cell_error_pct,variant,metric,value,ci95,"
            "refit_note\n"
            "1.7us,fitted,8.944us,14050,140,0.36,after,iops,43352.8,430.48,not monotonic between 1us and 80us\n"
            "20us,not_converged,8.944us,14050,140,0.36,after,iops,,,\"not fitted: not converged within 0.5% (the "
            "bracket is below the field's resolution, 1ns, after 1 iterations); closest 8.944us: 14050.0 (+0.36%)\"\n"
            "40us,not_bracketed,,,,,after,iops,,,\"not fitted: not bracketed: before/iops is 34732.2 at 1us and "
            "10012.9 at 80us, published 14000.0 is not between them\"\n");
}

}  // namespace
}  // namespace analysis
