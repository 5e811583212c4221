// Input speed: what one fuzzer execution costs the code under test, without
// the fuzzer or the sanitizers. Each benchmark takes the size of its input
// as its argument and prints the time per call.
//
//   BM_ScenarioUnknownFields/N  a scenario whose platform has N unknown
//                               fields (every one an error the loader
//                               locates in the text and explains)
//   BM_ScenarioBrokenAtEnd/N    N variants, then a syntax error
//   BM_SetAssignments/N         N --set assignments to the lock benchmark's
//                               scenario, then its variant N4 resolved
//   BM_FioUnknownOptions/N      a job file of N lines of unknown options
//
//   bazel run -c opt //bench:loader_benchmark
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "scenarios/fio_parser.h"
#include "scenarios/loader.h"

namespace {

// Beside the binary (its runfiles) under `bazel run`.
constexpr char kScenario[] = "scenarios/lockbench.textproto";

// Parses `text`, which must not load, at every iteration.
void ParseBroken(benchmark::State& state, const std::string& text) {
  for (auto _ : state) {
    absl::StatusOr<viosim::ScenarioFile> file = viosim::ParseScenarioText("bench.textproto", text);
    if (file.ok()) state.SkipWithError("the text should not load");
    benchmark::DoNotOptimize(file);
  }
  state.SetBytesProcessed(state.iterations() * text.size());
}

void BM_ScenarioUnknownFields(benchmark::State& state) {
  std::string text = "name: \"bench\"\nplatform {\n";
  for (int i = 0; i < state.range(0); ++i) absl::StrAppend(&text, "  no_such_field_", i, ": 1\n");
  ParseBroken(state, text + "}\n");
}
BENCHMARK(BM_ScenarioUnknownFields)->Arg(10)->Arg(100)->Arg(1000);

void BM_ScenarioBrokenAtEnd(benchmark::State& state) {
  std::string text = "name: \"bench\"\n";
  for (int i = 0; i < state.range(0); ++i) absl::StrAppend(&text, "variant { name: \"v", i, "\" }\n");
  ParseBroken(state, text + "platform { cpus: }\n");
}
BENCHMARK(BM_ScenarioBrokenAtEnd)->Arg(10)->Arg(100)->Arg(1000);

void BM_SetAssignments(benchmark::State& state) {
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(kScenario);
  if (!file.ok()) {
    state.SkipWithError(std::string(file.status().message()).c_str());
    return;
  }
  std::vector<std::string> assignments;
  for (int i = 0; i < state.range(0); ++i) {
    assignments.push_back(absl::StrCat("workload.lockbench.threads=", 1 + i % 4));
  }
  for (auto _ : state) {
    absl::StatusOr<viosim::Scenario> s = viosim::ResolveVariant(*file, "N4", assignments);
    if (!s.ok()) state.SkipWithError("the assignments should apply");
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_SetAssignments)->Arg(1)->Arg(4)->Arg(16);

void BM_FioUnknownOptions(benchmark::State& state) {
  std::string text = "[job]\n";
  for (int i = 0; i < state.range(0); ++i) absl::StrAppend(&text, "no_such_option_", i, "=1\n");
  for (auto _ : state) {
    absl::StatusOr<fio::JobFile> jobs = fio::ParseJobText("bench.fio", text, "");
    if (jobs.ok()) state.SkipWithError("the text should not load");
    benchmark::DoNotOptimize(jobs);
  }
  state.SetBytesProcessed(state.iterations() * text.size());
}
BENCHMARK(BM_FioUnknownOptions)->Arg(10)->Arg(100)->Arg(1000);

}  // namespace

BENCHMARK_MAIN();
