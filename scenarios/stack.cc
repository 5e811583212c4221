#include "scenarios/stack.h"

#include <vector>

#include <algorithm>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/cpu/sched_fair.h"
#include "scenarios/stacks/parts.h"
#include "scenarios/units.h"
#include "sim/check.h"

namespace viosim {

absl::StatusOr<std::unique_ptr<Machine>> Machine::Make(sim::Simulator& sim, const Params& platform, int n,
                                                       const std::string& prefix, const models::SchedCosts& costs,
                                                       bool placed) {
  std::unique_ptr<Machine> m(new Machine(sim));
  const std::string& scheduler = platform.Str("scheduler");
  absl::StatusOr<std::unique_ptr<models::Scheduler>> sched = models::MakeScheduler(scheduler, sim);
  if (!sched.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("field 'platform.scheduler': ", sched.status().message()));
  }
  m->sched_ = std::move(*sched);
  int sockets = 1, llcs_per_socket = 1, threads_per_core = 1;
  if (placed || scheduler == "fair") {
    const Params t = platform["topology"];
    sockets = static_cast<int>(t.Int("sockets"));
    llcs_per_socket = static_cast<int>(t.Int("llcs_per_socket"));
    threads_per_core = static_cast<int>(t.Int("threads_per_core"));
  }
  const int llcs = sockets * llcs_per_socket;
  if (n % (llcs * threads_per_core) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "field 'platform.topology': ", n, " CPUs (field 'platform.cpus') do not divide into ", sockets,
        " socket(s) x ", llcs_per_socket, " LLC(s) x cores of ", threads_per_core, " thread(s)"));
  }
  const int per_llc = n / llcs;
  for (int i = 0; i < n; ++i) {
    models::CpuPlace place;
    place.llc = i / per_llc;
    place.socket = place.llc / llcs_per_socket;
    place.core = i / threads_per_core;
    m->cpus_.push_back(std::make_unique<models::Cpu>(sim, i, absl::StrCat(prefix, i), place));
    m->cpus_.back()->set_sched_costs(costs);
    m->sched_->AddCpu(*m->cpus_.back());
    m->ptrs_.push_back(m->cpus_.back().get());
  }
  m->window_start_ = sim.Now();
  return m;
}

void Machine::ResetStats() {
  for (models::Cpu* c : ptrs_) c->ResetStats();
  sched_->ResetStats();
  window_start_ = sim_->Now();
}

double Machine::TimeInS(models::CpuTime t) const {
  double s = 0;
  for (const models::Cpu* c : ptrs_) s += c->TimeIn(t).ToSeconds();
  return s;
}

absl::Span<const StackPart> StackParts() {
  // No count kept by hand: a row added here is a part.
  static const auto* parts = new std::vector<StackPart>{
      stacks::NvmePart(),
      stacks::VirtioBlkPart(),
      stacks::VirtioBlkMqPart(),
      stacks::Raid10Part(),
      stacks::Raid1Part(),
      stacks::VhostNetPart(),
      stacks::LockBenchPart(),
  };
  return *parts;
}

absl::StatusOr<const StackPart*> StackPartOf(const Scenario& s) {
  const auto* oneof = Stack::descriptor()->FindOneofByName("device");
  const auto* field = s.stack().GetReflection()->GetOneofFieldDescriptor(s.stack(), oneof);
  if (field == nullptr) {
    std::string names;
    for (const StackPart& p : StackParts()) {
      if (p.build != nullptr) absl::StrAppend(&names, names.empty() ? "" : ", ", p.name);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("field 'stack': the scenario has no block stack to run fio on (one of ", names, ")"));
  }
  for (const StackPart& p : StackParts()) {
    if (!p.on_stack || field->name() != p.name) continue;
    if (p.build != nullptr) return &p;
    return absl::InvalidArgumentError(absl::StrCat("field 'stack.", p.name, "': a ", p.stack_kind,
                                                   " stack, which carries workload.",
                                                   Workload::descriptor()->FindFieldByNumber(p.workload)->name(),
                                                   ", not fio's block I/O"));
  }
  return absl::InternalError(absl::StrCat("stack part '", field->name(), "' is not registered"));
}

// The one place the workload's oneof case is read: callers ask here.
Workload::KindCase WorkloadOf(const Scenario& s) { return s.workload().kind_case(); }

const StackPart* OwnWorkloadPart(Workload::KindCase w) {
  for (const StackPart& p : StackParts()) {
    if (p.build_run != nullptr && p.workload == w) return &p;
  }
  return nullptr;
}

models::SourceKind KindOf(const Source& s) {
  switch (s.kind()) {
    case Source::MEASURED: return models::SourceKind::kMeasured;
    case Source::DERIVED: return models::SourceKind::kDerived;
    case Source::FITTED: return models::SourceKind::kFitted;
    default: return models::SourceKind::kEstimated;
  }
}

