#include "scenarios/builder.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "models/cpu/cpu.h"
#include "models/lockbench/lock_bench.h"
#include "models/sync/spinlock.h"
#include "scenarios/fio_parser.h"
#include "scenarios/input_file.h"
#include "models/fio/stats.h"
#include "scenarios/fio_builder.h"
#include "scenarios/stack.h"
#include "scenarios/stacks/vhost_net.h"
#include "scenarios/units.h"
#include "sim/check.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace viosim {
namespace {

const std::vector<std::string>& FioMetrics() {
  static const auto* names = new std::vector<std::string>{
      "iops", "read_iops", "write_iops", "bw_mib_s", "clat_mean_us", "clat_p99_us", "lat_mean_us",
      "usr_cpu_pct", "sys_cpu_pct"};
  return *names;
}

LockStatRow ToRow(const std::string& name, const models::LockStat& s);

// What an I/O costs in CPU time, after the stack's own metrics: on the
// host (bare metal: the machine fio runs on; under a guest: the vCPUs'
// threads, busy or exiting, and the stack's own host CPUs, such as QEMU's
// IOThread), on the guest's vCPUs, and split into user and the rest on the
// CPUs fio runs on. Busy is every CPU state but idle (Cpu::BusyTime).
std::vector<std::string> EfficiencyNames(bool vcpus) {
  std::vector<std::string> n = {"host_cpu_us_per_io", "iops_per_host_cpu_s"};
  if (vcpus) {
    n.push_back("guest_cpu_us_per_io");
    n.push_back("iops_per_guest_cpu_s");
  }
  n.push_back("usr_cpu_us_per_io");
  n.push_back("sys_cpu_us_per_io");
  return n;
}

// The efficiency metrics of EfficiencyNames, in its order. The stack's own
// CPUs (beyond the machine's) are not reset with the window: `*own_base`
// holds their busy seconds at the last reset.
std::vector<sim::RatioMetric> EfficiencyMetrics(const Machine& m, BuiltStack& stack, bool vcpus,
                                                std::function<double()> ios, const double* own_base) {
  auto machine_busy = [&m] {
    double s = 0;
    for (const models::Cpu* c : m.cpus()) s += c->BusyTime().ToSeconds();
    return s;
  };
  auto host_busy = [machine_busy, own = stack.OwnCpus(), own_base, &stack] {
    double s = machine_busy() - *own_base + stack.ServerHostTime().ToSeconds();
    for (const models::Cpu* c : own) s += c->BusyTime().ToSeconds();
    return s;
  };
  std::vector<sim::RatioMetric> out = {{"host_cpu_us_per_io", host_busy, ios, 1e6},
                                       {"iops_per_host_cpu_s", ios, host_busy, 1}};
  if (vcpus) {
    out.push_back({"guest_cpu_us_per_io", machine_busy, ios, 1e6});
    out.push_back({"iops_per_guest_cpu_s", ios, machine_busy, 1});
  }
  out.push_back({"usr_cpu_us_per_io", [&m] { return m.TimeInS(models::CpuTime::kUser); }, ios, 1e6});
  out.push_back({"sys_cpu_us_per_io", [machine_busy, &m] { return machine_busy() - m.TimeInS(models::CpuTime::kUser); },
                 ios, 1e6});
  return out;
}

absl::Status Measure(sim::Simulator& sim, const sim::MeasurementPlan& plan, const RunOptions& options,
                     const std::function<void()>& reset, const std::vector<models::Cpu*>& cpus,
                     const std::vector<sim::RatioMetric>& metrics, VariantResult* out);

// The scenario's fio job file, cut to workload.fio.section when given.
absl::StatusOr<fio::JobFile> JobsOf(const Params& fio_params, const RunOptions& options) {
  const std::string& job = fio_params.Str("job_file");
  if (job.empty()) return absl::InvalidArgumentError("field 'workload.fio.job_file' is required");
  const std::string path = job[0] == '/' ? job : absl::StrCat(options.base_dir, "/", job);
  absl::StatusOr<std::string> text = ReadInputFile(path, "fio job file");
  if (!text.ok()) return text.status();
  absl::StatusOr<fio::JobFile> jobs = fio::ParseJobText(path, *text, std::filesystem::path(path).parent_path().string(),
                                                        JobOptionOverrides(fio_params));
  if (!jobs.ok()) return jobs.status();
  if (const std::string& section = fio_params.Str("section"); !section.empty()) {
    std::vector<fio::JobOptions> keep;
    for (const fio::JobOptions& j : jobs->jobs) {
      if (j.name == section) keep.push_back(j);
    }
    if (keep.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("field 'workload.fio.section': no job section '", section, "' in ", path));
    }
    jobs->jobs = std::move(keep);
  }
  return jobs;
}

