// Engine speed on the raid10-unplug case: the scenario's `after` variant
// (scenarios/raid10_unplug.textproto) with the post's fio job, 100 ms of
// simulated time from the jobs' start, built the way `viosim run` builds
// it (FioRig: the machine, the fair scheduler over its topology, the raid10
// stack, fio's processes). Prints simulated I/Os per CPU-second
// (items_per_second), simulated events per CPU-second, events per I/O and the
// process's peak RSS; then how the cost grows with the jobs (50 to 400 on
// 128 CPUs) and with the CPUs (32 to 128, 400 jobs).
//
// Then the floor: event loops with as many pending events as the raid10
// run holds (about 257) and nothing behind their events -- the hand-written
// loop of the lock benchmark (reference_lockbench.h: a 4-ary heap, two draws
// per acquisition), and this engine's own queue resuming coroutines that
// only wait again (half of them microseconds ahead, half milliseconds, as
// raid10's CPU work and slice timers are) -- and what their rates would
// allow at the run's timed events per I/O with no model work at all.
//
//   bazel run -c opt //bench:raid10_benchmark -- $PWD/scenarios/raid10_unplug.textproto
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/reference_lockbench.h"
#include "benchmark/benchmark.h"
#include "models/fio/workload.h"
#include "scenarios/fio_builder.h"
#include "scenarios/fio_parser.h"
#include "scenarios/loader.h"
#include "sim/distribution.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace {

std::string g_scenario = "scenarios/raid10_unplug.textproto";
constexpr sim::Time kSimulated = sim::Time::Millis(100);

double PeakRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024;  // ru_maxrss is in KiB on Linux
}

// args: fio jobs, CPUs.
void BM_Raid10After(benchmark::State& state) {
  const int jobs = static_cast<int>(state.range(0));
  const int cpus = static_cast<int>(state.range(1));
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(g_scenario);
  if (!file.ok()) {
    state.SkipWithError(std::string(file.status().message()).c_str());
    return;
  }
  absl::StatusOr<viosim::Scenario> s = viosim::ResolveVariant(*file, "after", {absl::StrCat("platform.cpus=", cpus)});
  if (!s.ok()) {
    state.SkipWithError(std::string(s.status().message()).c_str());
    return;
  }
  const std::string dir = g_scenario.substr(0, g_scenario.rfind('/') + 1);
  absl::StatusOr<fio::JobFile> job = fio::ParseJobFile(dir + s->workload().fio().job_file());
  if (!job.ok()) {
    state.SkipWithError(std::string(job.status().message()).c_str());
    return;
  }
  for (fio::JobOptions& o : job->jobs) o.numjobs = jobs;
  uint64_t events = 0, untimed = 0, ios = 0;
  for (auto _ : state) {
    sim::Simulator sim;
    fio::WorkloadControl control;
    control.seed = s->run().seed();
    absl::StatusOr<viosim::FioRig> rig = viosim::FioRig::Make(sim, *s, *job, control);
    if (!rig.ok() || !rig->workload->Start().ok()) {
      state.SkipWithError("the scenario does not build");
      return;
    }
    sim.RunUntil(kSimulated);
    events += sim.events();
    untimed += sim.untimed_events();
    ios += rig->workload->window().ios[0] + rig->workload->window().ios[1];
  }
  state.SetItemsProcessed(static_cast<int64_t>(ios));
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events_per_io"] = static_cast<double>(events) / static_cast<double>(ios);
  // Those that went through the timed queue (not a wakeup, nor run inline).
  state.counters["timed_per_io"] = static_cast<double>(events - untimed) / static_cast<double>(ios);
  state.counters["sim_ios"] = static_cast<double>(ios) / static_cast<double>(state.iterations());
  state.counters["peak_rss_mb"] = PeakRssMb();
}
BENCHMARK(BM_Raid10After)
    ->ArgNames({"jobs", "cpus"})
    ->Args({400, 128})
    ->Args({50, 128})
    ->Args({100, 128})
    ->Args({200, 128})
    ->Args({400, 32})
    ->Args({400, 64})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// The bare loop with `pending` threads, each with one event pending: they
