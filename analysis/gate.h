// The regression gate: a modeled value must stay inside its published
// tolerance (unless the cell documents a known gap) and must not move more
// than the baseline tolerance from the checked-in baseline of modeled values
// (analysis/baseline.textproto).
#ifndef VIOSIM_ANALYSIS_GATE_H_
#define VIOSIM_ANALYSIS_GATE_H_

#include <string>
#include <vector>

#include "analysis/runner.h"
#include "scenarios/scenario.pb.h"

namespace analysis {

// Default allowed move from the baseline, percent. Output is deterministic,
// so any move comes from a change to code or scenario; 0.5% lets harmless
// changes (a reordered draw) through and stops real shifts.
inline constexpr double kDefaultBaselineTolerancePct = 0.5;

struct GateFinding {
  std::string scenario, variant, metric;
  std::string problem;  // empty when the cell passes
};

struct GateReport {
  std::vector<GateFinding> findings;  // one per cell, in cell order
  int failures = 0;
};

GateReport CheckGate(const std::vector<Cell>& cells, const viosim::Baseline& baseline);

// `old` keeps the cells of scenarios not in `cells` and its tolerance; the
// result is sorted by (scenario, variant, metric).
viosim::Baseline UpdateBaseline(const viosim::Baseline& old, const std::vector<Cell>& cells);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_GATE_H_