// An fio workload on the scenario's stack, under the same measurement
// engine as every workload: fio's processes issue I/O from the start, the
// run is warmed up for run.warmup, then measured for run.duration in
// run.batches batches. Every metric is a ratio of counts over the window
// (IOPS is completions over the window's exact length), with its batch
// means interval; clat_p99_us comes from the window's histogram and has
// none.
absl::StatusOr<VariantResult> RunFioWorkload(const viosim::Scenario& s, const sim::MeasurementPlan& plan,
                                             const RunOptions& options, VariantResult out) {
  absl::StatusOr<fio::JobFile> jobs = JobsOf(Params(s, &out.reads)["workload"]["fio"], options);
  if (!jobs.ok()) return jobs.status();
  sim::Simulator sim;
  sim.set_ideal(options.ideal);
  fio::WorkloadControl control;
  control.seed = s.run().seed();
  absl::StatusOr<FioRig> rig = FioRig::Make(sim, s, *jobs, control, &out.reads);
  if (!rig.ok()) return rig.status();
  if (options.build_only) {
    out.resources = sim.resources();
    return out;
  }
  fio::Workload& w = *rig->workload;
  Machine& m = *rig->machine;
  BuiltStack& stack = *rig->stack;
  if (absl::Status st = w.Start(); !st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("field 'workload.fio': ", st.message()));
  }
  const fio::Workload::WindowCounters& win = w.window();
  const double procs = w.processes();
  auto elapsed = [&m] { return m.ElapsedS(); };
  auto cpu_s = [&m, procs] { return m.ElapsedS() * procs; };
  auto ios = [&win] { return static_cast<double>(win.ios[0] + win.ios[1]); };
  // In the order of FioMetrics(), clat_p99_us left out (added after).
  std::vector<sim::RatioMetric> metrics = {
      {"iops", ios, elapsed, 1},
      {"read_iops", [&win] { return static_cast<double>(win.ios[0]); }, elapsed, 1},
      {"write_iops", [&win] { return static_cast<double>(win.ios[1]); }, elapsed, 1},
      {"bw_mib_s", [&win] { return win.bytes; }, elapsed, 1.0 / (1 << 20)},
      // Little's law over the window (Workload::WindowOpenArea).
      {"clat_mean_us", [&w] { return w.WindowOpenArea(true); }, ios, 1e-3},
      {"lat_mean_us", [&w] { return w.WindowOpenArea(false); }, ios, 1e-3},
      {"usr_cpu_pct", [&w] { return w.WindowCpu(true).ToSeconds(); }, cpu_s, 100},
      {"sys_cpu_pct", [&w] { return w.WindowCpu(false).ToSeconds(); }, cpu_s, 100},
  };
  for (sim::RatioMetric& r : stack.Metrics()) metrics.push_back(std::move(r));
  const std::vector<models::Cpu*> own = stack.OwnCpus();
  double own_base = 0;
  for (sim::RatioMetric& r : EfficiencyMetrics(m, stack, rig->part->vcpus, ios, &own_base)) {
    metrics.push_back(std::move(r));
  }
  auto reset = [&] {
    stack.ResetStats();
    m.ResetStats();
    w.ResetCounters();
    own_base = 0;
    for (const models::Cpu* c : own) own_base += c->BusyTime().ToSeconds();
  };
  std::vector<models::Cpu*> traced = m.cpus();
  for (models::Cpu* c : stack.OwnCpus()) traced.push_back(c);
  if (absl::Status st = Measure(sim, plan, options, reset, traced, metrics, &out); !st.ok()) return st;
  if (!w.messages().empty()) {
    // A job stopped by its rate floor (rate_min, rate_iops_min): its figures
    // are not the workload's.
    return absl::FailedPreconditionError(absl::StrCat("field 'workload.fio': ", w.messages().front(),
                                                      ": the job stopped with fio's EIO"));
  }
  out.metrics.insert(out.metrics.begin() + 5,
                     sim::MetricEstimate{"clat_p99_us", win.clat.Percentile(99) / 1000.0, std::nullopt});
  StackExtras extras;
  rig->FillExtras(extras);
  out.bound = extras.bound;
  out.bound_detail = extras.bound_detail;
  for (const StackExtras::Lock& l : extras.locks) out.locks.push_back(ToRow(l.name, l.stat));
  out.cpu_states = extras.cpu_states;
  for (const StackExtras::CpuShares& c : extras.cpus) out.cpus.push_back(CpuRow{c.name, c.pct, c.irq_off_pct});
  return out;
}

