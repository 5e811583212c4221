// The md stacks' shared-line costs: the table a `line_costs` field names
// and the wait queue lock word's hand-off scaled by `lock_word_transfers`.
#ifndef VIOSIM_SCENARIOS_STACKS_MD_LINES_H_
#define VIOSIM_SCENARIOS_STACKS_MD_LINES_H_

#include <string>

#include "absl/status/statusor.h"
#include "models/sync/handoff_costs.h"

namespace viosim::stacks {

struct MdLineCosts {
  models::LockHandoffCosts lines;      // a line's transfer by distance
  models::LockHandoffCosts wait_lock;  // the lock word's contended hand-off
};

// `table`: "epyc_rome" (models/sync/handoff_costs.cc) or "none" (every
// transfer free); `k`: lock word transfers per contended hand-off; `field`
// ("stack.raid1") names the message in errors.
absl::StatusOr<MdLineCosts> MdLines(const std::string& table, double k, const std::string& field);

}  // namespace viosim::stacks

#endif  // VIOSIM_SCENARIOS_STACKS_MD_LINES_H_
