#include "models/virtio/virtqueue.h"

#include <algorithm>
#include <cstddef>
#include <cerrno>
#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace models {
namespace {

VirtqueueFeatures Features(bool event_idx, bool indirect = false) {
  VirtqueueFeatures f;
  f.event_idx = event_idx;
  f.indirect_desc = indirect;
  return f;
}

// The device side of QEMU's handle_output loop: pops until empty.
std::vector<VirtQueueElement> PopAll(Virtqueue& vq) {
  std::vector<VirtQueueElement> out;
  while (auto e = vq.Pop()) out.push_back(*e);
  return out;
}

// One buffer through the whole ring: add, pop, push, get. Does not kick and
// does not ask whether to interrupt.
void RoundTrip(Virtqueue& vq, uint64_t token) {
  ASSERT_TRUE(vq.AddSgs(token, 1, 0).ok());
  auto e = vq.Pop();
  ASSERT_TRUE(e.has_value());
  vq.Push(*e, 1);
  auto b = vq.GetBuf();
  ASSERT_TRUE(b.has_value());
  ASSERT_EQ(b->token, token);
}

// ---------------------------------------------------------------------------
// vring_need_event()

TEST(VringNeedEventTest, AcrossWrapAround) {
  // Four adds took the index from 65534 to 2: 65534, 65535, 0, 1.
  EXPECT_FALSE(Virtqueue::VringNeedEvent(65533, 2, 65534));
  EXPECT_TRUE(Virtqueue::VringNeedEvent(65534, 2, 65534));
  EXPECT_TRUE(Virtqueue::VringNeedEvent(65535, 2, 65534));
  EXPECT_TRUE(Virtqueue::VringNeedEvent(0, 2, 65534));
  EXPECT_TRUE(Virtqueue::VringNeedEvent(1, 2, 65534));
  EXPECT_FALSE(Virtqueue::VringNeedEvent(2, 2, 65534));
  EXPECT_FALSE(Virtqueue::VringNeedEvent(3, 2, 65534));
  // One add across the wrap: 65535 -> 0.
  EXPECT_TRUE(Virtqueue::VringNeedEvent(65535, 0, 65535));
  EXPECT_FALSE(Virtqueue::VringNeedEvent(0, 0, 65535));
  EXPECT_FALSE(Virtqueue::VringNeedEvent(65534, 0, 65535));
}

TEST(VringNeedEventTest, WithoutWrap) {
  // 10 -> 15: the other side is told if it asked about 10..14.
  EXPECT_FALSE(Virtqueue::VringNeedEvent(9, 15, 10));
  EXPECT_TRUE(Virtqueue::VringNeedEvent(10, 15, 10));
  EXPECT_TRUE(Virtqueue::VringNeedEvent(12, 15, 10));
  EXPECT_TRUE(Virtqueue::VringNeedEvent(14, 15, 10));
  EXPECT_FALSE(Virtqueue::VringNeedEvent(15, 15, 10));
  EXPECT_FALSE(Virtqueue::VringNeedEvent(16, 15, 10));
  EXPECT_FALSE(Virtqueue::VringNeedEvent(65535, 15, 10));
  // A single step 0 -> 1 crosses only 0.
  EXPECT_TRUE(Virtqueue::VringNeedEvent(0, 1, 0));
  EXPECT_FALSE(Virtqueue::VringNeedEvent(1, 1, 0));
  // Nothing moved: never.
  EXPECT_FALSE(Virtqueue::VringNeedEvent(7, 7, 7));
  EXPECT_FALSE(Virtqueue::VringNeedEvent(6, 7, 7));
}

TEST(VringNeedEventTest, IsMembershipOfTheCrossedWindow) {
  // Every event index against the set of indices walked from old to new.
  const std::pair<uint16_t, int> cases[] = {
      {0, 1}, {0, 255}, {65500, 100}, {65535, 1}, {65535, 2}, {32767, 300}, {40000, 32767},
  };
  for (const auto& [old, count] : cases) {
    std::vector<bool> crossed(65536, false);
    uint16_t i = old;
    for (int n = 0; n < count; ++n) crossed[i++] = true;
    const uint16_t new_idx = i;
    for (int event = 0; event < 65536; ++event) {
      ASSERT_EQ(Virtqueue::VringNeedEvent(static_cast<uint16_t>(event), new_idx, old), crossed[event])
          << "old=" << old << " new=" << new_idx << " event=" << event;
    }
  }
}

// ---------------------------------------------------------------------------
// Driver: adds and kicks

TEST(VirtqueueTest, AvailIdxIsPublishedAtAddTimeNotAtKick) {
  Virtqueue vq(8, Features(true));
  ASSERT_TRUE(vq.AddSgs(1, 1, 1).ok());
  EXPECT_EQ(vq.avail_idx(), 1);
  EXPECT_EQ(vq.num_added(), 1u);
  // The device sees the buffer before any kick.
  EXPECT_FALSE(vq.Empty());
  ASSERT_TRUE(vq.Pop().has_value());
  // The pop published avail_event = 1, so the kick for the add it already
  // consumed is suppressed.
  EXPECT_EQ(vq.avail_event(), 1);
  EXPECT_FALSE(vq.KickPrepare());
  EXPECT_EQ(vq.num_added(), 0u);
}

TEST(VirtqueueTest, EventIdxKicksOnlyOnceWhileTheDeviceHasNotCaughtUp) {
  Virtqueue vq(8, Features(true));
  ASSERT_TRUE(vq.AddSgs(1, 1, 1).ok());
  EXPECT_TRUE(vq.KickPrepare());  // avail_event 0 crossed by 0 -> 1
  ASSERT_TRUE(vq.AddSgs(2, 1, 1).ok());
  EXPECT_FALSE(vq.KickPrepare());  // 1 -> 2 does not cross 0
  ASSERT_TRUE(vq.AddSgs(3, 1, 1).ok());
  EXPECT_FALSE(vq.KickPrepare());
  EXPECT_EQ(vq.stats().kicks, 1u);
  EXPECT_EQ(vq.stats().kicks_suppressed, 2u);
}

TEST(VirtqueueTest, WithoutEventIdxNoNotifySuppressesEveryKick) {
  Virtqueue vq(8, Features(false));
  vq.SetNotification(false);
  EXPECT_EQ(vq.used_flags() & kVringUsedFNoNotify, kVringUsedFNoNotify);
  for (uint64_t t = 1; t <= 3; ++t) {
    ASSERT_TRUE(vq.AddSgs(t, 1, 1).ok());
    EXPECT_FALSE(vq.KickPrepare()) << t;
  }
  vq.SetNotification(true);
  EXPECT_EQ(vq.used_flags(), 0);
  ASSERT_TRUE(vq.AddSgs(4, 1, 1).ok());
  EXPECT_TRUE(vq.KickPrepare());
}

TEST(VirtqueueTest, WithoutEventIdxAndNotificationOnEveryKickGoesOut) {
  Virtqueue vq(8, Features(false));
  for (uint64_t t = 1; t <= 3; ++t) {
    ASSERT_TRUE(vq.AddSgs(t, 1, 1).ok());
    EXPECT_TRUE(vq.KickPrepare()) << t;
  }
  EXPECT_EQ(vq.stats().kicks, 3u);
}

TEST(VirtqueueTest, AfterQemuPopsEverythingTheNextAddKicks) {
  // QEMU 2.0 virtio-blk (non-dataplane) never disables notification; every
  // pop publishes the avail index.
  Virtqueue vq(8, Features(true));
  for (uint64_t t = 1; t <= 3; ++t) {
    ASSERT_TRUE(vq.AddSgs(t, 1, 1).ok());
    vq.KickPrepare();
  }
  EXPECT_EQ(PopAll(vq).size(), 3u);
  EXPECT_EQ(vq.avail_event(), 3);
  ASSERT_TRUE(vq.AddSgs(4, 1, 1).ok());
  EXPECT_TRUE(vq.KickPrepare());
}

TEST(VirtqueueTest, QemuPopPublishesTheCurrentAvailIdxNotLastAvailIdx) {
  Virtqueue vq(8, Features(true));
  for (uint64_t t = 1; t <= 3; ++t) ASSERT_TRUE(vq.AddSgs(t, 1, 1).ok());
  EXPECT_TRUE(vq.KickPrepare());
  // One pop of three: avail_event jumps to 3, not to last_avail_idx 1.
  ASSERT_TRUE(vq.Pop().has_value());
  EXPECT_EQ(vq.last_avail_idx(), 1);
  EXPECT_EQ(vq.avail_event(), 3);
  // So an add while the device still has two to pop kicks again.
  ASSERT_TRUE(vq.AddSgs(4, 1, 1).ok());
  EXPECT_TRUE(vq.KickPrepare());
}

TEST(VirtqueueTest, DisabledNotificationLeavesAvailEventStaleUntilReenabled) {
  // The vhost pattern: disable while draining, enable and re-check at the end.
  Virtqueue vq(16, Features(true));
  ASSERT_TRUE(vq.AddSgs(1, 1, 1).ok());
  EXPECT_TRUE(vq.KickPrepare());
  vq.SetNotification(false);
  ASSERT_TRUE(vq.AddSgs(2, 1, 1).ok());
  ASSERT_TRUE(vq.AddSgs(3, 1, 1).ok());
  EXPECT_EQ(PopAll(vq).size(), 3u);
  EXPECT_EQ(vq.avail_event(), 0);  // pops wrote nothing
  ASSERT_TRUE(vq.AddSgs(4, 1, 1).ok());
  EXPECT_FALSE(vq.KickPrepare());  // 1 -> 4 does not cross the stale 0
  vq.SetNotification(true);
  EXPECT_EQ(vq.avail_event(), 4);
  EXPECT_FALSE(vq.Empty());  // the re-check finds buffer 4
  EXPECT_EQ(PopAll(vq).size(), 1u);
  ASSERT_TRUE(vq.AddSgs(5, 1, 1).ok());
  EXPECT_TRUE(vq.KickPrepare());
}

TEST(VirtqueueTest, AddAt65535UnkickedBuffersKicksItself) {
  Virtqueue vq(1, Features(false));
  for (int n = 1; n < 65535; ++n) {
    auto r = vq.AddSgs(n, 1, 0);
    ASSERT_TRUE(r.ok());
    ASSERT_FALSE(r.notify) << n;
    auto e = vq.Pop();
    ASSERT_TRUE(e.has_value());
    vq.Push(*e, 0);
    ASSERT_TRUE(vq.GetBuf().has_value());
  }
  EXPECT_EQ(vq.num_added(), 65534u);
  auto r = vq.AddSgs(65535, 1, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.notify);
  EXPECT_EQ(vq.num_added(), 0u);
  EXPECT_EQ(vq.stats().kicks, 1u);
}

// ---------------------------------------------------------------------------
// Descriptors

TEST(VirtqueueTest, AddFailsWithEnospcWhenDescriptorsRunOutAndGetBufFreesThem) {
  Virtqueue vq(8, Features(true));
  auto a = vq.AddSgs(1, 1, 2);
  auto b = vq.AddSgs(2, 1, 2);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(vq.num_free(), 2);

  const uint16_t avail = vq.avail_idx();
  const uint16_t free_head = vq.free_head();
  auto c = vq.AddSgs(3, 1, 2);
  EXPECT_EQ(c.err, -ENOSPC);
  EXPECT_TRUE(c.notify);  // an out part: 3.15 notifies anyway
  auto d = vq.AddSgs(4, 0, 3);
  EXPECT_EQ(d.err, -ENOSPC);
  EXPECT_FALSE(d.notify);  // writable only: no forced notify
  EXPECT_EQ(vq.num_free(), 2);
  EXPECT_EQ(vq.avail_idx(), avail);
  EXPECT_EQ(vq.free_head(), free_head);
  EXPECT_EQ(vq.num_added(), 2u);
  EXPECT_EQ(vq.stats().add_enospc, 2u);
  EXPECT_EQ(vq.stats().enospc_notifies, 1u);

  // Two segments still fit.
  EXPECT_TRUE(vq.AddSgs(5, 1, 1).ok());
  EXPECT_EQ(vq.num_free(), 0);

  auto e = vq.Pop();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->index, a.head);
  EXPECT_EQ(e->out_num, 1);
  EXPECT_EQ(e->in_num, 2);
  vq.Push(*e, 100);
  auto got = vq.GetBuf();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->token, 1u);
  EXPECT_EQ(got->len, 100u);
  EXPECT_EQ(vq.num_free(), 3);
  EXPECT_TRUE(vq.AddSgs(3, 1, 2).ok());
  EXPECT_EQ(vq.num_free(), 0);
}