// iperf on the vhost_net stack, under the same measurement engine: the
// guest's streams send from the start; every metric is a ratio of counts
// over the window.
absl::StatusOr<VariantResult> RunIperfWorkload(const viosim::Scenario& s, const sim::MeasurementPlan& plan,
                                               const RunOptions& options, VariantResult out) {
  sim::Simulator sim;
  sim.set_ideal(options.ideal);
  absl::StatusOr<std::unique_ptr<stacks::VhostNetRig>> rig = stacks::BuildVhostNet(sim, Params(s, &out.reads));
  if (!rig.ok()) return rig.status();
  if (options.build_only) {
    out.resources = sim.resources();
    return out;
  }
  stacks::VhostNetRig& r = **rig;
  Machine& m = r.machine();
  r.Start();
  auto reset = [&] {
    r.ResetStats();
    m.ResetStats();
  };
  if (absl::Status st = Measure(sim, plan, options, reset, m.cpus(), r.Metrics(), &out); !st.ok()) return st;
  for (const auto& [name, stat] : r.Locks()) out.locks.push_back(ToRow(name, stat));
  out.cpu_states = CpuColumns(/*vcpu=*/false);
  for (const models::Cpu* c : m.cpus()) {
    const StackExtras::CpuShares shares = CpuSharesOf(*c, /*vcpu=*/false);
    out.cpus.push_back(CpuRow{shares.name, shares.pct, shares.irq_off_pct});
  }
  return out;
}

const std::vector<std::string>& LockBenchMetrics() {
  static const auto* names = new std::vector<std::string>{
      "lock_acquisitions_per_s", "lock_wait_mean_us", "lock_hold_mean_us", "lock_contention_pct",
      "cpu_spin_pct"};
  return *names;
}

LockStatRow ToRow(const std::string& name, const models::LockStat& s) {
  LockStatRow r;
  r.name = name;
  r.con_bounces = s.con_bounces;
  r.contentions = s.contentions;
  r.acq_bounces = s.acq_bounces;
  r.acquisitions = s.acquisitions;
  constexpr double kUs = 1e-6;  // picoseconds to microseconds
  if (s.wait.count() > 0) {
    r.wait_min_us = s.wait.min() * kUs;
    r.wait_max_us = s.wait.max() * kUs;
    r.wait_total_us = s.wait.sum() * kUs;
    r.wait_avg_us = r.wait_total_us / s.wait.count();
  }
  if (s.hold.count() > 0) {
    r.hold_min_us = s.hold.min() * kUs;
    r.hold_max_us = s.hold.max() * kUs;
    r.hold_total_us = s.hold.sum() * kUs;
    r.hold_avg_us = r.hold_total_us / s.hold.count();
  }
  return r;
}

// Closes the CPUs' slices in progress at the end of the traced window. The
// writer stays attached until the run ends, so a lock released later still
// shows its hold up to the window's edge; the writer clips it there.
sim::Task CloseTraceAt(sim::Simulator& sim, sim::Time at, std::vector<models::Cpu*> cpus) {
  co_await sim.Delay(at - sim.Now());
  for (models::Cpu* c : cpus) c->CloseTraceSlice();
}

