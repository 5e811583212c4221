// `viosim calibrate`: fits one field of a scenario to one published
// CALIBRATION cell by bisection, so that a FITTED parameter is a command
// anyone can rerun rather than a number found by hand.
//
// The search (Bisect) knows nothing of scenarios: it takes the field's
// value as a number and a callback that models the metric there. Calibrate
// wires it to a scenario file: the field is set through the --set machinery
// and the cell's variant runs with the scenario's run control.
#ifndef VIOSIM_ANALYSIS_CALIBRATE_H_
#define VIOSIM_ANALYSIS_CALIBRATE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analysis/runner.h"
#include "scenarios/loader.h"

namespace analysis {

// The modeled metric at one value of the field.
struct Evaluation {
  double value = 0;
  std::optional<double> ci95;  // half-width of its 95% interval; none when not computed
};

struct BisectionOptions {
  double lo = 0;  // the field's range, lo < hi
  double hi = 0;
  double target = 0;           // the published value
  double tolerance_pct = 0.5;  // done once |error| is at most this
  int max_iter = 30;           // midpoints tried at most
  bool log_scale = false;      // geometric midpoints; needs lo > 0
  // Rounds a midpoint to the field's resolution. A rounded midpoint that is
  // not strictly inside the bracket ends the search: the bracket is below
  // the resolution.
  std::function<double(double)> snap = [](double x) { return x; };
};

struct BisectionStep {
  enum class At { kLo, kHi, kMid };
  At at = At::kMid;
  int iteration = 0;  // 1, 2, ... for midpoints; 0 for the two ends
  double x = 0;
  Evaluation eval;
  double error_pct = 0;  // ErrorPct(eval.value, target)
  // Midpoints only: the steps at the ends of the bracket this one split,
  // and whether its value fell outside the values at those ends (the metric
  // is not monotonic between them).
  int bracket_lo = -1;
  int bracket_hi = -1;
  bool non_monotonic = false;
};

enum class BisectionOutcome { kFitted, kNotBracketed, kNotConverged };

struct Bisection {
  std::vector<BisectionStep> steps;  // lo, hi, then the midpoints in order
  BisectionOutcome outcome = BisectionOutcome::kNotConverged;
  bool at_resolution = false;  // kNotConverged: stopped at the resolution, not at max_iter
  int best = -1;  // the fitted step, or the closest one tried; -1 when not bracketed
};

// Evaluates the ends, then bisects while the target lies between the
// values at the bracket's ends, keeping the half that still brackets it
// (when a midpoint falls outside its bracket's values it is marked
// non_monotonic, and the half whose end values bracket the target is kept).
// Stops at the first step within the tolerance (an end counts), when the
// bracket is below the resolution, or after max_iter midpoints. An error
// from `evaluate` ends the search with that error.
absl::StatusOr<Bisection> Bisect(const BisectionOptions& options,
                                 const std::function<absl::StatusOr<Evaluation>(double)>& evaluate);

// Whether `b` has the shape of a search Bisect returns, which every reader of
// a Bisection relies on: the low end, the high end, then midpoints 1, 2, ...
// each with a bracket of two different steps before it (the ends have
// none; only a midpoint with a bracket can be non-monotonic); `best` one of
// the steps, except when not bracketed: then -1, and only the ends were
// tried. Otherwise InvalidArgument "steps: ..." or "best: ...", the member
// at fault first (for a search read back from a part file, `viosim merge`).
absl::Status CheckBisection(const Bisection& b);

// What `viosim calibrate` is asked.
struct CalibrateSpec {
  std::string field;   // a --set path
  std::string flag = "--fit";  // the flag that named the field, for messages
  std::string variant;
  std::string metric;  // empty: the variant's only published cell
  std::string lo;      // values of the field, as --set takes them
  std::string hi;
  double tolerance_pct = 0.5;
  int max_iter = 30;
};

// Parses --cell VARIANT[/METRIC] (split at the last '/') and --range LO,HI
// into `spec`. InvalidArgument naming the flag when either is malformed.
absl::Status ParseCellAndRange(absl::string_view cell, absl::string_view range, CalibrateSpec* spec);

struct Calibration {
  std::string scenario;  // the scenario's name
  std::string field;
  std::string variant;
  std::string metric;
  double published = 0;
  std::string source;
  double cell_tolerance_pct = 0;  // the published cell's own tolerance
  double tolerance_pct = 0;       // where the search stops
  int max_iter = 0;
  std::string scale;       // "log" or "linear"
  std::string resolution;  // "1ns", "1", "6 significant digits"
  std::vector<std::string> values;  // each step's field value, as it was set
  Bisection search;
};

// Fits `spec.field` so that the variant's modeled metric matches its
// published cell. Everything is checked before anything runs
// (InvalidArgument naming --fit, --cell or --range): the field must hold a
// duration or a number, LO and HI must be values it accepts with LO < HI,
// and the cell must be a typed-in CALIBRATION value (a PREDICTION is what a
// calibrated model is checked against; an analytic value has nothing to
// fit). Durations are bisected to 1ns, integers to 1, real numbers to 6
// significant digits; on a log scale when LO > 0. `request.overrides` apply
// before the field; `request.jobs` is not used (the search is sequential).
absl::StatusOr<Calibration> Calibrate(const viosim::ScenarioFile& file, const CalibrateSpec& spec,
                                      const RunRequest& request);

// `viosim sweep --over FIELD=... --refit FIELD2 --cell ... --range ...`: at
// each value of the swept field, FIELD2 is first calibrated to the published
// cell (as Calibrate does, with FIELD=value applied after
// `request.overrides`), then the sweep's variants run with both.
struct RefitSweep {
  // Value-major as a plain sweep's. A value whose refit was not fitted has
  // its variants' points with no metrics (nothing was run there).
  Sweep sweep;
  std::vector<Calibration> fits;  // one per sweep.values, in order
};

// Everything is checked before anything runs: the sweep as RunSweep checks
// it, the refit at every value as Calibrate checks it (messages name
// `refit.flag`), and FIELD2 must differ from the swept field. The values run
// on up to `request.jobs` threads, each one's search sequential; the result
// does not depend on how many. A refit that is not fitted is a result, not
// an error.
absl::StatusOr<RefitSweep> RunRefitSweep(const viosim::ScenarioFile& file, const SweepSpec& spec,
                                         const CalibrateSpec& refit, const std::vector<std::string>& variants,
                                         const std::vector<std::string>& metrics, const RunRequest& request);

// RunRefitSweep in three steps, so that its values can run apart (sharded):
// plan (every check, nothing run), run one value, put the values together.
struct CalibrationPlan;  // a calibration checked and ready to search
struct RefitSweepPlan {
  SweepPlan sweep;  // the sweep's values, variants and metrics
  SweepSpec spec;
  CalibrateSpec refit;
  std::vector<RunRequest> at;  // per value: the request with FIELD=value last, one job
  std::vector<std::shared_ptr<const CalibrationPlan>> fits;  // per value
};

// One value's outcome: the refit's search, and the variants run after it
// when it was fitted (in sweep.variants order; none otherwise).
struct RefitValue {
  Calibration fit;
  std::vector<viosim::VariantResult> results;
};

absl::StatusOr<RefitSweepPlan> PlanRefitSweep(const viosim::ScenarioFile& file, const SweepSpec& spec,
                                              const CalibrateSpec& refit, const std::vector<std::string>& variants,
                                              const std::vector<std::string>& metrics, const RunRequest& request);

// Runs value `i` on the caller's thread (errors name the file and FIELD=value).
absl::StatusOr<RefitValue> RunRefitValue(const viosim::ScenarioFile& file, const RefitSweepPlan& plan, size_t i);

// The Calibration value `i`'s search reports, from its steps' values as set
// and the search (a value's result read back from elsewhere).
Calibration CalibrationAt(const RefitSweepPlan& plan, size_t i, std::vector<std::string> values, Bisection search);

// The RefitSweep of every value's outcome, in plan order (InvalidArgument
// unless there is one per value of the plan).
absl::StatusOr<RefitSweep> AssembleRefitSweep(const viosim::ScenarioFile& file, const RefitSweepPlan& plan,
                                              std::vector<RefitValue> values);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_CALIBRATE_H_
