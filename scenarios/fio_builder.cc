#include "scenarios/fio_builder.h"

#include <algorithm>
#include <array>
#include <memory>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/cpu/cpu.h"
#include "models/fio/workload.h"
#include "scenarios/units.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace viosim {
namespace {

// Traces [start, start + window) of a run: the CPUs' time (user, system,
// irq, spin, exit, ...) and the locks' holds, every slice clipped to the
// window. At its end the CPUs' slices in progress are closed; the writer
// stays attached, so a lock released later shows its hold up to the edge.
sim::Task TraceWindow(sim::Simulator& sim, sim::TraceWriter& trace, std::vector<models::Cpu*> cpus,
                      sim::Time start, sim::Time window) {
  co_await sim.Delay(start);
  trace.SetWindow(sim.Now(), sim.Now() + window);
  trace.SetProcessName(models::Cpu::kTracePid, "CPUs");
  for (models::Cpu* c : cpus) c->NameTraceTrack(trace);
  sim.set_trace(&trace);
  sim.OpenTraceSlices();
  co_await sim.Delay(window);
  for (models::Cpu* c : cpus) c->CloseTraceSlice();
}

// The run control of the scenario's fio workload: seed, steady-state
// target (the option overrides the scenario's), time cap.
absl::StatusOr<fio::WorkloadControl> ControlOf(const Scenario& stack, const FioRunOptions& options,
                                               ReadSet* reads = nullptr) {
  const Params s(stack, reads);
  fio::WorkloadControl control;
  control.seed = static_cast<uint64_t>(s["run"].Int("seed"));
  const Params wf = s["workload"]["fio"];
  control.target_rel_ci = (options.target_ci_pct ? *options.target_ci_pct : wf.Real("target_ci_pct")) / 100;
  absl::StatusOr<sim::Time> max_group = wf.Time("max_group_time");
  if (!max_group.ok()) return max_group.status();
  control.max_group_time = *max_group;
  // A cap shorter than min_batches batches would leave too few batch means
  // for a confidence interval: shorten the batches so the capped run still
  // has min_batches of them.
  const sim::Time batches = control.batch * control.min_batches;
  if (control.max_group_time > sim::Time::Zero() && control.max_group_time < batches) {
    control.batch = control.max_group_time / control.min_batches;
  }
  return control;
}

}  // namespace

std::vector<fio::OptionOverride> JobOptionOverrides(const Params& fio_workload) {
  std::vector<fio::OptionOverride> out;
  for (const Workload::Fio::JobOption& o : static_cast<const Workload::Fio&>(fio_workload.message()).option()) {
    const std::string name = o.section().empty() ? o.key() : absl::StrCat("job.", o.section(), ".", o.key());
    fio_workload.RecordRead(name);
    out.push_back({o.section(), o.key(), o.value(),
                   absl::StrCat("field '", fio_workload.PathOf(name), "' (", o.value(), ")")});
  }
  return out;
}

absl::StatusOr<fio::EngineCosts> EngineCostsOf(const Params& platform, const models::HostCosts& host,
                                               const fio::JobFile& jobs) {
  // fio's own CPU time. Estimates (no per-function measurement exists),
  // bracketed by totals: t/io_uring does >3M IOPS per core without fio's
  // per-I/O work while fio reaches 1-2M per core at depth > 1, so fio's own
  // share is 0.2-0.5 us per I/O; io_submit's per-iocb work (aio_get_req,
  // copying the iocb, aio_prep_rw) and io_getevents' per-event copy are a
  // fraction of a syscall, so io_submit is a per-batch syscall plus a
  // per-iocb cost. The scenario may override each (platform.fio).
  fio::EngineCosts engine;
  engine.syscall = host.syscall.value;
  engine.fio_per_io = sim::Time::Nanos(300);
  engine.aio_per_iocb = sim::Time::Nanos(150);
  engine.reap_per_event = sim::Time::Nanos(100);
  const Params fc = platform["fio"];
  const bool async = std::any_of(jobs.jobs.begin(), jobs.jobs.end(),
                                 [](const fio::JobOptions& j) { return !fio::IsSync(j.ioengine); });
  for (auto [name, out] : {std::pair{"per_io", &engine.fio_per_io}, std::pair{"per_iocb", &engine.aio_per_iocb},
                           std::pair{"per_event", &engine.reap_per_event}}) {
    if (!async && out != &engine.fio_per_io) continue;
    absl::StatusOr<sim::Time> t = fc.CostOr(name, *out);
    if (!t.ok()) return t.status();
    *out = *t;
  }
  return engine;
}