// Runs `sim` with the plan, tracing the start of the measured window when
// asked, and fills the common parts of `out`. The trace is the window
// [start, start + trace_window) of the measured window, every slice clipped
// to it and the CPUs' slices in progress at its end closed there. An error
// if the run stopped making progress (sim::Simulator::stalled()).
absl::Status Measure(sim::Simulator& sim, const sim::MeasurementPlan& plan, const RunOptions& options,
                     const std::function<void()>& reset, const std::vector<models::Cpu*>& cpus,
                     const std::vector<sim::RatioMetric>& metrics, VariantResult* out) {
  std::unique_ptr<sim::TraceWriter> trace;
  std::function<void()> reset_and_trace = reset;
  const sim::Time from = sim.Now() + plan.warmup;
  const sim::Time to = from + std::min(options.trace_window, plan.duration);
  if (options.trace) {
    trace = std::make_unique<sim::TraceWriter>();
    trace->SetWindow(from, to);
    reset_and_trace = [&] {
      reset();
      trace->SetProcessName(models::Cpu::kTracePid, "CPUs");
      for (models::Cpu* c : cpus) c->NameTraceTrack(*trace);
      sim.set_trace(trace.get());
      sim.OpenTraceSlices();
    };
    // A process closes the traced window, so batch boundaries stay as they
    // are; at the window's very end it runs after the last batch.
    if (to < from + plan.duration) sim.Spawn(CloseTraceAt(sim, to, cpus));
  }
  sim::MeasureOutcome outcome;
  out->metrics = sim::MeasureBatches(sim, plan, reset_and_trace, metrics, &outcome);
  out->duration = outcome.measured;
  out->batches = outcome.batches;
  out->precision = plan.precision;
  out->precision_reached = outcome.reached;
  out->precision_missed = outcome.missed;
  if (trace && to >= from + plan.duration) {
    for (models::Cpu* c : cpus) c->CloseTraceSlice();
  }
  // Holds still in progress when the run ends (the writer clips them).
  sim.CloseTraceSlices();
  sim.set_trace(nullptr);
  out->events = sim.events();
  out->resources = sim.resources();
  if (sim.stalled()) return StalledError(sim);
  if (trace) out->trace_json = trace->Finish();
  return absl::OkStatus();
}

absl::StatusOr<VariantResult> RunLockBench(const viosim::Scenario& s, const sim::MeasurementPlan& plan,
                                           const RunOptions& options, VariantResult out) {
  const Params root(s, &out.reads);
  const Params w = root["workload"]["lockbench"];
  const Params platform = root["platform"];
  models::LockBenchParams p;
  p.threads = static_cast<int>(w.Int("threads"));
  absl::StatusOr<sim::Distribution> think = w.Distribution("think");
  if (!think.ok()) return think.status();
  absl::StatusOr<sim::Distribution> hold = w.Distribution("hold");
  if (!hold.ok()) return hold.status();
  p.think = *think;
  p.hold = *hold;
  absl::StatusOr<sim::Time> handoff = LockHandoff(platform);
  if (!handoff.ok()) return handoff.status();
  p.handoff = *handoff;
  const bool has_cpus = platform.Has("cpus");
  const int cpus_given = has_cpus ? static_cast<int>(platform.Int("cpus")) : 0;
  VIOSIM_CHECK(!has_cpus || cpus_given >= p.threads,
               "each thread has a CPU of its own (the loader's checks refuse fewer CPUs)");

  sim::Simulator sim;
  sim.set_ideal(options.ideal);
  // The machine the scenario describes (its scheduler and topology), one CPU
  // per task unless platform.cpus gives more.
  const int ncpus = has_cpus ? cpus_given : p.threads;
  absl::StatusOr<std::unique_ptr<Machine>> machine = Machine::Make(sim, platform, ncpus, "cpu", models::SchedCosts{});
  if (!machine.ok()) return machine.status();
  models::LockBench bench(sim, p, s.run().seed(), (*machine)->sched(), (*machine)->cpus());
  if (options.build_only) {
    out.resources = sim.resources();
    return out;
  }
  bench.Start();
  models::Spinlock& lock = bench.lock();
  const auto& cpus = bench.cpus();
  const double n = static_cast<double>(cpus.size());
  const sim::Time start = plan.warmup;
  auto elapsed_s = [&sim, start] { return (sim.Now() - start).ToSeconds(); };
  auto acquisitions = [&lock] { return static_cast<double>(lock.stat().acquisitions); };
  auto spin_s = [&cpus] {
    double t = 0;
    for (const auto& c : cpus) t += c->TimeIn(models::CpuTime::kSpin).ToSeconds();
    return t;
  };
  // In the order of LockBenchMetrics().
  std::vector<sim::RatioMetric> metrics = {
      {"lock_acquisitions_per_s", acquisitions, elapsed_s, 1.0},
      // Over every acquisition, uncontended ones waiting zero: the mean
      // queueing delay W of the queueing model. (lock_stat's waittime-avg is
      // over contended acquisitions only; the table shows that one.)
      {"lock_wait_mean_us", [&lock] { return static_cast<double>(lock.stat().wait.sum()); }, acquisitions,
       1e-6},
      {"lock_hold_mean_us", [&lock] { return static_cast<double>(lock.stat().hold.sum()); },
       [&lock] { return static_cast<double>(lock.stat().hold.count()); }, 1e-6},
      {"lock_contention_pct", [&lock] { return static_cast<double>(lock.stat().contentions); }, acquisitions,
       100.0},
      {"cpu_spin_pct", spin_s, [&elapsed_s, n] { return elapsed_s() * n; }, 100.0},
  };
  std::vector<models::Cpu*> cpu_list;
  for (const auto& c : cpus) cpu_list.push_back(&*c);
  absl::Status measured = Measure(sim, plan, options, [&bench, &machine] {
    bench.ResetStats();
    (*machine)->ResetStats();
  }, cpu_list, metrics, &out);
  if (!measured.ok()) return measured;

  out.locks.push_back(ToRow(lock.name(), lock.stat()));
  out.cpu_states = CpuColumns(/*vcpu=*/false);
  for (const auto& c : cpus) {
    const StackExtras::CpuShares shares = CpuSharesOf(*c, /*vcpu=*/false);
    out.cpus.push_back(CpuRow{shares.name, shares.pct, shares.irq_off_pct});
  }
  return out;
}

}  // namespace

