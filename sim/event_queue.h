// The simulator's queue of pending events.
//
// An entry is due at a time and carries an insertion sequence number; the
// queue hands entries out in (time, sequence) order, the order of the event
// loop. Keys are unique (sequence numbers are), so the order is total: it
// does not depend on how the queue is laid out.
//
// Two layouts, chosen by how many entries are pending:
//
// - Up to a few hundred: a 4-ary min-heap in one vector. Small heaps are
//   shallow, and a removal there is a handful of compares.
// - Beyond: a timing wheel in front of the heap. Time is cut into buckets
//   of 2^shift picoseconds; the heap holds only the entries of the current
//   bucket and earlier ones, the next kSlots - 1 buckets are unsorted
//   lists (a push is a link), and entries further out wait in a second
//   heap. When the heap runs dry, the next non-empty bucket (found in a
//   bitmap) or the far heap's earliest bucket, whichever comes first,
//   becomes current and its entries go into the heap. So the heap stays a
//   few entries deep, and far entries (a timer a millisecond away) cost
//   nothing on every removal before theirs. The bucket width is chosen when
//   the wheel is set up, from the pending entries: the wheel reaches 8 to
//   16 times their median distance ahead. When every bucket is empty and
//   the far heap holds many entries, the wheel is set up again from them.
//   An entry due in the current bucket or an earlier one goes straight
//   into the heap, so the wheel needs nothing of the event loop beyond the
//   rule every layout needs: nothing is queued before an entry taken out.
//
// The order handed out is the heap's, (time, sequence), in both layouts: a
// bucket's entries are all later than the current bucket's, and the heap
// sorts each bucket it takes in.
//
// The queue moves its entries from one layout to the other when the count
// crosses a threshold, with hysteresis so that a count hovering near it does
// not move them back and forth. Storage only grows; in steady state queueing
// allocates nothing.
#ifndef VIOSIM_SIM_EVENT_QUEUE_H_
#define VIOSIM_SIM_EVENT_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace sim {

class EventQueue {
 public:
  struct Entry {
    int64_t t;     // due time, picoseconds; never negative
    uint64_t seq;  // insertion order
    void* h;       // what to resume
  };
  // Pending counts at which the entries move to the wheel, and back.
  static constexpr std::size_t kToWheel = 512;
  static constexpr std::size_t kToHeap = 128;
  // Buckets of the wheel (a power of two).
  static constexpr int kSlots = 4096;

  EventQueue() { Grow(); }
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  bool empty() const { return heap_n_ == 0 && outside_ == 0; }
  std::size_t size() const { return heap_n_ + outside_; }
  // Drops every pending entry (a stalled run's end); the queue is as new.
  void Clear();

  // Queues `e`. REQUIRES: e.t >= now, and `now` is at or after the time of
  // every entry taken out so far (the event loop's clock); e.seq is larger
  // than every sequence number queued before.
  [[gnu::always_inline]] void Push(Entry e, int64_t now) {
    // The heap with room below the threshold (capacity is always above it):
    // inline. The rest out of line, to keep callers small.
    if (heap_n_ < heap_limit_) [[likely]] {
      PushHeap(e);
      return;
    }
    PushSlow(e.t, e.seq, e.h, now);
  }

  // Takes the earliest entry out into `*out` if it is due at or before
  // `limit`; returns whether it did.
  bool PopDue(int64_t limit, Entry* out) {
    if (wheel_) return PopWheel(limit, out);
    if (heap_n_ == 0 || heap_[0].t > limit) return false;
    *out = PopTop();
    return true;
  }

  // The event loop's own path, split by layout so that the heap's entry
  // stays in registers: while !wheel(), heap_empty(), Top() and PopTop()
  // (REQUIRES: !heap_empty()); else PopWheel(), or its parts inline:
  // Refill() when heap_empty(), then Top() and PopTopWheel().
  bool wheel() const { return wheel_; }
  bool heap_empty() const { return heap_n_ == 0; }
  const Entry& Top() const { return heap_[0]; }
  Entry PopTop() {
    const Entry top = heap_[0];
    PopHeap();
    return top;
  }
  [[gnu::noinline]] bool PopWheel(int64_t limit, Entry* out);
  // With the wheel and an empty heap: moves the next bucket's entries into
  // the heap; false when nothing is pending.
  bool Refill() {
    if (outside_ == 0) return false;
    Advance();
    return true;
  }
  // PopTop() with the wheel (which it leaves when few entries are left).
  Entry PopTopWheel() {
    const Entry top = PopTop();
    if (size() < kToHeap) [[unlikely]] ToHeap();
    return top;
  }

  // The earliest entry's time. REQUIRES: !empty().
  int64_t MinTime() const;

  // Makes the entry (t, from) -- the earliest in order if several match --
  // resume `to` instead, in the same place of the order. Linear in the
  // number pending. Returns whether one was found.
  bool Retarget(int64_t t, void* from, void* to);

