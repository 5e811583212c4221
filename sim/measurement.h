// Steady-state measurement by batch means.
//
// A run is warmed up, its statistics reset, and the measured window split
// into equal batches. Each metric is a ratio of two cumulative quantities the
// model counts (completions over elapsed time, summed wait over
// acquisitions, ...). The reported value is the ratio of the totals over the
// whole window; its 95% confidence half-width comes from the batch totals
// by the ratio estimator (sim::RatioBatchMeans).
#ifndef VIOSIM_SIM_MEASUREMENT_H_
#define VIOSIM_SIM_MEASUREMENT_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/simulator.h"
#include "sim/time.h"

namespace sim {

struct RatioMetric {
  std::string name;
  std::function<double()> numerator;    // cumulative since the last reset
  std::function<double()> denominator;  // cumulative since the last reset
  double scale = 1;                     // value = scale * num / den
};

struct MetricEstimate {
  std::string name;
  double value = 0;
  // Half-width of the 95% confidence interval; none when no interval was
  // computed (a metric without batches, or too few of them). A computed
  // interval may be 0: a deterministic model can repeat itself exactly.
  std::optional<double> ci95;
  // False when the denominator stayed zero over the window (no completion
  // to average a latency over, no acquisition to average a wait over):
  // nothing was measured, and `value` (0) and `ci95` (none) mean nothing.
  bool measured = true;
  // Each batch's own numerator and denominator, in batch order (what the
  // interval is computed from), so that two runs' batches can be paired.
  std::vector<double> batch_numerators;
  std::vector<double> batch_denominators;
  // Their length (the last batches' under sequential stopping); two runs'
  // batches pair only when their lengths are the same. Zero: not recorded.
  Time batch_length;
};

struct MeasurementPlan {
  Time warmup;
  Time duration;
  int batches = 20;
  // Sequential stopping (`--precision P%`): 0, off. Otherwise, after the
  // window the run goes on, batch by batch, until every measured metric's
  // 95% half-width is within `precision` (a fraction) of its value, or the
  // run has measured `max_factor` times `duration`. The batches keep their
  // number: the run goes on until it has doubled them, then adjacent pairs
  // merge and the batch length doubles, and only then is the precision
  // checked again (so it is checked at B batches of L, 2L, 4L, ...: few
  // looks, and batches that grow with the run so that their means stay
  // nearly independent however long the model's own correlation is).
  double precision = 0;
  int max_factor = 16;
  // The metrics the precision is asked of, by name; empty: every one.
  std::vector<std::string> precision_metrics;
};

// What a sequential run reached.
struct MeasureOutcome {
  Time measured;         // the measured window, as it ended
  int batches = 0;       // the batches the estimates come from
  Time batch_length;     // the last batches' length
  bool reached = true;   // every measured interval within the precision
  std::vector<std::string> missed;  // the metrics whose interval was not, in order
};

// Runs `sim` through warm-up, calls `reset`, then through `batches` equal
// batches (and, with a precision, on until it is reached or the cap), and
// returns one estimate per metric in the order given. A denominator that
// stays zero gives an estimate marked not measured. `outcome`, if given,
// says how far the run went.
std::vector<MetricEstimate> MeasureBatches(Simulator& sim, const MeasurementPlan& plan,
                                           const std::function<void()>& reset,
                                           const std::vector<RatioMetric>& metrics,
                                           MeasureOutcome* outcome = nullptr);

// Whether an estimate's interval is within `precision` of its value (one
// not measured, or without an interval, has nothing to reach).
bool WithinPrecision(const MetricEstimate& e, double precision);

}  // namespace sim

#endif  // VIOSIM_SIM_MEASUREMENT_H_