std::vector<std::string> MetricNames(const viosim::Scenario& s) {
  switch (s.workload().kind_case()) {
    case viosim::Workload::kLockbench:
      return LockBenchMetrics();
    case viosim::Workload::kIperf:
      return stacks::VhostNetMetricNames();
    case viosim::Workload::kFio: {
      std::vector<std::string> names = FioMetrics();
      for (const std::string& n : StackMetricNames(s)) names.push_back(n);
      absl::StatusOr<const StackPart*> part = StackPartOf(s);
      if (part.ok()) {
        for (const std::string& n : EfficiencyNames((*part)->vcpus)) names.push_back(n);
      }
      return names;
    }
    case viosim::Workload::KIND_NOT_SET:
      break;
  }
  return {};
}

absl::StatusOr<VariantResult> RunScenario(const viosim::Scenario& resolved, const std::string& variant,
                                          const RunOptions& options) {
  VariantResult out;
  out.scenario = resolved.name();
  out.variant = variant;
  // The run control: every workload reads it; the memory budget is read
  // by the checks that resolve the variant.
  const Params run = Params(resolved, &out.reads)["run"];
  out.seed = static_cast<uint64_t>(run.Int("seed"));
  absl::StatusOr<sim::Time> warmup = run.Time("warmup");
  if (!warmup.ok()) return warmup.status();
  absl::StatusOr<sim::Time> duration = run.Time("duration");
  if (!duration.ok()) return duration.status();
  run.Int("max_request_slots");
  sim::MeasurementPlan plan{*warmup, *duration, static_cast<int>(run.Int("batches"))};
  plan.precision = options.precision;
  plan.max_factor = options.max_factor;
  plan.precision_metrics = options.precision_metrics;
  out.warmup = plan.warmup;
  out.duration = plan.duration;
  out.batches = plan.batches;
  switch (resolved.workload().kind_case()) {
    case viosim::Workload::kLockbench:
      return RunLockBench(resolved, plan, options, std::move(out));
    case viosim::Workload::kFio:
      return RunFioWorkload(resolved, plan, options, std::move(out));
    case viosim::Workload::kIperf:
      return RunIperfWorkload(resolved, plan, options, std::move(out));
    case viosim::Workload::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("field 'workload': the scenario has no workload (e.g. lockbench { ... })");
}

}  // namespace viosim
