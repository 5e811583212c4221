// Prediction bands (`viosim reproduce --bands K`): how far a PREDICTION cell
// can be trusted, given how sure the costs behind it are.
//
// Every costed field (analysis/cost_fields.h) that is neither FITTED nor
// DEFINED is uncertain: its Source's `uncertainty`, else the file's
// `uncertainty_defaults` for its kind, else the built-in default (measured
// +-5%, derived +-20%, estimated times or divided by 2). K points of that
// space are drawn by Latin hypercube: each field's range cut into K equal
// strata of probability, one point per stratum, the strata paired across
// fields by a permutation of its own (a stream per field, seeded by
// (band seed, field path), so adding a field leaves the others' draws
// unchanged); uniform for relative and uniform ranges, log-uniform for
// factors and log ranges.
//
// At each point every FITTED cost is refitted to its CALIBRATION cell as
// `viosim calibrate` fits it (Calibrate, with the field, cell and range its
// Source's `fit` declares; a field with several fits is fitted to the first),
// in the order the costed fields are listed, in `passes` rounds (a fit whose
// cell depends on a field fitted after it sees that field's new value in
// the next round). A point where a search does not converge is a refit
// failure: counted, shown, and left out of the percentiles. Then the
// PREDICTION cells' variants run with the drawn and refitted values.
//
// Points are independent: RunBandPoint(i) is a pure function of (file,
// plan, i, overrides), so they may run in any order, on any thread or
// machine, and the summary is the same.
#ifndef VIOSIM_ANALYSIS_BANDS_H_
#define VIOSIM_ANALYSIS_BANDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/calibrate.h"
#include "analysis/cost_fields.h"
#include "analysis/runner.h"
#include "scenarios/loader.h"
#include "scenarios/scenario.pb.h"

namespace analysis {

struct BandSpec {
  int k = 0;               // points drawn, >= 2
  uint64_t seed = 1;       // the Latin hypercube's seed (--band-seed)
  int passes = 2;          // rounds of refits per point (1..5)
  double refit_tolerance_pct = 0.5;  // each refit stops within this of its cell
  int max_iter = 30;       // midpoints per refit at most
};

// A costed field drawn at each point: a multiple of its value between
// lo_factor and hi_factor.
struct UncertainField {
  CostField field;
  viosim::Uncertainty uncertainty;  // as applied
  std::string origin;  // "own", "file default" or "built-in default"
  double lo_factor = 1;
  double hi_factor = 1;
  bool log_scale = false;
};

// A fit refitted at each point.
struct BandFit {
  CalibrateSpec spec;  // field, variant, metric, range
  std::string cell;    // "VARIANT/METRIC" as declared
};

struct BandPlan {
  std::string scenario;
  BandSpec spec;
  std::vector<UncertainField> fields;
  std::vector<BandFit> fits;
  std::vector<int> cells;  // indices of the PREDICTION cells into published
  std::vector<std::pair<std::string, std::string>> cell_keys;  // their (variant, metric)
  std::vector<std::string> variants;  // the variants those cells name, in file order
  // factors[i][d]: point i's multiple of field d's value.
  std::vector<std::vector<double>> factors;
};

// The range a band draws `f` from in `base` (its Source's uncertainty, else
// the file's default for its kind, else the built-in one); nullopt for a
// FITTED field (refitted at each point), a DEFINED one (exact) and a value
// of zero (a cost that vanishes stays zero). InvalidArgument for a range
// that does not fit the field.
absl::StatusOr<std::optional<UncertainField>> UncertaintyOf(const viosim::Scenario& base, const CostField& f);

// The built-in uncertainty of a kind (none for FITTED and DEFINED).
std::optional<viosim::Uncertainty> BuiltInUncertainty(viosim::Source::Kind kind);

// Checks `spec` (InvalidArgument naming --bands, --band-seed, --band-passes)
// and the file's uncertainties against the fields they cover (a range must
// hold the value, be of the field's kind, and cover one field; InvalidArgument
// naming the file and the Source's path), resolves the base with
// `request.overrides`, finds the fits and the PREDICTION cells and draws the
// points, then CheckBandPoints. Nothing runs.
absl::StatusOr<BandPlan> PlanBands(const viosim::ScenarioFile& file, const BandSpec& spec, const RunRequest& request);

// PlanBands in its two steps, for a caller that must know how many points
// a plan has before paying for their checks (merge, which bounds its work by
// the points its parts hold). DrawBands is PlanBands without the check;
// it costs little per point. CheckBandPoints resolves every variant the
// PREDICTION cells name at every point's drawn values (InvalidArgument
// naming the point when the scenario refuses one); it costs a resolve per
// point and variant.
absl::StatusOr<BandPlan> DrawBands(const viosim::ScenarioFile& file, const BandSpec& spec, const RunRequest& request);
absl::Status CheckBandPoints(const viosim::ScenarioFile& file, const BandPlan& plan, const RunRequest& request);

// The outcome of one point.
struct BandPoint {
  bool refitted = false;
  std::string failure;  // when not refitted: which fit, and why
  int failed_round = 0;  // and in which round
  std::vector<std::string> assignments;  // every --set applied: drawn, then refitted
  std::vector<std::optional<double>> values;  // per plan.cells; none when not refitted or not measured
  std::vector<std::optional<double>> ci95;    // their 95% half-widths, when computed
};

// Runs point `i` (0 <= i < plan.spec.k): draws, refits, runs the prediction
// cells' variants on the caller's thread. An error is bad input found late
// (a drawn value a field refuses); a failed refit is a result.
absl::StatusOr<BandPoint> RunBandPoint(const viosim::ScenarioFile& file, const BandPlan& plan, size_t i,
                                       const RunRequest& request);

// Attaches a band to each of `cells` that `plan` drew for (its PREDICTION
// cells, in published order as Reproduce builds them) from `points`
// (plan.spec.k of them, in index order).
void AttachBands(const BandPlan& plan, const std::vector<BandPoint>& points, std::vector<Cell>* cells);

// Nearest-rank percentile of `sorted` (ascending, non-empty): the
// ceil(p/100 * n)-th smallest, so that a monotone map of the values maps
// their percentiles (decreasing maps swap p and 100 - p when p*n/100 is not
// a whole number).
double NearestRank(const std::vector<double>& sorted, double p);

// Spearman's rank correlation of x and y (average ranks for ties); 0 when
// either is constant or they hold fewer than two pairs.
double RankCorrelation(const std::vector<double>& x, const std::vector<double>& y);

// PlanBands, every point on up to `request.jobs` threads, AttachBands on
// `rep->cells`. The result does not depend on `request.jobs`.
absl::Status RunBands(const viosim::ScenarioFile& file, const BandSpec& spec, const RunRequest& request,
                      Reproduction* rep, BandPlan* plan_out = nullptr, std::vector<BandPoint>* points_out = nullptr);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_BANDS_H_
