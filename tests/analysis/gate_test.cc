#include "analysis/gate.h"

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "analysis/format.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"

namespace analysis {
namespace {

Cell MakeCell(const std::string& variant, double modeled, double published, double tol) {
  Cell c;
  c.scenario = "s";
  c.variant = variant;
  c.metric = "m";
  c.modeled = modeled;
  c.published = published;
  c.error_pct = 100 * (modeled - published) / published;
  c.tolerance_pct = tol;
  c.within = std::abs(c.error_pct) <= tol;
  return c;
}

std::vector<Reproduction> Reps(const std::vector<Cell>& cells) {
  Reproduction r;
  r.scenario = "s";
  r.path = "s.textproto";
  r.cells = cells;
  return {r};
}

GateReport Gate(const std::vector<Cell>& cells, const viosim::Baseline& base) { return CheckGate(Reps(cells), base); }

viosim::Baseline BaselineOf(const std::vector<Cell>& cells) { return UpdateBaseline(viosim::Baseline(), cells); }

TEST(GateTest, PassesWhenWithinToleranceAndBaseline) {
  std::vector<Cell> cells = {MakeCell("a", 100.2, 100, 1)};
  EXPECT_EQ(Gate(cells, BaselineOf(cells)).failures, 0);
}

TEST(GateTest, FailsWhenOutsidePublishedTolerance) {
  std::vector<Cell> cells = {MakeCell("a", 103, 100, 1)};
  GateReport r = Gate(cells, BaselineOf(cells));
  EXPECT_EQ(r.failures, 1);
  EXPECT_NE(r.findings[0].problem.find("outside the 1% tolerance"), std::string::npos);
}

TEST(GateTest, FailsWhenTheModeledValueMovesFromTheBaseline) {
  viosim::Baseline base = BaselineOf({MakeCell("a", 100.0, 100, 5)});
  GateReport r = Gate({MakeCell("a", 101.0, 100, 5)}, base);
  EXPECT_EQ(r.failures, 1);
  EXPECT_NE(r.findings[0].problem.find("moved +1.000%"), std::string::npos);
  EXPECT_EQ(Gate({MakeCell("a", 100.4, 100, 5)}, base).failures, 0);
}

// An effect tolerance holds the change as well as the level: a cell whose
// level is within its tolerance fails when its effect over its partner is
// not.
TEST(GateTest, FailsWhenTheEffectLeavesItsTolerance) {
  Cell c = MakeCell("after", 128, 120, 10);  // level +6.7%, within
  Effect e;
  e.partner = "before";
  e.published = 1.2;
  e.modeled = 1.28 / 0.9;  // the partner came out 10% low
  e.error_pct = 100 * (e.modeled / e.published - 1);
  e.tolerance_pct = 15;
  e.within = std::abs(e.error_pct) <= 15;
  c.effect = e;
  GateReport r = Gate({c}, BaselineOf({c}));
  EXPECT_EQ(r.failures, 1);
  EXPECT_NE(r.findings[0].problem.find("outside the 15% effect tolerance"), std::string::npos) << r.findings[0].problem;
  c.effect->within = true;  // the same effect inside a wider tolerance passes
  c.effect->tolerance_pct = 20;
  EXPECT_EQ(Gate({c}, BaselineOf({c})).failures, 0);
}

// The effect tolerance as reproduce reads it from the scenario: a lock
// benchmark whose 5-thread variant predicts its rate over the 2-thread
// base; its modeled effect within a wide tolerance, outside a tiny one.
TEST(GateTest, ReproduceHoldsAnEffectToItsTolerance) {
  auto reproduce = [](double tolerance) {
    const std::string text = absl::StrCat(
        "name: \"effect\"\n"
        "platform { cpus: 8 lock_handoff { value: \"0ns\" source { kind: DEFINED ref: \"t\" } } }\n"
        "stack { lock { kind: TICKET } }\n"
        "workload { lockbench { threads: 2 think { exponential { mean: \"9us\" } source { kind: DEFINED ref: \"t\" } }"
        " hold { exponential { mean: \"2us\" } source { kind: DEFINED ref: \"t\" } } } }\n"
        "variant { name: \"t5\" overlay { workload { lockbench { threads: 5 } } } }\n"
        "published { variant: \"base\" metric: \"lock_acquisitions_per_s\" value: 160000 role: CALIBRATION "
        "tolerance_pct: 50 source: \"made up\" }\n"
        "published { variant: \"t5\" metric: \"lock_acquisitions_per_s\" value: 330000 role: PREDICTION "
        "tolerance_pct: 50 effect_tolerance_pct: ",
        tolerance, " source: \"made up\" }\n"
        "run { duration: \"5ms\" warmup: \"1ms\" }\n");
    absl::StatusOr<viosim::ScenarioFile> f = viosim::ParseScenarioText("effect.textproto", text);
    EXPECT_TRUE(f.ok()) << f.status();
    absl::StatusOr<Reproduction> rep = Reproduce(*f, RunRequest{});
    EXPECT_TRUE(rep.ok()) << rep.status();
    return *rep;
  };
  const Reproduction wide = reproduce(1000);
  const Cell& c = wide.cells.at(1);
  ASSERT_TRUE(c.effect.has_value());
  EXPECT_EQ(c.effect->partner, "base");
  EXPECT_EQ(*c.effect->tolerance_pct, 1000);
  EXPECT_TRUE(c.effect->within);
  const Reproduction tight = reproduce(0.0001);
  EXPECT_FALSE(tight.cells.at(1).effect->within);
  GateReport r = CheckGate({tight}, UpdateBaseline(viosim::Baseline(), tight.cells));
  EXPECT_EQ(r.failures, 1);
  EXPECT_NE(r.findings[1].problem.find("effect tolerance"), std::string::npos) << r.findings[1].problem;
}

// The drift allowed is max(0.5%, 2 x the cell's interval), at most 10%.
TEST(GateTest, DriftToleranceFollowsTheCellsInterval) {
  Cell c = MakeCell("a", 100, 100, 50);
  EXPECT_DOUBLE_EQ(DriftTolerancePct(c), kMinDriftPct);  // no interval
  c.ci95 = 0.1;
  EXPECT_DOUBLE_EQ(DriftTolerancePct(c), kMinDriftPct);
  c.ci95 = 0.4;
  EXPECT_DOUBLE_EQ(DriftTolerancePct(c), 0.8);
  c.ci_informative = false;  // the same value at another seed: the floor
  EXPECT_DOUBLE_EQ(DriftTolerancePct(c), kMinDriftPct);
  c.ci_informative = true;
  c.ci95 = 30;
  EXPECT_DOUBLE_EQ(DriftTolerancePct(c), kMaxDriftPct);

  // Another seed moves a value by about its interval: 0.7% passes with a
  // 0.4% interval and fails without one; a 20% move fails whatever the
  // interval.
  viosim::Baseline base = BaselineOf({MakeCell("a", 100, 100, 50)});
  Cell seed = MakeCell("a", 100.7, 100, 50);
  EXPECT_EQ(Gate({seed}, base).failures, 1);
  seed.ci95 = 0.4;
  EXPECT_EQ(Gate({seed}, base).failures, 0);
  Cell far = MakeCell("a", 120, 100, 50);
  far.ci95 = 1000;
  EXPECT_EQ(Gate({far}, base).failures, 1);
}

// The baseline file holds values only: a tolerance written into it is
// refused, not obeyed.
TEST(GateTest, TheBaselineFileCannotCarryATolerance) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/baseline.textproto";
  std::ofstream(path) << "tolerance_pct: 50\ncell { scenario: \"s\" variant: \"a\" metric: \"m\" modeled: 1 }\n";
  absl::StatusOr<viosim::Baseline> b = viosim::LoadBaselineFile(path);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("tolerance_pct"), std::string::npos) << b.status();
}

