// stack.virtio_blk: a 2014 KVM/ARM guest (Linux 3.15 virtio_blk over
// virtio-mmio, one blk-mq hardware queue) served by QEMU 2.0's virtio-blk
// device and its host disk (models/virtio/guest, models/qemu, models/kvm).
#include <memory>

#include "absl/strings/str_cat.h"
#include "models/kvm/kvm.h"
#include "models/cpu/sched.h"
#include "models/cpu/sched_fair.h"
#include "models/qemu/virtio_blk_device.h"
#include "models/qemu/virtio_transport.h"
#include "models/virtio/guest/virtio_blk.h"
#include "models/virtio/virtqueue.h"
#include "scenarios/stacks/parts.h"
#include "scenarios/units.h"
#include "sim/check.h"

namespace viosim::stacks {
namespace {

class VirtioBlkStack final : public BuiltStack {
 public:
  VirtioBlkStack(Machine& m, const models::KvmCosts& kc, const models::QemuCosts& qc,
                 const models::VirtioBlkGuestCosts& gc, const models::VirtioBlkParams& params,
                 const models::VirtqueueFeatures& features, int ring_size, bool pci, models::QemuAio aio,
                 const models::HostCosts& host, uint64_t seed, int pool_cpus)
      : machine_(&m),
        vq_(ring_size, features),
        host_sched_(pool_cpus > 0 ? std::unique_ptr<models::Scheduler>(std::make_unique<models::FairScheduler>(m.sim()))
                                  : std::make_unique<models::PinnedFifoScheduler>(m.sim())),
        host_cpus_(HostCpus(m, host, *host_sched_,
                            pool_cpus > 0 ? pool_cpus : m.ncpus() + 1 + (aio == models::QemuAio::kThreads ? 1 : 0),
                            pool_cpus > 0)),
        kvm_(m.sim(), kc),
        dev_(m.sim(), vq_, *host_sched_, Pointers(host_cpus_), m.ncpus(), qc, aio,
             models::QemuHostCosts{host.syscall.value}, seed, /*pooled=*/pool_cpus > 0),
        transport_(pci ? std::unique_ptr<models::QemuVirtioTransport>(
                             std::make_unique<models::VirtioPci>(m.sim(), kvm_, dev_))
                       : std::make_unique<models::VirtioMmio>(m.sim(), kvm_, dev_)),
        blk_(m.sim(), m.cpus(), vq_, *transport_, gc, params) {
    if (kvm_.spinners_trap()) blk_.set_spin_traps(&kvm_);
    // Each vCPU thread runs KVM_RUN's loop: the guest on its host CPU,
    // each exit's host side in the thread's own context there.
    dev_.Start([this](int k, models::Task& thread) {
      models::Cpu& vcpu = *machine_->cpus()[static_cast<size_t>(k)];
      kvm_.AttachThread(vcpu, thread, *host_sched_);
      return kvm_.RunLoop(vcpu);
    });
  }

  models::BlockStack& block() override { return blk_; }

  std::vector<sim::RatioMetric> Metrics() override { return BindMetrics(Declared(), *this); }

