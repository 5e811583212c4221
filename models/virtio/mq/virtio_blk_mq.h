// virtio_blk with one virtqueue per vCPU and blk_mq_ops->poll(), the
// driver of "[PATCH 0/3] virtio_blk: blk-mq io_poll support" (Hajnoczi,
// May 2021, not merged), over x86 KVM and QEMU's virtio-blk-pci served by
// one IOThread with aio=native, in front of an Optane-class NVMe device.
//
// Guest, per request, on the submitting vCPU (vq = the vCPU's own):
//   submit                       bio, page pinning, blk-mq tag (+ per_page
//                                for every 4 KiB page after the first)
//   spin_lock_irqsave(vq lock)   add_sgs; a HIPRI request makes num_hipri
//                                0 -> 1 and, with callbacks on, turns them
//                                off (virtqueue_disable_cb); kick_prepare
//   unlock; notify               an in-kernel ioeventfd exit (x86 KVM)
// Completion by interrupt (hipri=0): QEMU writes the vq's irqfd, KVM posts
// the MSI (APICv posted interrupts on Cascade Lake) and, the vCPU being
// halted in its idle loop (the fio task sleeps), halt polling notices the
// pending interrupt and re-enters the guest (irq_kick_exit); vring_interrupt
// -> virtblk_done runs the shared reap loop under the vq lock; the sink
// wakes the sleeping task (try_to_wake_up + context switch, the Cpu's
// scheduler costs).
// Completion by polling (hipri=1): Poll() spins on the vCPU; every time the
// used index moves (lock-free virtqueue_more_used) it takes the vq lock and
// runs the same reap loop, completing with the waiter == current shortcut
// (no wakeup). When num_hipri drops back to 0 the callbacks are turned on
// again (eagerly here; the patch re-enables when low-priority requests are
// pending and otherwise on the next low-priority submission -- the same on
// this workload, where a vq carries one kind only).
//
// Host: one IOThread (a single serial server) pops every vq (iothread_submit
// per request: virtqueue_pop, virtio_blk_handle_request, io_submit through
// the host block layer to the NVMe doorbell) and completes (host_irq in the
// host kernel, then iothread_complete: io_getevents, virtqueue_push, and the
// notify test; virtio_notify_irqfd once per vq per batch). IOThread adaptive
// polling as QEMU's aio_poll (util/aio-posix.c, adjust_polling_time with
// the defaults poll-grow 0 -> x2, poll-shrink 0 -> reset): the IOThread
// busy-polls for poll_ns before it blocks; work that arrives within poll_ns
// is noticed without the eventfd wakeup (iothread_wakeup otherwise). After
// each wait of block_ns: poll_ns stays if block_ns <= poll_ns; drops to 0 if
// block_ns > poll_window (poll-max-ns); otherwise doubles (from 0 to 4us),
// capped at poll_window.
// Device: access latency by direction -- (latency - latency_exp_mean) +
// Exp(latency_exp_mean), drawn from the vq's own stream
// (Rng::ForStream(seed, "virtio_blk_mq.device.vq<N>")), mean unchanged --
// then the data transfer over one shared link at the direction's bandwidth
// (random == sequential).
#ifndef VIOSIM_MODELS_VIRTIO_MQ_VIRTIO_BLK_MQ_H_
#define VIOSIM_MODELS_VIRTIO_MQ_VIRTIO_BLK_MQ_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "models/block/block_stack.h"
#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "models/kvm/kvm.h"
#include "models/sync/spinlock.h"
#include "models/virtio/virtqueue.h"
#include "sim/distribution.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/stats.h"
#include "sim/task.h"

namespace models {

struct VirtioBlkMqCosts {
  // Guest.
  Param<sim::Time> submit;        // bio, pin pages, blk-mq get tag, virtio_queue_rq outside the lock
  Param<sim::Time> per_page;      // each further 4 KiB page: pin, sg entry, host DMA map
  Param<sim::Time> add_sgs;       // under the vq lock
  Param<sim::Time> kick_prepare;  // barrier + avail_event read
  Param<sim::Time> irq_entry;     // vector entry, vring_interrupt, EOI (virtualized: no exit)
  Param<sim::Time> complete;      // per used entry: get_buf, blk_mq_complete_request, bio end
  Param<sim::Time> poll_detect;   // the used-index line moving to the polling vCPU + loop exit
  Param<sim::Time> lock_handoff;
  // Host.
  Param<sim::Time> iothread_wakeup;    // eventfd wakes the IOThread out of ppoll
  Param<sim::Time> iothread_submit;    // per request: pop, handle_request, io_submit to the doorbell
  Param<sim::Time> iothread_complete;  // per request: reap the AIO event, push, notify test
  Param<sim::Time> host_irq;           // NVMe MSI-X, nvme_irq, aio_complete (host kernel)
  Param<sim::Time> poll_window;        // IOThread adaptive polling's ceiling (poll-max-ns)
  // Device.
  Param<sim::Time> read_latency;   // mean access time, without the transfer
  Param<sim::Time> write_latency;
  Param<sim::Time> latency_exp_mean;  // exponential part of both (0: fixed latency)
  Param<double> read_bandwidth;    // bytes/s
  Param<double> write_bandwidth;
};

struct VirtioBlkMqStats {
  uint64_t submitted = 0;
  uint64_t kicks = 0;
  uint64_t interrupts = 0;          // vring_interrupt runs
  uint64_t spurious_interrupts = 0; // found nothing to reap (a poller had reaped it)
  uint64_t irq_completions = 0;
  uint64_t polled_completions = 0;
  uint64_t iothread_wakeups = 0;
  uint64_t iothread_poll_grows = 0;  // adaptive polling time raised
  uint64_t cb_disables = 0;         // first HIPRI turned a vq's callbacks off
  uint64_t cb_enables = 0;          // last HIPRI done: callbacks back on
  // Breakdown sums (ns) over completed requests.
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
  // One virtqueue per vCPU. `seed` seeds the device's access-latency
  // streams (the run's seed). REQUIRES: references outlive the stack;
  // costs.latency_exp_mean <= read_latency and <= write_latency.
  VirtioBlkMq(sim::Simulator& sim, std::vector<Cpu*> vcpus, Kvm& kvm, const VirtioBlkMqCosts& costs,
              int ring_size, bool event_idx, uint64_t seed = 1);

