// The guest's virtio_blk with one virtqueue per vCPU and blk_mq_ops->poll(),
// the driver of "[PATCH 0/3] virtio_blk: blk-mq io_poll support" (Hajnoczi,
// May 2021, not merged, on Linux 5.13-rc), as a BlockStack over a virtio
// transport (models/virtio/transport.h: virtio-pci with a vector per queue
// on the case's x86 host). It shares each queue's ring with the device
// (models/virtio/mq/shared_vq.h) and knows neither KVM nor QEMU.
//
// Per request, on the submitting vCPU (vq = the vCPU's own):
//   submit                       bio, page pinning, blk-mq tag (+ per_page
//                                for every 4 KiB page after the first)
//   spin_lock_irqsave(vq lock)   add_sgs; a HIPRI request makes num_hipri
//                                0 -> 1 and, with callbacks on, turns them
//                                off (virtqueue_disable_cb, which parks
//                                used_event); kick_prepare
//   unlock; notify               the transport's notify of the vq
// Completion by interrupt (hipri=0): the transport brings the vq's
// interrupt to its vCPU; vring_interrupt -> virtblk_done runs the shared
// reap loop under the vq lock; the sink wakes the sleeping task
// (try_to_wake_up + context switch, the Cpu's scheduler costs).
// Completion by polling (hipri=1): Poll() spins on the vCPU; every time the
// used index moves (lock-free virtqueue_more_used) it takes the vq lock and
// runs the same reap loop, completing with the waiter == current shortcut
// (no wakeup). When num_hipri drops back to 0 the callbacks are turned on
// again (eagerly here; the patch re-enables when low-priority requests are
// pending and otherwise on the next low-priority submission -- the same on
// this workload, where a vq carries one kind only).
//
// Each kernel function is one coroutine in the order of its C source; the
// vq lock is taken inside it (spin_lock_irqsave: interrupts off, then spin)
// and the interrupt handler runs as a hard interrupt on its vCPU.
#ifndef VIOSIM_MODELS_VIRTIO_GUEST_VIRTIO_BLK_MQ_H_
#define VIOSIM_MODELS_VIRTIO_GUEST_VIRTIO_BLK_MQ_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "models/block/block_stack.h"
#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "models/sync/spinlock.h"
#include "models/virtio/mq/shared_vq.h"
#include "models/virtio/transport.h"
#include "models/virtio/virtqueue.h"
#include "sim/simulator.h"
#include "sim/task.h"

namespace models {

struct VirtioBlkMqCosts {
  Param<sim::Time> submit;        // bio, pin pages, blk-mq get tag, virtio_queue_rq outside the lock
  Param<sim::Time> per_page;      // each further 4 KiB page: pin, sg entry, host DMA map
  Param<sim::Time> add_sgs;       // under the vq lock
  Param<sim::Time> kick_prepare;  // barrier + avail_event read
  Param<sim::Time> irq_entry;     // vector entry, vring_interrupt, EOI (virtualized: no exit)
  Param<sim::Time> complete;      // per used entry: get_buf, blk_mq_complete_request, bio end
  Param<sim::Time> poll_detect;   // the used-index line moving to the polling vCPU + loop exit
  Param<sim::Time> lock_handoff;
};

struct VirtioBlkMqStats {
  uint64_t submitted = 0;
  uint64_t kicks = 0;
  uint64_t interrupts = 0;          // vring_interrupt runs
  uint64_t spurious_interrupts = 0; // found nothing to reap (a poller had reaped it)
  uint64_t irq_completions = 0;
  uint64_t polled_completions = 0;
  uint64_t cb_disables = 0;         // first HIPRI turned a vq's callbacks off
  uint64_t cb_enables = 0;          // last HIPRI done: callbacks back on
  // Breakdown sums (ns) over completed requests, from the timestamps both
  // sides stamp (VirtioBlkMqReq).
  double guest_submit_ns = 0;       // Submit() entry to the notify exit's start
  double kick_ns = 0;               // the notify exit
  double host_ns = 0;               // exit end -> device start (IOThread wait + submit)
  double device_ns = 0;
  double host_complete_ns = 0;      // device end -> used ring push
  double guest_complete_ns = 0;     // push -> sink called (irq path or poll)
  sim::Time since;                  // last reset
  sim::Time last_completion;        // the window for utilisations: [since, last_completion]
  void Reset() { *this = VirtioBlkMqStats(); }
};

class VirtioBlkMq final : public BlockStack {
 public:
  // Queue k is vqs[k], its interrupt routed to vcpus[k]; a vCPU submits on
  // queue id % vqs.size(). Registers each queue's interrupt handler with
  // `transport`. REQUIRES: every reference outlives the driver; as many
  // queues as vCPUs, at least one.
  VirtioBlkMq(sim::Simulator& sim, std::vector<Cpu*> vcpus, std::vector<SharedVq*> vqs, VirtioTransport& transport,
              const VirtioBlkMqCosts& costs);

  sim::Task Submit(Cpu& cpu, BlockRequest& rq, bool last) override;
  sim::Task Poll(Cpu& cpu, BlockRequest& rq) override;
  // The driver's counters, the vq locks', the virtqueues' and the vCPUs'.
  void ResetStats() override;

  int num_queues() const { return static_cast<int>(vqs_.size()); }
  bool cb_enabled(int q) const { return vqs_[static_cast<size_t>(q)]->cb_enabled; }
  int num_hipri(int q) const { return vqs_[static_cast<size_t>(q)]->num_hipri; }
  const Virtqueue& vq(int q) const { return vqs_[static_cast<size_t>(q)]->ring->vq; }
  const Spinlock& vq_lock(int q) const { return vqs_[static_cast<size_t>(q)]->lock; }
  const VirtioBlkMqStats& stats() const { return stats_; }

 private:
  // The driver's request: the issuer's, and what it hands the device.
  struct Req {
    BlockRequest* rq;
    VirtioBlkMqReq d;
  };
  // struct virtio_blk_vq and the patch's per-vq counters.
  struct Vq {
    Vq(sim::Simulator& sim, SharedVq& shared, sim::Time handoff) : ring(&shared), lock(sim, "vq_lock", handoff) {}
    SharedVq* ring;
    Spinlock lock;
    int num_hipri = 0;
    int num_lopri = 0;
    bool cb_enabled = true;
  };

  Req* NewReq();
  int QueueOf(const Cpu& cpu) const { return static_cast<int>(static_cast<size_t>(cpu.id()) % vqs_.size()); }
  // The callbacks turned off or on by the num_hipri logic, used_event
  // parked or unparked with them.
  static void SetCallbacks(Vq& v, bool on) {
    v.cb_enabled = on;
    v.ring->used_event_parked = !on;
  }
  sim::Task VringInterrupt(Cpu& cpu, int q);
  sim::Task Reap(Cpu& cpu, Vq& v, bool polled);

  sim::Simulator* sim_;
  std::vector<Cpu*> vcpus_;
  VirtioTransport* transport_;
  VirtioBlkMqCosts costs_;
  std::vector<std::unique_ptr<Vq>> vqs_;
  VirtioBlkMqStats stats_;
  std::vector<std::unique_ptr<Req>> reqs_;  // every Req made
  std::vector<Req*> free_reqs_;             // those not in flight
};

}  // namespace models

#endif  // VIOSIM_MODELS_VIRTIO_GUEST_VIRTIO_BLK_MQ_H_
