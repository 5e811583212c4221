// The split virtqueue (legacy vring) shared by a guest driver and a device,
// with both sides' private state, as of Linux 3.15 (drivers/virtio/
// virtio_ring.c, the driver) and QEMU 2.0 (hw/virtio/virtio.c, the device).
//
// A pure data structure: no simulated time passes inside. Each method is one
// function of the kernel or of QEMU, named after it; the caller charges its
// cost (a barrier, a cache-line transfer, an exit) and turns a "notify" answer
// into the transport's notification (a kick's MMIO/PIO write, an interrupt).
//
// Shared memory, as include/uapi/linux/virtio_ring.h lays it out:
//   desc[num]                     descriptor table (flags, next; addresses and
//                                 lengths are not modelled)
//   avail: flags, idx, ring[num], used_event     written by the driver
//   used:  flags, idx, ring[num] {id, len}, avail_event   written by the device
// Indices are free-running 16-bit counters; a slot is idx & (num - 1). All
// wrap-around arithmetic is the real uint16_t arithmetic.
//
// Notification suppression, both directions:
//   driver -> device (kick): without VIRTIO_RING_F_EVENT_IDX the device sets
//     VRING_USED_F_NO_NOTIFY; with it the device publishes avail_event and the
//     driver kicks only when its batch of adds crossed it (VringNeedEvent).
//   device -> driver (interrupt): without EVENT_IDX the driver sets
//     VRING_AVAIL_F_NO_INTERRUPT; with it the driver publishes used_event.
#ifndef VIOSIM_MODELS_VIRTIO_VIRTQUEUE_H_
#define VIOSIM_MODELS_VIRTIO_VIRTQUEUE_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace models {

// include/uapi/linux/virtio_ring.h.
inline constexpr uint16_t kVringDescFNext = 1;          // VRING_DESC_F_NEXT
inline constexpr uint16_t kVringDescFWrite = 2;         // VRING_DESC_F_WRITE
inline constexpr uint16_t kVringDescFIndirect = 4;      // VRING_DESC_F_INDIRECT
inline constexpr uint16_t kVringUsedFNoNotify = 1;      // VRING_USED_F_NO_NOTIFY
inline constexpr uint16_t kVringAvailFNoInterrupt = 1;  // VRING_AVAIL_F_NO_INTERRUPT

// Feature bits negotiated between driver and device.
struct VirtqueueFeatures {
  bool event_idx = false;        // VIRTIO_RING_F_EVENT_IDX (bit 29)
  bool indirect_desc = false;    // VIRTIO_RING_F_INDIRECT_DESC (bit 28)
  // VIRTIO_F_NOTIFY_ON_EMPTY (bit 24): QEMU offers it, but a Linux driver does
  // not acknowledge it (no driver lists it), so it is off in a Linux guest.
  bool notify_on_empty = false;
};

// Counters for reports. The driver side counts in the guest's functions, the
// device side in QEMU's.
struct VirtqueueStats {
  uint64_t adds = 0;              // virtqueue_add_sgs() that succeeded
  uint64_t add_enospc = 0;        // virtqueue_add_sgs() that returned -ENOSPC
  uint64_t enospc_notifies = 0;   // vq->notify() forced by -ENOSPC with an out part
  uint64_t kicks = 0;             // virtqueue_kick_prepare() returned true
  uint64_t kicks_suppressed = 0;  // virtqueue_kick_prepare() returned false
  uint64_t get_bufs = 0;          // virtqueue_get_buf() that returned a buffer
  uint64_t pops = 0;              // virtqueue_pop() that returned an element
  uint64_t pushes = 0;            // used entries published by virtqueue_flush()
  uint64_t interrupts = 0;             // vring_notify() returned true
  uint64_t interrupts_suppressed = 0;  // vring_notify() returned false
  void Reset() { *this = VirtqueueStats(); }
};

// A popped buffer, the part of QEMU's VirtQueueElement the model keeps: the
// head descriptor's index (elem->index) and the number of device-readable
// (out) and device-writable (in) segments.
struct VirtQueueElement {
  uint16_t index = 0;
  uint16_t out_num = 0;
  uint16_t in_num = 0;
};