  sim::Task Submit(Cpu& cpu, BlockRequest& rq, bool last) override;
  sim::Task Poll(Cpu& cpu, BlockRequest& rq) override;
  void ResetStats() override;

  int num_queues() const { return static_cast<int>(vqs_.size()); }
  bool cb_enabled(int q) const { return vqs_[static_cast<size_t>(q)]->cb_enabled; }
  int num_hipri(int q) const { return vqs_[static_cast<size_t>(q)]->num_hipri; }
  const Virtqueue& vq(int q) const { return vqs_[static_cast<size_t>(q)]->vq; }
  const Spinlock& vq_lock(int q) const { return vqs_[static_cast<size_t>(q)]->lock; }
  const VirtioBlkMqStats& stats() const { return stats_; }
  // Busy time since the last ResetStats, the parts inside the window only:
  // the IOThread's (its wake-ups, submissions and completions) and the
  // device link's (its data transfers, booked when queued).
  sim::Time IothreadBusy() const { return iothread_busy_.BusyUntil(sim_->Now()); }
  sim::Time LinkBusy() const { return link_busy_.BusyUntil(sim_->Now()); }
  // The device's access latency for one request of vq `q` (before its
  // transfer): the fixed part, plus a draw from the vq's own stream when
  // latency_exp_mean > 0, so a vq's draws follow its own requests whatever
  // the other vqs do. Public for tests.
  sim::Time DeviceAccess(int q, bool write);

 private:
  struct Req {
    BlockRequest* rq;
    sim::Time t_submit, t_kick, t_kicked, t_dev_start, t_dev_end, t_pushed;
  };
  struct Vq {
    Vq(sim::Simulator& sim, int n, VirtqueueFeatures f, sim::Time handoff, sim::Rng rng)
        : vq(n, f), lock(sim, "vq_lock", handoff), used(sim), device_rng(rng) {}
    Virtqueue vq;
    Spinlock lock;
    sim::Signal used;          // the IOThread pushed (pollers wait on it)
    int num_hipri = 0;
    int num_lopri = 0;
    bool cb_enabled = true;
    bool irq_pending = false;  // an MSI on its way (coalesced)
    bool needs_notify = false; // IOThread batch_notify_vqs bit
    std::deque<Req*> avail;    // added, not yet popped (avail order)
    std::vector<Req*> by_head;
    sim::Rng device_rng;       // the device's access latencies for this vq's requests
  };
  struct Done {
    int q;
    VirtQueueElement elem;
    Req* req;
  };

  Req* NewReq();
  Vq& VqOf(Cpu& cpu) { return *vqs_[static_cast<size_t>(cpu.id()) % vqs_.size()]; }
  sim::Task Ioeventfd();
  sim::Task IoThread();
  void AdjustPollingTime(sim::Time block);
  sim::Task DeviceIo(int q, VirtQueueElement e, Req* r);
  sim::Task Interrupt(int q);
  sim::Task VringInterrupt(Cpu& cpu, int q);
  sim::Task Reap(Cpu& cpu, Vq& v, bool polled);

  sim::Simulator* sim_;
  std::vector<Cpu*> vcpus_;
  Kvm* kvm_;
  VirtioBlkMqCosts costs_;
  sim::Distribution device_spread_;  // Exp(latency_exp_mean)
  std::vector<std::unique_ptr<Vq>> vqs_;
  sim::Signal iothread_work_;
  bool iothread_kicked_ = false;
  sim::Time iothread_poll_ns_;  // aio_poll's current polling time (ctx->poll_ns)
  std::deque<Done> done_;
  sim::Time link_free_;
  VirtioBlkMqStats stats_;
  sim::BusyTime iothread_busy_;
  sim::BusyTime link_busy_;
  std::vector<std::unique_ptr<Req>> reqs_;  // every Req made
  std::vector<Req*> free_reqs_;             // those not in flight
};

}  // namespace models

#endif  // VIOSIM_MODELS_VIRTIO_MQ_VIRTIO_BLK_MQ_H_
