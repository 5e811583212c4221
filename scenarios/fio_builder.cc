#include "scenarios/fio_builder.h"

#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "models/block/blk_mq.h"
#include "models/block/host_costs.h"
#include "models/cpu/cpu.h"
#include "models/fio/workload.h"
#include "models/kvm/kvm.h"
#include "models/qemu/bql.h"
#include "models/qemu/virtio_blk_device.h"
#include "models/virtio/guest/virtio_blk.h"
#include "models/virtio/virtqueue.h"
#include "models/nvme/nvme_device.h"
#include "models/nvme/profile.h"
#include "scenarios/units.h"
#include "sim/simulator.h"
#include "sim/trace.h"

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

// The virtio_blk stack's extra metrics, in order.
const std::vector<std::string>& VirtioMetrics() {
  static const auto* names = new std::vector<std::string>{
      "kicks_per_request", "kicks_suppressed_pct", "interrupts_per_request", "vq_lock_hold_mean_us",
      "vq_lock_wait_mean_us", "vq_lock_contention_pct", "bql_wait_mean_us", "bql_contention_pct",
      "exits_per_s", "notify_exits_per_s", "isr_exits_per_s", "vcpu_spin_pct", "vcpu_exit_pct",
      "vcpu_idle_pct"};
  return *names;
}

absl::StatusOr<sim::Time> CostOf(const Cost& c, const std::string& field, sim::Time fallback, bool has) {
  if (!has) return fallback;
  absl::StatusOr<sim::Time> t = TimeOf(c.value());
  if (!t.ok()) return absl::InvalidArgumentError(absl::StrCat("field '", field, "': ", t.status().message()));
  return *t;
}

}  // namespace

std::vector<std::string> StackMetricNames(const Scenario& stack) {
  if (stack.stack().has_virtio_blk()) return VirtioMetrics();
  return {};
}

