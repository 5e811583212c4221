#include "models/lockbench/lock_bench.h"

#include "absl/strings/str_cat.h"

namespace models {

LockBench::LockBench(sim::Simulator& sim, const LockBenchParams& params, uint64_t seed)
    : sim_(&sim), params_(params), sched_(sim), lock_(sim, "bench_lock", params.handoff) {
  cpus_.reserve(params.threads);
  tasks_.reserve(params.threads);
  rngs_.reserve(params.threads);
  for (int i = 0; i < params.threads; ++i) {
    cpus_.push_back(std::make_unique<Cpu>(sim, i, absl::StrCat("cpu", i)));
    sched_.AddCpu(*cpus_.back());
    tasks_.push_back(std::make_unique<Task>(absl::StrCat("lockbench/", i), std::vector<int>{i}));
    rngs_.push_back(sim::Rng::ForStream(seed, absl::StrCat("lockbench.thread", i)));
  }
}

void LockBench::Start() {
  for (int i = 0; i < params_.threads; ++i) sched_.Start(*tasks_[i], Thread(i));
}

void LockBench::ResetStats() {
  lock_.ResetStats();
  for (auto& cpu : cpus_) cpu->ResetStats();
}

sim::Task LockBench::Thread(int i) {
  Cpu& cpu = *cpus_[i];  // pinned: the task never leaves it
  sim::Rng& rng = rngs_[i];
  for (;;) {
    co_await cpu.RunUser(params_.think.Sample(rng));
    co_await lock_.Lock(cpu);
    co_await cpu.Run(params_.hold.Sample(rng));
    lock_.Unlock(cpu);
  }
}

}  // namespace models