absl::StatusOr<FioRig> FioRig::Make(sim::Simulator& sim, const Scenario& stack, const fio::JobFile& jobs,
                                    const fio::WorkloadControl& control, ReadSet* reads) {
  absl::StatusOr<const StackPart*> part = StackPartOf(stack);
  if (!part.ok()) return part.status();
  const Params s(stack, reads);
  const Params platform = s["platform"];
  absl::StatusOr<models::HostCosts> host =
      HostCostsOf(platform, kHostSyscall | kHostSched | ((*part)->host_block ? kHostBlock : 0u));
  if (!host.ok()) return host.status();
  absl::StatusOr<fio::EngineCosts> engine = EngineCostsOf(platform, *host, jobs);
  if (!engine.ok()) return engine.status();
  const int ncpus = platform.Has("cpus") ? static_cast<int>(platform.Int("cpus")) : kDefaultFioCpus;
  for (const fio::JobOptions& j : jobs.jobs) {
    if (!j.cpus_allowed.empty()) {
      absl::StatusOr<std::vector<int>> list = fio::ParseCpuList(j.cpus_allowed, ncpus);
      if (!list.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(j.cpus_allowed_at, ": ", list.status().message()));
      }
    }
  }
  FioRig rig;
  rig.part = *part;
  absl::StatusOr<std::unique_ptr<Machine>> machine =
      Machine::Make(sim, platform, ncpus, (*part)->vcpus ? "vcpu" : "cpu", host->sched(), (*part)->cpu_places);
  if (!machine.ok()) return machine.status();
  rig.machine = std::move(*machine);
  absl::StatusOr<std::unique_ptr<BuiltStack>> built = (*part)->build(s, *rig.machine, *host);
  if (!built.ok()) return built.status();
  rig.stack = std::move(*built);
  fio::WorkloadControl c = control;
  Machine* m = rig.machine.get();
  BuiltStack* b = rig.stack.get();
  c.reset_stack = [m, b] {
    b->ResetStats();
    m->ResetStats();
  };
  rig.workload = std::make_unique<fio::Workload>(sim, rig.stack->block(), m->sched(), m->cpus(), jobs, *engine, c);
  return rig;
}

void FioRig::Trace(sim::TraceWriter& trace, sim::Time start, sim::Time window) {
  std::vector<models::Cpu*> cpus = machine->cpus();
  for (models::Cpu* c : stack->OwnCpus()) cpus.push_back(c);
  machine->sim().Spawn(TraceWindow(machine->sim(), trace, std::move(cpus), start, window));
}

void FioRig::FillExtras(StackExtras& x) {
  for (const sim::RatioMetric& r : stack->Metrics()) {
    const double den = r.denominator();
    x.metrics.push_back({r.name, den != 0 ? r.scale * (r.numerator() / den) : 0});
  }
  for (auto& [name, stat] : stack->Locks()) x.locks.push_back({name, stat});
  x.cpu_states = CpuColumns(part->vcpus);
  for (const models::Cpu* c : machine->cpus()) x.cpus.push_back(CpuSharesOf(*c, part->vcpus));
  if (std::optional<Bound> b = stack->BoundNow()) {
    x.bound = b->resource;
    x.bound_detail = b->detail;
  }
}

std::vector<std::string> StackMetricNames(const Scenario& stack) {
  absl::StatusOr<const StackPart*> part = StackPartOf(stack);
  if (!part.ok()) return {};
  return (*part)->metric_names();
}

// The time columns of the CPU table: as the kernel accounts time, spinning
// and polling apart, and for vCPUs the exits and the guest's share.
std::vector<std::string> CpuColumns(bool vcpu) {
  std::vector<std::string> cols = {"user", "system", "irq", "softirq", "idle", "spin", "poll"};
  if (vcpu) {
    cols.push_back("exit");
    cols.push_back("guest");
  }
  return cols;
}