class Virtqueue {
 public:
  // vring_new_virtqueue() (3.15) with a callback, and QEMU's queue reset
  // state (virtio_reset(): notification on, signalled_used invalid): all
  // descriptors free and chained 0 -> 1 -> ... -> num-1, every index zero.
  // REQUIRES: `num` a power of two in [1, 32768] (the kernel's and the
  // legacy layout's limit); aborts otherwise.
  Virtqueue(int num, VirtqueueFeatures features);

  // vring_need_event() (include/uapi/linux/virtio_ring.h; the same code is in
  // QEMU and vhost): having just moved an index from `old` to `new_idx`,
  // should the side that asked for `event_idx` be told? True iff event_idx is
  // in [old, new_idx) modulo 2^16.
  static bool VringNeedEvent(uint16_t event_idx, uint16_t new_idx, uint16_t old) {
    return static_cast<uint16_t>(new_idx - event_idx - 1) < static_cast<uint16_t>(new_idx - old);
  }

  // ---- Driver (guest) side: drivers/virtio/virtio_ring.c, Linux 3.15 ----

  struct AddResult {
    int err = 0;          // 0, or -ENOSPC as virtqueue_add_sgs() returns it
    uint16_t head = 0;    // head descriptor of the chain (when err == 0)
    // The caller must run the transport's notify (one kick). 3.15 does so
    // itself in two places: on -ENOSPC when the buffer has an out part
    // ("for historical reasons", vq->notify() unconditionally), and when
    // num_added reaches 65535 (virtqueue_kick(), i.e. KickPrepare() here,
    // whose answer this is).
    bool notify = false;
    bool ok() const { return err == 0; }
  };
  // virtqueue_add_sgs() -> virtqueue_add(): a buffer of `out_num`
  // device-readable then `in_num` device-writable segments, identified by
  // `token` (the kernel's `data`). Takes one descriptor per segment from the
  // free list, or a single one when VIRTIO_RING_F_INDIRECT_DESC is on, there
  // are at least two segments and num_free > 0 (the kmalloc'd indirect table
  // is assumed to succeed). Writes the head into avail->ring and, after
  // virtio_wmb, increments avail->idx itself: in 3.15 the device can see the
  // buffer before any kick (there is no shadow avail index yet). num_added++.
  // REQUIRES: out_num, in_num >= 0, 1 <= out_num + in_num <= num (BUG_ON).
  AddResult AddSgs(uint64_t token, int out_num, int in_num);

  // virtqueue_kick_prepare(): after virtio_mb, old = avail->idx - num_added,
  // new = avail->idx, num_added = 0; with EVENT_IDX
  // vring_need_event(avail_event, new, old), otherwise
  // !(used->flags & VRING_USED_F_NO_NOTIFY). True: the caller must
  // virtqueue_notify() (which need not be under the lock).
  bool KickPrepare();

  struct UsedBuf {
    uint64_t token;
    uint32_t len;  // bytes the device wrote (used->ring[].len)
  };
  // virtqueue_get_buf(): if last_used_idx != used->idx (more_used), after
  // virtio_rmb reads used->ring[last_used_idx & (num-1)], frees the chain
  // (detach_buf) and increments last_used_idx. Then, if callbacks are enabled
  // (avail->flags lacks NO_INTERRUPT), writes used_event = last_used_idx and
  // runs virtio_mb: 3.15 does this whatever the EVENT_IDX feature (the field
  // is simply ignored without it), so the caller should charge a full
  // barrier per call while CallbacksEnabled().
  std::optional<UsedBuf> GetBuf();

  // more_used(): last_used_idx != used->idx. vring_interrupt() returns
  // IRQ_NONE without calling the callback when this is false.
  bool MoreUsed() const { return last_used_idx_ != used_idx_; }

