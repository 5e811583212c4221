#include "models/qemu/virtio_blk_device.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/check.h"

namespace models {

VirtioBlkDevice::VirtioBlkDevice(sim::Simulator& sim, Virtqueue& vq, Scheduler& host, std::vector<Cpu*> host_cpus,
                                 const QemuCosts& costs, uint64_t seed)
    : sim_(&sim),
      vq_(&vq),
      host_(&host),
      host_cpus_(std::move(host_cpus)),
      bql_(sim, "qemu_global_mutex"),
      costs_(costs),
      disk_spread_(sim::Distribution::Exponential(costs.disk_latency_exp_mean.value)),
      disk_rng_(sim::Rng::ForStream(seed, "qemu.disk")),
      done_signal_(sim) {}

namespace {

// Parks the caller for good.
struct Forever {
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) const noexcept {}
  void await_resume() const noexcept {}
};

}  // namespace

void VirtioBlkDevice::Start() {
  VIOSIM_CHECK(bus_ != nullptr, "the device is on a transport before QEMU's threads start");
  const int vcpus = static_cast<int>(host_cpus_.size()) - 1;
  for (int k = 0; k <= vcpus; ++k) {
    const std::string name = k < vcpus ? absl::StrCat("qemu/vcpu", k) : std::string("qemu/main");
    threads_.push_back(std::make_unique<Task>(name, std::vector<int>{host_cpus_[static_cast<size_t>(k)]->id()}));
    host_cpus_[static_cast<size_t>(k)]->set_trace_label(name);
    host_->Start(*threads_.back(), k < vcpus ? VcpuThread() : MainLoop());
  }
}

sim::Task VirtioBlkDevice::VcpuThread() { co_await Forever{}; }

sim::Task VirtioBlkDevice::LockForExit(Cpu& thread_cpu) {
  co_await bql_.Lock(thread_cpu);
  co_await sim_->Delay(costs_.exit_userspace.value);
}

sim::Task VirtioBlkDevice::QueueNotify(int vcpu) {
  Cpu& cpu = ThreadCpu(vcpu);
  co_await LockForExit(cpu);
  co_await HandleOutput();
  co_await bql_.Unlock(cpu);
}

sim::Task VirtioBlkDevice::SignalIoeventfd() {
  notify_pending_ = true;
  done_signal_.NotifyAll();
  co_return;
}

sim::Task VirtioBlkDevice::HandleOutput() {
  ++stats_.notifies;
  co_await sim_->Delay(costs_.notify_dispatch.value);
  // virtio_blk_handle_output(): pop until the ring is empty.
  while (std::optional<VirtQueueElement> e = vq_->Pop()) {
    ++stats_.pops;
    co_await sim_->Delay(costs_.pop_submit.value);
    ++in_flight_;
    sim_->Spawn(DiskIo(*e));
  }
}

sim::Task VirtioBlkDevice::DiskIo(VirtQueueElement e) {
  co_await sim_->Delay(
      sim::MeanKeptExponential(costs_.disk_latency.value, costs_.disk_latency_exp_mean.value, disk_spread_, disk_rng_));
  done_.push_back(e);
  done_signal_.NotifyAll();
}

sim::Task VirtioBlkDevice::MainLoop() {
  Cpu& main = *host_cpus_.back();
  for (;;) {
    while (done_.empty() && !notify_pending_) co_await done_signal_.Wait();
    ++stats_.main_wakeups;
    co_await sim_->Delay(costs_.main_wakeup.value);
    co_await bql_.Lock(main);
    if (notify_pending_) {
      notify_pending_ = false;
      co_await HandleOutput();
    }
    while (!done_.empty()) {
      const VirtQueueElement e = done_.front();
      done_.pop_front();
      --in_flight_;
      ++stats_.completions;
      co_await sim_->Delay(costs_.complete.value);
      vq_->Push(e, 4096 + 1);  // data and the status byte
      if (vq_->ShouldNotify()) co_await bus_->NotifyIrq();  // virtio_notify
    }
    co_await bql_.Unlock(main);
  }
}

}  // namespace models
