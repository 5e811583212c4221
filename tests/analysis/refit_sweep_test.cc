// `sweep --refit` in its three steps (analysis/calibrate.h): planned, run
// value by value in any order and put together, it is the sweep that
// RunRefitSweep runs in one go; a value's report is rebuilt from its steps
// and search alone (what a merged shard carries); the steps refuse what does
// not fit the plan.
#include <string>
#include <utility>
#include <vector>

#include "analysis/calibrate.h"
#include "analysis/format.h"
#include "analysis/runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"

namespace analysis {
namespace {

using ::testing::HasSubstr;

// Two lock-benchmark threads whose think time is FITTED to the base cell
// (the scenario of fuzz/corpus/merge's refit parts), refitted at each hold
// time; the five-thread variant runs after each fit. The think range cannot
// reach the cell at a 40us hold: that value is not fitted, and its variants
// do not run.
constexpr char kScenario[] = "fuzz/testdata/banded.textproto";

struct Inputs {
  viosim::ScenarioFile file;
  SweepSpec spec{"workload.lockbench.hold.exponential.mean", {"1us", "2us", "40us"}};
  CalibrateSpec refit;
  std::vector<std::string> variants{"t5"};
  std::vector<std::string> metrics{"lock_acquisitions_per_s"};
  RunRequest request;
};

Inputs Make() {
  Inputs in;
  absl::StatusOr<viosim::ScenarioFile> f = viosim::LoadScenarioFile(kScenario);
  EXPECT_TRUE(f.ok()) << f.status();
  if (f.ok()) in.file = *std::move(f);
  in.refit.field = "workload.lockbench.think.exponential.mean";
  in.refit.flag = "--refit";
  in.refit.variant = "base";
  in.refit.metric = "lock_acquisitions_per_s";
  in.refit.lo = "2us";
  in.refit.hi = "40us";
  in.refit.tolerance_pct = 1;
  in.request.jobs = 2;
  return in;
}

TEST(RefitSweepSplitTest, ValuesRunApartInAnyOrderGiveTheWholeSweep) {
  const Inputs in = Make();
  absl::StatusOr<RefitSweep> whole = RunRefitSweep(in.file, in.spec, in.refit, in.variants, in.metrics, in.request);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->fits.size(), 3u);
  EXPECT_EQ(whole->fits[0].search.outcome, BisectionOutcome::kFitted);
  EXPECT_NE(whole->fits[2].search.outcome, BisectionOutcome::kFitted);

  absl::StatusOr<RefitSweepPlan> plan = PlanRefitSweep(in.file, in.spec, in.refit, in.variants, in.metrics, in.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<RefitValue> values(3);
  for (size_t i : {2u, 0u, 1u}) {
    absl::StatusOr<RefitValue> v = RunRefitValue(in.file, *plan, i);
    ASSERT_TRUE(v.ok()) << v.status();
    values[i] = *std::move(v);
  }
  EXPECT_TRUE(values[2].results.empty());  // not fitted: nothing ran after it
  EXPECT_EQ(values[0].results.size(), 1u);
  absl::StatusOr<RefitSweep> assembled = AssembleRefitSweep(in.file, *plan, std::move(values));
  ASSERT_TRUE(assembled.ok()) << assembled.status();
  for (Format f : {Format::kText, Format::kJson, Format::kCsv}) {
    EXPECT_EQ(FormatRefitSweep(*assembled, f), FormatRefitSweep(*whole, f));
  }
}

TEST(RefitSweepSplitTest, AValuesReportIsRebuiltFromItsStepsAndSearch) {
  const Inputs in = Make();
  absl::StatusOr<RefitSweepPlan> plan = PlanRefitSweep(in.file, in.spec, in.refit, in.variants, in.metrics, in.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (size_t i = 0; i < in.spec.values.size(); ++i) {
    absl::StatusOr<RefitValue> v = RunRefitValue(in.file, *plan, i);
    ASSERT_TRUE(v.ok()) << v.status();
    const Calibration rebuilt = CalibrationAt(*plan, i, v->fit.values, v->fit.search);
    for (Format f : {Format::kText, Format::kJson, Format::kCsv}) {
      EXPECT_EQ(FormatCalibration(rebuilt, f), FormatCalibration(v->fit, f)) << in.spec.values[i];
    }
  }
}

TEST(RefitSweepSplitTest, TheStepsRefuseWhatDoesNotFitThePlan) {
  Inputs in = Make();
  absl::StatusOr<RefitSweepPlan> plan = PlanRefitSweep(in.file, in.spec, in.refit, in.variants, in.metrics, in.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<RefitSweep> short_by_one = AssembleRefitSweep(in.file, *plan, std::vector<RefitValue>(2));
  ASSERT_FALSE(short_by_one.ok());
  EXPECT_THAT(short_by_one.status().message(), HasSubstr("2 refit values for the 3 values of"));
  EXPECT_FALSE(AssembleRefitSweep(in.file, *plan, std::vector<RefitValue>(4)).ok());

  // Planning checks everything before anything runs: the refit field may not
  // be the swept one, and its range must hold values the field takes.
  in.spec.field = in.refit.field;
  in.spec.values = {"5us", "6us"};
  absl::StatusOr<RefitSweepPlan> same = PlanRefitSweep(in.file, in.spec, in.refit, in.variants, in.metrics, in.request);
  ASSERT_FALSE(same.ok());
  EXPECT_THAT(same.status().message(), HasSubstr("--refit"));
  in = Make();
  in.refit.lo = "forty";
  absl::StatusOr<RefitSweepPlan> bad_range =
      PlanRefitSweep(in.file, in.spec, in.refit, in.variants, in.metrics, in.request);
  ASSERT_FALSE(bad_range.ok());
  EXPECT_THAT(bad_range.status().message(), HasSubstr("forty"));
}

}  // namespace
}  // namespace analysis
