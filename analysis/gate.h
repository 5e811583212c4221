// The regression gate: a modeled value must stay inside its published
// tolerance (unless the cell documents a known gap, whose expected value it
// must then keep) and must not drift from the checked-in baseline of modeled
// values (analysis/baseline.textproto) by more than the cell's drift
// tolerance, which lives here and not in the baseline file.
#ifndef VIOSIM_ANALYSIS_GATE_H_
#define VIOSIM_ANALYSIS_GATE_H_

#include <optional>
#include <string>
#include <vector>

#include "analysis/runner.h"
#include "scenarios/scenario.pb.h"

namespace analysis {

// The drift floor, percent. Output is deterministic, so a move at the same
// seed comes from a change to code or scenario; 0.5% lets harmless changes
// (a reordered draw) through.
inline constexpr double kMinDriftPct = 0.5;
// The drift ceiling, percent: an interval wider than 5% of its value cannot
// make the gate blind to a 20% move.
inline constexpr double kMaxDriftPct = 10;

// How far cell `c` may move from its baseline (or a known gap's expected
// value), percent: max(0.5%, 2 x its 95% half-width relative to the value),
// at most 10%. Another seed moves a value by about its interval, so `gate
// --seed N` passes; a cell without an informative interval gets the floor.
double DriftTolerancePct(const Cell& c);

struct GateFinding {
  std::string scenario, variant, metric;
  std::string problem;  // empty when the cell passes
  // A cell's: its baseline value (none when it has none), the modeled
  // value, its move from the baseline and the drift it may make (percent).
  std::optional<double> baseline;
  double modeled = 0;
  std::optional<double> moved_pct;
  double allowed_pct = 0;
};

struct GateReport {
  // One per cell, in cell order; then one per scenario without cells and
  // one per baseline entry of a gated scenario that is no longer a cell.
  std::vector<GateFinding> findings;
  int failures = 0;
};

// Gates every cell of `reps`. A scenario with no cells fails, and so does a
// baseline entry of a gated scenario whose cell no longer exists.
GateReport CheckGate(const std::vector<Reproduction>& reps, const viosim::Baseline& baseline);

// `old` keeps the cells of scenarios not in `cells`; the result is sorted by
// (scenario, variant, metric).
viosim::Baseline UpdateBaseline(const viosim::Baseline& old, const std::vector<Cell>& cells);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_GATE_H_
