#include "models/qemu/virtio_transport.h"

#include <utility>

#include "sim/check.h"

namespace models {

QemuVirtioTransport::QemuVirtioTransport(sim::Simulator& sim, Kvm& kvm, VirtioBlkDevice& dev)
    : sim_(&sim), kvm_(&kvm), dev_(&dev) {
  dev_->set_bus(this);
}

// The guest's notify write, as KVM routes it.
sim::Task QemuVirtioTransport::Notify(Cpu& vcpu, int queue) {
  VIOSIM_CHECK(queue == 0, "QEMU 2.0's virtio-blk has one queue");
  if (kvm_->costs().ioeventfd) {
    co_await kvm_->MmioExitKernel(vcpu, ExitKind::kMmioNotify, dev_->SignalIoeventfd(vcpu.id()));
  } else {
    co_await kvm_->MmioExitUser(vcpu, ExitKind::kMmioNotify, dev_->QueueNotify(vcpu.id()));
  }
}

void QemuVirtioTransport::SetInterrupt(int queue, Cpu& target, Handler handler) {
  VIOSIM_CHECK(queue == 0, "QEMU 2.0's virtio-blk has one queue");
  target_ = &target;
  handler_ = std::move(handler);
}

void QemuVirtioTransport::Raise() {
  ++stats_.irq_raises;
  if (target_ != nullptr) sim_->Spawn(Inject());
}

// The interrupt controller brings the interrupt to its target vCPU.
sim::Task QemuVirtioTransport::Inject() {
  co_await sim_->Delay(kvm_->costs().irq_inject.value);
  target_->RaiseIrq(Deliver(*target_));
}

sim::Task QemuVirtioTransport::Deliver(Cpu& vcpu) {
  co_await kvm_->IrqKick(vcpu);
  co_await handler_(vcpu);
}

// virtio_mmio_update_irq after virtio_notify set VIRTIO_MMIO_INT_VRING:
// qemu_set_irq, a KVM_IRQ_LINE ioctl; the guest sees the rising edge.
sim::Task VirtioMmio::NotifyIrq(Task& main) {
  isr_ |= 1;
  ++stats_.irq_ioctls;
  co_await kvm_->WithDistLock(main, dev_->costs().irq_line.value);
  if (!line_) {
    line_ = true;
    Raise();
  }
}

// vm_interrupt() (drivers/virtio/virtio_mmio.c, 3.15): readl of
// InterruptStatus, writel of it to InterruptACK; the vring's bit says
// whether vring_interrupt runs.
sim::Task VirtioMmio::Acknowledge(Cpu& vcpu, bool* vring) {
  uint32_t isr = 0;
  co_await kvm_->MmioExitUser(vcpu, ExitKind::kMmioIsrRead, ReadInterruptStatus(vcpu.id(), &isr));
  co_await kvm_->MmioExitUser(vcpu, ExitKind::kMmioIsrAck, InterruptAck(vcpu.id(), isr));
  *vring = (isr & 1) != 0;
}

sim::Task VirtioMmio::ReadInterruptStatus(int vcpu, uint32_t* isr) {
  co_await dev_->LockForExit(vcpu);
  co_await dev_->ThreadCpu(vcpu).Run(dev_->costs().mmio_register.value);
  *isr = isr_;
  co_await dev_->UnlockAfterExit(vcpu);
}

// virtio_mmio_write of InterruptACK: the bits cleared; at zero the line
// is lowered (another KVM_IRQ_LINE ioctl).
sim::Task VirtioMmio::InterruptAck(int vcpu, uint32_t bits) {
  co_await dev_->LockForExit(vcpu);
  co_await dev_->ThreadCpu(vcpu).Run(dev_->costs().mmio_register.value);
  isr_ &= ~bits;
  if (isr_ == 0 && line_) {
    ++stats_.irq_ioctls;
    co_await kvm_->WithDistLock(dev_->thread(vcpu), dev_->costs().irq_line.value);
    line_ = false;
  }
  co_await dev_->UnlockAfterExit(vcpu);
}

// virtio_pci_notify -> msix_notify through the vector's irqfd: one eventfd
// write; the guest's controller gets a new edge unless one is pending.
sim::Task VirtioPci::NotifyIrq(Task& main) {
  ++stats_.irq_ioctls;
  co_await main.Run(dev_->costs().irq_line.value);
  if (!pending_) {
    pending_ = true;
    Raise();
  }
}

// vp_vring_interrupt: the vector names the queue; no register is read.
sim::Task VirtioPci::Acknowledge(Cpu& vcpu, bool* vring) {
  (void)vcpu;
  pending_ = false;
  *vring = true;
  co_return;
}

VirtioPciMq::VirtioPciMq(sim::Simulator& sim, Kvm& kvm, IoThreadBlk& dev)
    : sim_(&sim), kvm_(&kvm), dev_(&dev), vectors_(static_cast<size_t>(dev.num_queues())) {
  VIOSIM_CHECK(kvm_->costs().ioeventfd, "an IOThread is notified through ioeventfds (x86 KVM)");
  dev_->set_guest_notifiers(this);
}

// The guest's write of the queue index to the notify register: KVM's
// in-kernel exit signals the queue's ioeventfd halfway through it.
sim::Task VirtioPciMq::Notify(Cpu& vcpu, int queue) {
  co_await kvm_->MmioExitKernel(vcpu, ExitKind::kMmioNotify, dev_->Ioeventfd(queue));
}

void VirtioPciMq::SetInterrupt(int queue, Cpu& target, Handler handler) {
  VIOSIM_CHECK(queue >= 0 && queue < static_cast<int>(vectors_.size()), "a vector per queue of the device");
  Vector& v = vectors_[static_cast<size_t>(queue)];
  v.target = &target;
  v.handler = std::move(handler);
}

// The irqfd of the queue's vector: a new interrupt unless one is on its way.
void VirtioPciMq::SetGuestNotifier(int queue) {
  Vector& v = vectors_[static_cast<size_t>(queue)];
  if (v.pending) return;
  v.pending = true;
  sim_->Spawn(Inject(queue));
}

// irqfd -> kvm_set_msi: the MSI posted to its destination after
// irq_inject; the irqfd takes a new interrupt from then on.
sim::Task VirtioPciMq::Inject(int queue) {
  Vector& v = vectors_[static_cast<size_t>(queue)];
  co_await sim_->Delay(kvm_->costs().irq_inject.value);
  v.pending = false;
  v.target->RaiseIrq(Deliver(queue, *v.target));
}

sim::Task VirtioPciMq::Deliver(int queue, Cpu& vcpu) {
  co_await kvm_->IrqKick(vcpu);
  co_await vectors_[static_cast<size_t>(queue)].handler(vcpu);
}

// vp_vring_interrupt: the vector names the queue; no register is read and
// nothing is acknowledged.
sim::Task VirtioPciMq::Acknowledge(Cpu& vcpu, bool* vring) {
  (void)vcpu;
  *vring = true;
  co_return;
}

}  // namespace models