  // Its metrics beyond fio's, declared once (scenarios/stack.h).
  static MetricDecls<VirtioBlkStack> Declared() {
    using S = VirtioBlkStack;
    auto n = [](uint64_t v) { return static_cast<double>(v); };
    auto reqs = [n](S& s) { return n(s.blk_.stats().completed); };
    auto checks = [n](S& s) { return n(s.blk_.stats().kick_checks); };
    auto window = [](S& s) { return s.machine_->ElapsedS(); };
    auto cpu_time = [](S& s) { return s.machine_->ElapsedS() * s.machine_->ncpus(); };
    auto time_in = [](models::CpuTime t) { return [t](S& s) { return s.machine_->TimeInS(t); }; };
    auto exits = [](S& s, models::ExitKind k) {
      return static_cast<double>(s.kvm_.stats().exits[static_cast<int>(k)]);
    };
    auto vq = [](S& s) -> const models::LockStat& { return s.blk_.vq_lock().stat(); };
    auto bql = [](S& s) -> const models::LockStat& { return s.dev_.bql().stat(); };
    return {
        {"kicks_per_request", [n](S& s) { return n(s.blk_.stats().kicks); }, reqs, 1},
        {"kicks_suppressed_pct",
         [n](S& s) {
           return n(s.blk_.stats().kick_checks - std::min(s.blk_.stats().kick_checks, s.blk_.stats().kicks));
         },
         checks, 100},
        {"interrupts_per_request", [n](S& s) { return n(s.blk_.stats().interrupts); }, reqs, 1},
        {"vq_lock_hold_mean_us", [vq](S& s) { return vq(s).hold.sum(); },
         [vq](S& s) { return static_cast<double>(vq(s).hold.count()); }, 1e-6},
        {"vq_lock_wait_mean_us", [vq](S& s) { return vq(s).wait.sum(); },
         [vq](S& s) { return static_cast<double>(vq(s).acquisitions); }, 1e-6},
        {"vq_lock_contention_pct", [vq](S& s) { return static_cast<double>(vq(s).contentions); },
         [vq](S& s) { return static_cast<double>(vq(s).acquisitions); }, 100},
        {"bql_wait_mean_us", [bql](S& s) { return bql(s).wait.sum(); },
         [bql](S& s) { return static_cast<double>(bql(s).acquisitions); }, 1e-6},
        {"bql_contention_pct", [bql](S& s) { return static_cast<double>(bql(s).contentions); },
         [bql](S& s) { return static_cast<double>(bql(s).acquisitions); }, 100},
        {"exits_per_s", [](S& s) { return static_cast<double>(s.kvm_.total_exits()); }, window, 1},
        {"notify_exits_per_s", [exits](S& s) { return exits(s, models::ExitKind::kMmioNotify); }, window, 1},
        {"isr_exits_per_s",
         [exits](S& s) { return exits(s, models::ExitKind::kMmioIsrRead) + exits(s, models::ExitKind::kMmioIsrAck); },
         window, 1},
        {"wfi_exits_per_s", [exits](S& s) { return exits(s, models::ExitKind::kWfi); }, window, 1},
        {"vcpu_spin_pct", time_in(models::CpuTime::kSpin), cpu_time, 100},
        {"vcpu_exit_pct", time_in(models::CpuTime::kExit), cpu_time, 100},
        {"vcpu_idle_pct", time_in(models::CpuTime::kIdle), cpu_time, 100},
        {"vcpu_steal_pct", time_in(models::CpuTime::kSteal), cpu_time, 100},
    };
  }

  std::vector<std::pair<std::string, models::LockStat>> Locks() override {
    // The BQL is a sleeping mutex of host threads: no bounces counted.
    return {{"vq_lock", blk_.vq_lock().stat()},
            {"qemu_global_mutex", dev_.bql().stat()},
            {"vgic_dist_lock", kvm_.dist_stat()}};
  }
  void ResetStats() override {
    blk_.ResetStats();
    dev_.ResetStats();
    kvm_.ResetStats();
    transport_->ResetStats();
  }

  std::vector<models::Cpu*> OwnCpus() override { return Pointers(host_cpus_); }

 private:
  // QEMU's host: `n` CPUs with the host's scheduler costs, numbered after
  // the guest's vCPUs. Pinned: one per vCPU thread, one for the main loop
  // and one for the pool's workers (aio=threads). A pool: each CPU a core
  // and an LLC of its own (no LLC scheduling domain, as a 2014 arm64
  // kernel built none: select_idle_sibling finds no sibling).
  static std::vector<std::unique_ptr<models::Cpu>> HostCpus(Machine& m, const models::HostCosts& host,
                                                            models::Scheduler& sched, int n, bool pool) {
    std::vector<std::unique_ptr<models::Cpu>> cpus;
    for (int i = 0; i < n; ++i) {
      const models::CpuPlace place = pool ? models::CpuPlace{0, i, i} : models::CpuPlace{};
      cpus.push_back(std::make_unique<models::Cpu>(m.sim(), m.ncpus() + i, absl::StrCat("host", i), place));
      cpus.back()->set_sched_costs(host.sched());
      sched.AddCpu(*cpus.back());
    }
    return cpus;
  }
  static std::vector<models::Cpu*> Pointers(const std::vector<std::unique_ptr<models::Cpu>>& cpus) {
    std::vector<models::Cpu*> out;
    for (const auto& c : cpus) out.push_back(c.get());
    return out;
  }

