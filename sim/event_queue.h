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
// - Beyond: a timing wheel. Time is cut into buckets of 2^shift
//   picoseconds; the kSlots buckets from the current one on are unsorted
//   lists, so a push is a link, and taking the earliest entry out is a
//   search of the current bucket's list, or of the next non-empty bucket's
//   (found in a bitmap): buckets hold an entry or two. Entries beyond the
//   wheel's reach (a timer a millisecond away) and the rare one queued
//   before the current bucket wait in a heap beside it, whose top every
//   removal compares with the buckets' earliest. The bucket width is
//   chosen when the wheel is set up, from the pending entries: the mean
//   spacing of the sixteen due next. The wheel is set up again every
//   kRetuneEvery removals, and when every bucket is empty while the far
//   heap holds many entries.
//
// The order handed out is (time, sequence) in both layouts: buckets are
// taken in time order, the earliest of a bucket first, and the far heap's
// top is compared with the buckets' earliest entry on every removal.
//
// The queue moves its entries from one layout to the other when the count
// crosses a threshold, with hysteresis so that a count hovering near it does
// not move them back and forth. Storage only grows; in steady state queueing
// allocates nothing but two scratch arrays each time the wheel is set up.
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
  static constexpr std::size_t kToWheel = 192;
  static constexpr std::size_t kToHeap = 64;
  // Buckets of the wheel (a power of two).
  static constexpr int kSlots = 4096;
  // Removals after which the wheel is set up again, its bucket width chosen
  // anew from the entries then pending (a run's first events are seldom
  // spread as its later ones).
  static constexpr int kRetuneEvery = 1 << 16;

  EventQueue() { Grow(); }
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  bool empty() const { return heap_n_ == 0 && outside_ == 0; }
  std::size_t size() const { return heap_n_ + outside_; }
  // Drops every pending entry (a stalled run's end); the queue is as new.
  void Clear();

  // Queues `e`. REQUIRES: e.t >= now, and `now` is at or after the time of
  // every entry taken out so far (the event loop's clock); e.seq is unique
  // (the order is by time, then sequence number, whatever order the
  // entries came in).
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
  // (REQUIRES: !heap_empty()); else PopWheel() (PopDue with the wheel).
  bool wheel() const { return wheel_; }
  bool heap_empty() const { return heap_n_ == 0; }
  const Entry& Top() const { return heap_[0]; }
  Entry PopTop() {
    const Entry top = heap_[0];
    PopHeap();
    return top;
  }
  [[gnu::always_inline]] bool PopWheel(int64_t limit, Entry* out) {
    // The current bucket, or the next one holding entries: the bitmap's
    // word from the current bucket on answers both in most removals (the
    // next bucket holding entries is seldom 64 away).
    int slot = static_cast<int>(cur_ & kMask);
    int64_t bucket = cur_;
    if (const uint64_t ahead = bits_[slot >> 6] >> (slot & 63); (ahead & 1) == 0) {
      int d;
      if (ahead != 0) [[likely]] {
        d = __builtin_ctzll(ahead);
      } else {
        d = NextSlot();
        if (d == 0) return PopFar(limit, out);
      }
      bucket += d;
      slot = static_cast<int>(bucket & kMask);
    }
    // Its earliest entry: the link that points at it.
    Node* nodes = nodes_.data();
    int32_t* best = &heads_[slot];
    for (int32_t* at = &nodes[*best].next; *at >= 0; at = &nodes[*at].next) {
      if (Before(nodes[*at].e, nodes[*best].e)) best = at;
    }
    const int32_t n = *best;
    if (far_t_ <= nodes[n].e.t && FarFirst(nodes[n].e)) [[unlikely]] return PopFar(limit, out);
    if (nodes[n].e.t > limit) return false;
    *out = nodes[n].e;
    *best = nodes[n].next;
    if (const int32_t h = heads_[slot]; h < 0) {
      bits_[slot >> 6] &= ~(uint64_t{1} << (slot & 63));
    } else {
      __builtin_prefetch(&nodes[h]);  // the next removal starts its scan there
    }
    nodes[n].next = free_;
    free_ = n;
    cur_ = bucket;
    if (--outside_ < kToHeap) [[unlikely]] {
      ToHeap();
    } else if (--retune_in_ == 0) [[unlikely]] {
      ToWheel(out->t);
    }
    return true;
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
  static constexpr int64_t kMask = kSlots - 1;
  struct Node {
    Entry e;
    int32_t next;  // the next node of the bucket's list, or -1
  };
  int64_t BucketOf(int64_t t) const { return t >> shift_; }
  // Push beyond the inline heap path. The entry comes as three scalars (in
  // registers), and the common case, a bucket in reach and a free node,
  // needs no frame; the rest (PushOther) is out of line.
  [[gnu::noinline]] void PushSlow(int64_t t, uint64_t seq, void* h, int64_t now);
  [[gnu::noinline]] void PushOther(Entry e, int64_t now);
  // Into its bucket's list if the wheel reaches it, else the far heap.
  void PushWheel(Entry e);
  // Links node `n` into bucket slot `slot`'s list.
  void Link(int slot, int32_t n) {
    nodes_[static_cast<std::size_t>(n)].next = heads_[slot];
    heads_[slot] = n;
    bits_[slot >> 6] |= uint64_t{1} << (slot & 63);
  }
  // Whether the far heap's top comes before `e` (false while it is empty,
  // where far_t_ is INT64_MAX: `e` may be due then too).
  [[gnu::noinline]] bool FarFirst(const Entry& e) const { return !far_.empty() && Before(far_[0], e); }
  // PopWheel when the far heap's top comes first or the buckets are empty.
  [[gnu::noinline]] bool PopFar(int64_t limit, Entry* out);
  void PushNear(Entry e) {
    if (heap_n_ == capacity_) Grow();
    PushHeap(e);
  }
  // How many buckets after the current one the next non-empty one is (1 to
  // kSlots - 1), or 0 if every bucket is empty.
  int NextSlot() const;
  // The node holding the buckets' earliest entry (-1 if they are empty):
  // PopWheel's search, out of line for the cold paths (MinTime, PopFar).
  // PopWheel keeps its own copy: one helper shared by both cost the
  // fair-scheduler benchmark 0.5-0.6% more instructions (docs/speed.md, "What limits the fair-scheduler benchmark").
  int32_t EarliestNode() const;
  // Sets the wheel up with every pending entry, the current bucket `now`'s.
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
  // on every event. An entry of bucket b (cur_ <= b < cur_ + kSlots) may be
  // in the list heads_[b % kSlots]; every other one is in far_ (a heap),
  // which may also hold entries of buckets in reach, queued when they were
  // not.
  int shift_ = 0;
  // The current bucket: at or before the earliest entry's. It never moves
  // back; a push before it (possible only just after the wheel was set up
  // again from later entries) goes to the far heap.
  int64_t cur_ = 0;
  uint64_t bits_[kWords] = {};  // bit b: heads_[b] is not empty
  std::unique_ptr<int32_t[]> heads_;  // kSlots list heads, made with the first wheel
  std::vector<Node> nodes_;
  int32_t free_ = -1;  // free nodes, linked
  std::vector<Entry> far_;  // a 4-ary heap
  // far_[0].t, or INT64_MAX while far_ is empty: the removal's one compare
  // with the far heap (its entries are seldom due before the buckets'), the
  // full one (FarFirst) only when it passes.
  int64_t far_t_ = INT64_MAX;
  int retune_in_ = kRetuneEvery;  // removals from the buckets until ToWheel again
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
