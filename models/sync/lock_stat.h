// lock_stat counters of one lock class, as /proc/lock_stat shows them
// (CONFIG_LOCK_STAT, kernel/locking/lockdep.c, Linux 5.x): acquisitions,
// contentions, wait and hold times, bounces.
//
// Every figure of a row comes from one set of samples: the critical
// sections that ended (were unlocked) since the last Reset. The kernel
// counts a contention when the wait begins and records its wait time when
// the lock is acquired, so a window of its counters can count a contention
// whose wait lies outside it; here each critical section is recorded whole
// at its release, so within any window contentions == wait.count(),
// acquisitions == hold.count() and contentions <= acquisitions.
#ifndef VIOSIM_MODELS_SYNC_LOCK_STAT_H_
#define VIOSIM_MODELS_SYNC_LOCK_STAT_H_

#include <array>
#include <cstdint>

#include "models/sync/handoff_costs.h"
#include "sim/stats.h"

namespace models {

struct LockStat {
  uint64_t acquisitions = 0;
  uint64_t contentions = 0;   // acquisitions that had to wait
  uint64_t acq_bounces = 0;   // acquired on a CPU other than the previous holder's
  uint64_t con_bounces = 0;   // contended on a CPU other than the last holder's
  // Uncontended acquisitions that paid the lock word's move from the last
  // holder's CPU (Spinlock::set_uncontended_moves).
  uint64_t uncontended_moves = 0;
  sim::Summary wait;          // per contended acquisition, picoseconds
  sim::Summary hold;          // per acquisition, picoseconds
  // contentions by how far the lock word moved to end them: the distance
  // from the releasing CPU to the waiter it went to (indexed by
  // CpuDistance), the one the hand-off cost was charged for. Sums to
  // contentions for a lock whose hand-off cost depends on the distance; a
  // lock with one flat hand-off cost leaves it empty (it never looks at
  // the topology).
  std::array<uint64_t, kCpuDistances> contentions_by{};
  void Reset();
};

}  // namespace models

#endif  // VIOSIM_MODELS_SYNC_LOCK_STAT_H_
