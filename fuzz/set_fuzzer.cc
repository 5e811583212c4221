// Fuzz target: --set overrides and the duration and size texts they carry.
// Each input line is one assignment (PATH=VALUE) applied, as the command
// line does, to a small scenario with a variant; then the variant is
// resolved. Each line is also read as a duration on its own, and as a
// sweep's --over list, whose values must read back the same when joined
// again. Any text must give a value or an error; never a
// crash, a hang or an abort.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analysis/runner.h"
#include "scenarios/loader.h"
#include "scenarios/units.h"

namespace {

// Every kind of field an assignment can reach: durations, integers with
// bounds, enums, distributions, a variant's overlay.
constexpr char kScenario[] = R"pb(
name: "set_fuzz"
platform {
  cpus: 4
  lock_handoff { value: "10ns" }
}
stack { lock { kind: TICKET } }
workload {
  lockbench {
    threads: 4
    think { exponential { mean: "10us" } }
    hold { constant { value: "2us" } }
  }
}
run { seed: 7 warmup: "1ms" duration: "10ms" batches: 10 }
variant {
  name: "v"
  overlay { workload { lockbench { threads: 2 } } }
}
)pb";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const absl::StatusOr<viosim::ScenarioFile>* base =
      new absl::StatusOr<viosim::ScenarioFile>(viosim::ParseScenarioText("set_fuzz.textproto", kScenario));
  if (!base->ok()) __builtin_trap();  // the embedded scenario itself must load
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> assignments;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    (void)viosim::ParseDuration(line);
    if (absl::StatusOr<analysis::SweepSpec> over = analysis::ParseSweepSpec(line); over.ok()) {
      // Values come without the spaces around them, and the list they
      // make reads back as the same values.
      for (const std::string& v : over->values) {
        if (v != absl::StripAsciiWhitespace(v)) __builtin_trap();
        (void)viosim::ValueAsRead(v);
      }
      absl::StatusOr<analysis::SweepSpec> again =
          analysis::ParseSweepSpec(absl::StrCat("f=", absl::StrJoin(over->values, ",")));
      if (!again.ok() || again->values != over->values) __builtin_trap();
    }
    if (assignments.size() < 16) assignments.emplace_back(line);
  }
  // The file changes only if an assignment is file-level (variant[...],
  // published[...]); otherwise the embedded one is used as it is.
  const viosim::ScenarioFile* file = &**base;
  viosim::ScenarioFile edited;
  if (std::any_of(assignments.begin(), assignments.end(),
                  [](const std::string& a) { return viosim::IsFileLevelOverride(a); })) {
    edited = **base;
    if (!viosim::ApplyFileOverrides(&edited, assignments).ok()) return 0;
    file = &edited;
  }
  for (const std::string& v : viosim::VariantNames(*file)) (void)viosim::ResolveVariant(*file, v, assignments);
  return 0;
}
