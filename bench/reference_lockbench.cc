#include "bench/reference_lockbench.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace bench {

// The three helpers run once or twice per event; inlined into RunUntil, as
// the engine's own queue operations are into its loop.

[[gnu::always_inline]] inline void ReferenceLockBench::Push(const Event& e) {
  std::size_t i = heap_.size();
  heap_.push_back(e);
  // Move the hole up from the end until `e` fits in it.
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!Earlier(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

[[gnu::always_inline]] inline ReferenceLockBench::Event ReferenceLockBench::Pop() {
  const Event top = heap_[0];
  const Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return top;
  // Move the hole down from the root until `last` fits in it.
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = std::min(first + 4, n);
    for (std::size_t c = first + 1; c < end; ++c) best = Earlier(heap_[c], heap_[best]) ? c : best;
    if (!Earlier(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return top;
}

[[gnu::always_inline]] inline void ReferenceLockBench::Schedule(int i, bool hold) {
  Thread& th = threads_[i];
  th.holding = hold;
  const sim::Time d = (hold ? hold_ : think_).Sample(th.rng);
  Push(Event{now_ + d.ps(), seq_++, i});
}

ReferenceLockBench::ReferenceLockBench(int threads, const sim::Distribution& think,
                                       const sim::Distribution& hold, uint64_t seed)
    : think_(think), hold_(hold) {
  threads_.reserve(threads);
  heap_.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    // The stream names models::LockBench uses.
    threads_.push_back(Thread{sim::Rng::ForStream(seed, absl::StrCat("lockbench.thread", i))});
  }
  for (int i = 0; i < threads; ++i) Schedule(i, /*hold=*/false);
}

void ReferenceLockBench::RunUntil(sim::Time until) {
  while (!heap_.empty() && heap_[0].t <= until.ps()) {
    const Event e = Pop();
    now_ = e.t;
    ++events_;
    Thread& th = threads_[e.thread];
    if (!th.holding) {
      // Think over: take the lock, or queue for it.
      if (!locked_) {
        locked_ = true;
        th.waited = -1;
        Schedule(e.thread, /*hold=*/true);
        continue;
      }
      th.since = now_;
      th.next_waiting = -1;
      if (last_waiting_ >= 0) {
        threads_[last_waiting_].next_waiting = e.thread;
      } else {
        first_waiting_ = e.thread;
      }
      last_waiting_ = e.thread;
      continue;
    }
    // Hold over: the critical section is counted whole at its release, as
    // lock_stat's rows are (models/sync/lock_stat.h); then the longest
    // waiter, if any, owns the lock at once.
    ++acquisitions_;
    if (th.waited >= 0) {
      ++contentions_;
      wait_.Record(th.waited);
    }
    if (first_waiting_ < 0) {
      locked_ = false;
      Schedule(e.thread, /*hold=*/false);
      continue;
    }
    const int next = first_waiting_;
    first_waiting_ = threads_[next].next_waiting;
    if (first_waiting_ < 0) last_waiting_ = -1;
    threads_[next].waited = now_ - threads_[next].since;
    // The engine resumes the waiter only after the releasing event has
    // scheduled its next think: the same order here, for ties.
    Schedule(e.thread, /*hold=*/false);
    Schedule(next, /*hold=*/true);
  }
  now_ = until.ps();
}

}  // namespace bench
