// Wires a resolved scenario into models, runs it, and collects what the
// reports show. The only place where the protobuf scenario meets the models:
// models know nothing of protobuf, and this file knows nothing of output
// formats.
#ifndef VIOSIM_SCENARIOS_BUILDER_H_
#define VIOSIM_SCENARIOS_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/params.h"
#include "scenarios/scenario.pb.h"
#include "sim/distribution.h"
#include "sim/measurement.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace viosim {

// One lock class's row of /proc/lock_stat; times in microseconds.
struct LockStatRow {
  std::string name;
  uint64_t con_bounces = 0;
  uint64_t contentions = 0;
  double wait_min_us = 0, wait_max_us = 0, wait_total_us = 0, wait_avg_us = 0;
  uint64_t acq_bounces = 0;
  uint64_t acquisitions = 0;
  double hold_min_us = 0, hold_max_us = 0, hold_total_us = 0, hold_avg_us = 0;
};

// One CPU's share of the measured window in each state, in percent.
struct CpuRow {
  std::string name;
  std::vector<double> state_pct;  // indexed like VariantResult::cpu_states
  double irq_off_pct = 0;
};

struct VariantResult {
  std::string scenario;
  std::string variant;
  std::string description;  // what the variant is, from the scenario
  uint64_t seed = 0;
  sim::Time warmup;
  sim::Time duration;  // the measured window as it ran (longer than run.duration under a precision)
  int batches = 0;     // the batches the intervals come from
  // With RunOptions::precision: the target (a fraction), whether every
  // measured interval reached it, and the metrics that did not.
  double precision = 0;
  bool precision_reached = true;
  std::vector<std::string> precision_missed;
  std::vector<sim::MetricEstimate> metrics;
  std::vector<LockStatRow> locks;
  std::vector<std::string> cpu_states;
  std::vector<CpuRow> cpus;
  // Which resource bounds the throughput, when the stack classifies it
  // (StackExtras, scenarios/fio_builder.h); empty otherwise.
  std::string bound;         // "device_bandwidth", "iothread", "vcpu" or "per_io_latency"
  std::string bound_detail;  // in words, with the busy shares behind it
  uint64_t events = 0;     // simulated events, warm-up included
  std::string trace_json;  // empty unless RunOptions::trace
  // The lock classes and cache lines the run's models built, by name and
  // kind ("spinlock", "mutex", "line"): what can be made ideal.
  std::vector<sim::Simulator::Resource> resources;
  // Every scenario path the variant's run control, stack and workload
  // read as they were built (scenarios/params.h).
  ReadSet reads;
};

struct RunOptions {
  bool trace = false;
  // Traced span at the start of the measured window (a whole run would make
  // a trace too large to load).
  sim::Time trace_window = sim::Time::Millis(1);
  // Directory relative paths in the scenario (workload.fio.job_file) are
  // resolved against: the scenario file's own.
  std::string base_dir = ".";
  // Build the stack and the workload, record what they read, and stop:
  // the result has `reads` and no metrics.
  bool build_only = false;
  // Resources (lock classes, cache lines) made ideal in the run, by name
  // (sim::Simulator::set_ideal).
  std::vector<std::string> ideal;
  // Sequential stopping (sim::MeasurementPlan::precision): a fraction, 0
  // off; the run measures at most `max_factor` times run.duration.
  double precision = 0;
  int max_factor = 16;
  std::vector<std::string> precision_metrics;  // the metrics it is asked of; empty: all
};

// REQUIRES: `resolved` passed the loader's validation (units, bounds) and
// the rules that tie its fields together (checks.h), as ResolveVariant's
// result has. Returns InvalidArgument for a scenario the builder cannot wire
// (e.g. no workload), naming the field.
// A run is deterministic: RunScenario keeps the last few results and
// answers a run of the same scenario, seed and options from them. A run
// that seeds no random-number stream (sim::Rng::Seeded) gives the same
// result at every seed, so one that differs from it only in run.seed is
// answered too. Not when tracing or building only. How many runs it
// answered so far, each way:
uint64_t RunsAnsweredFromAnotherSeed();
uint64_t RunsAnsweredAsRepeats();

absl::StatusOr<VariantResult> RunScenario(const viosim::Scenario& resolved,
                                          const std::string& variant,
                                          const RunOptions& options);

// The metrics RunScenario reports for this scenario's workload, in order.
std::vector<std::string> MetricNames(const viosim::Scenario& s);



}  // namespace viosim

#endif  // VIOSIM_SCENARIOS_BUILDER_H_
