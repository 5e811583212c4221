// The md stacks' shared-line costs: the platform's cache lines
// (platform.cache_lines, homed on the stack's home socket) and the wait
// queue lock word's hand-off scaled by `lock_word_transfers`.
#ifndef VIOSIM_SCENARIOS_STACKS_MD_LINES_H_
#define VIOSIM_SCENARIOS_STACKS_MD_LINES_H_

#include "absl/status/statusor.h"
#include "models/sync/cache_line.h"
#include "models/sync/handoff_costs.h"
#include "scenarios/params.h"
#include "scenarios/scenario.pb.h"

namespace viosim::stacks {

struct MdLineCosts {
  models::LineCosts lines;             // the lines, and their hand-off table
  models::LockHandoffCosts wait_lock;  // the lock word's contended hand-off
};

// `k`: lock word transfers per contended hand-off. InvalidArgument naming
// the platform's field.
absl::StatusOr<MdLineCosts> MdLines(const Params& scenario, int home_socket, double k);

}  // namespace viosim::stacks

#endif  // VIOSIM_SCENARIOS_STACKS_MD_LINES_H_