TEST(VirtqueueTest, IndirectDescriptorsTakeOneSlotUntilNoneIsFree) {
  Virtqueue vq(4, Features(false, /*indirect=*/true));
  for (uint64_t t = 1; t <= 4; ++t) ASSERT_TRUE(vq.AddSgs(t, 1, 2).ok()) << t;
  EXPECT_EQ(vq.num_free(), 0);
  // num_free == 0: 3.15 does not go indirect, and three direct slots are
  // not there.
  EXPECT_EQ(vq.AddSgs(5, 1, 2).err, -ENOSPC);
  auto e = vq.Pop();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->out_num, 1);
  EXPECT_EQ(e->in_num, 2);
  vq.Push(*e, 0);
  ASSERT_TRUE(vq.GetBuf().has_value());
  EXPECT_EQ(vq.num_free(), 1);
  EXPECT_TRUE(vq.AddSgs(5, 1, 2).ok());
  EXPECT_EQ(vq.num_free(), 0);
}

TEST(VirtqueueTest, OutOfOrderCompletionsReturnInPushOrderAndRefillTheFreeList) {
  Virtqueue vq(8, Features(false));
  auto a = vq.AddSgs(10, 1, 1);  // descriptors 0, 1
  auto b = vq.AddSgs(20, 2, 0);  // 2, 3
  auto c = vq.AddSgs(30, 0, 3);  // 4, 5, 6
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a.head, 0);
  EXPECT_EQ(b.head, 2);
  EXPECT_EQ(c.head, 4);
  EXPECT_EQ(vq.free_head(), 7);
  auto elems = PopAll(vq);
  ASSERT_EQ(elems.size(), 3u);
  EXPECT_EQ(elems[1].out_num, 2);
  EXPECT_EQ(elems[1].in_num, 0);
  EXPECT_EQ(elems[2].out_num, 0);
  EXPECT_EQ(elems[2].in_num, 3);
  // Batched completion: c and a in one flush, then b.
  vq.Fill(elems[2], 3, 0);
  vq.Fill(elems[0], 1, 1);
  EXPECT_FALSE(vq.MoreUsed());  // nothing visible before the flush
  vq.Flush(2);
  vq.Push(elems[1], 2);
  EXPECT_EQ(vq.inuse(), 0);
  std::vector<std::pair<uint64_t, uint32_t>> got;
  while (auto buf = vq.GetBuf()) got.push_back({buf->token, buf->len});
  EXPECT_EQ(got, (std::vector<std::pair<uint64_t, uint32_t>>{{30, 3}, {10, 1}, {20, 2}}));
  EXPECT_EQ(vq.num_free(), 8);
  // detach_buf pushes each chain on the front of the free list: b's chain
  // (2, 3) is first, then a's (0, 1), then c's (4, 5, 6), then 7.
  EXPECT_EQ(vq.free_head(), 2);
  auto d = vq.AddSgs(40, 4, 4);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.head, 2);
  EXPECT_EQ(vq.num_free(), 0);
  auto e = vq.Pop();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->out_num, 4);
  EXPECT_EQ(e->in_num, 4);
}

