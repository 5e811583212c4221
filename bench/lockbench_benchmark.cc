// Engine speed on the lock-contention benchmark (models/lockbench/): N
// threads, think Exp(10us), hold Exp(2us), one FIFO spinlock, stopped after
// 2,000,000 acquisitions. Each N runs twice, side by side in one process:
//
// - engine: the model and engine `viosim run scenarios/lockbench.textproto`
//   uses (coroutines, Cpu and Spinlock objects, statistics on);
// - reference: reference_lockbench.h, the same model as a hand-written event
//   loop that makes the same draws and counts the same acquisitions.
//
// Each reports acquisitions per wall-clock second (items_per_second); after
// the run a table gives engine/reference per N, what the engine's generality
// costs on this model.
//
//   bazel run //bench:lockbench_benchmark [-- --benchmark_repetitions=5]
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench/reference_lockbench.h"
#include "benchmark/benchmark.h"
#include "models/lockbench/lock_bench.h"
#include "sim/simulator.h"

namespace {

using namespace sim::literals;

constexpr uint64_t kAcquisitions = 2000000;
constexpr int64_t kThreadCounts[] = {4, 64};
constexpr char kEngine[] = "BM_LockBenchEngine";
constexpr char kReference[] = "BM_LockBenchReference";

const sim::Distribution kThink = sim::Distribution::Exponential(10_us);
const sim::Distribution kHold = sim::Distribution::Exponential(2_us);

void Report(benchmark::State& state, uint64_t acquisitions, uint64_t events) {
  state.SetItemsProcessed(static_cast<int64_t>(acquisitions));
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events_per_acquisition"] = static_cast<double>(events) / acquisitions;
}

void BM_LockBenchEngine(benchmark::State& state) {
  uint64_t acquisitions = 0, events = 0;
  for (auto _ : state) {
    sim::Simulator sim;
    models::LockBenchParams p;
    p.threads = static_cast<int>(state.range(0));
    p.think = kThink;
    p.hold = kHold;
    models::LockBench bench(sim, p, /*seed=*/1);
    bench.Start();
    // Run in 1ms steps until the count is reached (about 5 to 7 simulated s).
    while (bench.lock().stat().acquisitions < kAcquisitions) sim.RunUntil(sim.Now() + 1_ms);
    acquisitions += bench.lock().stat().acquisitions;
    events += sim.events();
  }
  Report(state, acquisitions, events);
}

void BM_LockBenchReference(benchmark::State& state) {
  uint64_t acquisitions = 0, events = 0;
  for (auto _ : state) {
    bench::ReferenceLockBench ref(static_cast<int>(state.range(0)), kThink, kHold, /*seed=*/1);
    // The same steps, so both stop at the same simulated time.
    while (ref.acquisitions() < kAcquisitions) ref.RunUntil(ref.Now() + 1_ms);
    acquisitions += ref.acquisitions();
    events += ref.events();
  }
  Report(state, acquisitions, events);
}

// The console output, plus each run's items_per_second kept for the table.
class RateReporter : public benchmark::ConsoleReporter {
 public:
  using ConsoleReporter::ConsoleReporter;
  // rates()[N][function name]: the rate of every repetition.
  using Rates = std::map<int64_t, std::map<std::string, std::vector<double>>>;

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      const auto it = run.counters.find("items_per_second");
      if (it == run.counters.end()) continue;
      rates_[std::stoll(run.run_name.args)][run.run_name.function_name].push_back(it->second.value);
    }
    ConsoleReporter::ReportRuns(runs);
  }
  const Rates& rates() const { return rates_; }

 private:
  Rates rates_;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

void PrintRatios(const RateReporter::Rates& rates) {
  std::printf("\nAcquisitions per wall-clock second (median of the repetitions):\n");
  std::printf("%4s  %16s  %16s  %16s\n", "N", "engine acq/s", "reference acq/s", "engine/reference");
  for (const auto& [n, by_name] : rates) {
    const auto engine = by_name.find(kEngine), reference = by_name.find(kReference);
    if (engine == by_name.end() || reference == by_name.end()) continue;
    const double e = Median(engine->second), r = Median(reference->second);
    std::printf("%4lld  %15.2fM  %15.2fM  %16.3f\n", static_cast<long long>(n), e / 1e6, r / 1e6, e / r);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Engine and reference alternate, N by N, so that both see the same state
  // of a shared machine.
  auto add = [](const char* name, void (*fn)(benchmark::State&), int64_t n) {
    benchmark::RegisterBenchmark(name, fn)->Arg(n)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
  };
  for (int64_t n : kThreadCounts) {
    add(kEngine, BM_LockBenchEngine, n);
    add(kReference, BM_LockBenchReference, n);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Colours only on a terminal, as the library's own reporter has it.
  RateReporter reporter(isatty(STDOUT_FILENO) ? RateReporter::OO_ColorTabular : RateReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  PrintRatios(reporter.rates());
  return 0;
}
