// Fuzz target: a scenario file's text through the loader and the checks
// every subcommand runs (ParseScenarioText, then ResolveVariant of each
// variant, which applies overlays and CheckResolvedScenario's rules). Any
// text must give a scenario or an error; never a crash, a hang or an abort.
#include <cstddef>
#include <cstdint>
#include <string>

#include "scenarios/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Job files are looked up beside the project's scenarios (run from the
  // workspace, or with them as data), so a scenario naming fio/kick-lock.fio
  // reaches the checks of jobs against stacks.
  absl::StatusOr<viosim::ScenarioFile> file = viosim::ParseScenarioText("scenarios/fuzz.textproto", text);
  if (!file.ok()) return 0;
  int resolved = 0;
  for (const std::string& v : viosim::VariantNames(*file)) {
    if (++resolved > 8) break;  // a matrix may make many; a few show the rules
    (void)viosim::ResolveVariant(*file, v, {});
  }
  return 0;
}
