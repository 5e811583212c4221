// The largest effect a resource could have: `viosim explain --ideal`.
//
// A variant is run again with one resource made ideal (models/sync: a
// spinlock or mutex taken and released at no cost, never contended, nobody
// spinning or sleeping for it, the work done while holding it unchanged; a
// cache line served at the cost of a line already in the CPU's cache,
// without queueing). The difference of a metric between the two runs is
// the most that resource could account for: no change to where a call sits
// relative to it can move the metric further. This answers a reviewer's
// question of a patch message, "can this change give what it claims?", which
// a measurement cannot.
#ifndef VIOSIM_ANALYSIS_IDEAL_H_
#define VIOSIM_ANALYSIS_IDEAL_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/format.h"
#include "analysis/runner.h"
#include "scenarios/loader.h"

namespace analysis {

struct IdealBound {
  std::string resource;  // as lock_stat names it ("&conf->wait_barrier", "vq_lock"), or a line's name
  std::string kind;      // "spinlock", "mutex" or "line"
  double value = 0;        // the metric as the variant runs
  double ideal_value = 0;  // with the resource ideal
  double bound = 0;        // ideal_value - value
  std::optional<double> ideal_ci95;
  // What the ideal run still pays for the resource, when anything: a lock
  // whose word's line is still written by the model's other accesses.
  std::string note;
};

struct IdealExplanation {
  std::string scenario;
  std::string variant;
  std::string metric;
  double value = 0;
  std::optional<double> value_ci95;
  std::vector<IdealBound> ideal;  // by |bound|, largest first (ties in the order the models built them)
  int runs = 0;
};

// The resources (lock classes, cache lines) variant `variant` of `file`
// builds, in the order its models build them.
absl::StatusOr<std::vector<sim::Simulator::Resource>> ResourcesOf(const viosim::ScenarioFile& file,
                                                                  const std::string& variant,
                                                                  const std::vector<std::string>& overrides);

// Runs the variant as it is and once per resource made ideal (only `only`
// when it is not empty: InvalidArgument listing the resources when it names
// none of them), on up to `request.jobs` threads; `metric` empty: iops when
// reported, else the first.
absl::StatusOr<IdealExplanation> ExplainIdeal(const viosim::ScenarioFile& file, const std::string& variant,
                                              const std::string& metric, const std::string& only,
                                              const RunRequest& request);

// One resource's bound on `metric` in `variant`: the metric with the
// resources of `resources` made ideal at once, less the metric as it runs.
struct Bound {
  std::vector<std::string> resources;
  double value = 0;
  double ideal_value = 0;
  double bound = 0;
};
absl::StatusOr<Bound> BoundOf(const viosim::ScenarioFile& file, const std::string& variant, const std::string& metric,
                              const std::vector<std::string>& resources, const RunRequest& request);

// Text: a ranked table. JSON: {"scenario", "variant", "metric", "value",
// "ideal": [{"resource", "kind", "metric", "value", "ideal_value", "bound",
// "note"}]}. CSV: rank,resource,kind,metric,value,ideal_value,bound,note.
std::string FormatIdeal(const IdealExplanation& x, Format f);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_IDEAL_H_
