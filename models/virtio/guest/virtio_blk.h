// The guest's virtio_blk driver of Linux 3.15 (drivers/block/virtio_blk.c,
// blk-mq version) over a virtio transport (models/virtio/transport.h:
// virtio-mmio on the case's board), as a BlockStack.
//
// blk-mq: one hardware queue of 64 tags shared by all vCPUs (3.13-3.15:
// nr_hw_queues = 1, queue_depth = 64). A submitter that finds no tag sleeps
// (percpu_ida_alloc -> schedule()) until one is freed and it is woken
// (percpu_ida_free -> wake_up, from virtblk_done under vq_lock); before it
// sleeps, requests it added without a kick are kicked (the plug is flushed
// on schedule()).
//
// virtio_queue_rq(), on the submitting vCPU:
//   blk-mq submission, out_hdr, blk_rq_map_sg        (outside the lock)
//   spin_lock_irqsave(vq_lock)
//   virtqueue_add_sgs: out_hdr | data | status        (indirect: 1 slot)
//   before e8edca6f: if (last) virtqueue_kick()       -> the notify's exit
//                    happens with vq_lock held, interrupts off
//   after  e8edca6f: if (last && kick_prepare()) notify = true
//   spin_unlock_irqrestore(vq_lock)
//   after: if (notify) virtqueue_notify()             -> exit, lock free
// The notify is the transport's (its exit KVM's choice).
//
// Completion: the device interrupts through the transport, which brings
// the interrupt to vCPU `irq_cpu` (the SPI's target, the MSI's
// destination). The handler acknowledges it through the transport
// (virtio-mmio's vm_interrupt: an InterruptStatus read and an InterruptACK
// write, each a userspace exit on the case's board), then vring_interrupt()
// -> virtblk_done() under the same vq_lock: disable_cb, get_buf +
// blk_mq_end_io per used entry, enable_cb, again while enable_cb finds
// more.
//
// Each kernel function is one coroutine in the order of its C source; the
// locks are taken inside it (spin_lock_irqsave: interrupts off, then spin),
// and the interrupt handler runs as a hard interrupt on its vCPU.
#ifndef VIOSIM_MODELS_VIRTIO_GUEST_VIRTIO_BLK_H_
#define VIOSIM_MODELS_VIRTIO_GUEST_VIRTIO_BLK_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "models/block/block_stack.h"
#include "models/cpu/cpu.h"
#include "models/cpu/spin_traps.h"
#include "models/cpu/param.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "models/sync/spinlock.h"
#include "models/virtio/transport.h"
#include "models/virtio/virtqueue.h"
#include "sim/simulator.h"
#include "sim/task.h"

namespace models {

struct VirtioBlkGuestCosts {
  Param<sim::Time> submit;        // io_submit's block path: blk_mq_make_request, tag, request init
  Param<sim::Time> map_sg;        // out_hdr and blk_rq_map_sg, outside the lock
  Param<sim::Time> add_sgs;       // virtqueue_add_sgs under vq_lock (indirect table)
  Param<sim::Time> kick_prepare;  // virtio_mb + avail_event read
  Param<sim::Time> irq_entry;     // GIC acknowledge, handle_irq, vm_interrupt's own code
  Param<sim::Time> complete;      // per used entry: get_buf, blk_mq_end_io, aio completion
  Param<sim::Time> lock_handoff;  // vq_lock's cache line moving to the next ticket
};

struct VirtioBlkParams {
  bool kick_outside_lock = false;  // e8edca6f
  int queue_depth = 64;            // blk-mq tags
  int irq_cpu = 0;                 // the SPI's target vCPU
};

struct VirtioBlkStats {
  uint64_t submitted = 0;
  uint64_t completed = 0;
  uint64_t kick_checks = 0;   // kick_prepare calls
  uint64_t kicks = 0;         // notifies (exits) issued
  uint64_t kicks_under_lock = 0;
  uint64_t interrupts = 0;    // vm_interrupt runs
  uint64_t tag_waits = 0;
  void Reset() { *this = VirtioBlkStats(); }
};

class VirtioBlk final : public BlockStack {
 public:
  // Registers its interrupt handler with `transport`. REQUIRES: every
  // reference outlives the stack; `vcpus` non-empty.
  VirtioBlk(sim::Simulator& sim, std::vector<Cpu*> vcpus, Virtqueue& vq, VirtioTransport& transport,
            const VirtioBlkGuestCosts& costs, const VirtioBlkParams& params);

  sim::Task Submit(Cpu& cpu, BlockRequest& rq, bool last) override;
  sim::Task Poll(Cpu& cpu, BlockRequest& rq) override;
  // The driver's counters, vq_lock, the virtqueue's and the vCPUs'.
  void ResetStats() override;

  const Spinlock& vq_lock() const { return vq_lock_; }
  // The platform's spin side effects: a vCPU that waits for vq_lock runs
  // `traps` until it has the lock (arm64 ticket waiters sleep in WFE, which
  // KVM/ARM traps). Null: waiting is spinning only.
  void set_spin_traps(SpinTraps* traps) { spin_traps_ = traps; }
  const VirtioBlkStats& stats() const { return stats_; }
  const std::vector<Cpu*>& vcpus() const { return vcpus_; }

 private:
  sim::Task QueueRq(Cpu& cpu, BlockRequest& rq, int tag, bool last);
  sim::Task Notify(Cpu& cpu);
  sim::Task FlushKick(Cpu& cpu);
  // spin_lock(&vblk->vq_lock) by `cpu` (interrupts already off), with the
  // platform's spin side effects while it waits.
  sim::Task LockVq(Cpu& cpu);
  // The queue's interrupt handler (vm_interrupt / vp_vring_interrupt).
  sim::Task VmInterrupt(Cpu& cpu);
  sim::Task VirtblkDone(Cpu& cpu);

  sim::Simulator* sim_;
  std::vector<Cpu*> vcpus_;
  Virtqueue* vq_;
  VirtioTransport* transport_;
  VirtioBlkGuestCosts costs_;
  VirtioBlkParams params_;
  Spinlock vq_lock_;
  SpinTraps* spin_traps_ = nullptr;
  std::vector<uint64_t> spin_generation_;  // per vCPU, by index in vcpus_
  std::vector<BlockRequest*> rqs_;  // by tag
  std::vector<int> free_tags_;
  std::deque<Task*> tag_waiters_;  // the tag pool's wait queue, FIFO
  VirtioBlkStats stats_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_VIRTIO_GUEST_VIRTIO_BLK_H_
