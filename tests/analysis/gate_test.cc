#include "analysis/gate.h"

#include "gtest/gtest.h"

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

viosim::Baseline BaselineOf(const std::vector<Cell>& cells, double tol) {
  viosim::Baseline b;
  b.set_tolerance_pct(tol);
  return UpdateBaseline(b, cells);
}

TEST(GateTest, PassesWhenWithinToleranceAndBaseline) {
  std::vector<Cell> cells = {MakeCell("a", 100.2, 100, 1)};
  EXPECT_EQ(CheckGate(cells, BaselineOf(cells, 0.5)).failures, 0);
}

TEST(GateTest, FailsWhenOutsidePublishedTolerance) {
  std::vector<Cell> cells = {MakeCell("a", 103, 100, 1)};
  GateReport r = CheckGate(cells, BaselineOf(cells, 0.5));
  EXPECT_EQ(r.failures, 1);
  EXPECT_NE(r.findings[0].problem.find("outside the 1% tolerance"), std::string::npos);
}

TEST(GateTest, FailsWhenTheModeledValueMovesFromTheBaseline) {
  viosim::Baseline base = BaselineOf({MakeCell("a", 100.0, 100, 5)}, 0.5);
  GateReport r = CheckGate({MakeCell("a", 101.0, 100, 5)}, base);
  EXPECT_EQ(r.failures, 1);
  EXPECT_NE(r.findings[0].problem.find("moved +1.000%"), std::string::npos);
  EXPECT_EQ(CheckGate({MakeCell("a", 100.4, 100, 5)}, base).failures, 0);
}

TEST(GateTest, AKnownGapPassesTheToleranceButNotADrift) {
  Cell gap = MakeCell("a", 145, 100, 15);
  gap.known_gap = "bounded by an estimate the cell tests";
  viosim::Baseline base = BaselineOf({gap}, 0.5);
  EXPECT_EQ(CheckGate({gap}, base).failures, 0);
  Cell moved = gap;
  moved.modeled = 150;
  EXPECT_EQ(CheckGate({moved}, base).failures, 1);
  Cell undocumented = gap;
  undocumented.known_gap.clear();
  EXPECT_EQ(CheckGate({undocumented}, base).failures, 1);
}

TEST(GateTest, FailsWhenACellIsMissingFromTheBaseline) {
  viosim::Baseline base = BaselineOf({MakeCell("a", 100.0, 100, 5)}, 0.5);
  GateReport r = CheckGate({MakeCell("b", 100.0, 100, 5)}, base);
  EXPECT_EQ(r.failures, 1);
  EXPECT_NE(r.findings[0].problem.find("not in the baseline"), std::string::npos);
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
  EXPECT_DOUBLE_EQ(b.tolerance_pct(), kDefaultBaselineTolerancePct);
}

}  // namespace
}  // namespace analysis
