#include "scenarios/stack.h"

#include <algorithm>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/cpu/sched_fair.h"
#include "scenarios/stacks/parts.h"
#include "scenarios/units.h"

namespace viosim {

absl::StatusOr<std::unique_ptr<Machine>> Machine::Make(sim::Simulator& sim, const Platform& p, int n,
                                                       const std::string& prefix, const models::SchedCosts& costs) {
  std::unique_ptr<Machine> m(new Machine(sim));
  absl::StatusOr<std::unique_ptr<models::Scheduler>> sched = models::MakeScheduler(p.scheduler(), sim);
  if (!sched.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("field 'platform.scheduler': ", sched.status().message()));
  }
  m->sched_ = std::move(*sched);
  const Topology& t = p.topology();
  const int llcs = t.sockets() * t.llcs_per_socket();
  if (n % (llcs * t.threads_per_core()) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "field 'platform.topology': ", n, " CPUs (field 'platform.cpus') do not divide into ", t.sockets(),
        " socket(s) x ", t.llcs_per_socket(), " LLC(s) x cores of ", t.threads_per_core(), " thread(s)"));
  }
  const int per_llc = n / llcs;
  for (int i = 0; i < n; ++i) {
    models::CpuPlace place;
    place.llc = i / per_llc;
    place.socket = place.llc / t.llcs_per_socket();
    place.core = i / t.threads_per_core();
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
  static const StackPart* parts = new StackPart[]{
      stacks::NvmePart(),
      stacks::VirtioBlkPart(),
      stacks::VirtioBlkMqPart(),
      stacks::Raid10Part(),
      stacks::Raid1Part(),
  };
  return absl::MakeConstSpan(parts, 5);
}

absl::StatusOr<const StackPart*> StackPartOf(const Scenario& s) {
  const auto* oneof = Stack::descriptor()->FindOneofByName("device");
  const auto* field = s.stack().GetReflection()->GetOneofFieldDescriptor(s.stack(), oneof);
  if (field == nullptr) {
    std::string names;
    for (const StackPart& p : StackParts()) absl::StrAppend(&names, names.empty() ? "" : ", ", p.name);
    return absl::InvalidArgumentError(
        absl::StrCat("field 'stack': the scenario has no block stack to run fio on (one of ", names, ")"));
  }
  for (const StackPart& p : StackParts()) {
    if (field->name() == p.name) return &p;
  }
  if (field->name() == "vhost_net") {
    return absl::InvalidArgumentError(
        "field 'stack.vhost_net': a network stack, which carries workload.iperf, not fio's block I/O");
  }
  return absl::InternalError(absl::StrCat("stack part '", field->name(), "' is not registered"));
}

models::SourceKind KindOf(const Source& s) {
  switch (s.kind()) {
    case Source::MEASURED: return models::SourceKind::kMeasured;
    case Source::DERIVED: return models::SourceKind::kDerived;
    case Source::FITTED: return models::SourceKind::kFitted;
    default: return models::SourceKind::kEstimated;
  }
}

absl::Status Override(const Cost& cost, bool has, const std::string& field, models::Param<sim::Time>* param) {
  if (!has) return absl::OkStatus();
  absl::StatusOr<sim::Time> t = TimeOf(cost.value());
  if (!t.ok()) return absl::InvalidArgumentError(absl::StrCat("field '", field, "': ", t.status().message()));
  param->value = *t;
  param->source.kind = KindOf(cost.source());
  param->source.ref = "set by the scenario";
  return absl::OkStatus();
}

absl::StatusOr<models::LineCosts> LineCostsOf(const Platform& p, int home_socket) {
  const CacheLines& l = p.cache_lines();
  models::LineCosts c;
  if (l.preset() == "epyc_rome") {
    c.handoff = models::EpycRomeHandoffCosts();
  } else if (l.preset() == "cascade_lake") {
    c.handoff = models::CascadeLakeHandoffCosts();
  } else if (l.preset() == "none") {
    c.handoff = models::LockHandoffCosts::Uniform(sim::Time::Zero(),
                                                  {models::SourceKind::kDefined, "what-if: no shared-line cost"});
  } else {
    return absl::InvalidArgumentError(absl::StrCat("field 'platform.cache_lines.preset': unknown table '",
                                                   l.preset(), "' (tables: epyc_rome, cascade_lake, none)"));
  }
  const std::string f = "platform.cache_lines.";
  for (auto [has, cost, name, param] :
       {std::tuple{l.has_same_core(), &l.same_core(), "same_core", &c.handoff.same_core},
        std::tuple{l.has_same_llc(), &l.same_llc(), "same_llc", &c.handoff.same_llc},
        std::tuple{l.has_same_socket(), &l.same_socket(), "same_socket", &c.handoff.same_socket},
        std::tuple{l.has_other_socket(), &l.other_socket(), "other_socket", &c.handoff.other_socket}}) {
    if (absl::Status st = Override(*cost, has, f + name, param); !st.ok()) return st;
  }
  if (l.arbitration() == "nearest_first") {
    c.arbitration = models::LineArbitration::kNearestFirst;
  } else if (l.arbitration() == "fifo") {
    c.arbitration = models::LineArbitration::kFifo;
  } else if (l.arbitration() == "unqueued") {
    c.arbitration = models::LineArbitration::kUnqueued;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("field 'platform.cache_lines.arbitration': unknown policy '",
                                                   l.arbitration(), "' (policies: nearest_first, fifo, unqueued)"));
  }
  c.service_ratio = l.service_ratio();
  c.max_bypass = l.max_bypass();
  c.home_socket = home_socket;
  return c;
}

