#include "models/qemu/virtio_blk_device.h"

#include <algorithm>
#include <utility>

namespace models {

VirtioBlkDevice::VirtioBlkDevice(sim::Simulator& sim, Virtqueue& vq, Bql& bql, const QemuCosts& costs,
                                 uint64_t seed)
    : sim_(&sim),
      vq_(&vq),
      bql_(&bql),
      costs_(costs),
      disk_spread_(sim::Distribution::Exponential(costs.disk_latency_exp_mean.value)),
      disk_rng_(sim::Rng::ForStream(seed, "qemu.disk")),
      done_signal_(sim) {}

void VirtioBlkDevice::Start() { sim_->Spawn(MainLoop()); }

sim::Task VirtioBlkDevice::LockForExit() {
  co_await bql_->Lock();
  co_await sim_->Delay(costs_.exit_userspace.value);
}

sim::Task VirtioBlkDevice::QueueNotify() {
  co_await LockForExit();
  co_await HandleOutput();
  bql_->Unlock();
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
  for (;;) {
    while (done_.empty() && !notify_pending_) co_await done_signal_.Wait();
    ++stats_.main_wakeups;
    co_await sim_->Delay(costs_.main_wakeup.value);
    co_await bql_->Lock();
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
      if (vq_->ShouldNotify()) {
        isr_ |= 1;
        ++stats_.irq_ioctls;
        co_await sim_->Delay(costs_.irq_line.value);
        if (msix_) isr_ = 0;  // nobody reads it with MSI-X
        if (!line_) {
          line_ = true;
          ++stats_.irq_raises;
          if (irq_sink_ != nullptr) irq_sink_->LineRaised();
        }
      }
    }
    bql_->Unlock();
  }
}

sim::Task VirtioBlkDevice::ReadInterruptStatus(uint32_t* isr) {
  co_await LockForExit();
  co_await sim_->Delay(costs_.mmio_register.value);
  *isr = isr_;
  bql_->Unlock();
}

sim::Task VirtioBlkDevice::InterruptAck(uint32_t bits) {
  co_await LockForExit();
  co_await sim_->Delay(costs_.mmio_register.value);
  isr_ &= ~bits;
  if (isr_ == 0 && line_) {
    ++stats_.irq_ioctls;
    co_await sim_->Delay(costs_.irq_line.value);
    line_ = false;
  }
  bql_->Unlock();
}

}  // namespace models
