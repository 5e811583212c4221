// `viosim teach`: one self-contained HTML page that shows a class two
// variants of a scenario: per-CPU timelines of a short window of each (CPU
// states, lock holds, wake-ups, the lock's waiters), on one time scale, the
// lock_stat rows and CPU shares beside them, and sentences written from the
// figures. The page is drawn by tools/plot/teach.py (built into the binary)
// under Python 3's standard library; it loads nothing when viewed.
#ifndef VIOSIM_CLI_TEACH_H_
#define VIOSIM_CLI_TEACH_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "scenarios/loader.h"

namespace cli {

struct TeachFlags {
  std::string scenario;
  std::vector<std::string> variants;  // default: the file's first two
  std::string window;                 // a duration; empty: chosen from the run
  int cpus = 16;                      // lanes per variant at most
  std::string output;
  std::vector<std::string> sets;
  std::string seed;
  bool seed_set = false;
  int jobs = 1;
};

CLI::App* AddTeach(CLI::App* app, TeachFlags* f);

// The --set assignments the flags stand for, --seed first.
std::vector<std::string> TeachOverrides(const TeachFlags& f);

// Checks the flags (bad ones are InvalidArgument naming the flag), runs the
// variants of `file` with tracing on and returns the page.
absl::StatusOr<std::string> MakeTeachPage(const TeachFlags& f, const viosim::ScenarioFile& file,
                                          const std::string& version);

}  // namespace cli

#endif  // VIOSIM_CLI_TEACH_H_
