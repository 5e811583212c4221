// stack.vhost_net: the vhost-wake case's network stack (models/vhost,
// models/net) with an iperf workload. Not a block stack, so not a
// StackPart: the builder runs it under the same measurement engine through
// this rig.
#ifndef VIOSIM_SCENARIOS_STACKS_VHOST_NET_H_
#define VIOSIM_SCENARIOS_STACKS_VHOST_NET_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "models/sync/lock_stat.h"
#include "scenarios/scenario.pb.h"
#include "scenarios/stack.h"
#include "sim/measurement.h"
#include "sim/simulator.h"

namespace viosim::stacks {

class VhostNetRig {
 public:
  virtual ~VhostNetRig() = default;
  // Starts the guest, the worker and the streams.
  virtual void Start() = 0;
  virtual Machine& machine() = 0;
  // In the order of VhostNetMetricNames().
  virtual std::vector<sim::RatioMetric> Metrics() = 0;
  virtual std::vector<std::pair<std::string, models::LockStat>> Locks() = 0;
  virtual void ResetStats() = 0;
};

std::vector<std::string> VhostNetMetricNames();

// REQUIRES: `s` is resolved and validated, with an iperf workload, and
// passed the rules of its stack (checks.h). InvalidArgument naming the
// field for a missing or bad one.
absl::StatusOr<std::unique_ptr<VhostNetRig>> BuildVhostNet(sim::Simulator& sim, const Params& s);

}  // namespace viosim::stacks

#endif  // VIOSIM_SCENARIOS_STACKS_VHOST_NET_H_