// think Exp(10us) and hold the lock Exp(1ns), so that the lock is almost
// never contended and nearly every thread's event is in the heap.
void BM_BareLoop(benchmark::State& state) {
  const int pending = static_cast<int>(state.range(0));
  constexpr uint64_t kEvents = 4000000;
  uint64_t events = 0;
  for (auto _ : state) {
    bench::ReferenceLockBench loop(pending, sim::Distribution::Exponential(sim::Time::Micros(10)),
                                   sim::Distribution::Exponential(sim::Time::Nanos(1)), /*seed=*/1);
    while (loop.events() < kEvents) loop.RunUntil(loop.Now() + sim::Time::Millis(1));
    events += loop.events();
  }
  state.SetItemsProcessed(static_cast<int64_t>(events));
}
BENCHMARK(BM_BareLoop)->ArgName("pending")->Arg(256)->Unit(benchmark::kMillisecond);

// An actor of the engine's own floor: it waits the delays of `table` in
// turn, from `first` on, for ever.
sim::Task Waiter(sim::Simulator& sim, const std::vector<sim::Time>& table, size_t first) {
  for (size_t i = first;; ++i) co_await sim.Delay(table[i % table.size()]);
}

// The engine's queue and dispatch alone: `pending` coroutines, half waiting
// Exp(500ns) (a CPU's charges), half Exp(3ms) (its slice timer), the delays
// drawn beforehand so that the events do nothing but wait again.
void BM_EngineQueue(benchmark::State& state) {
  const int pending = static_cast<int>(state.range(0));
  constexpr uint64_t kEvents = 4000000;
  sim::Rng rng = sim::Rng::ForStream(1, "engine_queue");
  std::vector<sim::Time> near, far;
  for (int i = 0; i < 4096; ++i) {
    near.push_back(sim::Distribution::Exponential(sim::Time::Nanos(500)).Sample(rng));
    far.push_back(sim::Distribution::Exponential(sim::Time::Millis(3)).Sample(rng));
  }
  uint64_t events = 0;
  for (auto _ : state) {
    sim::Simulator sim;
    for (int i = 0; i < pending; ++i) sim.Spawn(Waiter(sim, i % 2 == 0 ? near : far, static_cast<size_t>(i) * 7));
    while (sim.events() < kEvents) sim.RunUntil(sim.Now() + sim::Time::Micros(100));
    events += sim.events();
  }
  state.SetItemsProcessed(static_cast<int64_t>(events));
}
BENCHMARK(BM_EngineQueue)->ArgName("pending")->Arg(256)->Unit(benchmark::kMillisecond);

// The console output, with the figures the floor's line needs kept.
class FloorReporter : public benchmark::ConsoleReporter {
 public:
  using ConsoleReporter::ConsoleReporter;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      auto get = [&](const char* name) {
        const auto it = run.counters.find(name);
        return it == run.counters.end() ? 0.0 : it->second.value;
      };
      const std::string name = run.benchmark_name();
      if (name == "BM_Raid10After/jobs:400/cpus:128/iterations:1") {
        raid10_rate_ = get("items_per_second");
        raid10_timed_per_io_ = get("timed_per_io");
      } else if (name.rfind("BM_BareLoop/", 0) == 0) {
        loop_rate_ = get("items_per_second");
      } else if (name.rfind("BM_EngineQueue/", 0) == 0) {
        queue_rate_ = get("items_per_second");
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void PrintFloor() const {
    if (raid10_rate_ <= 0 || raid10_timed_per_io_ <= 0) return;
    std::printf("\nThe floor (400 jobs on 128 CPUs): %.2f timed events per simulated I/O.\n", raid10_timed_per_io_);
    auto line = [&](const char* what, double rate) {
      if (rate <= 0) return;
      const double cap = rate / raid10_timed_per_io_;
      std::printf("  %-46s %.1fM events per CPU-second, at most %.2fM I/Os per CPU-second\n", what, rate / 1e6,
                  cap / 1e6);
    };
    line("the hand-written loop, nothing behind events:", loop_rate_);
    line("the engine's queue, nothing behind events:", queue_rate_);
    std::printf("  %-46s %.2fM I/Os per CPU-second\n", "the engine with the model:", raid10_rate_ / 1e6);
  }

 private:
  double raid10_rate_ = 0, raid10_timed_per_io_ = 0, loop_rate_ = 0, queue_rate_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc > 1) g_scenario = argv[1];
  FloorReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  reporter.PrintFloor();
  return 0;
}
