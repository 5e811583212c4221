// stack.virtio_blk_mq: an x86 KVM guest's multiqueue virtio_blk with
// blk_mq_ops->poll() (one vq per vCPU; models/virtio/guest/virtio_blk_mq.h)
// over QEMU's virtio-pci with an ioeventfd and an irqfd per queue
// (models/qemu/virtio_transport.h), one QEMU IOThread with aio=native
// (models/qemu/iothread_blk.h) and an Optane-class device
// (models/nvme/link_device.h); driver and device share the queues' rings
// (models/virtio/mq/shared_vq.h).
#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/kvm/kvm.h"
#include "models/nvme/link_device.h"
#include "models/qemu/iothread_blk.h"
#include "models/qemu/virtio_transport.h"
#include "models/virtio/guest/virtio_blk_mq.h"
#include "models/virtio/mq/shared_vq.h"
#include "scenarios/stacks/parts.h"
#include "sim/check.h"

namespace viosim::stacks {
namespace {

// The stack's costs, by the part that pays them.
struct MqCosts {
  models::VirtioBlkMqCosts guest;
  models::IoThreadBlkCosts iothread;
  models::NvmeLinkCosts device;
};

class VirtioBlkMqStack final : public BuiltStack {
 public:
  // One queue per vCPU; the device draws queue k's access latencies from
  // Rng::ForStream(seed, "virtio_blk_mq.device.vq<k>").
  VirtioBlkMqStack(Machine& m, const models::KvmCosts& kc, const MqCosts& c, int ring_size, bool event_idx,
                   uint64_t seed)
      : machine_(&m),
        kvm_(m.sim(), kc),
        rings_(MakeRings(m.sim(), m.ncpus(), ring_size, event_idx)),
        device_(m.sim(), c.device, m.ncpus(), seed, "virtio_blk_mq.device.vq"),
        iothread_(m.sim(), Rings(), device_, c.iothread),
        pci_(m.sim(), kvm_, iothread_),
        blk_(m.sim(), m.cpus(), Rings(), pci_, c.guest) {
    iothread_.Start();
  }

  models::BlockStack& block() override { return blk_; }

  // QEMU's IOThread is a server here: its busy time is host CPU time.
  sim::Time ServerHostTime() override { return iothread_.Busy(); }

  std::vector<sim::RatioMetric> Metrics() override { return BindMetrics(Declared(), *this); }

  // Its metrics beyond fio's, declared once (scenarios/stack.h).
  static MetricDecls<VirtioBlkMqStack> Declared() {
    using S = VirtioBlkMqStack;
    auto n = [](uint64_t v) { return static_cast<double>(v); };
    auto reqs = [n](S& s) { return n(s.blk_.stats().irq_completions + s.blk_.stats().polled_completions); };
    // Busy times and the window in whole picoseconds, the busy time counted
    // inside the window only (sim::BusyTime): a utilisation is at most 100%.
    auto window_ps = [](S& s) { return static_cast<double>(s.machine_->Elapsed().ps()); };
    auto cpu_time = [](S& s) { return s.machine_->ElapsedS() * s.machine_->ncpus(); };
    // The mean time per request of one part of its path, in microseconds.
    auto lat = [reqs](const char* name, double models::VirtioBlkMqStats::*part) {
      return MetricDecl<S>{name, [part](S& s) { return s.blk_.stats().*part; }, reqs, 1e-3};
    };
    return {
        {"vcpu_util_pct",
         [](S& s) {
           return s.machine_->ElapsedS() * s.machine_->ncpus() - s.machine_->TimeInS(models::CpuTime::kIdle);
         },
         cpu_time, 100},
        {"vcpu_poll_pct", [](S& s) { return s.machine_->TimeInS(models::CpuTime::kPoll); }, cpu_time, 100},
        {"interrupts_per_request", [n](S& s) { return n(s.blk_.stats().interrupts); }, reqs, 1},
        {"polled_pct", [n](S& s) { return n(s.blk_.stats().polled_completions); }, reqs, 100},
        {"kicks_per_request", [n](S& s) { return n(s.blk_.stats().kicks); }, reqs, 1},
        // Interrupts that found their halted vCPU's thread asleep, past
        // halt polling's window (platform.kvm.vcpu_wake).
        {"vcpu_wakes_per_request", [n](S& s) { return n(s.kvm_.stats().halt_slept); }, reqs, 1},
        {"iothread_util_pct", [](S& s) { return static_cast<double>(s.iothread_.Busy().ps()); }, window_ps, 100},
        {"device_util_pct", [](S& s) { return static_cast<double>(s.device_.LinkBusy().ps()); }, window_ps, 100},
        lat("lat_guest_submit_us", &models::VirtioBlkMqStats::guest_submit_ns),
        lat("lat_kick_exit_us", &models::VirtioBlkMqStats::kick_ns),
        lat("lat_host_submit_us", &models::VirtioBlkMqStats::host_ns),
        lat("lat_device_us", &models::VirtioBlkMqStats::device_ns),
        lat("lat_host_complete_us", &models::VirtioBlkMqStats::host_complete_ns),
        lat("lat_guest_complete_us", &models::VirtioBlkMqStats::guest_complete_ns),
    };
  }

  std::vector<std::pair<std::string, models::LockStat>> Locks() override {
    std::vector<std::pair<std::string, models::LockStat>> out;
    for (int q = 0; q < blk_.num_queues(); ++q) out.emplace_back(absl::StrCat("vq_lock", q), blk_.vq_lock(q).stat());
    return out;
  }
  void ResetStats() override {
    blk_.ResetStats();
    iothread_.ResetStats();
    device_.ResetStats();
    kvm_.ResetStats();
  }

