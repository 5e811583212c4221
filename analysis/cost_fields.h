// The costed fields of a resolved scenario: every number that carries a
// Source (measured, derived, estimated, fitted, defined), as a list that
// `viosim explain` (elasticities) and prediction bands iterate over.
//
// Which fields are costed, by the rules of scenarios/scenario.proto:
//   - a message with a field `source` of type viosim.Source (a Cost, a
//     Distribution): every scalar set under it, outside `source`, that is a
//     duration, an integer or a real number: a Cost's `value`, a
//     Distribution's parameters (`exponential.mean`, `uniform.low` and
//     `high`, each `empirical.point[i].value`, ...);
//   - a Source field named `X_source`: the set scalar siblings named `X`,
//     `X_*` or `*_X` (`bandwidth_source` covers `read_bandwidth` and
//     `write_bandwidth`; `link_rate_source` covers `link_rate_bps`).
// Each field appears once, in the order of the message's field numbers
// (depth first), so the list is the same for the same scenario.
//
// This API is kept small and stable: other analyses build on it.
#ifndef VIOSIM_ANALYSIS_COST_FIELDS_H_
#define VIOSIM_ANALYSIS_COST_FIELDS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/scenario.pb.h"
#include "sim/time.h"

namespace analysis {

struct CostField {
  enum class Value { kDuration, kInteger, kReal };

  // The field as `--set` (viosim::ApplyOverride) takes it, e.g.
  // "platform.kvm.mmio_exit_user.value" or
  // "workload.lockbench.hold.exponential.mean".
  std::string path;
  // The Source that covers it, as a --set path (e.g.
  // "platform.kvm.mmio_exit_user.source"), its kind and its ref.
  std::string source_path;
  viosim::Source::Kind kind = viosim::Source::KIND_UNSPECIFIED;
  std::string ref;
  // The current value: `duration` for kDuration, `number` otherwise (an
  // integer field's value converted exactly while it fits in a double).
  Value value = Value::kDuration;
  sim::Time duration;
  double number = 0;
};

// Every costed field of `resolved` (a scenario as viosim::ResolveVariant
// returns it; variants, published cells and the matrix are not looked at).
// REQUIRES: `resolved` passed the loader's unit checks (its durations parse).
std::vector<CostField> CostFields(const viosim::Scenario& resolved);

// The lower-case name of a source kind as files and reports write it:
// "measured", "derived", "fitted", "defined", "estimated", "unspecified".
std::string SourceKindName(viosim::Source::Kind kind);

// The `--set` assignment "PATH=VALUE" that puts `field` at `factor` times
// its current value: a duration rounded to the nearest picosecond and
// written in ps, an integer rounded to the nearest integer, a real written
// so that it reads back exactly. Pass the result to RunRequest::overrides
// or viosim::ResolveVariant, which check it against the field's bounds.
// Returns InvalidArgument for a factor that is negative or not finite, or
// a result that does not fit the field's type.
absl::StatusOr<std::string> ScaledAssignment(const CostField& field, double factor);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_COST_FIELDS_H_