  // virtqueue_disable_cb(): avail->flags |= VRING_AVAIL_F_NO_INTERRUPT. With
  // EVENT_IDX this is only a hint the device ignores; what suppresses
  // interrupts then is that used_event stops moving (GetBuf() leaves it).
  void DisableCb() { avail_flags_ |= kVringAvailFNoInterrupt; }
  // virtqueue_enable_cb_prepare(): clears NO_INTERRUPT and writes
  // used_event = last_used_idx (both, whatever the feature); returns
  // last_used_idx for Poll().
  uint16_t EnableCbPrepare();
  // virtqueue_poll(): after virtio_mb, true if used->idx moved past
  // `last_used_idx` (more used buffers to process).
  bool Poll(uint16_t last_used_idx) const { return last_used_idx != used_idx_; }
  // virtqueue_enable_cb() = !Poll(EnableCbPrepare()): false when used
  // buffers arrived while callbacks were off, so the caller must loop again
  // (the disable_cb / get_buf / enable_cb loop of virtblk_done()).
  bool EnableCb() { return !Poll(EnableCbPrepare()); }
  // virtqueue_enable_cb_delayed(): clears NO_INTERRUPT and asks for the
  // interrupt only after three quarters of the outstanding buffers:
  // bufs = (u16)(avail->idx - last_used_idx) * 3 / 4,
  // used_event = last_used_idx + bufs; after virtio_mb returns false if more
  // than `bufs` are already used.
  bool EnableCbDelayed();

  // ---- Device side: hw/virtio/virtio.c, QEMU 2.0 ----

  // virtqueue_pop(): if avail->idx != last_avail_idx (virtqueue_num_heads;
  // more than num heads is fatal, as QEMU's exit(1)), reads the head at
  // avail->ring[last_avail_idx++ % num]; with EVENT_IDX then writes
  // avail_event = avail->idx, the *current* avail index (vring_avail_event(),
  // a no-op while notification is off); then walks the chain (or indirect
  // table) counting out and in segments. inuse++.
  std::optional<VirtQueueElement> Pop() { return PopHead(/*publish_avail_event=*/true); }

  // ---- Device side as vhost does it: drivers/vhost/vhost.c, Linux 3.0 ----
  // vhost_get_vq_desc(): the same walk as Pop(), but avail_event is not
  // written: vhost publishes it only in vhost_enable_notify() (which is
  // SetNotification(true) here), so while vhost processes a batch the
  // guest's kicks stay suppressed by the stale avail_event.
  std::optional<VirtQueueElement> GetVqDesc() { return PopHead(/*publish_avail_event=*/false); }
  // vhost_discard_vq_desc(): gives back the last `n` chains taken
  // (last_avail_idx -= n), as get_rx_bufs() does when the ring holds too
  // few buffers for a packet. REQUIRES: n <= inuse().
  void DiscardVqDesc(int n);

  // virtqueue_fill(): writes used->ring[(used->idx + idx) % num] =
  // {elem.index, len}; not visible until Flush().
  void Fill(const VirtQueueElement& elem, uint32_t len, uint16_t idx);
  // virtqueue_flush(): after smp_wmb, used->idx += count; inuse -= count; if
  // the new used->idx passed signalled_used ((int16_t)(new - signalled_used)
  // < (uint16_t)(new - old)), signalled_used_valid = false.
  void Flush(uint16_t count);
  // virtqueue_push() = Fill(elem, len, 0) + Flush(1).
  void Push(const VirtQueueElement& elem, uint32_t len) {
    Fill(elem, len, 0);
    Flush(1);
  }

  // virtio_queue_set_notification(): notification = enable; with EVENT_IDX
  // writes avail_event = avail->idx, which is a no-op when disabling (the
  // flag is already off), so disabling only leaves avail_event stale; without
  // EVENT_IDX clears or sets VRING_USED_F_NO_NOTIFY. Enabling ends with
  // smp_mb, so the caller must then re-check Empty().
  void SetNotification(bool enable);

  // vring_notify() (the test inside virtio_notify(); later QEMU calls it
  // virtio_should_notify()): after smp_mb, true if VIRTIO_F_NOTIFY_ON_EMPTY
  // and nothing is in use and the ring is empty; otherwise without EVENT_IDX
  // !(avail->flags & NO_INTERRUPT); with EVENT_IDX
  // old = signalled_used, new = signalled_used = used->idx, and
  // !signalled_used_valid || vring_need_event(used_event, new, old) (the
  // first call after reset always notifies). True: the caller raises the
  // interrupt (isr |= 1, virtio_notify_vector()).
  bool ShouldNotify();

