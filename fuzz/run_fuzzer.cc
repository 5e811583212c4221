// Fuzz target: a scenario file's text through the loader and on into the
// models. Each of the first variants is resolved with a measurement window
// of a few simulated microseconds (the overrides `viosim run --set` would
// apply) and built and run by RunScenario, so that every check and
// assertion of the stacks' builders and of the models' first steps meets
// the input, not only the loader's rules. Any text must give a result or
// an error; never a crash, a hang or an abort.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/builder.h"
#include "scenarios/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<viosim::ScenarioFile> file = viosim::ParseScenarioText("scenarios/fuzz.textproto", text);
  if (!file.ok()) return 0;
  // A short window: the models are built whole and take their first steps
  // (every fio job submits, every lock is taken) without a run's length.
  const std::vector<std::string> window = {"run.warmup=0s", "run.duration=20us", "run.batches=2"};
  viosim::RunOptions options;
  options.base_dir = "scenarios";  // job files beside the project's scenarios
  int ran = 0;
  for (const std::string& v : viosim::VariantNames(*file)) {
    if (++ran > 2) break;
    absl::StatusOr<viosim::Scenario> resolved = viosim::ResolveVariant(*file, v, window);
    if (!resolved.ok()) continue;
    (void)viosim::RunScenario(*resolved, v, options);
  }
  return 0;
}