absl::StatusOr<models::HostCosts> HostCostsOf(const Platform& p) {
  if (p.host_profile() != "xeon") {
    return absl::InvalidArgumentError(
        absl::StrCat("field 'platform.host_profile': unknown profile '", p.host_profile(), "' (profiles: xeon)"));
  }
  models::HostCosts c = models::XeonHostCosts();
  const HostCosts& h = p.host();
  struct Entry {
    bool has;
    const Cost& cost;
    const char* name;
    models::Param<sim::Time>* param;
  };
  const Entry entries[] = {
      {h.has_syscall(), h.syscall(), "syscall", &c.syscall},
      {h.has_blk_mq_submit_bio(), h.blk_mq_submit_bio(), "blk_mq_submit_bio", &c.blk_mq_submit_bio},
      {h.has_nvme_queue_rq(), h.nvme_queue_rq(), "nvme_queue_rq", &c.nvme_queue_rq},
      {h.has_nvme_map_data_per_page(), h.nvme_map_data_per_page(), "nvme_map_data_per_page",
       &c.nvme_map_data_per_page},
      {h.has_doorbell_write(), h.doorbell_write(), "doorbell_write", &c.doorbell_write},
      {h.has_irq_entry_exit(), h.irq_entry_exit(), "irq_entry_exit", &c.irq_entry_exit},
      {h.has_nvme_irq(), h.nvme_irq(), "nvme_irq", &c.nvme_irq},
      {h.has_complete_request(), h.complete_request(), "complete_request", &c.complete_request},
      {h.has_poll_reap(), h.poll_reap(), "poll_reap", &c.poll_reap},
      {h.has_context_switch(), h.context_switch(), "context_switch", &c.context_switch},
      {h.has_try_to_wake_up(), h.try_to_wake_up(), "try_to_wake_up", &c.try_to_wake_up},
      {h.has_try_to_wake_up_fast(), h.try_to_wake_up_fast(), "try_to_wake_up_fast", &c.try_to_wake_up_fast},
      {h.has_wakeup_latency(), h.wakeup_latency(), "wakeup_latency", &c.wakeup_latency},
  };
  for (const Entry& e : entries) {
    if (absl::Status s = Override(e.cost, e.has, absl::StrCat("platform.host.", e.name, ".value"), e.param);
        !s.ok()) {
      return s;
    }
  }
  return c;
}

absl::Status CheckLatencySpread(sim::Time spread, sim::Time read, sim::Time write, const std::string& stack) {
  if (spread <= std::min(read, write)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("field '", stack, ".latency_exp_mean.value': ", sim::FormatTime(spread),
                                                 " exceeds read_latency or write_latency (",
                                                 sim::FormatTime(std::min(read, write)), ")"));
}

absl::Status ReadRequiredCosts(absl::Span<const RequiredCost> fields) {
  for (const RequiredCost& f : fields) {
    if (!f.has) return absl::InvalidArgumentError(absl::StrCat("field '", f.name, "' is required"));
    absl::StatusOr<sim::Time> t = TimeOf(f.cost->value());
    if (!t.ok()) return absl::InvalidArgumentError(absl::StrCat("field '", f.name, ".value': ", t.status().message()));
    *f.out = models::Param<sim::Time>{*t, {KindOf(f.cost->source()), "set by the scenario"}};
  }
  return absl::OkStatus();
}

absl::StatusOr<sim::Time> LockHandoff(const Platform& p) {
  if (!p.has_lock_handoff()) return sim::Time::Zero();
  return TimeOf(p.lock_handoff().value());
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