TEST(GateTest, AKnownGapPassesTheToleranceButNotADrift) {
  Cell gap = MakeCell("a", 145, 100, 15);
  gap.known_gap = "bounded by an estimate the cell tests";
  gap.expected = 145;
  viosim::Baseline base = BaselineOf({gap});
  EXPECT_EQ(Gate({gap}, base).failures, 0);
  Cell moved = gap;
  moved.modeled = 150;
  EXPECT_EQ(Gate({moved}, base).failures, 1);
  Cell undocumented = gap;
  undocumented.known_gap.clear();
  EXPECT_EQ(Gate({undocumented}, base).failures, 1);
}

// A known gap's expected value is checked as a baseline is: the text
// quoting it cannot go stale.
TEST(GateTest, AKnownGapKeepsItsExpectedValue) {
  Cell gap = MakeCell("a", 145, 100, 15);
  gap.known_gap = "the model is 45% high";
  viosim::Baseline base = BaselineOf({gap});
  GateReport none = Gate({gap}, base);
  EXPECT_EQ(none.failures, 1);
  EXPECT_NE(none.findings[0].problem.find("without an expected value"), std::string::npos);
  gap.expected = 140;
  GateReport stale = Gate({gap}, base);
  EXPECT_EQ(stale.failures, 1);
  EXPECT_NE(stale.findings[0].problem.find("expected 140"), std::string::npos) << stale.findings[0].problem;
  gap.expected = 145.5;
  EXPECT_EQ(Gate({gap}, base).failures, 0);
}

