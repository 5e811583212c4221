// The big QEMU lock (qemu_global_mutex, QEMU 2.0): a sleeping mutex taken
// by every vCPU thread after ioctl(KVM_RUN) returns and by the main loop
// around its dispatch, so all device emulation is serialized by it.
//
// It behaves as glibc's default pthread mutex (the low-level lock,
// nptl/lowlevellock): not a hand-off lock. Unlock releases the lock and, if
// threads sleep on it, futex-wakes one (the longest sleeper: the futex hash
// bucket's queue is FIFO for equal priorities). The woken thread needs
// `wake_latency` (try_to_wake_up, the IPI, the context switch back into it)
// before it retries; meanwhile the lock is free and any thread that arrives
// takes it at once (barging). A woken thread that finds the lock taken
// again goes back to sleep at the end of the queue. Keeps lock_stat-like
// counters; a contended acquisition is counted once however often its
// thread slept.
#ifndef VIOSIM_MODELS_QEMU_BQL_H_
#define VIOSIM_MODELS_QEMU_BQL_H_

#include <coroutine>
#include <cstdint>

#include "sim/simulator.h"
#include "sim/stats.h"
#include "sim/time.h"

namespace models {

class Bql {
 public:
  explicit Bql(sim::Simulator& sim, sim::Time wake_latency = sim::Time())
      : sim_(&sim), wake_latency_(wake_latency), sleepers_(sim) {}

  struct Stats {
    uint64_t acquisitions = 0;
    uint64_t contentions = 0;
    uint64_t wakeups = 0;   // futex wakes sent by Unlock
    uint64_t barged = 0;    // woken threads that found the lock taken again
    sim::Summary wait;  // per contended acquisition, ps
    sim::Summary hold;  // ps
  };

  // qemu_mutex_lock_iothread(): `co_await bql.Lock()`.
  sim::Task Lock() {
    ++stats_.acquisitions;
    if (held_) {
      ++stats_.contentions;
      const sim::Time since = sim_->Now();
      for (;;) {
        co_await sleepers_.Wait();  // futex_wait until an Unlock wakes us
        if (wake_latency_ > sim::Time()) co_await sim_->Delay(wake_latency_);
        if (!held_) break;
        ++stats_.barged;
      }
      stats_.wait.Record((sim_->Now() - since).ps());
    }
    held_ = true;
    acquired_at_ = sim_->Now();
  }
  void Unlock() {
    stats_.hold.Record((sim_->Now() - acquired_at_).ps());
    held_ = false;
    if (sleepers_.NotifyOne()) ++stats_.wakeups;
  }
  const Stats& stats() const { return stats_; }
  void ResetStats() { stats_ = Stats(); }

 private:
  sim::Simulator* sim_;
  sim::Time wake_latency_;
  sim::Signal sleepers_;
  bool held_ = false;
  sim::Time acquired_at_;
  Stats stats_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_QEMU_BQL_H_
