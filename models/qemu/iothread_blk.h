// QEMU's multiqueue virtio-blk-pci served by one IOThread with aio=native
// (hw/block/dataplane/virtio-blk.c, hw/block/virtio-blk.c, block/linux-aio.c,
// util/aio-posix.c), in front of the host's NVMe device
// (models/nvme/link_device.h). It shares each queue's ring with the guest's
// driver (models/virtio/mq/shared_vq.h) and reaches the guest only through
// its transport's guest notifiers (VirtioPciMq, virtio_transport.h).
//
// The IOThread is one serial server. Each turn of its event loop:
//   completions   qemu_laio_completion_bh -> virtio_blk_rw_complete ->
//                 virtio_blk_req_complete per request (iothread_complete:
//                 io_getevents, virtqueue_push, the queue marked in
//                 batch_notify_vqs); a polling vCPU sees the used index move
//   submissions   virtio_blk_handle_vq per queue: virtqueue_pop,
//                 virtio_blk_handle_request and io_submit through the host
//                 block layer to the NVMe doorbell (iothread_submit each)
//   notify        notify_guest_bh: virtio_notify_irqfd for each marked
//                 queue whose vring_need_event() test passes and whose
//                 used_event the driver has not parked
// A request in the host: the device's access and transfer, then nvme_irq
// and aio_complete in the host kernel (host_irq), which wakes the IOThread.
//
// Adaptive polling as aio_poll (adjust_polling_time with the defaults
// poll-grow 0 -> x2, poll-shrink 0 -> reset): the IOThread busy-polls for
// poll_ns before it blocks; work that arrives within poll_ns is noticed
// without the eventfd wakeup (iothread_wakeup otherwise). After each wait of
// block_ns: poll_ns stays if block_ns <= poll_ns; drops to 0 if block_ns >
// poll_window (poll-max-ns); otherwise doubles (from 0 to 4us), capped at
// poll_window. The queues' ioeventfds, the completions' eventfd and the
// avail rings it polls all wake the one loop.
#ifndef VIOSIM_MODELS_QEMU_IOTHREAD_BLK_H_
#define VIOSIM_MODELS_QEMU_IOTHREAD_BLK_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "models/cpu/param.h"
#include "models/nvme/link_device.h"
#include "models/virtio/mq/shared_vq.h"
#include "models/virtio/virtqueue.h"
#include "sim/simulator.h"
#include "sim/stats.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

struct IoThreadBlkCosts {
  Param<sim::Time> iothread_wakeup;    // eventfd wakes the IOThread out of ppoll
  Param<sim::Time> iothread_submit;    // per request: pop, handle_request, io_submit to the doorbell
  Param<sim::Time> iothread_complete;  // per request: reap the AIO event, push, notify test
  Param<sim::Time> host_irq;           // NVMe MSI-X, nvme_irq, aio_complete (host kernel)
  Param<sim::Time> poll_window;        // adaptive polling's ceiling (poll-max-ns)
};

struct IoThreadBlkStats {
  uint64_t wakeups = 0;     // waits that ended in ppoll's eventfd wakeup
  uint64_t poll_grows = 0;  // adaptive polling time raised
  void Reset() { *this = IoThreadBlkStats(); }
};

// The device's side of its transport: the queues' guest notifiers
// (VirtQueue::guest_notifier), eventfds the transport binds to the guest's
// interrupts.
class VirtioGuestNotifiers {
 public:
  virtual ~VirtioGuestNotifiers() = default;
  // event_notifier_set(&vq->guest_notifier) for queue `queue`, by the
  // IOThread. Does not suspend.
  virtual void SetGuestNotifier(int queue) = 0;
};

class IoThreadBlk {
 public:
  // Queue k is vqs[k]; its requests draw their access latencies from
  // `disk`'s stream k. REQUIRES: every reference outlives it.
  IoThreadBlk(sim::Simulator& sim, std::vector<SharedVq*> vqs, NvmeLinkDevice& disk, const IoThreadBlkCosts& costs);
  // The transport whose guest notifiers the IOThread sets. REQUIRES: set
  // before Start (the transport sets it).
  void set_guest_notifiers(VirtioGuestNotifiers* n) { notifiers_ = n; }
  // Starts the IOThread.
  void Start();

  // eventfd_signal on queue `queue`'s host notifier (its ioeventfd), in
  // the vCPU's in-kernel exit. Does not suspend.
  sim::Task Ioeventfd(int queue);

  int num_queues() const { return static_cast<int>(vqs_.size()); }
  const IoThreadBlkStats& stats() const { return stats_; }
  // The IOThread's busy time (its wake-ups, submissions and completions)
  // since the last ResetStats, the parts inside the window only.
  sim::Time Busy() const { return busy_.BusyUntil(sim_->Now()); }
  void ResetStats() {
    stats_.Reset();
    busy_.Reset(sim_->Now());
  }

 private:
  struct Done {
    int q;
    VirtQueueElement elem;
    VirtioBlkMqReq* req;
  };

  sim::Task IoThread();
  void AdjustPollingTime(sim::Time block);
  sim::Task CompleteRequests();
  sim::Task HandleRequest(int q, VirtQueueElement e);
  sim::Task Aio(int q, VirtQueueElement e, VirtioBlkMqReq* r);
  void NotifyGuestBh();

  sim::Simulator* sim_;
  std::vector<SharedVq*> vqs_;
  NvmeLinkDevice* disk_;
  IoThreadBlkCosts costs_;
  VirtioGuestNotifiers* notifiers_ = nullptr;
  sim::Signal work_;            // the IOThread's event loop: anything to do
  sim::Time poll_ns_;           // aio_poll's current polling time (ctx->poll_ns)
  std::vector<char> batch_notify_vqs_;
  std::deque<Done> done_;       // completed in the host, not yet reaped
  IoThreadBlkStats stats_;
  sim::BusyTime busy_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_QEMU_IOTHREAD_BLK_H_
