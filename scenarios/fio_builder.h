// Runs an fio job file on the stack a scenario describes (platform CPUs and
// host costs, the block stack and device), and returns fio's report.
#ifndef VIOSIM_SCENARIOS_FIO_BUILDER_H_
#define VIOSIM_SCENARIOS_FIO_BUILDER_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "models/fio/job.h"
#include "models/fio/stats.h"
#include "models/fio/workload.h"
#include "scenarios/fio_parser.h"
#include "scenarios/stack.h"
#include "models/cpu/cpu.h"
#include "models/sync/spinlock.h"
#include "scenarios/scenario.pb.h"
#include "sim/time.h"

namespace sim {
class Simulator;
class TraceWriter;
}

namespace viosim {

// What a stack shows beyond fio's report (the virtio_blk stack fills it):
// metrics by name, lock_stat rows, and each CPU's time share per state.
struct StackExtras {
  std::vector<std::pair<std::string, double>> metrics;
  struct Lock {
    std::string name;
    models::LockStat stat;
  };
  std::vector<Lock> locks;
  std::vector<std::string> cpu_states;
  struct CpuShares {
    std::string name;
    std::vector<double> pct;
    double irq_off_pct = 0;
  };
  std::vector<CpuShares> cpus;
  // Which resource bounds the throughput, when the stack classifies it
  // (empty otherwise): a token (see Bound) and the reason in words.
  std::string bound;
  std::string bound_detail;
};

struct FioRunOptions {
  // Overrides workload.fio.target_ci_pct when set; 0 forces the full length.
  std::optional<double> target_ci_pct;
  // Filled when set and the stack has extras.
  StackExtras* extras = nullptr;
  // When set (virtio_blk stack): CPU states and lock holds from
  // `trace_start` for `trace_window` of simulated time go to it.
  sim::TraceWriter* trace = nullptr;
  sim::Time trace_start = sim::Time::Millis(100);
  sim::Time trace_window = sim::Time::Millis(1);
  // Runs the jobs again at the next seed to tell whether the IOPS interval
  // is informative (FioReport::confidence_informative).
  bool replicate = true;
};

// The CPUs of a stack whose scenario leaves platform.cpus unset.
inline constexpr int kDefaultFioCpus = 8;

// The time columns of a CPU table: user, system, irq, softirq, idle as the
// kernel accounts them, then spin (spinlocks) and poll (busy polling), which
// the kernel counts as system or irq time, and for vCPUs exit and guest.
std::vector<std::string> CpuColumns(bool vcpu);
// One CPU's row of that table over its measured window, ending now: the
// columns in integer picoseconds over the window's, within [0, 100].
StackExtras::CpuShares CpuSharesOf(const models::Cpu& c, bool vcpu);

// The extra metric names a stack scenario reports (in order), beyond fio's:
// its registered part's (scenarios/stack.h).
std::vector<std::string> StackMetricNames(const Scenario& stack);

// The scenario's workload.fio.option entries as the job parser applies
// them, each recorded as a read of the path --set names it by
// (workload.fio.OPTION, workload.fio.job.SECTION.OPTION).
std::vector<fio::OptionOverride> JobOptionOverrides(const Params& fio_workload);

// fio's own CPU costs: estimates, overridden by platform.fio.
// per_iocb and per_event are read only when some job submits and reaps
// asynchronously (libaio, io_uring).
absl::StatusOr<fio::EngineCosts> EngineCostsOf(const Params& platform, const models::HostCosts& host,
                                               const fio::JobFile& jobs);

// An fio job file on a scenario's stack: the machine (CPUs and scheduler),
// the registered stack part built on it, and fio's processes. Used by both
// ways of running it: fio's own run rules (RunFio) and the scenario's
// measurement engine (scenarios/builder.cc).
struct FioRig {
  // REQUIRES: `stack` passed the loader's validation and the rules of its
  // stack (checks.h), as after CheckJobsOnStack or, for a scenario with an
  // fio workload, ResolveVariant. InvalidArgument naming the field for a
  // bad stack, platform or job. Every scenario path the build reads is
  // added to `*reads` when given.
  static absl::StatusOr<FioRig> Make(sim::Simulator& sim, const Scenario& stack, const fio::JobFile& jobs,
                                     const fio::WorkloadControl& control, ReadSet* reads = nullptr);
  // Traces [start, start + window) of the run.
  void Trace(sim::TraceWriter& trace, sim::Time start, sim::Time window);
  // The stack's metrics (over the window since its last reset), locks,
  // CPU table and bound.
  void FillExtras(StackExtras& x);

  const StackPart* part = nullptr;
  std::unique_ptr<Machine> machine;
  std::unique_ptr<BuiltStack> stack;
  std::unique_ptr<fio::Workload> workload;
};

// REQUIRES: `stack` passed the loader's validation and, with `jobs`,
// CheckJobsOnStack (checks.h). InvalidArgument for a job the stack cannot
// run (e.g. cpus_allowed naming a CPU the platform lacks), naming the
// option.
absl::StatusOr<fio::FioReport> RunFio(const Scenario& stack, const fio::JobFile& jobs,
                                      const FioRunOptions& options);

// The scenario paths RunFio reads for these jobs on this stack: its run
// control (seed, workload.fio's target and time cap) and what the stack
// and the workload read as they are built (scenarios/params.h).
absl::StatusOr<ReadSet> FioReads(const Scenario& stack, const fio::JobFile& jobs, const FioRunOptions& options);

// The error for a run that stopped making progress (sim::Simulator::stalled()):
// where simulated time stood and the likely cause.
absl::Status StalledError(const sim::Simulator& sim);

}  // namespace viosim

#endif  // VIOSIM_SCENARIOS_FIO_BUILDER_H_
