#include "sim/event_queue.h"

#include <algorithm>

namespace sim {

void EventQueue::Clear() {
  if (wheel_) DropWheel();
  heap_n_ = outside_ = 0;
}

void EventQueue::DropWheel() {
  for (int w = 0; w < kWords; ++w) {
    for (uint64_t bits = bits_[w]; bits != 0; bits &= bits - 1) heads_[w * 64 + __builtin_ctzll(bits)] = -1;
    bits_[w] = 0;
  }
  nodes_.clear();
  free_ = -1;
  far_.clear();
  far_t_ = INT64_MAX;
  outside_ = 0;
  wheel_ = false;
  heap_limit_ = kToWheel;
}

template <class F>
void EventQueue::ForEachOutside(F f) {
  for (int w = 0; w < kWords; ++w) {
    for (uint64_t bits = bits_[w]; bits != 0; bits &= bits - 1) {
      const int slot = w * 64 + __builtin_ctzll(bits);
      for (int32_t n = heads_[slot]; n >= 0; n = nodes_[n].next) f(nodes_[n].e);
    }
  }
  for (Entry& e : far_) f(e);
}

int64_t EventQueue::MinTime() const {
  if (!wheel_) return heap_[0].t;
  const int32_t n = EarliestNode();
  int64_t t = far_.empty() ? INT64_MAX : far_[0].t;
  if (n >= 0) t = std::min(t, nodes_[n].e.t);
  return t;
}

bool EventQueue::Retarget(int64_t t, void* from, void* to) {
  Entry* found = nullptr;
  auto consider = [&](Entry& e) {
    if (e.t == t && e.h == from && (found == nullptr || e.seq < found->seq)) found = &e;
  };
  for (std::size_t i = 0; i < heap_n_; ++i) consider(heap_[i]);
  if (wheel_) ForEachOutside(consider);
  if (found == nullptr) return false;
  found->h = to;
  return true;
}

void EventQueue::PushWheel(Entry e) {
  ++outside_;
  const int64_t b = BucketOf(e.t);
  if (b >= cur_ && b - cur_ < kSlots) {
    int32_t n = free_;
    if (n >= 0) {
      free_ = nodes_[n].next;
      nodes_[n].e = e;
    } else {
      n = static_cast<int32_t>(nodes_.size());
      nodes_.push_back(Node{e, -1});
    }
    Link(static_cast<int>(b & kMask), n);
    return;
  }
  far_.push_back(e);
  SiftUp(far_.data(), far_.size() - 1, e);
  far_t_ = far_[0].t;
}

void EventQueue::PushSlow(int64_t t, uint64_t seq, void* h, int64_t now) {
  const int64_t b = t >> shift_;
  const int32_t n = free_;
  // cur_ <= b: a push is at or after now, and cur_ at or before now's
  // bucket (or the push goes to the far heap, below).
  if (wheel_ && static_cast<uint64_t>(b - cur_) < static_cast<uint64_t>(kSlots) && n >= 0) [[likely]] {
    // PushWheel's bucket case, with a free node.
    Node& node = nodes_[static_cast<std::size_t>(n)];
    free_ = node.next;
    node.e = Entry{t, seq, h};
    ++outside_;
    Link(static_cast<int>(b & kMask), n);
    return;
  }
  PushOther(Entry{t, seq, h}, now);
}

void EventQueue::PushOther(Entry e, int64_t now) {
  if (wheel_) {
    PushWheel(e);
    return;
  }
  if (heap_n_ == capacity_) Grow();
  PushHeap(e);
  if (heap_n_ > kToWheel) ToWheel(now);
}

int EventQueue::NextSlot() const {
  // A search of the whole circle from the bucket after the current one.
  const int start = static_cast<int>((cur_ + 1) & kMask);
  int w = start >> 6;
  uint64_t word = bits_[w] & (~uint64_t{0} << (start & 63));
  for (int i = 0; i <= kWords; ++i) {
    if (word != 0) {
      const int slot = w * 64 + __builtin_ctzll(word);
      return static_cast<int>((slot - cur_) & kMask);
    }
    w = (w + 1) & (kWords - 1);
    word = bits_[w];
  }
  return 0;
}

int32_t EventQueue::EarliestNode() const {
  int64_t bucket = cur_;
  if (heads_[cur_ & kMask] < 0) {
    const int d = NextSlot();
    if (d == 0) return -1;
    bucket += d;
  }
  int32_t best = heads_[bucket & kMask];
  for (int32_t n = nodes_[best].next; n >= 0; n = nodes_[n].next) {
    if (Before(nodes_[n].e, nodes_[best].e)) best = n;
  }
  return best;
}

bool EventQueue::PopFar(int64_t limit, Entry* out) {
  const int32_t n = EarliestNode();
  if (n < 0 && far_.size() >= kToHeap) {
    // Every entry left is in the far heap: the buckets were too narrow for
    // the entries now pending. Set the wheel up again from them, the
    // earliest of them (the earliest pending) in the current bucket, so
    // that the removal below finds it there.
    ToWheel(far_[0].t);
    return PopWheel(limit, out);
  }
  // Here the buckets are empty or the far heap's top comes first.
  if (far_.empty()) return false;
  if (far_[0].t > limit) return false;
  *out = far_[0];
  PopFrom(far_.data(), far_.size());
  far_.pop_back();
  far_t_ = far_.empty() ? INT64_MAX : far_[0].t;
  cur_ = std::max(cur_, BucketOf(out->t));
  if (--outside_ < kToHeap) ToHeap();
  return true;
}

void EventQueue::Grow() {
  capacity_ = capacity_ == 0 ? 1024 : 2 * capacity_;
  heap_.resize(capacity_);
}

void EventQueue::ToWheel(int64_t now) {
  std::vector<Entry> all(heap_.begin(), heap_.begin() + static_cast<std::ptrdiff_t>(heap_n_));
  if (wheel_) {
    ForEachOutside([&all](Entry& e) { all.push_back(e); });
    DropWheel();
  }
  heap_n_ = 0;
  // Bucket width: the mean spacing of the entries due next (the distance
  // of the kNearest-th nearest over kNearest, entries due now left out),
  // rounded down to a power of two, so that the buckets the next events
  // fall in hold an entry or two. The wheel then reaches some
  // kSlots / kNearest times that distance; the far tail (a scheduler's
  // slice ends, say) waits in the far heap.
  constexpr std::size_t kNearest = 16;
  std::vector<int64_t> ahead;
  ahead.reserve(all.size());
  for (const Entry& e : all) {
    if (e.t > now) ahead.push_back(e.t - now);
  }
  int64_t gap = 1;
  if (!ahead.empty()) {
    const std::size_t k = std::min(kNearest, ahead.size());
    std::nth_element(ahead.begin(), ahead.begin() + static_cast<std::ptrdiff_t>(k - 1), ahead.end());
    gap = std::max<int64_t>(1, ahead[k - 1] / static_cast<int64_t>(k));
  }
  shift_ = 63 - __builtin_clzll(static_cast<uint64_t>(gap));
  cur_ = now >> shift_;
  if (!heads_) {
    heads_ = std::make_unique<int32_t[]>(kSlots);
    std::fill(heads_.get(), heads_.get() + kSlots, -1);
  }
  wheel_ = true;
  heap_limit_ = 0;
  retune_in_ = kRetuneEvery;
  for (const Entry& e : all) PushWheel(e);
}

void EventQueue::ToHeap() {
  ForEachOutside([this](Entry& e) { PushNear(e); });
  DropWheel();
}

}  // namespace sim
