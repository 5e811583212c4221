// Engine speed on the raid10-unplug case: the scenario's `after` variant
// (scenarios/raid10_unplug.textproto) with the post's fio job, 100 ms of
// simulated time from the jobs' start, built the way `viosim run` builds
// it (FioRig: the machine, the fair scheduler over its topology, the raid10
// stack, fio's processes). Prints simulated I/Os per CPU-second
// (items_per_second), simulated events per CPU-second, events per I/O and the
// process's peak RSS; then how the cost grows with the jobs (50 to 400 on
// 128 CPUs) and with the CPUs (32 to 128, 400 jobs).
//
//   bazel run -c opt //bench:raid10_benchmark -- $PWD/scenarios/raid10_unplug.textproto
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "models/fio/workload.h"
#include "scenarios/fio_builder.h"
#include "scenarios/fio_parser.h"
#include "scenarios/loader.h"
#include "sim/simulator.h"
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
  uint64_t events = 0, ios = 0;
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
    ios += rig->workload->window().ios[0] + rig->workload->window().ios[1];
  }
  state.SetItemsProcessed(static_cast<int64_t>(ios));
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events_per_io"] = static_cast<double>(events) / static_cast<double>(ios);
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

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc > 1) g_scenario = argv[1];
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