// ---------------------------------------------------------------------------
// Device: interrupts

TEST(VirtqueueTest, FirstNotifyAfterResetAlwaysInterrupts) {
  Virtqueue vq(8, Features(true));
  for (uint64_t t = 1; t <= 4; ++t) ASSERT_TRUE(vq.AddSgs(t, 1, 1).ok());
  EXPECT_TRUE(vq.EnableCbDelayed());  // used_event = 3
  EXPECT_EQ(vq.used_event(), 3);
  auto elems = PopAll(vq);
  vq.Push(elems[0], 0);
  EXPECT_FALSE(vq.signalled_used_valid());
  EXPECT_TRUE(vq.ShouldNotify());  // 0 -> 1 does not cross 3, but !valid
  EXPECT_TRUE(vq.signalled_used_valid());
  vq.Push(elems[1], 0);
  EXPECT_FALSE(vq.ShouldNotify());
}

TEST(VirtqueueTest, OnlyThePushThatCrossesUsedEventInterrupts) {
  Virtqueue vq(16, Features(true));
  // One round trip so that signalled_used is valid (used idx 1).
  ASSERT_TRUE(vq.AddSgs(100, 1, 1).ok());
  vq.Push(*vq.Pop(), 0);
  EXPECT_TRUE(vq.ShouldNotify());
  ASSERT_TRUE(vq.GetBuf().has_value());
  EXPECT_EQ(vq.used_event(), 1);

  for (uint64_t t = 1; t <= 8; ++t) ASSERT_TRUE(vq.AddSgs(t, 1, 1).ok());
  auto elems = PopAll(vq);
  ASSERT_EQ(elems.size(), 8u);
  // Three quarters of the eight outstanding: used_event = 1 + 6.
  EXPECT_TRUE(vq.EnableCbDelayed());
  EXPECT_EQ(vq.used_event(), 7);
  for (int k = 0; k < 8; ++k) {
    vq.Push(elems[k], 0);
    // Used idx k + 2; the step 7 -> 8 crosses used_event 7.
    EXPECT_EQ(vq.ShouldNotify(), k == 6) << "push " << k;
  }
  EXPECT_EQ(vq.stats().interrupts, 2u);
  EXPECT_EQ(vq.stats().interrupts_suppressed, 7u);

  // The guest reaps with callbacks on: each get_buf moves used_event.
  int reaped = 0;
  while (vq.GetBuf()) ++reaped;
  EXPECT_EQ(reaped, 8);
  EXPECT_EQ(vq.used_event(), 9);
  ASSERT_TRUE(vq.AddSgs(9, 1, 1).ok());
  vq.Push(*vq.Pop(), 0);
  EXPECT_TRUE(vq.ShouldNotify());
}

