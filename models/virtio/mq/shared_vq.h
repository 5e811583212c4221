// One request queue of a multiqueue virtio-blk device as the guest's driver
// (drivers/block/virtio_blk.c with the io_poll patch, Linux 5.13) and QEMU's
// device (hw/block/dataplane/virtio-blk.c on an IOThread) both see it: the
// split ring in guest memory (include/uapi/linux/virtio_ring.h) and what a
// request's descriptors carry. Neither side's private state is here.
//
//   vq                 the ring (models/virtio/virtqueue.h): the driver adds,
//                      kicks, gets and turns callbacks off and on; the device
//                      pops, pushes and tests whether to interrupt.
//   used               the used index's cache line: a polling vCPU spins on
//                      it and sees it move when the device pushes.
//   used_event_parked  virtqueue_disable_cb() with EVENT_IDX: since
//                      8d622d21d248 (v5.13) it stores used_event = 0, which
//                      keeps vring_need_event() false, so the device sends
//                      no interrupt while it is parked. The driver parks it
//                      while it keeps the queue's callbacks off for polled
//                      requests (num_hipri) and unparks it when it turns them
//                      back on. The reap loop's own disable_cb and enable_cb
//                      leave it as it is: the device then decides by the
//                      used_event the ring holds.
//   by_head            each in-flight head's request as the device reads it
//                      from the descriptors: the out header's type, the data
//                      length (VirtioBlkMqReq).
//   avail_poll         the device's poll of the avail index (QEMU's aio_poll
//                      of the queue): buffers the driver made available
//                      without a notify are found there.
#ifndef VIOSIM_MODELS_VIRTIO_MQ_SHARED_VQ_H_
#define VIOSIM_MODELS_VIRTIO_MQ_SHARED_VQ_H_

#include <cstdint>
#include <vector>

#include "models/virtio/virtqueue.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace models {

// A request as its descriptors carry it to the device -- virtio_blk_outhdr's
// type (VIRTIO_BLK_T_IN or _OUT) and the data's length -- and the timestamps
// behind the latency breakdown. The timestamps are instrumentation each side
// stamps at its own steps and the driver sums at completion; neither side
// decides anything on them.
struct VirtioBlkMqReq {
  bool write = false;
  uint32_t bytes = 0;
  sim::Time t_submit;     // driver: blk_mq_submit_bio
  sim::Time t_kick;       // driver: the notify's exit begins (or is skipped)
  sim::Time t_kicked;     // driver: back in the guest after it
  sim::Time t_dev_start;  // device: io_submit reached the disk
  sim::Time t_dev_end;    // device: the disk is done with the data
  sim::Time t_pushed;     // device: virtqueue_push
};

struct SharedVq {
  // REQUIRES: `num` a power of two in [1, 32768].
  SharedVq(sim::Simulator& sim, int num, VirtqueueFeatures features)
      : vq(num, features), used(sim), by_head(static_cast<size_t>(num), nullptr) {}

  // The driver made buffers available and decided not to notify: a device
  // polling the avail index finds them.
  void AvailWithoutNotify() {
    if (avail_poll != nullptr) avail_poll->NotifyAll();
  }

  Virtqueue vq;
  sim::Signal used;
  bool used_event_parked = false;
  std::vector<VirtioBlkMqReq*> by_head;
  sim::Signal* avail_poll = nullptr;  // set by the device that polls the ring
};

}  // namespace models

#endif  // VIOSIM_MODELS_VIRTIO_MQ_SHARED_VQ_H_