// One CPU's row of that table over its measured window (since its last
// ResetStats): each column its time in integer picoseconds over the
// window's, and the window the sum of every state's time, so the columns
// add up to the whole and none exceeds it.
StackExtras::CpuShares CpuSharesOf(const models::Cpu& c, bool vcpu) {
  std::array<sim::Time, models::kCpuTimes> in{};
  sim::Time window;
  for (int t = 0; t < models::kCpuTimes; ++t) {
    in[static_cast<size_t>(t)] = c.TimeIn(static_cast<models::CpuTime>(t));
    window += in[static_cast<size_t>(t)];
  }
  auto pct = [&](models::CpuTime t) { return sim::PercentOf(in[static_cast<size_t>(t)], window); };
  StackExtras::CpuShares row;
  row.name = c.name();
  using models::CpuTime;
  row.pct = {pct(CpuTime::kUser), pct(CpuTime::kSystem), pct(CpuTime::kIrq),  pct(CpuTime::kSoftirq),
             pct(CpuTime::kIdle), pct(CpuTime::kSpin),   pct(CpuTime::kPoll)};
  if (vcpu) {
    row.pct.push_back(pct(CpuTime::kExit));
    // The guest's share: neither idle, nor in an exit, nor stolen (the
    // time a host thread's preemption stood the vCPU still is not shown
    // apart yet: it is zero while every vCPU thread has a host CPU of its own).
    row.pct.push_back(sim::PercentOf(window - in[static_cast<size_t>(CpuTime::kIdle)] -
                                         in[static_cast<size_t>(CpuTime::kExit)] -
                                         in[static_cast<size_t>(CpuTime::kSteal)],
                                     window));
  }
  row.irq_off_pct = sim::PercentOf(std::min(c.IrqOffTime(), window), window);
  return row;
}

absl::StatusOr<fio::FioReport> RunFio(const Scenario& stack, const fio::JobFile& jobs,
                                      const FioRunOptions& options) {
  absl::StatusOr<fio::WorkloadControl> control = ControlOf(stack, options);
  if (!control.ok()) return control.status();
  sim::Simulator sim;
  absl::StatusOr<FioRig> rig = FioRig::Make(sim, stack, jobs, *control);
  if (!rig.ok()) return rig.status();
  if (options.trace != nullptr) rig->Trace(*options.trace, options.trace_start, options.trace_window);
  fio::FioReport report = rig->workload->Run();
  if (sim.stalled()) return StalledError(sim);
  sim.CloseTraceSlices();  // holds still in progress when the run ends
  report.stack = stack.name();
  if (options.extras != nullptr) rig->FillExtras(*options.extras);
  if (report.has_confidence && options.replicate) {
    // The same jobs at the next seed: where every group's rate comes out
    // exactly the same, a deterministic server sets it, and the batches'
    // spread is not a statement about the value (as `reproduce` rules).
    Scenario again = stack;
    const uint64_t seed = stack.run().seed();
    report.replicate_seed = seed == UINT64_MAX ? seed - 1 : seed + 1;
    again.mutable_run()->set_seed(report.replicate_seed);
    FioRunOptions once = options;
    once.extras = nullptr;
    once.trace = nullptr;
    once.replicate = false;
    absl::StatusOr<fio::FioReport> other = RunFio(again, jobs, once);
    if (!other.ok()) return other.status();
    report.confidence_informative = other->window_iops != report.window_iops;
  }
  return report;
}

absl::StatusOr<ReadSet> FioReads(const Scenario& stack, const fio::JobFile& jobs, const FioRunOptions& options) {
  ReadSet reads;
  absl::StatusOr<fio::WorkloadControl> control = ControlOf(stack, options, &reads);
  if (!control.ok()) return control.status();
  sim::Simulator sim;
  absl::StatusOr<FioRig> rig = FioRig::Make(sim, stack, jobs, *control, &reads);
  if (!rig.ok()) return rig.status();
  return reads;
}

absl::Status StalledError(const sim::Simulator& sim) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "the run made no progress: more than %d events ran at simulated time %s without time moving on. "
      "Likely cause: a cycle of steps that all cost nothing (zero costs, delays or think times in "
      "platform, stack or workload); give one of them a cost greater than zero",
      sim.max_events_at_one_instant(), FormatDurationForInput(sim.stalled_at())));
}

}  // namespace viosim