  // The busiest of device bandwidth, IOThread and vCPUs (their polling left
  // out) over the window.
  std::optional<Bound> BoundNow() override {
    const sim::Time window = machine_->Elapsed();
    if (window <= sim::Time::Zero()) return std::nullopt;
    BusyPct b;
    b.device_bandwidth = sim::PercentOf(device_.LinkBusy(), window);
    b.iothread = sim::PercentOf(iothread_.Busy(), window);
    for (const models::Cpu* c : machine_->cpus()) {
      const double busy = sim::PercentOf(c->BusyTime(), window);
      const double poll = sim::PercentOf(c->TimeIn(models::CpuTime::kPoll), window);
      if (busy - poll < b.vcpu_work) continue;
      b.vcpu_work = busy - poll;
      b.vcpu_polling = poll;
    }
    return ClassifyBound(b);
  }

 private:
  static std::vector<std::unique_ptr<models::SharedVq>> MakeRings(sim::Simulator& sim, int n, int ring_size,
                                                                  bool event_idx) {
    models::VirtqueueFeatures f;
    f.event_idx = event_idx;
    f.indirect_desc = true;
    std::vector<std::unique_ptr<models::SharedVq>> out;
    for (int i = 0; i < n; ++i) out.push_back(std::make_unique<models::SharedVq>(sim, ring_size, f));
    return out;
  }
  std::vector<models::SharedVq*> Rings() const {
    std::vector<models::SharedVq*> out;
    for (const auto& r : rings_) out.push_back(r.get());
    return out;
  }

  Machine* machine_;
  models::Kvm kvm_;
  std::vector<std::unique_ptr<models::SharedVq>> rings_;
  models::NvmeLinkDevice device_;
  models::IoThreadBlk iothread_;
  models::VirtioPciMq pci_;
  models::VirtioBlkMq blk_;
};

std::vector<std::string> Names() { return DeclaredNames<VirtioBlkMqStack>(); }

absl::StatusOr<std::unique_ptr<BuiltStack>> Build(const Params& s, Machine& m, const models::HostCosts& host) {
  (void)host;
  const Params v = s["stack"]["virtio_blk_mq"];
  const Params k = s["platform"]["kvm"];
  models::KvmCosts kc;
  MqCosts c;
  const CostSlot kvm[] = {{"mmio_exit_kernel", &kc.mmio_exit_kernel},
                          {"irq_inject", &kc.irq_inject},
                          {"irq_kick_exit", &kc.irq_kick_exit}};
  const CostSlot stack[] = {
      {"submit", &c.guest.submit},
      {"per_page", &c.guest.per_page},
      {"add_sgs", &c.guest.add_sgs},
      {"kick_prepare", &c.guest.kick_prepare},
      {"irq_entry", &c.guest.irq_entry},
      {"complete", &c.guest.complete},
      {"poll_detect", &c.guest.poll_detect},
      {"iothread_wakeup", &c.iothread.iothread_wakeup},
      {"iothread_submit", &c.iothread.iothread_submit},
      {"iothread_complete", &c.iothread.iothread_complete},
      {"host_irq", &c.iothread.host_irq},
      {"poll_window", &c.iothread.poll_window},
      {"read_latency", &c.device.read_latency},
      {"write_latency", &c.device.write_latency},
  };
  if (absl::Status st = RequiredCosts(k, kvm); !st.ok()) return st;
  if (absl::Status st = RequiredCosts(v, stack); !st.ok()) return st;
  // Halts of the idle vCPUs and KVM's halt polling, when the platform
  // gives the wake-up's cost.
  if (absl::Status st = k.OptionalCost("vcpu_wake", &kc.vcpu_wake); !st.ok()) return st;
  if (kc.vcpu_wake.value > sim::Time::Zero()) {
    const CostSlot poll[] = {{"halt_poll_ns", &kc.halt_poll_ns}};
    if (absl::Status st = RequiredCosts(k, poll); !st.ok()) return st;
  }
  if (!v.Has("read_bandwidth") || !v.Has("write_bandwidth")) {
    return absl::InvalidArgumentError("fields 'stack.virtio_blk_mq.read_bandwidth' and 'write_bandwidth' are required");
  }
  c.device.read_bandwidth.value = v.Real("read_bandwidth");
  c.device.write_bandwidth.value = v.Real("write_bandwidth");
  if (absl::Status st = v.OptionalCost("latency_exp_mean", &c.device.latency_exp_mean); !st.ok()) return st;
  VIOSIM_CHECK(c.device.latency_exp_mean.value <= std::min(c.device.read_latency.value, c.device.write_latency.value),
               "the exponential part is at most the read and the write latency (the loader's checks refuse more)");
  kc.ioeventfd = true;
  absl::StatusOr<sim::Time> handoff = LockHandoff(s["platform"]);
  if (!handoff.ok()) return handoff.status();
  c.guest.lock_handoff.value = *handoff;
  // A power of two: the loader's checks (scenarios/checks.cc) refuse
  // others, and the virtqueue model checks it.
  const int ring_size = static_cast<int>(v.Int("ring_size"));

  return std::make_unique<VirtioBlkMqStack>(m, kc, c, ring_size, v.Bool("event_idx"),
                                            static_cast<uint64_t>(s["run"].Int("seed")));
}

}  // namespace

StackPart VirtioBlkMqPart() {
  StackPart p = {"virtio_blk_mq",
                 "x86 KVM guest: multiqueue virtio_blk with io_poll (2021 patch), QEMU IOThread aio=native, NVMe",
                 true, &Names, &Build};
  p.linux_version = 513;  // the patch's base, 5.13-rc
  return p;
}

}  // namespace viosim::stacks
