// Stacks built from registered parts.
//
// Every scenario runs one registered part (a StackPart in the table of
// stack.cc). A block stack is named by which field of its stack's
// `device` oneof is set (nvme, virtio_blk, virtio_blk_mq, raid10, raid1)
// and carries fio: its builder reads the scenario's costs, wires the
// models on a Machine and returns one BuiltStack that owns them and says
// what it measures: its metrics as (name, numerator, denominator) ratios
// of counts since its last reset, its lock_stat rows, whether its CPUs are
// vCPUs, and what bounds its throughput. The workload (fio's engines) runs
// on the BuiltStack's block interface. A part that carries a workload of
// its own (vhost_net, named by the stack, with iperf; lockbench, named by
// the workload, with no stack) builds its machine and workload together
// as one BuiltRun. Each part declares its metrics once (MetricDecl), and
// one measurement engine (sim/measurement.h) turns the ratios into values
// with intervals; nothing about a stack is written twice.
//
// Adding a stack: a builder in scenarios/stacks/, a field in Stack's oneof,
// a row in StackParts().
#ifndef VIOSIM_SCENARIOS_STACK_H_
#define VIOSIM_SCENARIOS_STACK_H_

#include <functional>
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

// ---- Metrics, declared once ----

// One metric of a built stack (or run) of type T: its name and, as
// functions of T, the numerator and denominator of the ratio it is, counts
// since T's last reset (value = scale * numerator / denominator). A part
// declares its metrics once, as one list of these (T::Declared()): its
// metric_names and T's Metrics() both come from that list, so a name is
// written in one place and a built stack reports the names its part
// declares, in order. A metric with no numerator is not a ratio (fio's
// clat_p99_us, read from the window's histogram after the run): it has a
// name and nothing to bind.
template <typename T>
struct MetricDecl {
  std::string name;
  std::function<double(T&)> numerator;
  std::function<double(T&)> denominator;
  double scale = 1;
};
template <typename T>
using MetricDecls = std::vector<MetricDecl<T>>;

// The names of `decls`, in order.
template <typename T>
std::vector<std::string> NamesOf(const MetricDecls<T>& decls) {
  std::vector<std::string> names;
  for (const MetricDecl<T>& d : decls) names.push_back(d.name);
  return names;
}

// The names T declares (T::Declared()): a part's metric_names, known
// without building anything.
template <typename T>
std::vector<std::string> DeclaredNames() {
  return NamesOf(T::Declared());
}

// The ratios `decls` declare, bound to `built` (which must outlive them),
// in order; those with no numerator are left out.
template <typename T>
std::vector<sim::RatioMetric> BindMetrics(const MetricDecls<T>& decls, T& built) {
  std::vector<sim::RatioMetric> out;
  for (const MetricDecl<T>& d : decls) {
    if (!d.numerator) continue;
    out.push_back({d.name, [&built, f = d.numerator] { return f(built); },
                   [&built, f = d.denominator] { return f(built); }, d.scale});
  }
  return out;
}

// Appends metrics declared for B, a base of T (metrics that several stacks
// share), to T's.
template <typename T, typename B>
void AppendMetrics(MetricDecls<T>& to, const MetricDecls<B>& from) {
  for (const MetricDecl<B>& d : from) to.push_back({d.name, d.numerator, d.denominator, d.scale});
}

// ---- Parts ----

// A built block stack: the models of one part, wired on a Machine.
class BuiltStack {
 public:
  virtual ~BuiltStack() = default;
  // The block interface the workload submits to.
  virtual models::BlockStack& block() = 0;
  // The stack's own metrics, in the order of its part's metric_names
  // (BindMetrics of its declarations).
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

// A built part that carries its own workload (iperf on vhost_net,
// lockbench) with the machine it runs on: the builder starts it and
// measures it under the same engine as fio (scenarios/builder.cc).
class BuiltRun {
 public:
  virtual ~BuiltRun() = default;
  // Starts its workload.
  virtual void Start() = 0;
  // The CPUs the workload runs on, traced and shown in the CPU table.
  virtual std::vector<models::Cpu*> Cpus() = 0;
  // Its metrics, in the order of its part's metric_names.
  virtual std::vector<sim::RatioMetric> Metrics() = 0;
  // Its locks as lock_stat rows: (class name, counters since the reset).
  virtual std::vector<std::pair<std::string, models::LockStat>> Locks() = 0;
  // Restarts its counters, then its machine's.
  virtual void ResetStats() = 0;
};

struct StackPart {
  // The field of Stack's `device` oneof that names it; for a part that
  // needs no stack (`on_stack` false: lockbench), the field of Workload's
  // `kind` oneof it carries.
  const char* name;
  const char* summary;  // one line for `viosim list`
  bool vcpus;           // its CPUs are a guest's vCPUs (exit and guest time)
  // Its metric names, in order: the ones its built stack or run declares
  // (DeclaredNames), for a block stack beyond fio's.
  std::vector<std::string> (*metric_names)();
  // A block stack, which carries fio: reads its parameters through `s`
  // (the scenario's root), so that every path it reads is recorded
  // (scenarios/params.h), and builds on the machine fio runs on. Null for a
  // part that carries its own workload (`build_run`).
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
  // The workload it carries, a field of Workload's `kind` oneof: fio for a
  // block stack; any other the part carries itself (`build_run`).
  Workload::KindCase workload = Workload::kFio;
  // A part that carries its own workload: reads its parameters through `s`
  // as `build` does and builds the workload with its machine on `sim`.
  absl::StatusOr<std::unique_ptr<BuiltRun>> (*build_run)(sim::Simulator& sim, const Params& s) = nullptr;
  // The scenario's stack names it (a field of Stack's `device` oneof).
  bool on_stack = true;
  // What sort of stack it is, as a refusal to run fio on it says ("a
  // network stack, which carries workload.iperf").
  const char* stack_kind = "block";
};

// Every registered part, in the order `viosim list` shows them.
absl::Span<const StackPart> StackParts();
// The block part the scenario's stack names, for fio; InvalidArgument
// naming 'stack' when none is set, or naming the field when the part it
// names carries a workload of its own.
absl::StatusOr<const StackPart*> StackPartOf(const Scenario& s);
// The workload the scenario sets (the field of Workload's `kind` oneof);
// KIND_NOT_SET for a stack alone (one for `viosim fio --stack`).
Workload::KindCase WorkloadOf(const Scenario& s);
// The part that carries workload `w` itself (its build_run): vhost_net for
// iperf, lockbench for lockbench. nullptr for fio, which runs on the block
// part the scenario's stack names (StackPartOf), and for KIND_NOT_SET.
const StackPart* OwnWorkloadPart(Workload::KindCase w);

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