TEST(VirtqueueTest, ABatchedFlushInterruptsOnceIfItCrossesUsedEvent) {
  Virtqueue vq(8, Features(true));
  ASSERT_TRUE(vq.AddSgs(100, 1, 1).ok());
  vq.Push(*vq.Pop(), 0);
  EXPECT_TRUE(vq.ShouldNotify());
  ASSERT_TRUE(vq.GetBuf().has_value());  // used_event = 1
  for (uint64_t t = 1; t <= 4; ++t) ASSERT_TRUE(vq.AddSgs(t, 1, 1).ok());
  auto elems = PopAll(vq);
  for (int k = 0; k < 3; ++k) vq.Fill(elems[k], 0, static_cast<uint16_t>(k));
  vq.Flush(3);  // used idx 1 -> 4 crosses 1
  EXPECT_TRUE(vq.ShouldNotify());
  vq.Push(elems[3], 0);  // 4 -> 5: the guest has not read anything since
  EXPECT_FALSE(vq.ShouldNotify());
}

TEST(VirtqueueTest, WithoutEventIdxNoInterruptSuppressesInterrupts) {
  Virtqueue vq(8, Features(false));
  for (uint64_t t = 1; t <= 3; ++t) ASSERT_TRUE(vq.AddSgs(t, 1, 1).ok());
  auto elems = PopAll(vq);
  vq.Push(elems[0], 0);
  EXPECT_TRUE(vq.ShouldNotify());
  vq.DisableCb();
  vq.Push(elems[1], 0);
  EXPECT_FALSE(vq.ShouldNotify());
  EXPECT_FALSE(vq.EnableCb());  // two used buffers are waiting
  vq.Push(elems[2], 0);
  EXPECT_TRUE(vq.ShouldNotify());
}

