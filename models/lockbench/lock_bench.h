// The lock-contention benchmark: N tasks pinned one per CPU, each looping
//
//   think();              // work outside the lock, Think distribution
//   spin_lock(&lock);
//   hold();               // the critical section, Hold distribution
//   spin_unlock(&lock);
//
// With exponential think and hold times and a zero hand-off this is the
// closed M/M/1//N queue (the machine-repairman model), whose exact
// throughput and waiting time mean value analysis gives; that makes it both
// the engine's validation and its speed yardstick.
#ifndef VIOSIM_MODELS_LOCKBENCH_LOCK_BENCH_H_
#define VIOSIM_MODELS_LOCKBENCH_LOCK_BENCH_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "models/sync/spinlock.h"
#include "sim/distribution.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

struct LockBenchParams {
  int threads = 1;
  sim::Distribution think = sim::Distribution::Constant(sim::Time::Zero());
  sim::Distribution hold = sim::Distribution::Constant(sim::Time::Zero());
  sim::Time handoff;  // spinlock hand-off cost
};

class LockBench {
 public:
  // Creates one CPU per thread on a pinned scheduler of its own, and the
  // lock. Random streams are derived from `seed` and each thread's name, so
  // adding threads leaves the others' draws unchanged.
  LockBench(sim::Simulator& sim, const LockBenchParams& params, uint64_t seed);
  // The same on CPUs a scenario's machine owns, run by its scheduler; task
  // i is bound to cpus[i]. REQUIRES: cpus.size() >= params.threads, every
  // CPU on `sched`, both outliving the LockBench.
  LockBench(sim::Simulator& sim, const LockBenchParams& params, uint64_t seed, Scheduler& sched,
            std::vector<Cpu*> cpus);

  // Spawns the threads; they start thinking at Now().
  void Start();

  Spinlock& lock() { return lock_; }
  const std::vector<Cpu*>& cpus() const { return cpus_; }
  void ResetStats();

 private:
  sim::Task Thread(int i);
  void MakeTasks(uint64_t seed);

  sim::Simulator* sim_;
  LockBenchParams params_;
  std::vector<std::unique_ptr<Cpu>> own_cpus_;
  std::unique_ptr<PinnedFifoScheduler> own_sched_;
  Scheduler* sched_;
  std::vector<Cpu*> cpus_;
  std::vector<std::unique_ptr<Task>> tasks_;
  std::vector<sim::Rng> rngs_;
  Spinlock lock_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_LOCKBENCH_LOCK_BENCH_H_
