// Stacks built from registered parts.
//
// A scenario's `stack` names one block stack by which field of its `device`
// oneof is set (nvme, virtio_blk, virtio_blk_mq). Each is a registered part
// (a StackPart in the table of stack.cc): its builder reads the scenario's
// costs, wires the models on a Machine and returns one BuiltStack that owns
// them and says what it measures: its metrics as (name, numerator,
// denominator) ratios of counts since its last reset, its lock_stat rows,
// whether its CPUs are vCPUs, and what bounds its throughput. The workload
// (fio's engines) runs on the BuiltStack's block interface, and one
// measurement engine (sim/measurement.h) turns the ratios into values with
// intervals; nothing about a stack is written twice.
//
// Adding a stack: a builder in scenarios/stacks/, a field in Stack's oneof,
// a row in StackParts().
#ifndef VIOSIM_SCENARIOS_STACK_H_
#define VIOSIM_SCENARIOS_STACK_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "models/block/block_stack.h"
#include "models/block/host_costs.h"
#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "models/cpu/sched.h"
#include "models/sync/spinlock.h"
#include "models/sync/cache_line.h"
#include "scenarios/params.h"
#include "scenarios/scenario.pb.h"
#include "sim/measurement.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace viosim {

// The CPUs of one simulated machine (or guest) and the scheduler that runs
// its tasks, as the scenario's platform describes them.
class Machine {
 public:
  // `n` CPUs named prefix0.., placed by platform.topology, on the
  // scheduler platform.scheduler names. InvalidArgument for an unknown
  // scheduler or a topology that does not divide the CPUs.
  // `platform` reads the scenario's platform message. platform.topology
  // is read when the scheduler balances over it ("fair") or `placed` says
  // the caller's costs depend on where CPUs sit; else every CPU is a core
  // of one socket and one LLC.
  static absl::StatusOr<std::unique_ptr<Machine>> Make(sim::Simulator& sim, const Params& platform, int n,
                                                       const std::string& prefix, const models::SchedCosts& costs,
                                                       bool placed = false);

  sim::Simulator& sim() const { return *sim_; }
  models::Scheduler& sched() const { return *sched_; }
  const std::vector<models::Cpu*>& cpus() const { return ptrs_; }
  int ncpus() const { return static_cast<int>(ptrs_.size()); }

  // Restarts every CPU's time accounting and the window.
  void ResetStats();
  // Seconds since the last ResetStats (the measured window so far).
  double ElapsedS() const { return Elapsed().ToSeconds(); }
  sim::Time Elapsed() const { return sim_->Now() - window_start_; }
  // Seconds every CPU spent in `t` since the last reset.
  double TimeInS(models::CpuTime t) const;

 private:
  explicit Machine(sim::Simulator& sim) : sim_(&sim) {}
  sim::Simulator* sim_;
  std::unique_ptr<models::Scheduler> sched_;
  std::vector<std::unique_ptr<models::Cpu>> cpus_;
  std::vector<models::Cpu*> ptrs_;
  sim::Time window_start_;
};

// A resource is saturated, and so bounds the throughput, at this busy
// share of the measured window or more.
inline constexpr double kSaturatedPct = 95;

// Busy shares (percent of the measured window) of the resources that can
// bound a run's throughput, from the simulated counters.
struct BusyPct {
  double device_bandwidth = 0;  // the device's data-transfer (bandwidth) server
  double iothread = 0;          // the QEMU IOThread
  double vcpu_work = 0;         // the busiest vCPU, its polling left out
  double vcpu_polling = 0;      // that vCPU's share spent polling
};

// The classification of a run: `resource` is "device_bandwidth",
// "iothread" or "vcpu" for the busiest resource when it is saturated, else
// "per_io_latency" (the synchronous jobs wait on each I/O's latency);
// `detail` says it in words with the shares behind it, e.g. "device
// bandwidth (device bandwidth busy 99.98%)". A vCPU that is busy only
// because it polls does not bound the throughput: it stays per-I/O
// latency, "vCPUs busy polling".
struct Bound {
  std::string resource;
  std::string detail;
};
Bound ClassifyBound(const BusyPct& busy);