 private:
  // (time, seq) order as one 128-bit unsigned compare: branch-free, which
  // matters because heap sifts compare in a pattern no predictor learns.
  // Times are never negative, so the unsigned view keeps their order.
  static unsigned __int128 Key(const Entry& e) {
    return (static_cast<unsigned __int128>(static_cast<uint64_t>(e.t)) << 64) | e.seq;
  }
  static bool Before(const Entry& a, const Entry& b) { return Key(a) < Key(b); }

  // ---- 4-ary heaps: the heap heap_[0, heap_n_), and the wheel's far heap ----
  // Puts `e` into the hole at `i` of the heap h, moving it up.
  static void SiftUp(Entry* h, std::size_t i, Entry e);
  // Removes h[0] from the heap h[0, n) (n >= 1).
  static void PopFrom(Entry* h, std::size_t n);
  // REQUIRES: heap_n_ < capacity_ (always so below kToWheel).
  [[gnu::always_inline]] void PushHeap(Entry e) { SiftUp(heap_.data(), heap_n_++, e); }
  void PopHeap() { PopFrom(heap_.data(), heap_n_--); }
  void Grow();

  // ---- The wheel ----
  static constexpr int kWords = kSlots / 64;
  struct Node {
    Entry e;
    int32_t next;  // the next node of the bucket's list, or -1
  };
  int64_t BucketOf(const Entry& e) const { return e.t >> shift_; }
  // Push beyond the inline heap path. The entry comes as three scalars (in
  // registers), and the common case, a link into a bucket, needs no frame;
  // the rest (PushOther) is out of line.
  [[gnu::noinline]] void PushSlow(int64_t t, uint64_t seq, void* h, int64_t now);
  [[gnu::noinline]] void PushOther(Entry e, int64_t now);
  void PushWheel(Entry e);
  void PushNear(Entry e) {
    if (heap_n_ == capacity_) Grow();
    PushHeap(e);
  }
  // How many buckets after the current one the next non-empty one is (1 to
  // kSlots - 1), or 0 if every bucket is empty.
  int NextSlot() const;
  // Makes the next bucket holding entries current and moves them into the
  // heap. REQUIRES: heap_n_ == 0, outside_ > 0.
  [[gnu::noinline]] void Advance();
  // Sets the wheel up with the heap's entries, current bucket at `now`.
  void ToWheel(int64_t now);
  [[gnu::noinline]] void ToHeap();
  // Empties the buckets and the far heap; the heap alone is in use again.
  void DropWheel();
  // Calls f(entry&) on every entry in the buckets and the far heap.
  template <class F>
  void ForEachOutside(F f);

  bool wheel_ = false;
  std::size_t heap_n_ = 0;   // pending in heap_
  std::size_t outside_ = 0;  // pending in the wheel's buckets and far heap
  // kToWheel while the heap alone is in use, 0 with the wheel: Push's one
  // test.
  std::size_t heap_limit_ = kToWheel;
  std::vector<Entry> heap_;   // only grows (doubling)
  std::size_t capacity_ = 0;  // heap_.size(), kept to spare a division
  // The wheel, apart from the heap's few words, which the event loop reads
  // on every event. Entries of bucket b (cur_ < b < cur_ + kSlots) are in
  // the list heads_[b % kSlots]; later ones in far_ (a heap), which may
  // also hold entries of the buckets in range, queued when they were not.
  int shift_ = 0;
  int64_t cur_ = 0;  // the current bucket: its entries and earlier ones are in heap_
  uint64_t bits_[kWords] = {};  // bit b: heads_[b] is not empty
  std::unique_ptr<int32_t[]> heads_;  // kSlots list heads, made with the first wheel
  std::vector<Node> nodes_;
  int32_t free_ = -1;  // free nodes, linked
  std::vector<Entry> far_;  // a 4-ary heap
};

[[gnu::always_inline]] inline void EventQueue::SiftUp(Entry* h, std::size_t i, Entry e) {
  // Sift the hole up.
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!Before(e, h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = e;
}

inline void EventQueue::PopFrom(Entry* h, std::size_t n) {
  --n;
  if (n == 0) return;
  const Entry last = h[n];
  // Sift the hole down from the root, moving the smallest child up.
  std::size_t i = 0;
  for (;;) {
    const std::size_t c = 4 * i + 1;
    if (c + 4 <= n) {
      // All four children exist: pick the smallest without branches.
      const std::size_t a = Before(h[c + 1], h[c]) ? c + 1 : c;
      const std::size_t b = Before(h[c + 3], h[c + 2]) ? c + 3 : c + 2;
      const std::size_t best = Before(h[b], h[a]) ? b : a;
      if (!Before(h[best], last)) break;
      h[i] = h[best];
      i = best;
      continue;
    }
    if (c >= n) break;
    std::size_t best = c;
    for (std::size_t k = c + 1; k < n; ++k) {
      if (Before(h[k], h[best])) best = k;
    }
    if (Before(h[best], last)) {
      h[i] = h[best];
      i = best;
    }
    break;
  }
  h[i] = last;
}

}  // namespace sim

#endif  // VIOSIM_SIM_EVENT_QUEUE_H_