  Machine* machine_;
  models::Virtqueue vq_;
  std::unique_ptr<models::Scheduler> host_sched_;  // pinned, or the fair policy over a pool
  std::vector<std::unique_ptr<models::Cpu>> host_cpus_;
  models::Kvm kvm_;
  models::VirtioBlkDevice dev_;
  std::unique_ptr<models::QemuVirtioTransport> transport_;
  models::VirtioBlk blk_;
};

std::vector<std::string> Names() { return DeclaredNames<VirtioBlkStack>(); }

absl::StatusOr<std::unique_ptr<BuiltStack>> Build(const Params& s, Machine& m, const models::HostCosts& host) {
  const Params v = s["stack"]["virtio_blk"];
  const Params k = s["platform"]["kvm"];
  // Every cost must be given by the scenario (no profile exists for it).
  models::KvmCosts kc;
  models::QemuCosts qc;
  models::VirtioBlkGuestCosts gc;
  const CostSlot kvm[] = {{"mmio_exit_user", &kc.mmio_exit_user},
                          {"exit_unexplained", &kc.exit_unexplained},
                          {"irq_inject", &kc.irq_inject},
                          {"irq_kick_exit", &kc.irq_kick_exit},
                          {"vgic_dist_hold", &kc.vgic_dist_hold},
                          {"wfe_trap", &kc.wfe_trap}};
  const CostSlot stack[] = {
      {"submit", &gc.submit},
      {"map_sg", &gc.map_sg},
      {"add_sgs", &gc.add_sgs},
      {"kick_prepare", &gc.kick_prepare},
      {"irq_entry", &gc.irq_entry},
      {"complete", &gc.complete},
      {"qemu_notify_dispatch", &qc.notify_dispatch},
      {"qemu_pop_submit", &qc.pop_submit},
      {"qemu_main_wakeup", &qc.main_wakeup},
      {"qemu_complete", &qc.complete},
      {"qemu_mmio_register", &qc.mmio_register},
      {"qemu_irq_line", &qc.irq_line},
      {"qemu_exit_userspace", &qc.exit_userspace},
      {"disk_latency", &qc.disk_latency},
      {"disk_latency_exp_mean", &qc.disk_latency_exp_mean},
      {"qemu_main_loop_pass", &qc.main_loop_pass},
  };
  if (absl::Status st = RequiredCosts(k, kvm); !st.ok()) return st;
  if (absl::Status st = RequiredCosts(v, stack); !st.ok()) return st;
  const models::QemuAio aio =
      v.Enum("aio") == Stack::VirtioBlk::AIO_NATIVE ? models::QemuAio::kNative : models::QemuAio::kThreads;
  if (aio == models::QemuAio::kThreads) {  // the pool's bottom half is read only then
    const CostSlot pool[] = {{"qemu_pool_complete", &qc.pool_complete}};
    if (absl::Status st = RequiredCosts(v, pool); !st.ok()) return st;
  }
  kc.ioeventfd = k.Bool("ioeventfd");
  if (kc.ioeventfd) {  // the in-kernel exit is read only then
    if (!k.HasCost("mmio_exit_kernel")) {
      return absl::InvalidArgumentError("field 'platform.kvm.mmio_exit_kernel' is required with ioeventfd");
    }
    absl::StatusOr<models::Param<sim::Time>> t = k.RequiredCost("mmio_exit_kernel");
    if (!t.ok()) return t.status();
    kc.mmio_exit_kernel = *t;
  }
  absl::StatusOr<sim::Time> handoff = LockHandoff(s["platform"]);
  if (!handoff.ok()) return handoff.status();
  gc.lock_handoff.value = *handoff;
  // irq_cpu names one of the vCPUs and ring_size is a power of two: the
  // loader's checks (scenarios/checks.cc) refuse others, and the models
  // check both.
  const int irq_cpu = static_cast<int>(v.Int("irq_cpu"));
  const int ring_size = static_cast<int>(v.Int("ring_size"));
  VIOSIM_CHECK(qc.disk_latency_exp_mean.value <= qc.disk_latency.value,
               "the disk's exponential part is at most its latency (the loader's checks refuse more)");
  models::VirtioBlkParams params;
  absl::StatusOr<bool> after = PatchedPlacement(v, "notify", {UNDER_LOCK, AFTER_UNLOCK});
  if (!after.ok()) return after.status();
  params.kick_outside_lock = *after;
  params.queue_depth = static_cast<int>(v.Int("queue_depth"));
  params.irq_cpu = irq_cpu;
  models::VirtqueueFeatures features;
  features.event_idx = v.Bool("event_idx");
  features.indirect_desc = true;
  return std::make_unique<VirtioBlkStack>(m, kc, qc, gc, params, features, ring_size,
                                          v.Enum("transport") == Stack::VirtioBlk::VIRTIO_PCI, aio, host,
                                          static_cast<uint64_t>(s["run"].Int("seed")),
                                          static_cast<int>(v.Int("host_cpus")));
}

}  // namespace

StackPart VirtioBlkPart() {
  StackPart p = {"virtio_blk", "KVM/ARM 2014 guest: virtio_blk (3.15) over virtio-mmio, QEMU 2.0 virtio-blk", true,
                 &Names, &Build};
  p.linux_version = 315;
  return p;
}

}  // namespace viosim::stacks
