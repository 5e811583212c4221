// Runs scenario variants (in parallel when asked) and compares modeled
// metrics with published ones.
#ifndef VIOSIM_ANALYSIS_RUNNER_H_
#define VIOSIM_ANALYSIS_RUNNER_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "scenarios/builder.h"
#include "scenarios/loader.h"
#include "scenarios/scenario.pb.h"

namespace analysis {

// A cost whose uncertainty moves a band, and how much: the Spearman rank
// correlation of its drawn values with the cell's values over a band's
// points (analysis/bands.h).
struct BandDriver {
  std::string field;  // its --set path
  double rank_corr = 0;
};

// A PREDICTION cell's prediction band (`viosim reproduce --bands K`): the
// cell's values over the points whose refit succeeded.
struct CellBand {
  double p5 = 0;
  double p50 = 0;
  double p95 = 0;
  int k = 0;             // points drawn
  int refit_failed = 0;  // of which a fitted cost could not be refitted (not in the percentiles)
  int points = 0;        // in the percentiles: refitted, and the metric measured there
  struct Failure {
    std::string reason;  // which fit, and why
    int points = 0;
  };
  std::vector<Failure> failures;  // the refit failures by reason, sorted by reason
  bool inside = false;   // p5 <= published <= p95
  // Whether the point estimate (the scenario's values as written) lies in
  // the band; when not, why (each cause that applies, the last always the
  // number of points).
  bool point_inside = true;
  std::vector<std::string> outside_why;
  std::vector<BandDriver> drivers;  // by |rank_corr|, largest first
  // With the scenario's alternatives: each one's line, in file order. The
  // percentiles above are then over every kept alternative's points,
  // weighted by its prior.
  struct Alternative {
    std::string name;
    double weight = 1;
    std::optional<double> value;  // the cell at the costs as written, the fits refitted
    std::vector<std::string> refit;  // the fits' values there ("FIELD=VALUE")
    std::string dropped;  // why it is left out of the band (refit failed, a calibration cell off); empty: kept
    std::optional<double> p5, p95;  // over its own points
  };
  std::vector<Alternative> alternatives;
};

// A published difference checked against the mechanism's bound: the cell's
// variant and its partner differ only in placement switches, and the locks
// those name, made ideal in the partner, bound what moving the call can do
// (analysis/ideal.h).
struct MechanismBound {
  std::string partner;                 // the other variant of the pair
  std::vector<std::string> resources;  // the locks the switches name
  double published_difference = 0;     // this cell's published value less the partner's
  double modeled_difference = 0;       // the same of the modeled values
  double bound = 0;                    // the partner's metric with the locks ideal, less as it runs
  bool beyond = false;                 // |published_difference| > |bound|
};

// The effect a PREDICTION cell's change stands for: its value over its
// partner's, the CALIBRATION cell of the same metric whose variant differs
// from it least (fewest fields of the resolved scenarios), published and
// modeled, and how far the modeled effect is from the published one.
struct Effect {
  std::string partner;
  double published = 0;  // cell / partner, published
  double modeled = 0;    // the same, modeled
  std::optional<double> ci95;  // of the modeled effect, from the two runs' batches paired
  double error_pct = 0;  // 100 * (modeled / published - 1)
  std::optional<double> tolerance_pct;  // the cell's effect_tolerance_pct, when it has one
  bool within = true;                   // |error_pct| <= tolerance_pct (true without one)
};

// One modeled metric beside its published reference.
struct Cell {
  std::string scenario;
  std::string variant;
  std::string metric;
  double published = 0;
  double modeled = 0;
  bool measured = true;  // false: the metric's denominator stayed zero, `modeled` means nothing
  std::optional<double> ci95;  // half-width of the modeled value's 95% interval; none when not computed
  // False when the value came out the same at another seed (`replicate_seed`):
  // a deterministic bottleneck sets it, and the batch-means interval, which
  // measures the batches' spread, says nothing about how it would vary.
  bool ci_informative = true;
  uint64_t replicate_seed = 0;  // the other seed run; 0 when none was
  double error_pct = 0;    // 100 * (modeled - published) / |published|
  std::string role;        // "calibration" or "prediction"
  double tolerance_pct = 0;
  bool within = false;     // |error_pct| <= tolerance_pct
  std::string source;
  std::string known_gap;  // the documented reason when the model misses
  std::optional<double> expected;  // the known gap's expected modeled value
  std::optional<CellBand> band;    // with --bands, on PREDICTION cells
  std::optional<MechanismBound> mechanism;  // on a PREDICTION cell whose pair differs in a placement switch
  std::optional<Effect> effect;             // on a PREDICTION cell with a CALIBRATION partner
};

// 100 * (modeled - published) / |published| (infinite when published is 0
// and modeled is not).
double ErrorPct(double modeled, double published);

struct RunRequest {
  std::vector<std::string> overrides;  // --set assignments, applied in order
  viosim::RunOptions options;
  int jobs = 1;  // variants run at once; the results do not depend on it
};

// Calls work(0) .. work(n - 1) on up to `jobs` threads (in order on the
// caller's thread when one suffices). Each index is taken exactly once; the
// calls must only write what belongs to their own index.
void ParallelFor(size_t n, int jobs, const std::function<void(size_t)>& work);

// Resolves every named variant first (so bad input fails before anything
// runs), then runs them on up to `jobs` threads. Results come back in the
// order of `variants`.
absl::StatusOr<std::vector<viosim::VariantResult>> RunVariants(const viosim::ScenarioFile& file,
                                                                  const std::vector<std::string>& variants,
                                                                  const RunRequest& request);

// One axis of a sweep: a field path (as --set takes it) and its values.
struct SweepAxis {
  std::string field;
  std::vector<std::string> values;
};

// `viosim sweep --over FIELD=V1,V2,...`: one field path (as --set takes it)
// and the values it takes in turn; with --over given again, a grid.
struct SweepSpec {
  std::string field;
  // As given: each is applied as --set applies it, and labelled as the
  // field reads it (viosim::ValueAsRead: "10ms" in quotes is 10ms).
  std::vector<std::string> values;
  // The grid's further axes (the second and third --over), in order: the
  // runs cover every combination, the first axis varying slowest.
  std::vector<SweepAxis> more;
};

// Parses "FIELD=V1,V2,..." (values split at commas, in order, without the
// spaces around each; a value in a scenario file's quotes is one value,
// commas and spaces inside it kept). Returns
// InvalidArgument naming --over when there is no '=', no field or an empty
// value; the field and values themselves are checked by RunSweep.
absl::StatusOr<SweepSpec> ParseSweepSpec(absl::string_view over);
// The same for --over given one to three times: the first is the spec's
// own axis, the others its `more`. InvalidArgument for none, more than
// three, or one field given twice.
absl::StatusOr<SweepSpec> ParseGridSpec(const std::vector<std::string>& overs);

// One (value, variant) pair of a sweep: the chosen metrics, in
// Sweep::metrics order.
struct SweepPoint {
  std::string value;
  std::string variant;
  std::vector<sim::MetricEstimate> metrics;
  std::vector<std::string> at;  // on a grid: its values on Sweep::more, as they read
};

struct Sweep {
  std::string scenario;  // the scenario's name
  std::string field;
  std::vector<std::string> values;  // SweepSpec::values as the field reads them
  std::vector<SweepAxis> more;      // a grid's further axes, values as they read
  std::vector<std::string> variants;
  std::vector<std::string> metrics;
  // Value-major: for each value (on a grid, each combination, the first
  // axis slowest), each variant.
  std::vector<SweepPoint> points;
  // Under --precision (a fraction, 0 off): the points that did not reach
  // it at the cap, as "VALUE[,VALUE...]/VARIANT: METRIC, ...".
  double precision = 0;
  std::vector<std::string> precision_missed;
};

// A sweep checked and resolved, not yet run: the Sweep with its values,
// variants and metrics chosen and no points, and its (value, variant) pairs
// value-major, as the points come out.
struct SweepPlan {
  Sweep sweep;
  std::vector<viosim::Scenario> resolved;
  std::vector<std::string> names;  // each pair's variant
  // Each pair's place: its value on the first axis, then on each further
  // one, as they read.
  std::vector<std::vector<std::string>> coords;
};

// RunSweep's checks and resolution, without running anything.
absl::StatusOr<SweepPlan> PlanSweep(const viosim::ScenarioFile& file, const SweepSpec& spec,
                                    const std::vector<std::string>& variants,
                                    const std::vector<std::string>& metrics, const RunRequest& request);

// The point of `result`'s variant at `value`: its `metrics`, in that order.
absl::StatusOr<SweepPoint> PointOf(const std::string& value, const viosim::VariantResult& result,
                                   const std::vector<std::string>& metrics);

// Runs every (value, variant) pair of `spec`: each value is applied as the
// override FIELD=VALUE after `request.overrides`. `variants` empty means all
// of the file's; `metrics` empty means "iops" when the scenario reports it,
// else its first metric. Everything is resolved and checked first (a bad
// field or value names --over, an unknown metric lists the scenario's
// metrics; InvalidArgument), then the pairs run on up to `request.jobs`
// threads; the result does not depend on how many.
absl::StatusOr<Sweep> RunSweep(const viosim::ScenarioFile& file, const SweepSpec& spec,
                               const std::vector<std::string>& variants,
                               const std::vector<std::string>& metrics, const RunRequest& request);

struct Reproduction {
  std::string scenario;  // the scenario's name
  std::string path;
  std::vector<viosim::VariantResult> results;
  std::vector<Cell> cells;
};

// What Reproduce runs: the variants some published cell names (file order,
// each once), at the scenario's seed and again at `replicate_seed`.
struct ReproducePlan {
  std::vector<std::string> variants;
  uint64_t replicate_seed = 0;  // the base variant's seed + 1; 0 when no variant
  // `request` with the replicate seed set last.
  RunRequest Replicate(const RunRequest& request) const;
  // The mechanism bounds: for each PREDICTION cell whose variant differs
  // from another published variant of the same metric only in placement
  // switches, a run of that partner with the switches' locks ideal.
  struct IdealRun {
    std::string variant;
    std::vector<std::string> resources;
    RunRequest Request(const RunRequest& request) const;  // `request` with the resources ideal
  };
  std::vector<IdealRun> ideal_runs;
  struct Pairing {
    size_t cell;     // index into the file's published cells
    size_t partner;  // the partner's published cell
    size_t run;      // index into ideal_runs
  };
  std::vector<Pairing> pairings;
};
absl::StatusOr<ReproducePlan> PlanReproduce(const viosim::ScenarioFile& file, const RunRequest& request);

// The cells from the plan's runs: `results` and `replicates` in
// `plan.variants` order (only their variant and metrics are read), and
// `ideal` in `plan.ideal_runs` order.
absl::StatusOr<Reproduction> ReproductionOf(const viosim::ScenarioFile& file, const RunRequest& request,
                                            const ReproducePlan& plan, std::vector<viosim::VariantResult> results,
                                            const std::vector<viosim::VariantResult>& replicates,
                                            const std::vector<viosim::VariantResult>& ideal);

// Runs `resolved[i]` as variant `names[i]` on up to `request.jobs` threads,
// relative paths taken from the file's folder. Results come back in input
// order whatever the number of threads.
std::vector<absl::StatusOr<viosim::VariantResult>> RunResolved(const viosim::ScenarioFile& file,
                                                               const std::vector<viosim::Scenario>& resolved,
                                                               const std::vector<std::string>& names,
                                                               const RunRequest& request);

// Runs the variants the file's published cells name and builds the cells.
// Each variant runs a second time at the next seed; a cell whose value is
// the same there is marked as having no informative interval.
absl::StatusOr<Reproduction> Reproduce(const viosim::ScenarioFile& file, const RunRequest& request);

// How many independent predictions a table holds. Cells of one metric whose
// modeled values agree (equal, or within the sum of their intervals) are
// one value of the model: PREDICTION cells that agree with each other form
// one group, and a group that agrees with a CALIBRATION cell repeats a
// fitted value (e.g. a bandwidth-bound cell whose bandwidth was fitted on
// the other column) and is no independent prediction.
struct PredictionCount {
  int prediction_cells = 0;
  // Each independent prediction: its cells' indices into the cells given.
  std::vector<std::vector<size_t>> independent;
  // Prediction cells that repeat a calibration cell's value, with it.
  std::vector<std::pair<size_t, size_t>> repeats_calibration;
  int cells_in_independent = 0;
  double mae_pct = 0;         // mean |error| over the independent groups' cells
  double mae_no_gap_pct = 0;  // the same without known gaps; 0 when none is left
  int cells_no_gap = 0;
};
PredictionCount CountPredictions(const std::vector<Cell>& cells);

// Every scenario file under `dir` (sorted by name) with published values.
absl::StatusOr<std::vector<std::string>> ScenariosWithPublished(const std::string& dir);
// Every scenario file (*.textproto) in `dir`, sorted.
absl::StatusOr<std::vector<std::string>> ScenarioFiles(const std::string& dir);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_RUNNER_H_