namespace {

// Traces [start, start + window) of a run: the vCPUs' states (running,
// spinning, exit, idle) and vq_lock's holds.
sim::Task TraceWindow(sim::Simulator& sim, sim::TraceWriter& trace, std::vector<models::Cpu*> cpus,
                      sim::Time start, sim::Time window) {
  co_await sim.Delay(start);
  trace.SetProcessName(models::Cpu::kTracePid, "vCPUs");
  for (models::Cpu* c : cpus) c->NameTraceTrack(trace);
  sim.set_trace(&trace);
  co_await sim.Delay(window);
  sim.set_trace(nullptr);
}

// A KVM guest running fio on virtio_blk: vCPUs, KVM, QEMU, the device.
absl::StatusOr<fio::FioReport> RunFioVirtio(const Scenario& stack, const fio::JobFile& jobs,
                                            const FioRunOptions& options, const fio::EngineCosts& engine,
                                            const models::HostCosts& host, int ncpus) {
  const Stack::VirtioBlk& v = stack.stack().virtio_blk();
  const KvmCosts& k = stack.platform().kvm();
  auto set = [](sim::Time t, const Cost& c) {
    return models::Param<sim::Time>{t, {KindOf(c.source()), "set by the scenario"}};
  };
  // Every cost must be given by the scenario (no profile exists for it).
  struct Field {
    const Cost* cost;
    bool has;
    std::string name;
    models::Param<sim::Time>* out;
  };
  models::KvmCosts kc;
  models::QemuCosts qc;
  models::VirtioBlkGuestCosts gc;
  const Field fields[] = {
      {&k.mmio_exit_user(), k.has_mmio_exit_user(), "platform.kvm.mmio_exit_user", &kc.mmio_exit_user},
      {&k.irq_inject(), k.has_irq_inject(), "platform.kvm.irq_inject", &kc.irq_inject},
      {&k.irq_kick_exit(), k.has_irq_kick_exit(), "platform.kvm.irq_kick_exit", &kc.irq_kick_exit},
      {&v.submit(), v.has_submit(), "stack.virtio_blk.submit", &gc.submit},
      {&v.map_sg(), v.has_map_sg(), "stack.virtio_blk.map_sg", &gc.map_sg},
      {&v.add_sgs(), v.has_add_sgs(), "stack.virtio_blk.add_sgs", &gc.add_sgs},
      {&v.kick_prepare(), v.has_kick_prepare(), "stack.virtio_blk.kick_prepare", &gc.kick_prepare},
      {&v.irq_entry(), v.has_irq_entry(), "stack.virtio_blk.irq_entry", &gc.irq_entry},
      {&v.complete(), v.has_complete(), "stack.virtio_blk.complete", &gc.complete},
      {&v.qemu_notify_dispatch(), v.has_qemu_notify_dispatch(), "stack.virtio_blk.qemu_notify_dispatch",
       &qc.notify_dispatch},
      {&v.qemu_pop_submit(), v.has_qemu_pop_submit(), "stack.virtio_blk.qemu_pop_submit", &qc.pop_submit},
      {&v.qemu_main_wakeup(), v.has_qemu_main_wakeup(), "stack.virtio_blk.qemu_main_wakeup", &qc.main_wakeup},
      {&v.qemu_complete(), v.has_qemu_complete(), "stack.virtio_blk.qemu_complete", &qc.complete},
      {&v.qemu_mmio_register(), v.has_qemu_mmio_register(), "stack.virtio_blk.qemu_mmio_register",
       &qc.mmio_register},
      {&v.qemu_irq_line(), v.has_qemu_irq_line(), "stack.virtio_blk.qemu_irq_line", &qc.irq_line},
      {&v.disk_latency(), v.has_disk_latency(), "stack.virtio_blk.disk_latency", &qc.disk_latency},
  };
  for (const Field& f : fields) {
    if (!f.has) return absl::InvalidArgumentError(absl::StrCat("field '", f.name, "' is required"));
    absl::StatusOr<sim::Time> t = CostOf(*f.cost, f.name + ".value", sim::Time::Zero(), true);
    if (!t.ok()) return t.status();
    *f.out = set(*t, *f.cost);
  }
  kc.ioeventfd = k.ioeventfd();
  if (kc.ioeventfd) {
    if (!k.has_mmio_exit_kernel()) {
      return absl::InvalidArgumentError("field 'platform.kvm.mmio_exit_kernel' is required with ioeventfd");
    }
    absl::StatusOr<sim::Time> t = TimeOf(k.mmio_exit_kernel().value());
    if (!t.ok()) return t.status();
    kc.mmio_exit_kernel = set(*t, k.mmio_exit_kernel());
  }
  gc.lock_handoff.value = sim::Time::Zero();
  if (stack.platform().has_lock_handoff()) {
    absl::StatusOr<sim::Time> t = TimeOf(stack.platform().lock_handoff().value());
    if (!t.ok()) return t.status();
    gc.lock_handoff.value = *t;
  }
  if (v.irq_cpu() >= ncpus) {
    return absl::InvalidArgumentError("field 'stack.virtio_blk.irq_cpu': no such vCPU (platform.cpus)");
  }
  if ((v.ring_size() & (v.ring_size() - 1)) != 0) {
    return absl::InvalidArgumentError("field 'stack.virtio_blk.ring_size': not a power of two");
  }

  sim::Simulator sim;
  std::vector<std::unique_ptr<models::Cpu>> cpus;
  std::vector<models::Cpu*> cpu_ptrs;
  for (int i = 0; i < ncpus; ++i) {
    cpus.push_back(std::make_unique<models::Cpu>(sim, i, absl::StrCat("vcpu", i)));
    cpus.back()->set_sched_costs(host.sched());
    cpu_ptrs.push_back(cpus.back().get());
  }
  models::VirtqueueFeatures features;
  features.event_idx = v.event_idx();
  features.indirect_desc = true;
  models::Virtqueue vq(v.ring_size(), features);
  models::Bql bql(sim);
  models::Kvm kvm(sim, kc);
  models::VirtioBlkDevice dev(sim, vq, bql, qc);
  dev.set_msix(v.msix());
  models::VirtioBlkParams params;
  params.kick_outside_lock = v.kick_outside_lock();
  params.queue_depth = v.queue_depth();
  params.irq_cpu = v.irq_cpu();
  models::VirtioBlk blk(sim, cpu_ptrs, vq, dev, kvm, gc, params);
  dev.Start();
  if (options.trace != nullptr) {
    sim.Spawn(TraceWindow(sim, *options.trace, cpu_ptrs, options.trace_start, options.trace_window));
  }

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

  if (options.extras != nullptr) {
    StackExtras& x = *options.extras;
    const models::VirtioBlkStats& bs = blk.stats();
    const models::LockStat& ls = blk.vq_lock().stat();
    const double reqs = static_cast<double>(bs.completed > 0 ? bs.completed : 1);
    // The stack's counters run from the group's start to now.
    double window = 0;
    for (const auto& c : cpus) window = std::max(window, (c->TimeIn(models::CpuState::kIdle) +
                                                          c->BusyTime()).ToSeconds());
    if (window <= 0) window = 1;
    double spin = 0, exit = 0, idle = 0;
    for (const auto& c : cpus) {
      spin += c->Share(models::CpuState::kSpinning);
      exit += c->Share(models::CpuState::kExit);
      idle += c->Share(models::CpuState::kIdle);
    }
    const double checks = static_cast<double>(bs.kick_checks > 0 ? bs.kick_checks : 1);
    const models::KvmStats& ks = kvm.stats();
    const double isr_exits = static_cast<double>(ks.exits[static_cast<int>(models::ExitKind::kMmioIsrRead)] +
                                                 ks.exits[static_cast<int>(models::ExitKind::kMmioIsrAck)]);
    const double values[] = {
        static_cast<double>(bs.kicks) / reqs,
        100.0 * static_cast<double>(bs.kick_checks - std::min(bs.kick_checks, bs.kicks)) / checks,
        static_cast<double>(bs.interrupts) / reqs,
        ls.hold.count() > 0 ? ls.hold.sum() * 1e-6 / static_cast<double>(ls.hold.count()) : 0,
        ls.acquisitions > 0 ? ls.wait.sum() * 1e-6 / static_cast<double>(ls.acquisitions) : 0,
        ls.acquisitions > 0 ? 100.0 * static_cast<double>(ls.contentions) / static_cast<double>(ls.acquisitions)
                            : 0,
        bql.stats().acquisitions > 0
            ? bql.stats().wait.sum() * 1e-6 / static_cast<double>(bql.stats().acquisitions)
            : 0,
        bql.stats().acquisitions > 0
            ? 100.0 * static_cast<double>(bql.stats().contentions) / static_cast<double>(bql.stats().acquisitions)
            : 0,
        static_cast<double>(kvm.total_exits()) / window,
        static_cast<double>(ks.exits[static_cast<int>(models::ExitKind::kMmioNotify)]) / window,
        isr_exits / window,
        100.0 * spin / ncpus,
        100.0 * exit / ncpus,
        100.0 * idle / ncpus,
    };
    for (size_t i = 0; i < VirtioMetrics().size(); ++i) x.metrics.push_back({VirtioMetrics()[i], values[i]});
    x.locks.push_back({"vq_lock", ls});
    for (int st = 0; st < models::kCpuStates; ++st) {
      x.cpu_states.push_back(models::CpuStateName(static_cast<models::CpuState>(st)));
    }
    for (const auto& c : cpus) {
      StackExtras::CpuShares row;
      row.name = c->name();
      for (int st = 0; st < models::kCpuStates; ++st) {
        row.pct.push_back(100.0 * c->Share(static_cast<models::CpuState>(st)));
      }
      row.irq_off_pct = 100.0 * c->IrqOffTime().ToSeconds() / window;
      x.cpus.push_back(row);
    }
  }
  return report;
}

}  // namespace

absl::StatusOr<fio::FioReport> RunFio(const Scenario& stack, const fio::JobFile& jobs,
                                      const FioRunOptions& options) {
  if (!stack.stack().has_nvme() && !stack.stack().has_virtio_blk()) {
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
  const bool virtio = stack.stack().has_virtio_blk();
  for (const fio::JobOptions& j : jobs.jobs) {
    if (!j.cpus_allowed.empty()) {
      absl::StatusOr<std::vector<int>> list = fio::ParseCpuList(j.cpus_allowed, ncpus);
      if (!list.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(jobs.path, ":", j.line, ": ", list.status().message()));
      }
    }
  }

  if (virtio) return RunFioVirtio(stack, jobs, options, engine, *host, ncpus);

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
