// Runs scenario variants (in parallel when asked) and compares modeled
// metrics with published ones.
#ifndef VIOSIM_ANALYSIS_RUNNER_H_
#define VIOSIM_ANALYSIS_RUNNER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/builder.h"
#include "scenarios/loader.h"
#include "scenarios/scenario.pb.h"

namespace analysis {

// One modeled metric beside its published reference.
struct Cell {
  std::string scenario;
  std::string variant;
  std::string metric;
  double published = 0;
  double modeled = 0;
  std::optional<double> ci95;  // half-width of the modeled value's 95% interval; none when not computed
  double error_pct = 0;    // 100 * (modeled - published) / |published|
  std::string role;        // "calibration" or "prediction"
  double tolerance_pct = 0;
  bool within = false;     // |error_pct| <= tolerance_pct
  std::string source;
  std::string known_gap;  // the documented reason when the model misses
};

struct RunRequest {
  std::vector<std::string> overrides;  // --set assignments, applied in order
  viosim::RunOptions options;
  int jobs = 1;  // variants run at once; the results do not depend on it
};

// Resolves every named variant first (so bad input fails before anything
// runs), then runs them on up to `jobs` threads. Results come back in the
// order of `variants`.
absl::StatusOr<std::vector<viosim::VariantResult>> RunVariants(const viosim::ScenarioFile& file,
                                                                  const std::vector<std::string>& variants,
                                                                  const RunRequest& request);

struct Reproduction {
  std::string scenario;  // the scenario's name
  std::string path;
  std::vector<viosim::VariantResult> results;
  std::vector<Cell> cells;
};

// Runs the variants the file's published cells name and builds the cells.
absl::StatusOr<Reproduction> Reproduce(const viosim::ScenarioFile& file, const RunRequest& request);

// Every scenario file under `dir` (sorted by name) with published values.
absl::StatusOr<std::vector<std::string>> ScenariosWithPublished(const std::string& dir);
// Every scenario file (*.textproto) in `dir`, sorted.
absl::StatusOr<std::vector<std::string>> ScenarioFiles(const std::string& dir);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_RUNNER_H_
