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
// - Beyond: a radix heap. It relies on what an event loop guarantees:
//   nothing is queued before the last entry taken out (an event is
//   scheduled at or after the time of the event that schedules it, with a
//   larger sequence number). Entries sit in buckets by the highest bit in
//   which their key differs from the last key taken out; queueing is a
//   bucket append, and taking the earliest out scans the lowest non-empty
//   bucket and spreads its other entries over lower buckets. An entry moves
//   down a few times before it is taken out, never up, so the cost does not
//   grow with the number pending, as a heap's removal does (a level per
//   factor of four), but each step costs more than a heap's on few entries.
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
  // Pending counts at which the entries move to the radix heap, and back.
  static constexpr std::size_t kToRadix = 512;
  static constexpr std::size_t kToHeap = 128;

  EventQueue() { Grow(); }
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // Drops every pending entry (a stalled run's end); the queue is as new.
  void Clear() {
    for (int b = 0; b < kBuckets; ++b) buckets_[b].clear();
    mask_[0] = mask_[1] = 0;
    radix_ = false;
    size_ = 0;
    heap_limit_ = kToRadix;
  }

  // Queues `e`. REQUIRES: e.t >= now, and `now` is at or after the time of
  // every entry taken out so far (the event loop's clock); e.seq is larger
  // than every sequence number queued before.
  [[gnu::always_inline]] void Push(Entry e, int64_t now) {
    // The heap with room below the threshold (capacity is always above it):
    // inline. The rest out of line, to keep callers small.
    if (size_ < heap_limit_) [[likely]] {
      PushHeap(e);
      return;
    }
    PushSlow(e, now);
  }

  // Takes the earliest entry out into `*out` if it is due at or before
  // `limit`; returns whether it did.
  bool PopDue(int64_t limit, Entry* out) {
    if (radix_) return PopRadix(limit, out);
    if (size_ == 0 || heap_[0].t > limit) return false;
    *out = PopTop();
    return true;
  }

  // The event loop's own path, split by layout so that the heap's entry
  // stays in registers: while !radix(), Top() and PopTop() (REQUIRES:
  // !empty()); else PopRadix().
  bool radix() const { return radix_; }
  const Entry& Top() const { return heap_[0]; }
  Entry PopTop() {
    const Entry top = heap_[0];
    PopHeap();
    return top;
  }
  [[gnu::noinline]] bool PopRadix(int64_t limit, Entry* out);

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

  // ---- 4-ary heap: heap_[0, size_) ----
  void PushHeap(Entry e);
  void PopHeap();

  // ---- Radix heap ----
  // Buckets 0-63: the key differs from the last one taken out in its
  // sequence number only (by its highest differing bit; 0 also for an
  // equal key); 64-127: in its time (by the time's highest differing bit).
  static constexpr int kBuckets = 128;
  int BucketOf(const Entry& e) const {
    const uint64_t dt = static_cast<uint64_t>(e.t) ^ static_cast<uint64_t>(last_t_);
    if (dt != 0) return 64 + (63 - __builtin_clzll(dt));
    return 63 - __builtin_clzll((e.seq ^ last_seq_) | 1);
  }
  void PushRadix(Entry e) {
    const int b = BucketOf(e);
    buckets_[b].push_back(e);
    mask_[b >> 6] |= uint64_t{1} << (b & 63);
  }
  // The lowest non-empty bucket. REQUIRES: size_ > 0.
  int Lowest() const { return mask_[0] != 0 ? __builtin_ctzll(mask_[0]) : 64 + __builtin_ctzll(mask_[1]); }
  [[gnu::noinline]] void PushSlow(Entry e, int64_t now);
  // Moves the entries into the radix heap, keyed from (now, 0): no pending
  // or later entry comes before it.
  void ToRadix(int64_t now);
  void ToHeap();
  void Grow();

  bool radix_ = false;
  std::size_t size_ = 0;
  // kToRadix while the heap is in use, 0 in radix mode: Push's one test.
  std::size_t heap_limit_ = kToRadix;
  std::vector<Entry> heap_;   // only grows (doubling)
  std::size_t capacity_ = 0;  // heap_.size(), kept to spare a division
  // Apart from the heap's few words, which the event loop reads on every
  // event: the buckets take 3 KiB.
  std::unique_ptr<std::vector<Entry>[]> buckets_ = std::make_unique<std::vector<Entry>[]>(kBuckets);
  uint64_t mask_[2] = {0, 0};  // bit b: buckets_[b] is not empty
  // Radix heap: the key of the last entry taken out (or the start key); no
  // pending or later key comes before it.
  int64_t last_t_ = 0;
  uint64_t last_seq_ = 0;
};

[[gnu::always_inline]] inline void EventQueue::PushHeap(Entry e) {
  // Sift the hole up from the end.
  std::size_t i = size_++;
  Entry* h = heap_.data();
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!Before(e, h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = e;
}

inline void EventQueue::PopHeap() {
  Entry* h = heap_.data();
  const std::size_t n = --size_;
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
