#include "models/virtio/guest/virtio_blk.h"

#include <cstdlib>
#include <utility>

namespace models {

VirtioBlk::VirtioBlk(sim::Simulator& sim, std::vector<Cpu*> vcpus, Virtqueue& vq, VirtioBlkDevice& dev,
                     Kvm& kvm, const VirtioBlkGuestCosts& costs, const VirtioBlkParams& params)
    : sim_(&sim),
      vcpus_(std::move(vcpus)),
      vq_(&vq),
      dev_(&dev),
      kvm_(&kvm),
      costs_(costs),
      params_(params),
      vq_lock_(sim, "vq_lock", costs.lock_handoff.value),
      rqs_(static_cast<size_t>(params.queue_depth), nullptr),
      tag_wait_(sim) {
  if (vcpus_.empty() || params_.irq_cpu < 0 || params_.irq_cpu >= static_cast<int>(vcpus_.size())) std::abort();
  for (int t = params_.queue_depth; t-- > 0;) free_tags_.push_back(t);
  dev_->set_irq_sink(this);
}

// The exit for virtqueue_notify(): writel(index, QueueNotify).
sim::Task VirtioBlk::Notify(Cpu& cpu) {
  ++stats_.kicks;
  if (kvm_->costs().ioeventfd) {
    co_await kvm_->MmioExitKernel(cpu, ExitKind::kMmioNotify, dev_->SignalIoeventfd());
  } else {
    co_await kvm_->MmioExitUser(cpu, ExitKind::kMmioNotify, dev_->QueueNotify());
  }
}

// The vq_lock section of virtio_queue_rq(), run as a held region.
sim::Task VirtioBlk::LockedAdd(Cpu& cpu, BlockRequest& rq, int tag, bool last, bool* notify) {
  co_await vq_lock_.Lock(cpu);  // interrupts are already off (irqsave)
  cpu.SetState(CpuState::kRunning);
  co_await sim_->Delay(costs_.add_sgs.value);
  // A read: out_hdr (device-readable), then data and status (writable).
  const Virtqueue::AddResult r = vq_->AddSgs(static_cast<uint64_t>(tag), rq.write ? 2 : 1, rq.write ? 1 : 2);
  if (!r.ok()) std::abort();  // 64 tags in a 128-entry ring with indirect descriptors: cannot happen
  bool need = r.notify;
  if (last) {
    ++stats_.kick_checks;
    co_await sim_->Delay(costs_.kick_prepare.value);
    need = vq_->KickPrepare() || need;
  }
  if (need && !params_.kick_outside_lock) {
    ++stats_.kicks_under_lock;
    co_await Notify(cpu);  // virtqueue_kick(): the exit, lock held
    need = false;
  }
  vq_lock_.Unlock(cpu);
  *notify = need;
}

// Before sleeping for a tag: the plug flush ends the batch, so requests
// added without a kick are kicked.
sim::Task VirtioBlk::FlushKick(Cpu& cpu) {
  co_await vq_lock_.Lock(cpu);
  cpu.SetState(CpuState::kRunning);
  ++stats_.kick_checks;
  co_await sim_->Delay(costs_.kick_prepare.value);
  const bool need = vq_->KickPrepare();
  if (need && !params_.kick_outside_lock) co_await Notify(cpu);
  vq_lock_.Unlock(cpu);
  if (need && params_.kick_outside_lock) co_await Notify(cpu);
}

sim::Task VirtioBlk::Submit(Cpu& cpu, BlockRequest& rq, bool last) {
  rq.done = false;
  co_await cpu.Exec(costs_.submit.value);
  while (free_tags_.empty()) {
    ++stats_.tag_waits;
    if (vq_->num_added() > 0) co_await HeldRegion(cpu, FlushKick(cpu));
    if (!free_tags_.empty()) break;
    co_await tag_wait_.Wait();
    co_await cpu.Exec(sim::Time::Zero());  // back on the CPU
  }
  const int tag = free_tags_.back();
  free_tags_.pop_back();
  rqs_[static_cast<size_t>(tag)] = &rq;
  ++stats_.submitted;
  rq.device_start = sim_->Now();
  co_await cpu.Exec(costs_.map_sg.value);
  bool notify = false;
  co_await HeldRegion(cpu, LockedAdd(cpu, rq, tag, last, &notify));
  if (notify) {
    // After e8edca6f: the notify's exit with vq_lock released. Interrupts
    // are on again, but the exit itself is one instruction for the guest.
    co_await cpu.Exec(sim::Time::Zero());
    co_await HeldRegion(cpu, Notify(cpu));
  }
}

sim::Task VirtioBlk::Poll(Cpu& cpu, BlockRequest& rq) {
  // virtio_blk of 3.15 has no poll queues: wait for the interrupt path.
  (void)cpu;
  while (!rq.done) co_await sim_->Delay(sim::Time::Micros(1));
}

void VirtioBlk::LineRaised() { sim_->Spawn(Interrupt()); }

sim::Task VirtioBlk::Interrupt() {
  Cpu& cpu = *vcpus_[static_cast<size_t>(params_.irq_cpu)];
  co_await sim_->Delay(kvm_->costs().irq_inject.value);
  // The vCPU kicked out of the guest and re-entered with the interrupt
  // pending; it is taken once interrupts are on.
  co_await kvm_->IrqKick(cpu);
  co_await HeldRegion(cpu, InterruptBody(cpu));
}

// vm_interrupt() -> vring_interrupt() -> virtblk_done().
sim::Task VirtioBlk::InterruptBody(Cpu& cpu) {
  ++stats_.interrupts;
  cpu.SetState(CpuState::kRunning);
  co_await sim_->Delay(costs_.irq_entry.value);
  if (dev_->msix()) {
    // vp_vring_interrupt: the MSI-X vector names the queue; no register access.
    dev_->MsiTaken();
    if (!vq_->MoreUsed()) co_return;
  } else {
    uint32_t isr = 0;
    co_await kvm_->MmioExitUser(cpu, ExitKind::kMmioIsrRead, dev_->ReadInterruptStatus(&isr));
    co_await kvm_->MmioExitUser(cpu, ExitKind::kMmioIsrAck, dev_->InterruptAck(isr));
    if ((isr & 1) == 0 || !vq_->MoreUsed()) co_return;
  }
  co_await vq_lock_.Lock(cpu);
  cpu.SetState(CpuState::kRunning);
  do {
    vq_->DisableCb();
    while (std::optional<Virtqueue::UsedBuf> b = vq_->GetBuf()) {
      co_await sim_->Delay(costs_.complete.value);
      const int tag = static_cast<int>(b->token);
      BlockRequest* rq = rqs_[static_cast<size_t>(tag)];
      rqs_[static_cast<size_t>(tag)] = nullptr;
      rq->device_end = sim_->Now();
      rq->done = true;
      ++stats_.completed;
      rq->sink->Complete(*rq, cpu);
      free_tags_.push_back(tag);
      if (tag_wait_.has_waiters()) tag_wait_.NotifyOne();
    }
  } while (!vq_->EnableCb());
  vq_lock_.Unlock(cpu);
}

void VirtioBlk::ResetStats() {
  stats_.Reset();
  vq_lock_.ResetStats();
  vq_->ResetStats();
  dev_->ResetStats();
  kvm_->ResetStats();
  for (Cpu* c : vcpus_) c->ResetStats();
}

}  // namespace models