// A built stack: the models of one part, wired on a Machine.
class BuiltStack {
 public:
  virtual ~BuiltStack() = default;
  // The block interface the workload submits to.
  virtual models::BlockStack& block() = 0;
  // The stack's own metrics, in the order of its part's metric_names.
  virtual std::vector<sim::RatioMetric> Metrics() = 0;
  // Its locks as lock_stat rows: (class name, counters since the reset).
  virtual std::vector<std::pair<std::string, models::LockStat>> Locks() = 0;
  // Restarts its counters (the block stack's, the device's, its locks').
  virtual void ResetStats() = 0;
  // What bounds the throughput over the window since the last reset, when
  // the stack can tell.
  virtual std::optional<Bound> BoundNow() { return std::nullopt; }
  // CPUs of its own beside the Machine's (a host's), for the trace; their
  // ids follow the Machine's so that every CPU has a track of its own.
  virtual std::vector<models::Cpu*> OwnCpus() { return {}; }
  // Host CPU time since the last ResetStats spent by threads the stack
  // models as servers rather than tasks on a CPU (QEMU's IOThread in the
  // blk-mq polling case), for the efficiency metrics.
  virtual sim::Time ServerHostTime() { return sim::Time::Zero(); }
};

struct StackPart {
  const char* name;     // the field of Stack's `device` oneof
  const char* summary;  // one line for `viosim list`
  bool vcpus;           // its CPUs are a guest's vCPUs (exit and guest time)
  // The stack's metric names, in order (the same list Metrics() returns).
  std::vector<std::string> (*metric_names)();
  // Reads its parameters through `s` (the scenario's root), so that every
  // path it reads is recorded (scenarios/params.h).
  absl::StatusOr<std::unique_ptr<BuiltStack>> (*build)(const Params& s, Machine& m, const models::HostCosts& host);
  // It charges the host's block and driver steps (HostCostUse::kHostBlock).
  bool host_block = false;
  // Its costs depend on where CPUs sit (cache lines moved by distance), so
  // the machine reads platform.topology whatever the scheduler.
  bool cpu_places = false;
  // The Linux its fio jobs run on (the guest's under a VM), major * 100 +
  // minor, e.g. 315 for 3.15: an engine that kernel lacks is refused.
  // 0: not said.
  int linux_version = 0;
};

// Every registered part, in the order of the oneof's fields.
absl::Span<const StackPart> StackParts();
// The part the scenario's stack names; InvalidArgument naming 'stack' when
// none is set.
absl::StatusOr<const StackPart*> StackPartOf(const Scenario& s);

// ---- Reading costs from a scenario (shared by the builders) ----

models::SourceKind KindOf(const Source& s);
// The platform's host costs: the named profile, with the scenario's
// overrides. REQUIRES: platform.host_profile names a known profile (the
// loader's checks, checks.h, refuse others). InvalidArgument naming the
// field for a bad override.
// `uses` says which of them the caller charges (HostCostUse bits): only
// those are read, the others keep the profile's values.
enum HostCostUse : unsigned {
  kHostSyscall = 1,  // syscall: fio's engines
  kHostSched = 2,    // context_switch, try_to_wake_up(_fast), wakeup_latency: the scheduler
  kHostBlock = 4,    // blk_mq_submit_bio .. poll_reap: a bare-metal blk-mq and NVMe driver
};
absl::StatusOr<models::HostCosts> HostCostsOf(const Params& platform, unsigned uses);
// The Costs of `p` that the scenario must give, each read into its
// Param: InvalidArgument "field 'P' is required" at the first missing.
using CostSlot = std::pair<const char*, models::Param<sim::Time>*>;
absl::Status RequiredCosts(const Params& p, absl::Span<const CostSlot> slots);
// A placement switch (viosim.Placement) of a site that takes the two values
// `site` lists, {the kernel's before, the patch's}: whether it holds the
// second. InvalidArgument naming the field for a value the site lacks.
absl::StatusOr<bool> PatchedPlacement(const Params& p, absl::string_view field, std::pair<Placement, Placement> site);
// platform.cache_lines: the preset table with the scenario's per-distance
// overrides, the service ratio, the arbitration; lines homed on
// `home_socket`. InvalidArgument naming the field.
// `run` is the scenario's run control: "random" arbitration draws from its
// seed.
absl::StatusOr<models::LineCosts> LineCostsOf(const Params& platform, const Params& run, int home_socket);
// platform.lock_handoff, zero when unset.
absl::StatusOr<sim::Time> LockHandoff(const Params& platform);

}  // namespace viosim

#endif  // VIOSIM_SCENARIOS_STACK_H_
