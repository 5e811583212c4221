// The lock benchmark written by hand as a plain event loop: the yardstick the
// coroutine engine's overhead is measured against (lockbench_benchmark.cc
// prints the engine's rate over this one's).
//
// The model is models::LockBench with a zero hand-off: N threads on N CPUs
// think, take one FIFO ticket spinlock, hold it, release it, and repeat.
// Here there are no coroutines, no Cpu or Spinlock objects and no CPU state
// accounting: one 4-ary min-heap of 24-byte events ordered by (time,
// insertion sequence), integer picoseconds, and per-thread state in a vector.
//
// It draws from the same streams as the model (thread i's is
// Rng::ForStream(seed, "lockbench.thread<i>")), in the same order, and it
// numbers its events in the order the engine schedules them: a release
// schedules the releasing thread's next think before the next waiter's hold,
// as the engine resumes that waiter only after the releasing event. With the
// same seed and end time it therefore counts exactly the model's
// acquisitions, contentions and waits (tests/bench/reference_lockbench_test).
#ifndef VIOSIM_BENCH_REFERENCE_LOCKBENCH_H_
#define VIOSIM_BENCH_REFERENCE_LOCKBENCH_H_

#include <cstdint>
#include <vector>

#include "sim/distribution.h"
#include "sim/rng.h"
#include "sim/stats.h"
#include "sim/time.h"

namespace bench {

class ReferenceLockBench {
 public:
  // The threads start thinking at time zero.
  ReferenceLockBench(int threads, const sim::Distribution& think, const sim::Distribution& hold,
                     uint64_t seed);

  // Runs every event due at or before `until`, then sets Now() to `until`.
  void RunUntil(sim::Time until);

  sim::Time Now() const { return sim::Time::Picos(now_); }
  // The lock's counters, as models::LockStat keeps them.
  uint64_t acquisitions() const { return acquisitions_; }
  uint64_t contentions() const { return contentions_; }
  const sim::Summary& wait() const { return wait_; }  // per contended acquisition, ps
  // Events run so far: one per think and one per hold.
  uint64_t events() const { return events_; }

 private:
  struct Event {
    int64_t t;     // picoseconds
    uint64_t seq;  // insertion order, for ties
    int thread;
  };
  struct Thread {
    sim::Rng rng;
    bool holding = false;   // its pending event ends a hold (else a think)
    int64_t since = 0;      // when it started waiting for the lock
    int64_t waited = -1;    // its current section's wait, -1 when uncontended
    int next_waiting = -1;  // the thread queued behind it, or -1
  };

  // (t, seq) order as one unsigned 128-bit compare, free of branches (times
  // are never negative).
  static bool Earlier(const Event& a, const Event& b) {
    using U = unsigned __int128;
    return (U(uint64_t(a.t)) << 64 | a.seq) < (U(uint64_t(b.t)) << 64 | b.seq);
  }
  void Push(const Event& e);
  Event Pop();
  // Thread i starts a think or a hold (a draw from its stream) that ends in
  // one event.
  void Schedule(int i, bool hold);

  sim::Distribution think_;
  sim::Distribution hold_;
  std::vector<Thread> threads_;
  std::vector<Event> heap_;  // at most one event per thread
  int first_waiting_ = -1;   // FIFO of the threads waiting for the lock
  int last_waiting_ = -1;
  bool locked_ = false;
  int64_t now_ = 0;
  uint64_t seq_ = 0;
  uint64_t events_ = 0;
  uint64_t acquisitions_ = 0;
  uint64_t contentions_ = 0;
  sim::Summary wait_;
};

}  // namespace bench

#endif  // VIOSIM_BENCH_REFERENCE_LOCKBENCH_H_
