// The virtio transport as a guest driver sees it: what stands between
// drivers/block/virtio_blk.c and the device, as virtio-mmio
// (drivers/virtio/virtio_mmio.c) and virtio-pci (virtio_pci.c) do in Linux.
// The driver knows only this: it notifies a queue, it registers the
// handler of the queue's interrupt on the vCPU the interrupt is routed to,
// and its handler acknowledges the interrupt through the transport. Queues
// are numbered as the device lists them (the index virtio-pci's notify
// register takes); a device of one queue has queue 0, which the overloads
// without an index name.
//
// Which way a notify leaves the guest -- a userspace exit that QEMU
// emulates, or an in-kernel exit when an ioeventfd is registered on the
// address -- and how an interrupt reaches the vCPU are KVM's and the
// VMM's, decided when the transport is built (VirtioMmio and VirtioPci in
// models/qemu/virtio_transport.h), never by the driver.
#ifndef VIOSIM_MODELS_VIRTIO_TRANSPORT_H_
#define VIOSIM_MODELS_VIRTIO_TRANSPORT_H_

#include <utility>

#include "absl/functional/any_invocable.h"
#include "models/cpu/cpu.h"
#include "sim/task.h"

namespace models {

class VirtioTransport {
 public:
  virtual ~VirtioTransport() = default;

  // virtqueue_notify(): the guest's write to queue `queue`'s notify
  // register by code running on `vcpu`; returns when the vCPU is back in
  // the guest.
  virtual sim::Task Notify(Cpu& vcpu, int queue) = 0;
  sim::Task Notify(Cpu& vcpu) { return Notify(vcpu, 0); }

  // The guest's handler of a queue's interrupt, run on `vcpu` as a hard
  // interrupt once the interrupt has been injected and the vCPU taken out
  // of the guest to receive it.
  using Handler = absl::AnyInvocable<sim::Task(Cpu&)>;
  // Registers `handler` for queue `queue`'s interrupt, routed to `target`
  // (the SPI's target vCPU, the MSI's destination).
  virtual void SetInterrupt(int queue, Cpu& target, Handler handler) = 0;
  void SetInterrupt(Cpu& target, Handler handler) { SetInterrupt(0, target, std::move(handler)); }

  // The transport's part of the handler, on `vcpu` after its entry:
  // vm_interrupt's InterruptStatus read and InterruptACK write
  // (virtio-mmio), or nothing for an MSI-X vector that names the queue
  // (vp_vring_interrupt). *vring: whether the queue's callback is to run
  // (vring_interrupt).
  virtual sim::Task Acknowledge(Cpu& vcpu, bool* vring) = 0;

  virtual void ResetStats() {}
};

}  // namespace models

#endif  // VIOSIM_MODELS_VIRTIO_TRANSPORT_H_