// A cell documented as a miss that comes back inside its tolerance fails
// until its note goes.
TEST(GateTest, AKnownGapBackInsideTheToleranceMustLoseItsNote) {
  Cell gap = MakeCell("a", 104, 100, 5);
  gap.known_gap = "was 45% high";
  gap.expected = 104;
  GateReport r = Gate({gap}, BaselineOf({gap}));
  EXPECT_EQ(r.failures, 1);
  EXPECT_NE(r.findings[0].problem.find("back inside the 5% tolerance"), std::string::npos);
}

TEST(GateTest, FailsWhenACellIsMissingFromTheBaseline) {
  viosim::Baseline base = BaselineOf({MakeCell("a", 100.0, 100, 5)});
  GateReport r = Gate({MakeCell("a", 100.0, 100, 5), MakeCell("b", 100.0, 100, 5)}, base);
  EXPECT_EQ(r.failures, 1);
  EXPECT_NE(r.findings[1].problem.find("not in the baseline"), std::string::npos);
}

// A baseline entry whose cell vanished (a truncated scenario file), and a
// scenario with no cells at all (an empty one), fail the gate.
TEST(GateTest, FailsWhenCellsVanish) {
  viosim::Baseline base = BaselineOf({MakeCell("a", 100.0, 100, 5), MakeCell("b", 100.0, 100, 5)});
  GateReport r = Gate({MakeCell("a", 100.0, 100, 5)}, base);
  EXPECT_EQ(r.failures, 1);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[1].variant, "b");
  EXPECT_NE(r.findings[1].problem.find("no longer a cell"), std::string::npos);

  GateReport empty = Gate({}, base);
  EXPECT_EQ(empty.failures, 3);
  EXPECT_NE(empty.findings[0].problem.find("no published cells"), std::string::npos);
}

TEST(GateTest, UpdateKeepsOtherScenariosAndSorts) {
  viosim::Baseline old;
  auto* keep = old.add_cell();
  keep->set_scenario("other");
  keep->set_variant("v");
  keep->set_metric("m");
  keep->set_modeled(7);
  viosim::Baseline b = UpdateBaseline(old, {MakeCell("z", 1, 1, 1), MakeCell("a", 2, 2, 1)});
  ASSERT_EQ(b.cell_size(), 3);
  EXPECT_EQ(b.cell(0).scenario(), "other");
  EXPECT_EQ(b.cell(1).variant(), "a");
  EXPECT_EQ(b.cell(2).variant(), "z");
}

}  // namespace
}  // namespace analysis

namespace analysis {
namespace {

// Each gated cell carries what the gate holds it to: its baseline, its move
// and its allowed drift, and the text shows them in a table.
TEST(GateTableTest, EveryCellShowsItsBaselineMoveAndAllowedDrift) {
  Reproduction rep;
  rep.scenario = "s";
  Cell c;
  c.scenario = "s";
  c.variant = "v";
  c.metric = "iops";
  c.published = 100;
  c.modeled = 101;
  c.tolerance_pct = 5;
  c.within = true;
  rep.cells.push_back(c);
  viosim::Baseline baseline;
  auto* b = baseline.add_cell();
  b->set_scenario("s");
  b->set_variant("v");
  b->set_metric("iops");
  b->set_modeled(100);
  const GateReport report = CheckGate({rep}, baseline);
  ASSERT_EQ(report.findings.size(), 1u);
  const GateFinding& f = report.findings[0];
  ASSERT_TRUE(f.baseline.has_value());
  EXPECT_EQ(*f.baseline, 100);
  ASSERT_TRUE(f.moved_pct.has_value());
  EXPECT_DOUBLE_EQ(*f.moved_pct, 1.0);
  EXPECT_DOUBLE_EQ(f.allowed_pct, kMinDriftPct);
  EXPECT_FALSE(f.problem.empty());  // 1% is more than the 0.5% floor
  const std::string text = FormatGate({rep}, report, Format::kText);
  EXPECT_NE(text.find("baseline"), std::string::npos) << text;
  EXPECT_NE(text.find("allowed  gate"), std::string::npos) << text;
  EXPECT_NE(text.find("+1.000%"), std::string::npos) << text;
}

}  // namespace
}  // namespace analysis
