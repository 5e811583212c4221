#include "scenarios/fio_builder.h"

#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/block/blk_mq.h"
#include "models/block/host_costs.h"
#include "models/cpu/cpu.h"
#include "models/fio/workload.h"
#include "models/kvm/kvm.h"
#include "models/qemu/bql.h"
#include "models/qemu/virtio_blk_device.h"
#include "models/virtio/guest/virtio_blk.h"
#include "models/virtio/mq/virtio_blk_mq.h"
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

// A device's latency_exp_mean must leave both fixed parts non-negative, or
// the mean latency would not be kept.
absl::Status CheckLatencySpread(sim::Time spread, sim::Time read, sim::Time write, const std::string& stack) {
  if (spread <= std::min(read, write)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("field '", stack, ".latency_exp_mean.value': ", sim::FormatTime(spread),
                                                 " exceeds read_latency or write_latency (",
                                                 sim::FormatTime(std::min(read, write)), ")"));
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
  for (auto [cost, has, name, param] :
       {std::tuple{&n.read_latency(), n.has_read_latency(), "read_latency", &p.read_latency},
        std::tuple{&n.write_latency(), n.has_write_latency(), "write_latency", &p.write_latency},
        std::tuple{&n.latency_exp_mean(), n.has_latency_exp_mean(), "latency_exp_mean", &p.latency_exp_mean}}) {
    if (absl::Status s = Override(*cost, has, absl::StrCat("stack.nvme.", name, ".value"), param); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = CheckLatencySpread(p.latency_exp_mean.value, p.read_latency.value, p.write_latency.value,
                                          "stack.nvme");
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

// The blk-poll stack's extra metrics, in order.
const std::vector<std::string>& VirtioMqMetrics() {
  static const auto* names = new std::vector<std::string>{
      "vcpu_util_pct", "vcpu_poll_pct", "interrupts_per_request", "polled_pct", "kicks_per_request",
      "iothread_util_pct", "device_util_pct", "lat_guest_submit_us", "lat_kick_exit_us", "lat_host_submit_us",
      "lat_device_us", "lat_host_complete_us", "lat_guest_complete_us"};
  return *names;
}

}  // namespace

std::vector<std::string> StackMetricNames(const Scenario& stack) {
  if (stack.stack().has_virtio_blk_mq()) return VirtioMqMetrics();
  if (stack.stack().has_virtio_blk()) return VirtioMetrics();
  return {};
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

// The run control of the scenario's fio workload: seed, steady-state
// target (the option overrides the scenario's), time cap.
absl::StatusOr<fio::WorkloadControl> ControlOf(const Scenario& stack, const FioRunOptions& options) {
  fio::WorkloadControl control;
  control.seed = stack.run().seed();
  const Workload::Fio& wf = stack.workload().fio();
  control.target_rel_ci = (options.target_ci_pct ? *options.target_ci_pct : wf.target_ci_pct()) / 100;
  absl::StatusOr<sim::Time> max_group = TimeOf(wf.max_group_time());
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

// A cost a stack needs from its scenario (no profile supplies it).
struct RequiredCost {
  const Cost* cost;
  bool has;
  std::string name;  // field path, for messages
  models::Param<sim::Time>* out;
};

// Reads every required cost into its parameter, keeping the scenario's
// source kind. InvalidArgument naming the first missing or bad field.
absl::Status ReadRequiredCosts(absl::Span<const RequiredCost> fields) {
  for (const RequiredCost& f : fields) {
    if (!f.has) return absl::InvalidArgumentError(absl::StrCat("field '", f.name, "' is required"));
    absl::StatusOr<sim::Time> t = CostOf(*f.cost, f.name + ".value", sim::Time::Zero(), true);
    if (!t.ok()) return t.status();
    *f.out = models::Param<sim::Time>{*t, {KindOf(f.cost->source()), "set by the scenario"}};
  }
  return absl::OkStatus();
}

// platform.lock_handoff, zero when unset.
absl::StatusOr<sim::Time> LockHandoff(const Platform& p) {
  if (!p.has_lock_handoff()) return sim::Time::Zero();
  return TimeOf(p.lock_handoff().value());
}

// `n` CPUs named prefix0.. with the host's scheduler costs.
std::vector<std::unique_ptr<models::Cpu>> MakeCpus(sim::Simulator& sim, int n, const std::string& prefix,
                                                   const models::HostCosts& host) {
  std::vector<std::unique_ptr<models::Cpu>> cpus;
  for (int i = 0; i < n; ++i) {
    cpus.push_back(std::make_unique<models::Cpu>(sim, i, absl::StrCat(prefix, i)));
    cpus.back()->set_sched_costs(host.sched());
  }
  return cpus;
}

std::vector<models::Cpu*> Pointers(const std::vector<std::unique_ptr<models::Cpu>>& cpus) {
  std::vector<models::Cpu*> out;
  for (const auto& c : cpus) out.push_back(c.get());
  return out;
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
  models::KvmCosts kc;
  models::QemuCosts qc;
  models::VirtioBlkGuestCosts gc;
  const RequiredCost fields[] = {
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
      {&v.qemu_exit_userspace(), v.has_qemu_exit_userspace(), "stack.virtio_blk.qemu_exit_userspace",
       &qc.exit_userspace},
      {&v.disk_latency(), v.has_disk_latency(), "stack.virtio_blk.disk_latency", &qc.disk_latency},
      {&v.disk_latency_exp_mean(), v.has_disk_latency_exp_mean(), "stack.virtio_blk.disk_latency_exp_mean",
       &qc.disk_latency_exp_mean},
  };
  if (absl::Status st = ReadRequiredCosts(fields); !st.ok()) return st;
  kc.ioeventfd = k.ioeventfd();
  if (kc.ioeventfd) {
    if (!k.has_mmio_exit_kernel()) {
      return absl::InvalidArgumentError("field 'platform.kvm.mmio_exit_kernel' is required with ioeventfd");
    }
    absl::StatusOr<sim::Time> t = TimeOf(k.mmio_exit_kernel().value());
    if (!t.ok()) return t.status();
    kc.mmio_exit_kernel = set(*t, k.mmio_exit_kernel());
  }
  absl::StatusOr<sim::Time> handoff = LockHandoff(stack.platform());
  if (!handoff.ok()) return handoff.status();
  gc.lock_handoff.value = *handoff;
  if (v.irq_cpu() >= ncpus) {
    return absl::InvalidArgumentError("field 'stack.virtio_blk.irq_cpu': no such vCPU (platform.cpus)");
  }
  if ((v.ring_size() & (v.ring_size() - 1)) != 0) {
    return absl::InvalidArgumentError("field 'stack.virtio_blk.ring_size': not a power of two");
  }

  sim::Simulator sim;
  std::vector<std::unique_ptr<models::Cpu>> cpus = MakeCpus(sim, ncpus, "vcpu", host);
  std::vector<models::Cpu*> cpu_ptrs = Pointers(cpus);
  models::VirtqueueFeatures features;
  features.event_idx = v.event_idx();
  features.indirect_desc = true;
  models::Virtqueue vq(v.ring_size(), features);
  // A thread woken from the BQL's futex runs after the wake-up and the
  // context switch into it (models/qemu/bql.h).
  models::Bql bql(sim, host.try_to_wake_up.value + host.context_switch.value);
  models::Kvm kvm(sim, kc);
  if (qc.disk_latency_exp_mean.value > qc.disk_latency.value) {
    return absl::InvalidArgumentError("field 'stack.virtio_blk.disk_latency_exp_mean.value': exceeds disk_latency");
  }
  models::VirtioBlkDevice dev(sim, vq, bql, qc, stack.run().seed());
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

  absl::StatusOr<fio::WorkloadControl> control = ControlOf(stack, options);
  if (!control.ok()) return control.status();
  fio::Workload workload(sim, blk, cpu_ptrs, jobs, engine, *control);
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

// The blk-poll stack: a 4-vCPU x86 KVM guest, multiqueue virtio_blk with
// blk_mq_ops->poll(), one QEMU IOThread, an NVMe device.
absl::StatusOr<fio::FioReport> RunFioVirtioMq(const Scenario& stack, const fio::JobFile& jobs,
                                              const FioRunOptions& options, const fio::EngineCosts& engine,
                                              const models::HostCosts& host, int ncpus) {
  const Stack::VirtioBlkMq& v = stack.stack().virtio_blk_mq();
  const KvmCosts& k = stack.platform().kvm();
  models::KvmCosts kc;
  models::VirtioBlkMqCosts c;
  const RequiredCost fields[] = {
      {&k.mmio_exit_kernel(), k.has_mmio_exit_kernel(), "platform.kvm.mmio_exit_kernel", &kc.mmio_exit_kernel},
      {&k.irq_inject(), k.has_irq_inject(), "platform.kvm.irq_inject", &kc.irq_inject},
      {&k.irq_kick_exit(), k.has_irq_kick_exit(), "platform.kvm.irq_kick_exit", &kc.irq_kick_exit},
      {&v.submit(), v.has_submit(), "stack.virtio_blk_mq.submit", &c.submit},
      {&v.per_page(), v.has_per_page(), "stack.virtio_blk_mq.per_page", &c.per_page},
      {&v.add_sgs(), v.has_add_sgs(), "stack.virtio_blk_mq.add_sgs", &c.add_sgs},
      {&v.kick_prepare(), v.has_kick_prepare(), "stack.virtio_blk_mq.kick_prepare", &c.kick_prepare},
      {&v.irq_entry(), v.has_irq_entry(), "stack.virtio_blk_mq.irq_entry", &c.irq_entry},
      {&v.complete(), v.has_complete(), "stack.virtio_blk_mq.complete", &c.complete},
      {&v.poll_detect(), v.has_poll_detect(), "stack.virtio_blk_mq.poll_detect", &c.poll_detect},
      {&v.iothread_wakeup(), v.has_iothread_wakeup(), "stack.virtio_blk_mq.iothread_wakeup", &c.iothread_wakeup},
      {&v.iothread_submit(), v.has_iothread_submit(), "stack.virtio_blk_mq.iothread_submit", &c.iothread_submit},
      {&v.iothread_complete(), v.has_iothread_complete(), "stack.virtio_blk_mq.iothread_complete",
       &c.iothread_complete},
      {&v.host_irq(), v.has_host_irq(), "stack.virtio_blk_mq.host_irq", &c.host_irq},
      {&v.poll_window(), v.has_poll_window(), "stack.virtio_blk_mq.poll_window", &c.poll_window},
      {&v.read_latency(), v.has_read_latency(), "stack.virtio_blk_mq.read_latency", &c.read_latency},
      {&v.write_latency(), v.has_write_latency(), "stack.virtio_blk_mq.write_latency", &c.write_latency},
  };
  if (absl::Status st = ReadRequiredCosts(fields); !st.ok()) return st;
  if (!v.has_read_bandwidth() || !v.has_write_bandwidth()) {
    return absl::InvalidArgumentError("fields 'stack.virtio_blk_mq.read_bandwidth' and 'write_bandwidth' are required");
  }
  c.read_bandwidth.value = v.read_bandwidth();
  c.write_bandwidth.value = v.write_bandwidth();
  if (absl::Status st = Override(v.latency_exp_mean(), v.has_latency_exp_mean(),
                                 "stack.virtio_blk_mq.latency_exp_mean.value", &c.latency_exp_mean);
      !st.ok()) {
    return st;
  }
  if (absl::Status st = CheckLatencySpread(c.latency_exp_mean.value, c.read_latency.value, c.write_latency.value,
                                           "stack.virtio_blk_mq");
      !st.ok()) {
    return st;
  }
  kc.ioeventfd = true;
  absl::StatusOr<sim::Time> handoff = LockHandoff(stack.platform());
  if (!handoff.ok()) return handoff.status();
  c.lock_handoff.value = *handoff;
  if ((v.ring_size() & (v.ring_size() - 1)) != 0) {
    return absl::InvalidArgumentError("field 'stack.virtio_blk_mq.ring_size': not a power of two");
  }

  sim::Simulator sim;
  std::vector<std::unique_ptr<models::Cpu>> cpus = MakeCpus(sim, ncpus, "vcpu", host);
  std::vector<models::Cpu*> cpu_ptrs = Pointers(cpus);
  models::Kvm kvm(sim, kc);
  models::VirtioBlkMq blk(sim, cpu_ptrs, kvm, c, v.ring_size(), v.event_idx(), stack.run().seed());
  if (options.trace != nullptr) {
    sim.Spawn(TraceWindow(sim, *options.trace, cpu_ptrs, options.trace_start, options.trace_window));
  }
  absl::StatusOr<fio::WorkloadControl> control = ControlOf(stack, options);
  if (!control.ok()) return control.status();
  fio::Workload workload(sim, blk, cpu_ptrs, jobs, engine, *control);
  fio::FioReport report = workload.Run();
  report.stack = stack.name();

  if (options.extras != nullptr) {
    StackExtras& x = *options.extras;
    const models::VirtioBlkMqStats& bs = blk.stats();
    const double done = static_cast<double>(bs.irq_completions + bs.polled_completions);
    const double reqs = done > 0 ? done : 1;
    // Utilisations and CPU shares over [reset, last completion]: the group's
    // run, without the idle tail after its jobs ended.
    double window = (bs.last_completion - bs.since).ToSeconds();
    if (window <= 0) window = 1;
    // Per vCPU: busy (polling included) and polling, in percent.
    std::vector<double> busy_pct, poll_pct;
    double busy = 0, poll = 0;
    for (size_t i = 0; i < cpus.size(); ++i) {
      busy_pct.push_back(std::min(100.0, 100.0 * cpus[i]->BusyTime().ToSeconds() / window));
      poll_pct.push_back(std::min(busy_pct.back(), 100.0 * bs.poll_time[i].ToSeconds() / window));
      busy += busy_pct.back() / ncpus;
      poll += poll_pct.back() / ncpus;
    }
    const double iothread_pct = 100.0 * bs.iothread_busy_ns * 1e-9 / window;
    const double device_pct = 100.0 * bs.link_busy_ns * 1e-9 / window;
    const double values[] = {
        busy,
        poll,
        static_cast<double>(bs.interrupts) / reqs,
        100.0 * static_cast<double>(bs.polled_completions) / reqs,
        static_cast<double>(bs.kicks) / reqs,
        iothread_pct,
        device_pct,
        bs.guest_submit_ns / reqs / 1000,
        bs.kick_ns / reqs / 1000,
        bs.host_ns / reqs / 1000,
        bs.device_ns / reqs / 1000,
        bs.host_complete_ns / reqs / 1000,
        bs.guest_complete_ns / reqs / 1000,
    };
    for (size_t i = 0; i < VirtioMqMetrics().size(); ++i) x.metrics.push_back({VirtioMqMetrics()[i], values[i]});
    for (int q = 0; q < blk.num_queues(); ++q) x.locks.push_back({absl::StrCat("vq_lock", q), blk.vq_lock(q).stat()});
    // The busiest vCPU by its work (polling left out) bounds like a CPU.
    BusyPct b{device_pct, iothread_pct, 0, 0};
    for (size_t i = 0; i < cpus.size(); ++i) {
      if (busy_pct[i] - poll_pct[i] < b.vcpu_work) continue;
      b.vcpu_work = busy_pct[i] - poll_pct[i];
      b.vcpu_polling = poll_pct[i];
    }
    const Bound bound = ClassifyBound(b);
    x.bound = bound.resource;
    x.bound_detail = bound.detail;
    // Running is split into polling (blk_poll's spin) and the rest, so that
    // the table's columns add up to 100 and its mean row gives vcpu_util_pct
    // (100 - idle) and vcpu_poll_pct.
    x.cpu_states = {"idle", "running", "polling", "spinning", "exit"};
    for (size_t i = 0; i < cpus.size(); ++i) {
      const models::Cpu& cp = *cpus[i];
      auto pct = [&cp, window](models::CpuState st) { return 100.0 * cp.TimeIn(st).ToSeconds() / window; };
      StackExtras::CpuShares row;
      row.name = cp.name();
      const double running = std::max(0.0, pct(models::CpuState::kRunning) - poll_pct[i]);
      const double spinning = pct(models::CpuState::kSpinning), exit = pct(models::CpuState::kExit);
      row.pct = {std::max(0.0, 100.0 - running - poll_pct[i] - spinning - exit), running, poll_pct[i], spinning,
                 exit};
      row.irq_off_pct = 100.0 * cp.IrqOffTime().ToSeconds() / window;
      x.cpus.push_back(row);
    }
  }
  return report;
}

}  // namespace

absl::StatusOr<fio::FioReport> RunFio(const Scenario& stack, const fio::JobFile& jobs,
                                      const FioRunOptions& options) {
  if (!stack.stack().has_nvme() && !stack.stack().has_virtio_blk() && !stack.stack().has_virtio_blk_mq()) {
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
  // fraction of a syscall, so io_submit is a per-batch syscall plus a
  // per-iocb cost. The scenario may override each (platform.fio).
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
  const int ncpus = stack.platform().has_cpus() ? stack.platform().cpus() : kDefaultFioCpus;
  const bool virtio = stack.stack().has_virtio_blk();
  for (const fio::JobOptions& j : jobs.jobs) {
    if (!j.cpus_allowed.empty()) {
      absl::StatusOr<std::vector<int>> list = fio::ParseCpuList(j.cpus_allowed, ncpus);
      if (!list.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(j.cpus_allowed_at, ": ", list.status().message()));
      }
    }
  }

  if (virtio) return RunFioVirtio(stack, jobs, options, engine, *host, ncpus);
  if (stack.stack().has_virtio_blk_mq()) return RunFioVirtioMq(stack, jobs, options, engine, *host, ncpus);

  sim::Simulator sim;
  std::vector<std::unique_ptr<models::Cpu>> cpus = MakeCpus(sim, ncpus, "cpu", *host);
  std::vector<models::Cpu*> cpu_ptrs = Pointers(cpus);
  models::NvmeDevice device(sim, *profile, stack.run().seed());
  models::BlkMqParams params;
  if (stack.stack().nvme().has_queue_depth()) params.queue_depth = stack.stack().nvme().queue_depth();
  params.poll_queues = stack.stack().nvme().poll_queues();
  models::BlkMq blk(sim, cpu_ptrs, device, *host, params);

  absl::StatusOr<fio::WorkloadControl> control = ControlOf(stack, options);
  if (!control.ok()) return control.status();
  fio::Workload workload(sim, blk, cpu_ptrs, jobs, engine, *control);
  fio::FioReport report = workload.Run();
  report.stack = stack.name();
  return report;
}

}  // namespace viosim
