#include "scenarios/builder.h"

#include <algorithm>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/cpu/cpu.h"
#include "models/sync/spinlock.h"
#include "scenarios/fio_parser.h"
#include "scenarios/input_file.h"
#include "models/fio/stats.h"
#include "scenarios/fio_builder.h"
#include "scenarios/stack.h"
#include "scenarios/units.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace viosim {
namespace {

// What fio's metrics and the efficiency metrics read of a run: the
// machine fio runs on, fio's workload (its processes counted once it has
// started), the stack, and the stack's own CPUs (beyond the machine's),
// which are not reset with the window: `own_base` holds their busy seconds
// at the last reset.
struct FioCounts {
  Machine* machine;
  fio::Workload* workload;
  BuiltStack* stack;
  std::vector<models::Cpu*> own;
  double processes = 0;
  double own_base = 0;
};

// The I/Os fio completed in the window.
double FioIos(FioCounts& f) {
  const fio::Workload::WindowCounters& win = f.workload->window();
  return static_cast<double>(win.ios[0] + win.ios[1]);
}

// fio's 99th percentile completion latency, read from the window's
// histogram after the run: not a ratio, so it has no interval.
constexpr char kClatP99[] = "clat_p99_us";

// fio's metrics, in the order reported. Each is a ratio of counts over the
// window (IOPS is completions over the window's exact length) but
// clat_p99_us.
MetricDecls<FioCounts> FioMetrics() {
  auto elapsed = [](FioCounts& f) { return f.machine->ElapsedS(); };
  auto cpu_s = [](FioCounts& f) { return f.machine->ElapsedS() * f.processes; };
  return {
      {"iops", FioIos, elapsed, 1},
      {"read_iops", [](FioCounts& f) { return static_cast<double>(f.workload->window().ios[0]); }, elapsed, 1},
      {"write_iops", [](FioCounts& f) { return static_cast<double>(f.workload->window().ios[1]); }, elapsed, 1},
      {"bw_mib_s", [](FioCounts& f) { return f.workload->window().bytes; }, elapsed, 1.0 / (1 << 20)},
      // Little's law over the window (Workload::WindowOpenArea).
      {"clat_mean_us", [](FioCounts& f) { return f.workload->WindowOpenArea(true); }, FioIos, 1e-3},
      {kClatP99, nullptr, nullptr},
      {"lat_mean_us", [](FioCounts& f) { return f.workload->WindowOpenArea(false); }, FioIos, 1e-3},
      {"usr_cpu_pct", [](FioCounts& f) { return f.workload->WindowCpu(true).ToSeconds(); }, cpu_s, 100},
      {"sys_cpu_pct", [](FioCounts& f) { return f.workload->WindowCpu(false).ToSeconds(); }, cpu_s, 100},
  };
}

LockStatRow ToRow(const std::string& name, const models::LockStat& s);

// What an I/O costs in CPU time, after the stack's own metrics: on the
// host (bare metal: the machine fio runs on; under a guest: the vCPUs'
// threads, busy or exiting, and the stack's own host CPUs, such as QEMU's
// IOThread, and the time of threads it models as servers), on the guest's
// vCPUs, and split into user and the rest on the CPUs fio runs on. Busy is
// every CPU state but idle (Cpu::BusyTime).
MetricDecls<FioCounts> EfficiencyMetrics(bool vcpus) {
  auto machine_busy = [](FioCounts& f) {
    double s = 0;
    for (const models::Cpu* c : f.machine->cpus()) s += c->BusyTime().ToSeconds();
    return s;
  };
  auto host_busy = [machine_busy](FioCounts& f) {
    double s = machine_busy(f) - f.own_base + f.stack->ServerHostTime().ToSeconds();
    for (const models::Cpu* c : f.own) s += c->BusyTime().ToSeconds();
    return s;
  };
  MetricDecls<FioCounts> out = {{"host_cpu_us_per_io", host_busy, FioIos, 1e6},
                                {"iops_per_host_cpu_s", FioIos, host_busy, 1}};
  if (vcpus) {
    out.push_back({"guest_cpu_us_per_io", machine_busy, FioIos, 1e6});
    out.push_back({"iops_per_guest_cpu_s", FioIos, machine_busy, 1});
  }
  out.push_back({"usr_cpu_us_per_io", [](FioCounts& f) { return f.machine->TimeInS(models::CpuTime::kUser); }, FioIos,
                 1e6});
  out.push_back({"sys_cpu_us_per_io",
                 [machine_busy](FioCounts& f) { return machine_busy(f) - f.machine->TimeInS(models::CpuTime::kUser); },
                 FioIos, 1e6});
  return out;
}

absl::Status Measure(sim::Simulator& sim, const sim::MeasurementPlan& plan, const RunOptions& options,
                     const std::function<void()>& reset, const std::vector<models::Cpu*>& cpus,
                     const std::vector<sim::RatioMetric>& metrics, VariantResult* out);

// Where workload.fio.job_file `job` is: as given when absolute, else under
// the scenario's directory.
std::string JobFilePath(const std::string& job, const RunOptions& options) {
  return job[0] == '/' ? job : absl::StrCat(options.base_dir, "/", job);
}

// The scenario's fio job file, cut to workload.fio.section when given.
absl::StatusOr<fio::JobFile> JobsOf(const Params& fio_params, const RunOptions& options) {
  const std::string& job = fio_params.Str("job_file");
  if (job.empty()) return absl::InvalidArgumentError("field 'workload.fio.job_file' is required");
  const std::string path = JobFilePath(job, options);
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
  FioCounts counts{&m, &w, &stack, stack.OwnCpus(), static_cast<double>(w.processes())};
  const MetricDecls<FioCounts> fio_metrics = FioMetrics();
  std::vector<sim::RatioMetric> metrics = BindMetrics(fio_metrics, counts);
  for (sim::RatioMetric& r : stack.Metrics()) metrics.push_back(std::move(r));
  for (sim::RatioMetric& r : BindMetrics(EfficiencyMetrics(rig->part->vcpus), counts)) metrics.push_back(std::move(r));
  auto reset = [&] {
    stack.ResetStats();
    m.ResetStats();
    w.ResetCounters();
    counts.own_base = 0;
    for (const models::Cpu* c : counts.own) counts.own_base += c->BusyTime().ToSeconds();
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
  const std::vector<std::string> fio_names = NamesOf(fio_metrics);
  const auto p99 = std::find(fio_names.begin(), fio_names.end(), kClatP99) - fio_names.begin();
  out.metrics.insert(out.metrics.begin() + p99,
                     sim::MetricEstimate{kClatP99, w.window().clat.Percentile(99) / 1000.0, std::nullopt});
  StackExtras extras;
  rig->FillExtras(extras);
  out.bound = extras.bound;
  out.bound_detail = extras.bound_detail;
  for (const StackExtras::Lock& l : extras.locks) out.locks.push_back(ToRow(l.name, l.stat));
  out.cpu_states = extras.cpu_states;
  for (const StackExtras::CpuShares& c : extras.cpus) out.cpus.push_back(CpuRow{c.name, c.pct, c.irq_off_pct});
  return out;
}

// A part that carries its own workload (iperf on vhost_net, lockbench),
// under the same measurement engine: its workload runs from the start;
// every metric is a ratio of counts over the window.
absl::StatusOr<VariantResult> RunOwnWorkload(const StackPart& part, const viosim::Scenario& s,
                                             const sim::MeasurementPlan& plan, const RunOptions& options,
                                             VariantResult out) {
  sim::Simulator sim;
  sim.set_ideal(options.ideal);
  absl::StatusOr<std::unique_ptr<BuiltRun>> built = part.build_run(sim, Params(s, &out.reads));
  if (!built.ok()) return built.status();
  if (options.build_only) {
    out.resources = sim.resources();
    return out;
  }
  BuiltRun& r = **built;
  r.Start();
  const std::vector<models::Cpu*> cpus = r.Cpus();
  if (absl::Status st = Measure(sim, plan, options, [&r] { r.ResetStats(); }, cpus, r.Metrics(), &out); !st.ok()) {
    return st;
  }
  for (const auto& [name, stat] : r.Locks()) out.locks.push_back(ToRow(name, stat));
  out.cpu_states = CpuColumns(part.vcpus);
  for (const models::Cpu* c : cpus) {
    const StackExtras::CpuShares shares = CpuSharesOf(*c, part.vcpus);
    out.cpus.push_back(CpuRow{shares.name, shares.pct, shares.irq_off_pct});
  }
  return out;
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

}  // namespace

std::vector<std::string> MetricNames(const viosim::Scenario& s) {
  const Workload::KindCase workload = WorkloadOf(s);
  if (workload == Workload::KIND_NOT_SET) return {};
  if (const StackPart* own = OwnWorkloadPart(workload)) return own->metric_names();
  // fio on the block stack the scenario names: fio's metrics, the stack's,
  // then the efficiency metrics.
  std::vector<std::string> names = NamesOf(FioMetrics());
  for (const std::string& n : StackMetricNames(s)) names.push_back(n);
  absl::StatusOr<const StackPart*> part = StackPartOf(s);
  if (part.ok()) {
    for (const std::string& n : NamesOf(EfficiencyMetrics((*part)->vcpus))) names.push_back(n);
  }
  return names;
}

namespace {

// Results of the last runs, by what they ran. A run is deterministic: one
// of the same scenario, seed and options is answered from here (a
// calibration's second pass that repeats its first, a perturbation that
// rounds back to the value, an alternative's nominal point). A run that
// seeded no random-number stream (sim::Rng::Seeded) gives the same result
// at every seed, so it is kept without its seed, and a run that differs
// from it only in run.seed -- reproduce's replicate at the next seed -- is
// answered too. The last few only.
class KeptRuns {
 public:
  static KeptRuns& Get() {
    static KeptRuns* runs = new KeptRuns;
    return *runs;
  }
  // The result kept under `unseeded` (any seed), else under `seeded`.
  std::optional<VariantResult> Find(const std::string& unseeded, const std::string& seeded) {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [k, r] : runs_) {
      if (k == unseeded) {
        ++from_another_seed_;
        return r;
      }
    }
    for (const auto& [k, r] : runs_) {
      if (k == seeded) {
        ++repeated_;
        return r;
      }
    }
    return std::nullopt;
  }
  uint64_t from_another_seed() {
    std::lock_guard<std::mutex> l(mu_);
    return from_another_seed_;
  }
  uint64_t repeated() {
    std::lock_guard<std::mutex> l(mu_);
    return repeated_;
  }
  void Add(std::string key, const VariantResult& r) {
    std::lock_guard<std::mutex> l(mu_);
    runs_.emplace_back(std::move(key), r);
    if (runs_.size() > kKept) runs_.pop_front();
  }

 private:
  static constexpr size_t kKept = 128;
  std::mutex mu_;
  std::deque<std::pair<std::string, VariantResult>> runs_;
  uint64_t from_another_seed_ = 0;
  uint64_t repeated_ = 0;
};

// The scenario without its seed, the variant and the options, as bytes;
// empty when the run is not to be kept.
std::string UnseededKey(const viosim::Scenario& resolved, const std::string& variant, const RunOptions& o) {
  viosim::Scenario s = resolved;
  s.mutable_run()->clear_seed();
  std::string key;
  {
    google::protobuf::io::StringOutputStream stream(&key);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    s.SerializeToCodedStream(&coded);
  }
  absl::StrAppend(&key, "|", variant, "|", o.trace_window.ps(), "|", o.base_dir, "|", absl::StrFormat("%a", o.precision),
                  "|", o.max_factor);
  for (const std::string& i : o.ideal) absl::StrAppend(&key, "|i:", i);
  for (const std::string& m : o.precision_metrics) absl::StrAppend(&key, "|m:", m);
  // The fio job file's text: a file rewritten between two runs in one
  // process is another workload under the same name. One that includes
  // others or reads the environment (${VAR}), or cannot be read, is not
  // kept (empty key).
  if (const std::string& job = resolved.workload().fio().job_file(); !job.empty()) {
    absl::StatusOr<std::string> text = ReadInputFile(JobFilePath(job, o), "fio job file");
    if (!text.ok() || absl::StrContains(*text, "include") || absl::StrContains(*text, "${")) return "";
    absl::StrAppend(&key, "|job:", *text);
  }
  return key;
}

absl::StatusOr<VariantResult> RunScenarioOnce(const viosim::Scenario& resolved, const std::string& variant,
                                              const RunOptions& options);

}  // namespace

uint64_t RunsAnsweredFromAnotherSeed() { return KeptRuns::Get().from_another_seed(); }
uint64_t RunsAnsweredAsRepeats() { return KeptRuns::Get().repeated(); }

absl::StatusOr<VariantResult> RunScenario(const viosim::Scenario& resolved, const std::string& variant,
                                          const RunOptions& options) {
  if (options.trace || options.build_only) return RunScenarioOnce(resolved, variant, options);
  const std::string key = UnseededKey(resolved, variant, options);
  if (key.empty()) return RunScenarioOnce(resolved, variant, options);
  const std::string seeded_key = absl::StrCat(key, "|seed:", resolved.run().seed());
  if (std::optional<VariantResult> r = KeptRuns::Get().Find(key, seeded_key)) {
    r->seed = resolved.run().seed();
    return *std::move(r);
  }
  const uint64_t seeded = sim::Rng::Seeded();
  absl::StatusOr<VariantResult> r = RunScenarioOnce(resolved, variant, options);
  if (r.ok()) KeptRuns::Get().Add(sim::Rng::Seeded() == seeded ? key : seeded_key, *r);
  return r;
}

namespace {

absl::StatusOr<VariantResult> RunScenarioOnce(const viosim::Scenario& resolved, const std::string& variant,
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
  const Workload::KindCase workload = WorkloadOf(resolved);
  if (workload == Workload::KIND_NOT_SET) {
    return absl::InvalidArgumentError("field 'workload': the scenario has no workload (e.g. lockbench { ... })");
  }
  if (const StackPart* own = OwnWorkloadPart(workload)) {
    return RunOwnWorkload(*own, resolved, plan, options, std::move(out));
  }
  return RunFioWorkload(resolved, plan, options, std::move(out));
}

}  // namespace

}  // namespace viosim
