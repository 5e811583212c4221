#include "models/virtio/virtqueue.h"

#include <cerrno>
#include <cstdlib>

#include "sim/check.h"

namespace models {

Virtqueue::Virtqueue(int num, VirtqueueFeatures features)
    : num_(num), features_(features), num_free_(num) {
  // vring_new_virtqueue(): "We assume num is a power of 2."
  VIOSIM_CHECK(num >= 1 && num <= 32768 && (num & (num - 1)) == 0, "a ring size is a power of 2 up to 32768");
  mask_ = static_cast<uint16_t>(num - 1);
  desc_.resize(num);
  avail_ring_.assign(num, 0);
  used_ring_.resize(num);
  data_.assign(num, 0);
  is_head_.assign(num, 0);
  // "Put everything in free lists": desc[i].next = i + 1; the last entry's
  // next is whatever the zeroed ring held.
  for (int i = 0; i + 1 < num; ++i) desc_[i].next = static_cast<uint16_t>(i + 1);
}

// ---- Driver side: drivers/virtio/virtio_ring.c, Linux 3.15 ----

// virtqueue_add() (static; reached through virtqueue_add_sgs()).
Virtqueue::AddResult Virtqueue::AddSgs(uint64_t token, int out_num, int in_num) {
  const int total_sg = out_num + in_num;
  // BUG_ON(total_sg > vq->vring.num); BUG_ON(total_sg == 0);
  VIOSIM_CHECK(out_num >= 0 && in_num >= 0 && total_sg > 0 && total_sg <= num_,
               "virtqueue_add_sgs: BUG_ON(total_sg > vq->vring.num) or BUG_ON(total_sg == 0)");

  AddResult r;
  const uint16_t head = free_head_;
  // "If the host supports indirect descriptor tables, and we have multiple
  // buffers, then go indirect": only while at least one descriptor is free.
  const bool indirect = features_.indirect_desc && total_sg > 1 && num_free_ > 0;
  const int descs_used = indirect ? 1 : total_sg;

  if (num_free_ < descs_used) {
    ++stats_.add_enospc;
    // 3.15 notifies the device here, whatever the suppression state, when
    // the buffer has a device-readable part.
    if (out_num > 0) {
      ++stats_.enospc_notifies;
      r.notify = true;
    }
    r.err = -ENOSPC;
    return r;
  }

  num_free_ -= descs_used;
  if (indirect) {
    // One descriptor pointing at a table of total_sg entries (out first, then
    // in); the head keeps its `next`, which is the new free head.
    VringDesc& d = desc_[head];
    d.flags = kVringDescFIndirect;
    d.indirect_out = static_cast<uint16_t>(out_num);
    d.indirect_in = static_cast<uint16_t>(in_num);
    free_head_ = d.next;
  } else {
    // Walk the free list, one descriptor per segment, readable ones first.
    uint16_t i = head;
    uint16_t prev = head;
    for (int n = 0; n < total_sg; ++n) {
      VringDesc& d = desc_[i];
      d.flags = static_cast<uint16_t>(kVringDescFNext | (n >= out_num ? kVringDescFWrite : 0));
      prev = i;
      i = d.next;
    }
    // "Last one doesn't continue."
    desc_[prev].flags &= static_cast<uint16_t>(~kVringDescFNext);
    free_head_ = i;
  }

  // Set token.
  data_[head] = token;
  is_head_[head] = 1;
  // Head into the avail ring, then (after virtio_wmb) the index itself: 3.15
  // publishes avail->idx at add time, not at kick time.
  avail_ring_[avail_idx_ & mask_] = head;
  ++avail_idx_;
  ++num_added_;
  ++stats_.adds;
  r.head = head;

  // "This is very unlikely, but theoretically possible. Kick just in case."
  if (num_added_ == (1u << 16) - 1) r.notify = KickPrepare();
  return r;
}

bool Virtqueue::KickPrepare() {
  // virtio_mb: the new avail->idx is visible before avail_event is read.
  const uint16_t new_idx = avail_idx_;
  const uint16_t old = static_cast<uint16_t>(avail_idx_ - num_added_);
  num_added_ = 0;
  const bool needs_kick = features_.event_idx ? VringNeedEvent(avail_event_, new_idx, old)
                                              : !(used_flags_ & kVringUsedFNoNotify);
  if (needs_kick) {
    ++stats_.kicks;
  } else {
    ++stats_.kicks_suppressed;
  }
  return needs_kick;
}

void Virtqueue::DetachBuf(uint16_t head) {
  // Clear data ptr.
  is_head_[head] = 0;
  // Put back on free list: find end. An indirect head has no NEXT flag, so
  // it returns one descriptor (3.15 kfree()s the table here).
  unsigned i = head;
  while (desc_[i].flags & kVringDescFNext) {
    i = desc_[i].next;
    ++num_free_;
  }
  desc_[i].next = free_head_;
  free_head_ = head;
  // Plus final descriptor.
  ++num_free_;
}

std::optional<Virtqueue::UsedBuf> Virtqueue::GetBuf() {
  if (!MoreUsed()) return std::nullopt;
  // virtio_rmb: read the entry only after seeing used->idx.
  const UsedElem& e = used_ring_[last_used_idx_ & mask_];
  // BAD_RING: "id %u out of range" / "id %u is not a head!". The model treats
  // a broken ring as a bug in the caller.
  VIOSIM_CHECK(e.id < static_cast<uint32_t>(num_) && is_head_[e.id], "BAD_RING: a used id out of range or not a head");
  const UsedBuf buf{data_[e.id], e.len};
  DetachBuf(static_cast<uint16_t>(e.id));
  ++last_used_idx_;
  // "If we expect an interrupt for the next entry, tell host by writing event
  // index and flush out the write before the read in the next get_buf call."
  if (!(avail_flags_ & kVringAvailFNoInterrupt)) used_event_ = last_used_idx_;
  ++stats_.get_bufs;
  return buf;
}

uint16_t Virtqueue::EnableCbPrepare() {
  // "Depending on the VIRTIO_RING_F_EVENT_IDX feature, we need to either
  // clear the flags bit or point the event index at the next entry. Always do
  // both to keep code simple." (3.15)
  avail_flags_ &= static_cast<uint16_t>(~kVringAvailFNoInterrupt);
  used_event_ = last_used_idx_;
  return last_used_idx_;
}

bool Virtqueue::EnableCbDelayed() {
  avail_flags_ &= static_cast<uint16_t>(~kVringAvailFNoInterrupt);
  // The u16 difference is promoted to int before * 3 / 4, as in C.
  const uint16_t bufs =
      static_cast<uint16_t>(static_cast<uint16_t>(avail_idx_ - last_used_idx_) * 3 / 4);
  used_event_ = static_cast<uint16_t>(last_used_idx_ + bufs);
  // virtio_mb, then the race check.
  return !(static_cast<uint16_t>(used_idx_ - last_used_idx_) > bufs);
}

// ---- Device side: hw/virtio/virtio.c, QEMU 2.0 ----

unsigned Virtqueue::NextDesc(unsigned i, unsigned max) const {
  // "If this descriptor says it doesn't chain, we're done."
  if (!(desc_[i].flags & kVringDescFNext)) return max;
  const unsigned next = desc_[i].next;
  // "Desc next is %u": fatal in QEMU (exit(1)).
  VIOSIM_CHECK(next < max, "QEMU: Desc next is out of range");
  return next;
}

std::optional<VirtQueueElement> Virtqueue::PopHead(bool publish_avail_event) {
  // virtqueue_num_heads(): "Guest moved used index from %u to %u" is fatal.
  const uint16_t num_heads = static_cast<uint16_t>(avail_idx_ - last_avail_idx_);
  VIOSIM_CHECK(num_heads <= num_, "QEMU: Guest moved used index beyond the ring");
  if (num_heads == 0) return std::nullopt;

  // virtqueue_get_head(): the ring slot is idx % num.
  const uint16_t head = avail_ring_[last_avail_idx_ % num_];
  ++last_avail_idx_;
  // "Guest says index %u is available": fatal.
  VIOSIM_CHECK(head < num_, "QEMU: Guest says an index beyond the ring is available");
  // QEMU 2.0 publishes the avail index it sees now, not last_avail_idx.
  if (features_.event_idx && publish_avail_event) WriteAvailEvent(avail_idx_);

  VirtQueueElement elem;
  elem.index = head;
  const VringDesc& h = desc_[head];
  if (h.flags & kVringDescFIndirect) {
    // "loop over the indirect descriptor table": its entries are chained
    // i -> i + 1 by the driver, so the counts are what the walk would find.
    elem.out_num = h.indirect_out;
    elem.in_num = h.indirect_in;
  } else {
    const unsigned max = static_cast<unsigned>(num_);
    unsigned i = head;
    do {
      if (desc_[i].flags & kVringDescFWrite) {
        ++elem.in_num;
      } else {
        ++elem.out_num;
      }
      // "Looped descriptor": fatal.
      VIOSIM_CHECK(static_cast<unsigned>(elem.in_num) + elem.out_num <= max, "QEMU: Looped descriptor");
    } while ((i = NextDesc(i, max)) != max);
  }
  ++inuse_;
  ++stats_.pops;
  return elem;
}

void Virtqueue::DiscardVqDesc(int n) {
  VIOSIM_CHECK(n <= inuse_, "discarding more elements than were popped");
  last_avail_idx_ = static_cast<uint16_t>(last_avail_idx_ - n);
  inuse_ -= n;
  stats_.pops -= static_cast<uint64_t>(n);
}

void Virtqueue::Fill(const VirtQueueElement& elem, uint32_t len, uint16_t idx) {
  // idx = (idx + vring_used_idx(vq)) % vq->vring.num, in unsigned int.
  const unsigned slot = (static_cast<unsigned>(idx) + used_idx_) % static_cast<unsigned>(num_);
  used_ring_[slot] = UsedElem{elem.index, len};
}

void Virtqueue::Flush(uint16_t count) {
  // Not a QEMU check (its inuse would go negative): the model refuses to
  // publish more entries than were popped.
  VIOSIM_CHECK(count <= inuse_, "publishing more used entries than were popped");
  // smp_wmb: the entries are written before the index.
  const uint16_t old = used_idx_;
  const uint16_t new_idx = static_cast<uint16_t>(old + count);
  used_idx_ = new_idx;
  inuse_ -= count;
  stats_.pushes += count;
  // Both sides are promoted to int, as in C: a signed 16-bit distance from
  // signalled_used against the unsigned batch size.
  if (static_cast<int16_t>(new_idx - signalled_used_) < static_cast<uint16_t>(new_idx - old)) {
    signalled_used_valid_ = false;
  }
}

void Virtqueue::SetNotification(bool enable) {
  notification_ = enable;
  if (features_.event_idx) {
    WriteAvailEvent(avail_idx_);
  } else if (enable) {
    used_flags_ &= static_cast<uint16_t>(~kVringUsedFNoNotify);
  } else {
    used_flags_ |= kVringUsedFNoNotify;
  }
  // Enabling ends with smp_mb ("Expose avail event/used flags before caller
  // checks the avail idx").
}

bool Virtqueue::ShouldNotify() {
  bool notify;
  // smp_mb: used entries are visible before used_event is read.
  if (features_.notify_on_empty && inuse_ == 0 && avail_idx_ == last_avail_idx_) {
    // "Always notify when queue is empty (when feature acknowledge)";
    // signalled_used is left as it was.
    notify = true;
  } else if (!features_.event_idx) {
    notify = !(avail_flags_ & kVringAvailFNoInterrupt);
  } else {
    const bool v = signalled_used_valid_;
    signalled_used_valid_ = true;
    const uint16_t old = signalled_used_;
    const uint16_t new_idx = used_idx_;
    signalled_used_ = new_idx;
    notify = !v || VringNeedEvent(used_event_, new_idx, old);
  }
  if (notify) {
    ++stats_.interrupts;
  } else {
    ++stats_.interrupts_suppressed;
  }
  return notify;
}

}  // namespace models