TEST(VirtqueueTest, NotifyOnEmptyInterruptsWhenTheDeviceRunsDry) {
  for (bool feature : {false, true}) {
    VirtqueueFeatures f;
    f.notify_on_empty = feature;
    Virtqueue vq(8, f);
    for (uint64_t t = 1; t <= 2; ++t) ASSERT_TRUE(vq.AddSgs(t, 1, 1).ok());
    vq.DisableCb();
    auto elems = PopAll(vq);
    vq.Push(elems[0], 0);
    EXPECT_FALSE(vq.ShouldNotify());  // one still in use
    vq.Push(elems[1], 0);
    EXPECT_EQ(vq.ShouldNotify(), feature);
  }
}

TEST(VirtqueueTest, FlushFarPastSignalledUsedInvalidatesIt) {
  // After 65536 pushes without a vring_notify(), used->idx is back at the
  // signalled value and vring_need_event() alone would see no crossing;
  // virtqueue_flush() invalidates signalled_used once the distance passes
  // 32767, so the next check interrupts.
  Virtqueue vq(1, Features(true));
  ASSERT_TRUE(vq.AddSgs(1, 1, 0).ok());
  vq.Push(*vq.Pop(), 0);
  EXPECT_TRUE(vq.ShouldNotify());
  ASSERT_TRUE(vq.GetBuf().has_value());
  EXPECT_EQ(vq.signalled_used(), 1);
  for (int n = 0; n < 32767; ++n) RoundTrip(vq, 2);
  EXPECT_EQ(vq.used_idx(), 32768);
  EXPECT_TRUE(vq.signalled_used_valid());
  RoundTrip(vq, 2);
  EXPECT_FALSE(vq.signalled_used_valid());
  for (int n = 0; n < 32768; ++n) RoundTrip(vq, 2);
  EXPECT_EQ(vq.used_idx(), 1);
  EXPECT_TRUE(vq.ShouldNotify());
}

