// QEMU's virtio transports between the guest's driver and its virtio-blk
// device (hw/virtio/virtio-mmio.c, virtio-pci.c), with KVM between them
// and the guest (models/kvm): each is the guest's VirtioTransport
// (models/virtio/transport.h) and the device's VirtioBus.
//
// The notify, for both: KVM decides how the guest's write leaves it. With
// an ioeventfd registered on the notify address (KvmCosts::ioeventfd: x86,
// or KVM/ARM from 2015) it is an in-kernel exit that signals the eventfd,
// and QEMU's main loop runs the device's handle_output; without one (the
// 2014 ARM board) it is a userspace exit whose handler -- QEMU's
// virtio_queue_notify, under the BQL -- the vCPU thread runs before the
// vCPU re-enters.
//
// The interrupt, for both: the device's virtio_notify (under the BQL, in
// the main loop) raises it through the transport; the interrupt controller
// injects it into the routed vCPU (KvmCosts::irq_inject), which is kicked
// out of the guest to take it (Kvm::IrqKick) and runs the driver's handler
// as a hard interrupt.
//
//   VirtioMmio  virtio_mmio_update_irq: isr |= VIRTIO_MMIO_INT_VRING and a
//               KVM_IRQ_LINE ioctl (irq_line) for the level-triggered SPI;
//               the guest's vm_interrupt reads InterruptStatus and writes
//               InterruptACK, each a userspace exit handled under the BQL
//               (mmio_register); the ack that clears isr lowers the line
//               (another ioctl). A new interrupt reaches the guest only on
//               the line's low-to-high edge.
//   VirtioPci   msix_notify through an irqfd (irq_line: the eventfd write):
//               an edge, coalesced while one is pending and cleared when
//               the guest takes it; the vector names the queue, so the
//               guest reads no status and acknowledges nothing.
//
// VirtioPciMq is virtio-pci for the multiqueue virtio-blk-pci of the
// blk-poll case on x86 KVM, served by an IOThread (iothread_blk.h): an
// ioeventfd on every queue's notify (an in-kernel exit that signals it; the
// IOThread wakes) and one MSI-X vector per queue whose irqfd the IOThread
// sets (the queue's guest notifier, VirtioGuestNotifiers). A set irqfd
// posts the MSI (kvm_set_msi; APICv posted interrupts on Cascade Lake) to
// the queue's vCPU after irq_inject; sets while one is on its way coalesce
// into it. The vCPU, halted in its idle loop or running the guest, is
// kicked out to take it (Kvm::IrqKick: halt polling notices the pending
// interrupt and re-enters) and runs the driver's handler as a hard
// interrupt.
#ifndef VIOSIM_MODELS_QEMU_VIRTIO_TRANSPORT_H_
#define VIOSIM_MODELS_QEMU_VIRTIO_TRANSPORT_H_

#include <cstdint>
#include <vector>

#include "models/cpu/cpu.h"
#include "models/kvm/kvm.h"
#include "models/qemu/iothread_blk.h"
#include "models/qemu/virtio_blk_device.h"
#include "models/virtio/transport.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

struct VirtioTransportStats {
  uint64_t irq_raises = 0;  // interrupts that reached the guest's controller (an edge)
  uint64_t irq_ioctls = 0;  // KVM_IRQ_LINE calls, or irqfd writes
};

class QemuVirtioTransport : public VirtioTransport, public VirtioBus {
 public:
  // REQUIRES: `kvm` and `dev` outlive the transport.
  QemuVirtioTransport(sim::Simulator& sim, Kvm& kvm, VirtioBlkDevice& dev);

  // One queue: queue 0.
  using VirtioTransport::Notify;
  using VirtioTransport::SetInterrupt;
  sim::Task Notify(Cpu& vcpu, int queue) final;
  void SetInterrupt(int queue, Cpu& target, Handler handler) final;
  void ResetStats() override { stats_ = VirtioTransportStats(); }
  const VirtioTransportStats& stats() const { return stats_; }

 protected:
  // The interrupt went to the guest's controller: it is injected into the
  // routed vCPU after irq_inject.
  void Raise();

  sim::Simulator* sim_;
  Kvm* kvm_;
  VirtioBlkDevice* dev_;
  VirtioTransportStats stats_;

 private:
  sim::Task Inject();
  // On the routed vCPU: kicked out of the guest, then the driver's handler.
  sim::Task Deliver(Cpu& vcpu);

  Cpu* target_ = nullptr;
  Handler handler_;
};

class VirtioMmio final : public QemuVirtioTransport {
 public:
  using QemuVirtioTransport::QemuVirtioTransport;

  sim::Task Acknowledge(Cpu& vcpu, bool* vring) override;
  sim::Task NotifyIrq(Task& main) override;

  // The register handlers vCPU thread `vcpu` runs for the guest's reads of
  // InterruptStatus and writes of InterruptACK, under the BQL.
  sim::Task ReadInterruptStatus(int vcpu, uint32_t* isr);
  sim::Task InterruptAck(int vcpu, uint32_t bits);

 private:
  uint32_t isr_ = 0;
  bool line_ = false;
};

class VirtioPci final : public QemuVirtioTransport {
 public:
  using QemuVirtioTransport::QemuVirtioTransport;

  sim::Task Acknowledge(Cpu& vcpu, bool* vring) override;
  sim::Task NotifyIrq(Task& main) override;

 private:
  bool pending_ = false;  // an MSI sent and not yet taken by the guest
};

class VirtioPciMq final : public VirtioTransport, public VirtioGuestNotifiers {
 public:
  // As many queues as `dev` has. REQUIRES: `kvm` and `dev` outlive the
  // transport; KVM with ioeventfd (kvm.costs().ioeventfd).
  VirtioPciMq(sim::Simulator& sim, Kvm& kvm, IoThreadBlk& dev);

  using VirtioTransport::Notify;
  using VirtioTransport::SetInterrupt;
  sim::Task Notify(Cpu& vcpu, int queue) override;
  void SetInterrupt(int queue, Cpu& target, Handler handler) override;
  sim::Task Acknowledge(Cpu& vcpu, bool* vring) override;
  void SetGuestNotifier(int queue) override;

 private:
  // Queue `queue`'s MSI-X vector: its destination, the driver's handler,
  // and whether its irqfd has an interrupt on its way.
  struct Vector {
    Cpu* target = nullptr;
    Handler handler;
    bool pending = false;
  };

  sim::Task Inject(int queue);
  // On the routed vCPU: kicked out to take the interrupt, then the
  // driver's handler.
  sim::Task Deliver(int queue, Cpu& vcpu);

  sim::Simulator* sim_;
  Kvm* kvm_;
  IoThreadBlk* dev_;
  std::vector<Vector> vectors_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_QEMU_VIRTIO_TRANSPORT_H_