absl::StatusOr<models::LineCosts> LineCostsOf(const Params& platform, const Params& run, int home_socket) {
  const Params l = platform["cache_lines"];
  models::LineCosts c;
  const std::string& preset = l.Str("preset");
  if (preset == "epyc_rome") {
    c.handoff = models::EpycRomeHandoffCosts();
  } else if (preset == "cascade_lake") {
    c.handoff = models::CascadeLakeHandoffCosts();
  } else if (preset == "none") {
    c.handoff = models::LockHandoffCosts::Uniform(sim::Time::Zero(),
                                                  {models::SourceKind::kDefined, "what-if: no shared-line cost"});
  } else {
    return absl::InvalidArgumentError(absl::StrCat("field 'platform.cache_lines.preset': unknown table '", preset,
                                                   "' (tables: epyc_rome, cascade_lake, none)"));
  }
  // Two CPUs share a core only with SMT: same_core is read only then.
  if (platform["topology"].Int("threads_per_core") > 1) {
    if (absl::Status st = l.OptionalCost("same_core", &c.handoff.same_core); !st.ok()) return st;
  }
  for (auto [name, param] : {std::pair{"same_llc", &c.handoff.same_llc}, std::pair{"same_socket", &c.handoff.same_socket},
                             std::pair{"other_socket", &c.handoff.other_socket}}) {
    if (absl::Status st = l.OptionalCost(name, param); !st.ok()) return st;
  }
  const std::string& arbitration = l.Str("arbitration");
  if (arbitration == "nearest_first") {
    c.arbitration = models::LineArbitration::kNearestFirst;
    c.max_bypass = static_cast<int>(l.Int("max_bypass"));  // read by nearest-first only
  } else if (arbitration == "fifo") {
    c.arbitration = models::LineArbitration::kFifo;
  } else if (arbitration == "unqueued") {
    c.arbitration = models::LineArbitration::kUnqueued;
  } else if (arbitration == "random") {
    c.arbitration = models::LineArbitration::kRandom;
    c.seed = static_cast<uint64_t>(run.Int("seed"));
  } else {
    return absl::InvalidArgumentError(absl::StrCat("field 'platform.cache_lines.arbitration': unknown policy '",
                                                   arbitration, "' (policies: nearest_first, fifo, random, unqueued)"));
  }
  // A queued transaction's occupancy: unqueued lines have no queue.
  if (c.arbitration != models::LineArbitration::kUnqueued) c.service_ratio = l.Real("service_ratio");
  c.home_socket = home_socket;
  return c;
}

absl::StatusOr<models::HostCosts> HostCostsOf(const Params& platform, unsigned uses) {
  VIOSIM_CHECK(platform.Str("host_profile") == "xeon", "the host profile is known (the loader's checks refuse others)");
  models::HostCosts c = models::XeonHostCosts();
  const Params h = platform["host"];
  struct Entry {
    unsigned use;
    const char* name;
    models::Param<sim::Time>* param;
  };
  const Entry entries[] = {
      {kHostSyscall, "syscall", &c.syscall},
      {kHostBlock, "blk_mq_submit_bio", &c.blk_mq_submit_bio},
      {kHostBlock, "nvme_queue_rq", &c.nvme_queue_rq},
      {kHostBlock, "nvme_map_data_per_page", &c.nvme_map_data_per_page},
      {kHostBlock, "doorbell_write", &c.doorbell_write},
      {kHostBlock, "irq_entry_exit", &c.irq_entry_exit},
      {kHostBlock, "nvme_irq", &c.nvme_irq},
      {kHostBlock, "complete_request", &c.complete_request},
      {kHostBlock, "poll_reap", &c.poll_reap},
      {kHostSched, "context_switch", &c.context_switch},
      {kHostSched, "try_to_wake_up", &c.try_to_wake_up},
      {kHostSched, "try_to_wake_up_fast", &c.try_to_wake_up_fast},
      {kHostSched, "wakeup_latency", &c.wakeup_latency},
  };
  for (const Entry& e : entries) {
    if ((uses & e.use) == 0) continue;
    if (absl::Status s = h.OptionalCost(e.name, e.param); !s.ok()) return s;
  }
  return c;
}

absl::Status RequiredCosts(const Params& p, absl::Span<const CostSlot> slots) {
  for (auto [name, out] : slots) {
    absl::StatusOr<models::Param<sim::Time>> c = p.RequiredCost(name);
    if (!c.ok()) return c.status();
    *out = *c;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> PatchedPlacement(const Params& p, absl::string_view field, std::pair<Placement, Placement> site) {
  const auto value = static_cast<Placement>(p.Enum(field));
  if (value == site.first) return false;
  if (value == site.second) return true;
  return absl::InvalidArgumentError(absl::StrCat("field '", p.PathOf(field), "': ", Placement_Name(value),
                                                 " is not a placement of this call; it takes ",
                                                 Placement_Name(site.first), " (the kernel before the patch) or ",
                                                 Placement_Name(site.second), " (the patch)"));
}

absl::StatusOr<sim::Time> LockHandoff(const Params& platform) {
  return platform.CostOr("lock_handoff", sim::Time::Zero());
}

Bound ClassifyBound(const BusyPct& busy) {
  struct Resource {
    const char* token;
    const char* name;
    double pct;
  };
  const Resource resources[] = {{"device_bandwidth", "device bandwidth", busy.device_bandwidth},
                                {"iothread", "IOThread", busy.iothread},
                                {"vcpu", "vCPU", busy.vcpu_work}};
  const Resource* top = &resources[0];
  for (const Resource& r : resources) {
    if (r.pct > top->pct) top = &r;
  }
  if (top->pct >= kSaturatedPct) {
    return {top->token, absl::StrFormat("%s (%s busy %.2f%%)", top->name, top->name, top->pct)};
  }
  const std::string shares =
      absl::StrFormat("no resource >= %.0f%% busy: device bandwidth %.1f%%, IOThread %.1f%%, vCPU %.1f%%",
                      kSaturatedPct, busy.device_bandwidth, busy.iothread, busy.vcpu_work);
  if (busy.vcpu_work + busy.vcpu_polling >= kSaturatedPct) {
    return {"per_io_latency", absl::StrFormat("per-I/O latency, vCPUs busy polling (%s without the %.1f%% polling)",
                                              shares, busy.vcpu_polling)};
  }
  return {"per_io_latency", absl::StrCat("per-I/O latency (", shares, ")")};
}

}  // namespace viosim