// ---------------------------------------------------------------------------
// Driver: re-enabling callbacks

TEST(VirtqueueTest, EnableCbReportsBuffersUsedWhileCallbacksWereOff) {
  for (bool event_idx : {false, true}) {
    SCOPED_TRACE(event_idx ? "EVENT_IDX" : "flags");
    Virtqueue vq(8, Features(event_idx));
    for (uint64_t t = 1; t <= 2; ++t) ASSERT_TRUE(vq.AddSgs(t, 1, 1).ok());
    auto elems = PopAll(vq);
    vq.Push(elems[0], 0);
    EXPECT_TRUE(vq.ShouldNotify());
    // virtblk_done(): disable, reap ...
    vq.DisableCb();
    ASSERT_TRUE(vq.GetBuf().has_value());
    EXPECT_EQ(vq.used_event(), 0);  // get_buf leaves it while callbacks are off
    // ... while the device completes another one without interrupting.
    vq.Push(elems[1], 0);
    EXPECT_FALSE(vq.ShouldNotify());
    // The race check catches it.
    EXPECT_FALSE(vq.EnableCb());
    EXPECT_EQ(vq.used_event(), 1);
    ASSERT_TRUE(vq.GetBuf().has_value());
    EXPECT_EQ(vq.used_event(), 2);
    EXPECT_TRUE(vq.EnableCb());
    EXPECT_FALSE(vq.MoreUsed());
  }
}

TEST(VirtqueueTest, EnableCbPrepareAndPollSplitTheRaceCheck) {
  Virtqueue vq(8, Features(true));
  ASSERT_TRUE(vq.AddSgs(1, 1, 1).ok());
  vq.DisableCb();
  const uint16_t seen = vq.EnableCbPrepare();
  EXPECT_TRUE(vq.CallbacksEnabled());
  EXPECT_FALSE(vq.Poll(seen));
  vq.Push(*vq.Pop(), 0);
  EXPECT_TRUE(vq.Poll(seen));
}

// ---------------------------------------------------------------------------
// A long driver/device run: random interleavings of the guest's
// virtio_queue_rq()-style submission (add, add, ..., kick_prepare), the
// device's pop loop (QEMU 2.0 style, or vhost style with notification off
// while draining), out-of-order completions (fill, fill, flush,
// vring_notify) and the guest's interrupt handler (disable_cb, get_buf...,
// enable_cb or enable_cb_delayed, one call per step). Each side acts only
// when notified, so a suppressed kick or interrupt that should have gone out
// leaves the run stuck with buffers outstanding, which the quiescence check
// catches.

class DriverDeviceRun {
 public:
  DriverDeviceRun(VirtqueueFeatures f, bool vhost_style, uint64_t seed)
      : vq_(16, f), rng_(seed), indirect_(f.indirect_desc), vhost_style_(vhost_style) {}

  void Step() {
    const uint64_t r = rng_() % 100;
    if (r < 30) {
      Submit();
    } else if (r < 60) {
      DeviceStep();
    } else if (r < 85) {
      Complete();
    } else {
      GuestIrqStep();
    }
    Check();
  }

  // Runs until nothing is left to happen.
  void Drain() {
    for (int n = 0; n < 100000 && Busy(); ++n) {
      DeviceStep();
      Complete();
      GuestIrqStep();
      Check();
    }
    EXPECT_FALSE(Busy());
    EXPECT_TRUE(outstanding_.empty());
  }

  const Virtqueue& vq() const { return vq_; }
  uint64_t kick_prepares() const { return kick_prepares_; }
  uint64_t should_notifies() const { return should_notifies_; }
  uint64_t returned() const { return returned_; }
  uint64_t enable_cb_races() const { return enable_cb_races_; }

 private:
  struct Buffer {
    uint16_t head;
    int out, in, descs;
  };

  bool Busy() const { return device_running_ || !processing_.empty() || irq_pending_ || in_handler_; }

