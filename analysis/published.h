// The reference value of a published cell: the number typed into the
// scenario, or the exact result of a queueing model computed from the
// variant's own resolved parameters.
#ifndef VIOSIM_ANALYSIS_PUBLISHED_H_
#define VIOSIM_ANALYSIS_PUBLISHED_H_

#include "absl/status/statusor.h"
#include "scenarios/scenario.pb.h"

namespace analysis {

// `resolved` is the scenario of the cell's variant (overlay and overrides
// applied). InvalidArgument when the analytic model does not apply to it
// (e.g. a non-exponential hold time), naming the field.
absl::StatusOr<double> ReferenceValue(const viosim::Published& published,
                                      const viosim::Scenario& resolved);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_PUBLISHED_H_
