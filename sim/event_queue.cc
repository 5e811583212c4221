#include "sim/event_queue.h"

namespace sim {

int64_t EventQueue::MinTime() const {
  if (!radix_) return heap_[0].t;
  const std::vector<Entry>& v = buckets_[Lowest()];
  int64_t t = v.front().t;
  for (const Entry& e : v) t = e.t < t ? e.t : t;
  return t;
}

bool EventQueue::Retarget(int64_t t, void* from, void* to) {
  Entry* found = nullptr;
  auto consider = [&](Entry& e) {
    if (e.t == t && e.h == from && (found == nullptr || e.seq < found->seq)) found = &e;
  };
  if (radix_) {
    for (int b = 0; b < kBuckets; ++b) {
      for (Entry& e : buckets_[b]) consider(e);
    }
  } else {
    for (std::size_t i = 0; i < size_; ++i) consider(heap_[i]);
  }
  if (found == nullptr) return false;
  found->h = to;
  return true;
}

void EventQueue::PushSlow(Entry e, int64_t now) {
  if (radix_) {
    if (e.t < last_t_) __builtin_trap();  // before the last entry taken out: no place in the radix heap
    PushRadix(e);
    ++size_;
    return;
  }
  if (size_ == capacity_) Grow();
  PushHeap(e);
  if (size_ > kToRadix) ToRadix(now);
}

bool EventQueue::PopRadix(int64_t limit, Entry* out) {
  const int b = Lowest();
  std::vector<Entry>& v = buckets_[b];
  Entry* const d = v.data();
  const std::size_t n = v.size();
  std::size_t m = 0;
  for (std::size_t i = 1; i < n; ++i) m = Before(d[i], d[m]) ? i : m;
  if (d[m].t > limit) return false;
  *out = d[m];
  --size_;
  last_t_ = d[m].t;
  last_seq_ = d[m].seq;
  if (n == 1) {
    v.clear();
    mask_[b >> 6] &= ~(uint64_t{1} << (b & 63));
  } else {
    d[m] = d[n - 1];
    v.pop_back();
    if (b != 0) {
      // Every other entry of the bucket shares more leading bits with the
      // new last key than with the old one: each moves to a lower bucket.
      // (Bucket 0's others still differ from it in bit 0 at most.)
      mask_[b >> 6] &= ~(uint64_t{1} << (b & 63));
      for (std::size_t i = 0; i + 1 < n; ++i) PushRadix(d[i]);
      v.clear();
    }
  }
  if (size_ < kToHeap) ToHeap();
  return true;
}

void EventQueue::Grow() {
  capacity_ = capacity_ == 0 ? 1024 : 2 * capacity_;
  heap_.resize(capacity_);
}

void EventQueue::ToRadix(int64_t now) {
  radix_ = true;
  heap_limit_ = 0;
  last_t_ = now;
  last_seq_ = 0;
  for (std::size_t i = 0; i < size_; ++i) PushRadix(heap_[i]);
}

void EventQueue::ToHeap() {
  radix_ = false;
  heap_limit_ = kToRadix;
  const std::size_t n = size_;
  while (capacity_ < n) Grow();
  size_ = 0;
  for (int b = 0; b < kBuckets; ++b) {
    for (const Entry& e : buckets_[b]) PushHeap(e);
    buckets_[b].clear();
  }
  mask_[0] = mask_[1] = 0;
}

}  // namespace sim