  // virtio_queue_rq() for a batch of requests, the kick on the last one.
  void Submit() {
    const int batch = 1 + static_cast<int>(rng_() % 4);
    for (int b = 0; b < batch; ++b) {
      int out = static_cast<int>(rng_() % 4);
      const int in = static_cast<int>(rng_() % 4);
      if (out + in == 0) out = 1;
      const int want = (indirect_ && out + in > 1 && vq_.num_free() > 0) ? 1 : out + in;
      const int free_before = vq_.num_free();
      const uint16_t avail_before = vq_.avail_idx();
      const auto r = vq_.AddSgs(next_token_, out, in);
      if (!r.ok()) {
        EXPECT_EQ(r.err, -ENOSPC);
        EXPECT_LT(free_before, want);
        EXPECT_EQ(vq_.num_free(), free_before);
        EXPECT_EQ(vq_.avail_idx(), avail_before);
        EXPECT_EQ(r.notify, out > 0);
        if (r.notify) Kick();
        break;
      }
      EXPECT_FALSE(r.notify);
      EXPECT_EQ(free_before - vq_.num_free(), want);
      EXPECT_EQ(token_of_head_.count(r.head), 0u) << "head reused while outstanding";
      token_of_head_[r.head] = next_token_;
      outstanding_[next_token_] = Buffer{r.head, out, in, want};
      in_flight_descs_ += want;
      ++next_token_;
    }
    ++kick_prepares_;
    if (vq_.KickPrepare()) Kick();
  }

  void Kick() { device_running_ = true; }

  // One iteration of the device's handle_output loop.
  void DeviceStep() {
    if (!device_running_) return;
    if (vhost_style_ && vq_.notification()) vq_.SetNotification(false);
    if (auto e = vq_.Pop()) {
      const auto h = token_of_head_.find(e->index);
      EXPECT_NE(h, token_of_head_.end()) << "popped a head the guest never added";
      if (h == token_of_head_.end()) return;
      const Buffer& b = outstanding_.at(h->second);
      EXPECT_EQ(e->out_num, b.out);
      EXPECT_EQ(e->in_num, b.in);
      processing_.push_back(*e);
      return;
    }
    if (vhost_style_) {
      // vhost_enable_notify(): if buffers slipped in, disable and go on.
      vq_.SetNotification(true);
      if (!vq_.Empty()) return;
    }
    device_running_ = false;  // wait for the next kick
  }

  // Completion of one to three requests in any order, one flush, one check.
  void Complete() {
    if (processing_.empty()) return;
    const int k = 1 + static_cast<int>(rng_() % std::min<size_t>(3, processing_.size()));
    for (int j = 0; j < k; ++j) {
      const size_t pick = rng_() % processing_.size();
      const VirtQueueElement e = processing_[pick];
      processing_.erase(processing_.begin() + static_cast<std::ptrdiff_t>(pick));
      const uint64_t token = token_of_head_.at(e.index);
      const uint32_t len = static_cast<uint32_t>(token * 7 % 4096);
      vq_.Fill(e, len, static_cast<uint16_t>(j));
      pushed_.push_back({token, len});
    }
    vq_.Flush(static_cast<uint16_t>(k));
    ++should_notifies_;
    if (vq_.ShouldNotify()) irq_pending_ = true;
  }

  // vring_interrupt() and virtblk_done(), one ring operation per call.
  void GuestIrqStep() {
    if (!in_handler_) {
      if (!irq_pending_) return;
      irq_pending_ = false;
      if (!vq_.MoreUsed()) return;  // IRQ_NONE
      in_handler_ = true;
      vq_.DisableCb();
      return;
    }
    if (!drained_) {
      // get_buf until it returns NULL; the device may push between this and
      // the enable_cb below, which is the race enable_cb reports.
      if (auto b = vq_.GetBuf()) {
        Reclaim(*b);
      } else {
        drained_ = true;
      }
      return;
    }
    drained_ = false;
    const bool enabled = (rng_() % 4 == 0) ? vq_.EnableCbDelayed() : vq_.EnableCb();
    if (enabled) {
      in_handler_ = false;
    } else {
      ++enable_cb_races_;
      vq_.DisableCb();
    }
  }

