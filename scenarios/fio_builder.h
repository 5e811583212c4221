// Runs an fio job file on the stack a scenario describes (platform CPUs and
// host costs, the block stack and device), and returns fio's report.
#ifndef VIOSIM_SCENARIOS_FIO_BUILDER_H_
#define VIOSIM_SCENARIOS_FIO_BUILDER_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "models/fio/job.h"
#include "models/fio/stats.h"
#include "scenarios/scenario.pb.h"

namespace viosim {

struct FioRunOptions {
  // Overrides workload.fio.target_ci_pct when set; 0 forces the full length.
  std::optional<double> target_ci_pct;
};

// REQUIRES: `stack` passed the loader's validation. InvalidArgument for an
// unknown profile name or a job the stack cannot run (e.g. cpus_allowed
// naming a CPU the platform lacks), naming the field or option.
absl::StatusOr<fio::FioReport> RunFio(const Scenario& stack, const fio::JobFile& jobs,
                                      const FioRunOptions& options);

}  // namespace viosim

#endif  // VIOSIM_SCENARIOS_FIO_BUILDER_H_
