// Engine speed on the lock-contention benchmark (DESIGN.md section 8): N
// threads, think Exp(10us), hold Exp(2us), one FIFO spinlock, stopped after
// 2,000,000 acquisitions. Prints simulated lock acquisitions and events per
// wall-clock second, with statistics on, through the same model and engine
// `viosim run scenarios/lockbench.textproto` uses.
//
//   bazel run //bench:lockbench_benchmark
#include <cstdint>

#include "benchmark/benchmark.h"
#include "models/lockbench/lock_bench.h"
#include "sim/simulator.h"

namespace {

using namespace sim::literals;

constexpr uint64_t kAcquisitions = 2000000;

void BM_LockBench(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  uint64_t acquisitions = 0, events = 0;
  for (auto _ : state) {
    sim::Simulator sim;
    models::LockBenchParams p;
    p.threads = n;
    p.think = sim::Distribution::Exponential(10_us);
    p.hold = sim::Distribution::Exponential(2_us);
    models::LockBench bench(sim, p, /*seed=*/1);
    bench.Start();
    // Run in 1ms steps until the count is reached (about 5 to 7 simulated s).
    while (bench.lock().stat().acquisitions < kAcquisitions) sim.RunUntil(sim.Now() + 1_ms);
    acquisitions += bench.lock().stat().acquisitions;
    events += sim.events();
  }
  state.counters["acquisitions_per_s"] =
      benchmark::Counter(static_cast<double>(acquisitions), benchmark::Counter::kIsRate);
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events_per_acquisition"] = static_cast<double>(events) / acquisitions;
}
BENCHMARK(BM_LockBench)->Arg(4)->Arg(64)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