  void Reclaim(const Virtqueue::UsedBuf& b) {
    EXPECT_FALSE(pushed_.empty());
    if (pushed_.empty()) return;
    EXPECT_EQ(b.token, pushed_.front().first) << "not in push order";
    EXPECT_EQ(b.len, pushed_.front().second);
    pushed_.pop_front();
    const auto it = outstanding_.find(b.token);
    EXPECT_NE(it, outstanding_.end()) << "token " << b.token << " returned twice";
    if (it == outstanding_.end()) return;
    in_flight_descs_ -= it->second.descs;
    token_of_head_.erase(it->second.head);
    outstanding_.erase(it);
    ++returned_;
  }

  void Check() {
    const int num = vq_.num();
    ASSERT_EQ(vq_.num_free() + in_flight_descs_, num);
    const uint16_t unpopped = static_cast<uint16_t>(vq_.avail_idx() - vq_.last_avail_idx());
    const uint16_t unreaped = static_cast<uint16_t>(vq_.used_idx() - vq_.last_used_idx());
    ASSERT_LE(unpopped, num);
    ASSERT_EQ(unreaped, pushed_.size());
    ASSERT_EQ(static_cast<size_t>(vq_.inuse()), processing_.size());
    ASSERT_EQ(static_cast<uint16_t>(vq_.avail_idx() - vq_.last_used_idx()), outstanding_.size());
    ASSERT_EQ(unpopped + processing_.size() + pushed_.size(), outstanding_.size());
    if (!Busy()) {
      // Nobody will act again until the guest submits: every buffer must be
      // back, or a kick or an interrupt was lost.
      ASSERT_TRUE(vq_.Empty()) << "lost kick";
      ASSERT_FALSE(vq_.MoreUsed()) << "lost interrupt";
      ASSERT_TRUE(outstanding_.empty());
    }
  }

  Virtqueue vq_;
  std::mt19937_64 rng_;  // the standard fixes its output sequence
  bool indirect_;
  bool vhost_style_;
  // Device.
  bool device_running_ = false;
  std::vector<VirtQueueElement> processing_;  // popped, not yet pushed
  // Guest.
  bool irq_pending_ = false;
  bool in_handler_ = false;
  bool drained_ = false;  // in the handler, get_buf found nothing
  std::map<uint16_t, uint64_t> token_of_head_;
  std::map<uint64_t, Buffer> outstanding_;
  std::deque<std::pair<uint64_t, uint32_t>> pushed_;  // push order, not yet reaped
  int in_flight_descs_ = 0;
  uint64_t next_token_ = 1;
  uint64_t kick_prepares_ = 0;
  uint64_t should_notifies_ = 0;
  uint64_t returned_ = 0;
  uint64_t enable_cb_races_ = 0;
};

class LongRunTest : public ::testing::TestWithParam<std::tuple<bool, bool, bool>> {};

TEST_P(LongRunTest, IndicesWrapAndEveryBufferComesBackOnceInPushOrder) {
  const auto [event_idx, indirect, vhost_style] = GetParam();
  const uint64_t seed = 0x5eed0000u + (event_idx ? 4 : 0) + (indirect ? 2 : 0) + (vhost_style ? 1 : 0);
  DriverDeviceRun run(Features(event_idx, indirect), vhost_style, seed);
  for (int n = 0; n < 1500000; ++n) {
    run.Step();
    if (::testing::Test::HasFailure()) return;
  }
  run.Drain();
  const VirtqueueStats& s = run.vq().stats();
  // Both 16-bit indices went round at least twice.
  EXPECT_GT(s.adds, 2u * 65536u);
  EXPECT_EQ(s.pushes, s.adds);
  EXPECT_EQ(s.get_bufs, s.adds);
  EXPECT_EQ(run.returned(), s.adds);
  EXPECT_EQ(s.kicks + s.kicks_suppressed, run.kick_prepares());
  EXPECT_EQ(s.interrupts + s.interrupts_suppressed, run.should_notifies());
  EXPECT_GT(run.enable_cb_races(), 0u);
  if (event_idx) {
    EXPECT_GT(s.kicks_suppressed, 0u);
    EXPECT_GT(s.interrupts_suppressed, 0u);
  } else if (!vhost_style) {
    EXPECT_EQ(s.kicks_suppressed, 0u);  // nobody sets VRING_USED_F_NO_NOTIFY
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, LongRunTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(), ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) ? "EventIdx" : "Flags") +
                                  (std::get<1>(info.param) ? "Indirect" : "Direct") +
                                  (std::get<2>(info.param) ? "Vhost" : "Qemu");
                         });

}  // namespace
}  // namespace models
