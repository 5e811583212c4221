// Runs an fio job file on the stack a scenario describes (platform CPUs and
// host costs, the block stack and device), and returns fio's report.
#ifndef VIOSIM_SCENARIOS_FIO_BUILDER_H_
#define VIOSIM_SCENARIOS_FIO_BUILDER_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "models/fio/job.h"
#include "models/fio/stats.h"
#include "models/sync/spinlock.h"
#include "scenarios/scenario.pb.h"
#include "sim/time.h"

namespace sim {
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
};

// The CPUs of a stack whose scenario leaves platform.cpus unset.
inline constexpr int kDefaultFioCpus = 8;

// The extra metric names a stack scenario reports (in order), beyond fio's.
std::vector<std::string> StackMetricNames(const Scenario& stack);

// REQUIRES: `stack` passed the loader's validation. InvalidArgument for an
// unknown profile name or a job the stack cannot run (e.g. cpus_allowed
// naming a CPU the platform lacks), naming the field or option.
absl::StatusOr<fio::FioReport> RunFio(const Scenario& stack, const fio::JobFile& jobs,
                                      const FioRunOptions& options);

}  // namespace viosim

#endif  // VIOSIM_SCENARIOS_FIO_BUILDER_H_
