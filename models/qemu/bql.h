// The big QEMU lock (qemu_global_mutex, QEMU 2.0): a sleeping mutex taken
// by every vCPU thread after ioctl(KVM_RUN) returns and by the main loop
// around its dispatch, so all device emulation is serialized by it. Waiters
// sleep on the host (a futex) and are served in arrival order (the model's
// choice; glibc's mutex is not strictly FIFO). Keeps lock_stat-like counters.
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
  explicit Bql(sim::Simulator& sim) : sim_(&sim), waiters_(sim) {}

  struct Stats {
    uint64_t acquisitions = 0;
    uint64_t contentions = 0;
    sim::Summary wait;  // per contended acquisition, ps
    sim::Summary hold;  // ps
  };

  // qemu_mutex_lock_iothread(): `co_await bql.Lock()`.
  sim::Task Lock() {
    ++stats_.acquisitions;
    if (held_ || waiters_.has_waiters()) {
      ++stats_.contentions;
      const sim::Time since = sim_->Now();
      ++waiting_;
      co_await waiters_.Wait();  // ownership is handed over by Unlock
      --waiting_;
      stats_.wait.Record((sim_->Now() - since).ps());
    }
    held_ = true;
    acquired_at_ = sim_->Now();
  }
  void Unlock() {
    stats_.hold.Record((sim_->Now() - acquired_at_).ps());
    held_ = false;
    // Hand-off to the longest waiter: it finds held_ false and takes it.
    if (waiters_.has_waiters()) {
      held_ = true;  // reserved for the woken waiter
      waiters_.NotifyOne();
    }
  }
  bool held() const { return held_; }
  int waiting() const { return waiting_; }
  const Stats& stats() const { return stats_; }
  void ResetStats() { stats_ = Stats(); }

 private:
  sim::Simulator* sim_;
  sim::Signal waiters_;
  bool held_ = false;
  int waiting_ = 0;
  sim::Time acquired_at_;
  Stats stats_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_QEMU_BQL_H_
