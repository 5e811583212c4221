// The queued spinlock (kernel/locking/qspinlock.c, Linux 4.2 to 6.x), the
// arch_spinlock_t of x86 and arm64 since then: a Spinlock of kind kQueued.
//
// The lock word holds a locked byte, a pending bit and the tail of an MCS
// queue. queued_spin_lock_slowpath() gives the order of hand-offs:
//
//   - the first waiter of a held lock with no queue sets the pending bit
//     and spins on the lock word itself; the owner's unlock hands it the
//     lock (clear_pending_set_locked);
//   - further waiters join the MCS queue (xchg_tail), each spinning on its
//     own node; the queue head spins on the lock word and takes the lock
//     once both the locked byte and the pending bit are clear, i.e. after
//     the pending waiter;
//   - the head, having the lock, passes the head role to its successor by
//     writing the successor's node (arch_mcs_spin_unlock_contended); only
//     then does the successor start spinning on the lock word.
//
// Every step that moves a line between CPUs costs the transfer
// LockHandoffCosts gives for their distance: the unlock to the next owner
// (pending waiter or queue head), and the head role to the successor. When a
// holder releases before its successor has become the head, the successor
// owns the lock one node transfer plus one lock-word transfer after its
// predecessor did.
//
// Not modeled: the uncontended fast path's cmpxchg (free here, as for the
// ticket lock), the short spin of a newcomer that finds the pending-to-
// locked transition in flight (it takes the pending bit right after), and
// the paravirt and NUMA-aware (CNA) variants.
#ifndef VIOSIM_MODELS_SYNC_QSPINLOCK_H_
#define VIOSIM_MODELS_SYNC_QSPINLOCK_H_

#include <string>
#include <utility>

#include "models/sync/handoff_costs.h"
#include "models/sync/spinlock.h"
#include "sim/simulator.h"

namespace models {

class QSpinlock : public Spinlock {
 public:
  QSpinlock(sim::Simulator& sim, std::string name, const LockHandoffCosts& handoff)
      : Spinlock(sim, std::move(name), SpinlockKind::kQueued, handoff) {}
};

}  // namespace models

#endif  // VIOSIM_MODELS_SYNC_QSPINLOCK_H_
