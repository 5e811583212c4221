#include "models/lockbench/lock_bench.h"

#include "absl/strings/str_cat.h"

namespace models {

LockBench::LockBench(sim::Simulator& sim, const LockBenchParams& params, uint64_t seed)
    : sim_(&sim),
      params_(params),
      own_sched_(std::make_unique<PinnedFifoScheduler>(sim)),
      sched_(own_sched_.get()),
      lock_(sim, "bench_lock", params.handoff) {
  for (int i = 0; i < params.threads; ++i) {
    own_cpus_.push_back(std::make_unique<Cpu>(sim, i, absl::StrCat("cpu", i)));
    sched_->AddCpu(*own_cpus_.back());
    cpus_.push_back(own_cpus_.back().get());
  }
  MakeTasks(seed);
}

LockBench::LockBench(sim::Simulator& sim, const LockBenchParams& params, uint64_t seed, Scheduler& sched,
                     std::vector<Cpu*> cpus)
    : sim_(&sim), params_(params), sched_(&sched), cpus_(std::move(cpus)), lock_(sim, "bench_lock", params.handoff) {
  cpus_.resize(static_cast<size_t>(params.threads));
  MakeTasks(seed);
}

void LockBench::MakeTasks(uint64_t seed) {
  tasks_.reserve(params_.threads);
  rngs_.reserve(params_.threads);
  for (int i = 0; i < params_.threads; ++i) {
    tasks_.push_back(std::make_unique<Task>(absl::StrCat("lockbench/", i), std::vector<int>{cpus_[i]->id()}));
    rngs_.push_back(sim::Rng::ForStream(seed, absl::StrCat("lockbench.thread", i)));
  }
}

void LockBench::Start() {
  for (int i = 0; i < params_.threads; ++i) sched_->Start(*tasks_[i], Thread(i));
}

void LockBench::ResetStats() {
  lock_.ResetStats();
  for (Cpu* cpu : cpus_) cpu->ResetStats();
}

sim::Task LockBench::Thread(int i) {
  Cpu& cpu = *cpus_[i];  // bound to it: the task never leaves it
  sim::Rng& rng = rngs_[i];
  for (;;) {
    co_await cpu.RunUser(params_.think.Sample(rng));
    co_await lock_.Lock(cpu);
    co_await cpu.Run(params_.hold.Sample(rng));
    lock_.Unlock(cpu);
  }
}

}  // namespace models
