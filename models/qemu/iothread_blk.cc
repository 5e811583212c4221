// QEMU's virtio-blk dataplane on an IOThread (iothread_blk.h):
// hw/block/dataplane/virtio-blk.c, hw/block/virtio-blk.c, block/linux-aio.c
// and util/aio-posix.c's aio_poll.
#include "models/qemu/iothread_blk.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "sim/check.h"

namespace models {

IoThreadBlk::IoThreadBlk(sim::Simulator& sim, std::vector<SharedVq*> vqs, NvmeLinkDevice& disk,
                         const IoThreadBlkCosts& costs)
    : sim_(&sim),
      vqs_(std::move(vqs)),
      disk_(&disk),
      costs_(costs),
      work_(sim),
      batch_notify_vqs_(vqs_.size(), 0) {
  for (SharedVq* v : vqs_) v->avail_poll = &work_;
}

void IoThreadBlk::Start() {
  VIOSIM_CHECK(notifiers_ != nullptr, "the device is on a transport before the IOThread starts");
  sim_->Spawn(IoThread());
}

// The in-kernel half of the notify exit: eventfd_signal on the queue's
// ioeventfd, which the IOThread's loop polls and waits on.
sim::Task IoThreadBlk::Ioeventfd(int queue) {
  (void)queue;  // every queue's host notifier wakes the one loop
  work_.NotifyAll();
  co_return;
}

// The IOThread's event loop (iothread_run -> aio_poll): completions, then
// every vq's avail ring, then notify_guest_bh; when there is nothing to do,
// poll for poll_ns and block in ppoll.
sim::Task IoThreadBlk::IoThread() {
  for (;;) {
    bool any_avail = false;
    for (SharedVq* v : vqs_) any_avail = any_avail || !v->vq.Empty();
    if (done_.empty() && !any_avail) {
      const sim::Time wait_start = sim_->Now();
      co_await work_.Wait();
      const sim::Time block = sim_->Now() - wait_start;
      // Polled for poll_ns, then blocked in ppoll: the eventfd wakes it.
      if (block > poll_ns_) {
        ++stats_.wakeups;
        busy_.Book(sim_->Now(), sim_->Now() + costs_.iothread_wakeup.value);
        co_await sim_->Delay(costs_.iothread_wakeup.value);
      }
      AdjustPollingTime(block);
      continue;
    }
    co_await CompleteRequests();
    // virtio_blk_handle_vq() for each queue: pop every available request.
    // (The pop loop stays here: a child coroutine per queue that finds
    // nothing would complete without suspending, and where tail calls are
    // off -- sanitizer builds -- each resumption of this loop would nest on
    // the stack, one frame per queue.)
    for (int q = 0; q < num_queues(); ++q) {
      while (std::optional<VirtQueueElement> e = vqs_[static_cast<size_t>(q)]->vq.Pop()) {
        co_await HandleRequest(q, *e);
      }
    }
    NotifyGuestBh();
  }
}

// adjust_polling_time() (util/aio-posix.c) with poll-grow and poll-shrink
// at their defaults (0: double, and reset to 0).
void IoThreadBlk::AdjustPollingTime(sim::Time block) {
  const sim::Time max = costs_.poll_window.value;
  if (block <= poll_ns_) return;  // the sweet spot
  if (block > max) {
    poll_ns_ = sim::Time::Zero();  // would poll too long: stop polling
  } else if (poll_ns_ < max) {
    poll_ns_ = poll_ns_ > sim::Time::Zero() ? poll_ns_ * 2 : sim::Time::Micros(4);  // start at 4us
    poll_ns_ = std::min(poll_ns_, max);
    ++stats_.poll_grows;
  }
}

// qemu_laio_completion_bh() -> virtio_blk_rw_complete() ->
// virtio_blk_req_complete() for every completed request: virtqueue_push,
// and virtio_blk_data_plane_notify() marks the queue in batch_notify_vqs.
sim::Task IoThreadBlk::CompleteRequests() {
  while (!done_.empty()) {
    const Done d = done_.front();
    done_.pop_front();
    busy_.Book(sim_->Now(), sim_->Now() + costs_.iothread_complete.value);
    co_await sim_->Delay(costs_.iothread_complete.value);
    SharedVq& v = *vqs_[static_cast<size_t>(d.q)];
    v.vq.Push(d.elem, d.req->write ? 1 : d.req->bytes + 1);  // the data (a read's) and the status byte
    d.req->t_pushed = sim_->Now();
    batch_notify_vqs_[static_cast<size_t>(d.q)] = 1;
    v.used.NotifyAll();
  }
}

// A popped request through virtio_blk_handle_request() and linux-aio's
// io_submit to the device.
sim::Task IoThreadBlk::HandleRequest(int q, VirtQueueElement e) {
  VirtioBlkMqReq* r = vqs_[static_cast<size_t>(q)]->by_head[e.index];
  const sim::Time c = costs_.iothread_submit.value;
  busy_.Book(sim_->Now(), sim_->Now() + c);
  co_await sim_->Delay(c);
  sim_->Spawn(Aio(q, e, r));
}

// One request in the host after io_submit: the device's access and
// transfer, then nvme_irq and aio_complete in the host kernel, whose eventfd
// wakes the IOThread.
sim::Task IoThreadBlk::Aio(int q, VirtQueueElement e, VirtioBlkMqReq* r) {
  r->t_dev_start = sim_->Now();
  co_await disk_->Io(q, r->write, r->bytes);
  r->t_dev_end = sim_->Now();
  co_await sim_->Delay(costs_.host_irq.value);
  done_.push_back({q, e, r});
  work_.NotifyAll();
}

// notify_guest_bh(): virtio_notify_irqfd() for each marked queue. Its
// virtio_should_notify() is the ring's vring_need_event() test, which a
// parked used_event (the driver's virtqueue_disable_cb) keeps false.
void IoThreadBlk::NotifyGuestBh() {
  for (size_t q = 0; q < vqs_.size(); ++q) {
    if (!batch_notify_vqs_[q]) continue;
    batch_notify_vqs_[q] = 0;
    SharedVq& v = *vqs_[q];
    const bool should = v.vq.ShouldNotify();
    if (should && !v.used_event_parked) notifiers_->SetGuestNotifier(static_cast<int>(q));
  }
}

}  // namespace models