  // Heads the driver has made available and the device not yet taken.
  int num_heads_available() const { return static_cast<uint16_t>(avail_idx_ - last_avail_idx_); }
  // virtio_queue_empty(): avail->idx == last_avail_idx.
  bool Empty() const { return avail_idx_ == last_avail_idx_; }

  // ---- Inspection ----
  int num() const { return num_; }
  const VirtqueueFeatures& features() const { return features_; }
  // Shared ring.
  uint16_t avail_idx() const { return avail_idx_; }
  uint16_t avail_flags() const { return avail_flags_; }
  uint16_t used_event() const { return used_event_; }
  uint16_t used_idx() const { return used_idx_; }
  uint16_t used_flags() const { return used_flags_; }
  uint16_t avail_event() const { return avail_event_; }
  // Driver private (struct vring_virtqueue).
  int num_free() const { return num_free_; }
  unsigned num_added() const { return num_added_; }
  uint16_t last_used_idx() const { return last_used_idx_; }
  uint16_t free_head() const { return free_head_; }
  bool CallbacksEnabled() const { return !(avail_flags_ & kVringAvailFNoInterrupt); }
  // Device private (struct VirtQueue).
  uint16_t last_avail_idx() const { return last_avail_idx_; }
  uint16_t signalled_used() const { return signalled_used_; }
  bool signalled_used_valid() const { return signalled_used_valid_; }
  bool notification() const { return notification_; }
  int inuse() const { return inuse_; }

  const VirtqueueStats& stats() const { return stats_; }
  void ResetStats() { stats_.Reset(); }

 private:
  struct VringDesc {
    uint16_t flags = 0;
    uint16_t next = 0;
    // A VRING_DESC_F_INDIRECT descriptor: its table's readable and writable
    // entries (the ring holds their byte length, len = 16 * entries).
    uint16_t indirect_out = 0;
    uint16_t indirect_in = 0;
  };
  struct UsedElem {
    uint32_t id = 0;
    uint32_t len = 0;
  };

  std::optional<VirtQueueElement> PopHead(bool publish_avail_event);
  // detach_buf(): returns the chain at `head` to the free list.
  void DetachBuf(uint16_t head);
  // QEMU's virtqueue_next_desc(): the next descriptor of a chain, or `max`
  // at its end.
  unsigned NextDesc(unsigned i, unsigned max) const;
  // QEMU's vring_avail_event(vq, val) (2.0 name; vring_set_avail_event()
  // later): writes avail_event unless notification is off.
  void WriteAvailEvent(uint16_t val) {
    if (notification_) avail_event_ = val;
  }

  int num_;
  uint16_t mask_;
  VirtqueueFeatures features_;

  // Shared memory.
  std::vector<VringDesc> desc_;
  uint16_t avail_flags_ = 0;
  uint16_t avail_idx_ = 0;
  std::vector<uint16_t> avail_ring_;
  uint16_t used_event_ = 0;  // vring_used_event(): avail->ring[num]
  uint16_t used_flags_ = 0;
  uint16_t used_idx_ = 0;
  std::vector<UsedElem> used_ring_;
  uint16_t avail_event_ = 0;  // vring_avail_event(): after used->ring[num]

  // Driver private.
  uint16_t free_head_ = 0;
  unsigned num_added_ = 0;
  uint16_t last_used_idx_ = 0;
  int num_free_;
  std::vector<uint64_t> data_;     // token per head (vq->data[])
  std::vector<uint8_t> is_head_;   // vq->data[i] != NULL

  // Device private.
  uint16_t last_avail_idx_ = 0;
  uint16_t signalled_used_ = 0;
  bool signalled_used_valid_ = false;
  bool notification_ = true;
  int inuse_ = 0;

  VirtqueueStats stats_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_VIRTIO_VIRTQUEUE_H_
