#include "scenarios/fio_builder.h"

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "models/block/blk_mq.h"
#include "models/block/host_costs.h"
#include "models/cpu/cpu.h"
#include "models/fio/workload.h"
#include "models/nvme/nvme_device.h"
#include "models/nvme/profile.h"
#include "scenarios/units.h"
#include "sim/simulator.h"

namespace viosim {
namespace {

models::SourceKind KindOf(const Source& s) {
  switch (s.kind()) {
    case Source::MEASURED: return models::SourceKind::kMeasured;
    case Source::DERIVED: return models::SourceKind::kDerived;
    case Source::FITTED: return models::SourceKind::kFitted;
    default: return models::SourceKind::kEstimated;
  }
}

// Replaces `param` by the scenario's cost when the scenario sets it.
absl::Status Override(const Cost& cost, bool has, const std::string& field, models::Param<sim::Time>* param) {
  if (!has) return absl::OkStatus();
  absl::StatusOr<sim::Time> t = TimeOf(cost.value());
  if (!t.ok()) return absl::InvalidArgumentError(absl::StrCat("field '", field, "': ", t.status().message()));
  param->value = *t;
  param->source.kind = KindOf(cost.source());
  param->source.ref = "set by the scenario";
  return absl::OkStatus();
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
  };
  for (const Entry& e : entries) {
    if (absl::Status s = Override(e.cost, e.has, absl::StrCat("platform.host.", e.name, ".value"), e.param);
        !s.ok()) {
      return s;
    }
  }
  return c;
}

absl::StatusOr<models::NvmeProfile> NvmeOf(const Stack::Nvme& n) {
  if (n.profile() != "optane_p4800x") {
    return absl::InvalidArgumentError(
        absl::StrCat("field 'stack.nvme.profile': unknown profile '", n.profile(), "' (profiles: optane_p4800x)"));
  }
  models::NvmeProfile p = models::OptaneP4800X();
  const models::Source set{models::SourceKind::kEstimated, "set by the scenario"};
  if (n.has_units()) p.units = {n.units(), set};
  if (n.has_read_bandwidth()) p.read_bandwidth = {n.read_bandwidth(), set};
  if (n.has_write_bandwidth()) p.write_bandwidth = {n.write_bandwidth(), set};
  if (n.has_max_queue_depth()) p.max_queue_depth = {n.max_queue_depth(), set};
  if (absl::Status s = Override(n.read_latency(), n.has_read_latency(), "stack.nvme.read_latency.value",
                                &p.read_latency);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Override(n.write_latency(), n.has_write_latency(), "stack.nvme.write_latency.value",
                                &p.write_latency);
      !s.ok()) {
    return s;
  }
  return p;
}

absl::StatusOr<sim::Time> FioCost(const Cost& c, const char* name) {
  absl::StatusOr<sim::Time> t = TimeOf(c.value());
  if (!t.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("field 'platform.fio.", name, ".value': ", t.status().message()));
  }
  return *t;
}

}  // namespace

absl::StatusOr<fio::FioReport> RunFio(const Scenario& stack, const fio::JobFile& jobs,
                                      const FioRunOptions& options) {
  if (!stack.stack().has_nvme()) {
    return absl::InvalidArgumentError("field 'stack.nvme': the stack scenario has no block device to run fio on");
  }
  absl::StatusOr<models::HostCosts> host = HostCostsOf(stack.platform());
  if (!host.ok()) return host.status();
  absl::StatusOr<models::NvmeProfile> profile = NvmeOf(stack.stack().nvme());
  if (!profile.ok()) return profile.status();
  // fio's own CPU time. Estimates (no per-function measurement exists),
  // bracketed by totals: t/io_uring does >3M IOPS per core without fio's
  // per-I/O work while fio reaches 1-2M per core at depth > 1, so fio's own
  // share is 0.2-0.5 us per I/O; io_submit's per-iocb work (aio_get_req,
  // copying the iocb, aio_prep_rw) and io_getevents' per-event copy are a
  // fraction of a syscall (costs.md: model io_submit as per-batch syscall
  // plus per-iocb). The scenario may override each (platform.fio).
  fio::EngineCosts engine;
  engine.syscall = host->syscall.value;
  engine.fio_per_io = sim::Time::Nanos(300);
  engine.aio_per_iocb = sim::Time::Nanos(150);
  engine.reap_per_event = sim::Time::Nanos(100);
  const FioCosts& fc = stack.platform().fio();
  for (auto [cost, name, out] : {std::tuple{&fc.per_io(), "per_io", &engine.fio_per_io},
                                 std::tuple{&fc.per_iocb(), "per_iocb", &engine.aio_per_iocb},
                                 std::tuple{&fc.per_event(), "per_event", &engine.reap_per_event}}) {
    if (cost->has_value()) {
      absl::StatusOr<sim::Time> t = FioCost(*cost, name);
      if (!t.ok()) return t.status();
      *out = *t;
    }
  }
  const int ncpus = stack.platform().has_cpus() ? stack.platform().cpus() : 8;
  for (const fio::JobOptions& j : jobs.jobs) {
    if (!j.cpus_allowed.empty()) {
      absl::StatusOr<std::vector<int>> list = fio::ParseCpuList(j.cpus_allowed, ncpus);
      if (!list.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(jobs.path, ":", j.line, ": ", list.status().message()));
      }
    }
  }

  sim::Simulator sim;
  std::vector<std::unique_ptr<models::Cpu>> cpus;
  std::vector<models::Cpu*> cpu_ptrs;
  for (int i = 0; i < ncpus; ++i) {
    cpus.push_back(std::make_unique<models::Cpu>(sim, i, absl::StrCat("cpu", i)));
    cpus.back()->set_sched_costs(host->sched());
    cpu_ptrs.push_back(cpus.back().get());
  }
  models::NvmeDevice device(sim, *profile);
  models::BlkMqParams params;
  if (stack.stack().nvme().has_queue_depth()) params.queue_depth = stack.stack().nvme().queue_depth();
  params.poll_queues = stack.stack().nvme().poll_queues();
  models::BlkMq blk(sim, cpu_ptrs, device, *host, params);

  fio::WorkloadControl control;
  control.seed = stack.run().seed();
  const Workload::Fio& wf = stack.workload().fio();
  control.target_rel_ci = (options.target_ci_pct ? *options.target_ci_pct : wf.target_ci_pct()) / 100;
  absl::StatusOr<sim::Time> max_group = TimeOf(wf.max_group_time());
  if (!max_group.ok()) return max_group.status();
  control.max_group_time = *max_group;
  fio::Workload workload(sim, blk, cpu_ptrs, jobs, engine, control);
  fio::FioReport report = workload.Run();
  report.stack = stack.name();
  return report;
}

}  // namespace viosim
