// What viosim's commands share: the exit statuses, the flags most of them
// take (--seed, --jobs, --set, --format, --output, --precision, the flags of
// a fit, --report), loading a scenario file with the --set assignments that
// edit it, and writing the output whole or not at all.
#ifndef VIOSIM_CLI_COMMON_H_
#define VIOSIM_CLI_COMMON_H_

#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/calibrate.h"
#include "analysis/format.h"
#include "scenarios/loader.h"

namespace cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitBadInput = 2;

struct SharedFlags {
  std::string seed;  // as written: checked by the rule of --set run.seed=
  bool seed_set = false;
  int jobs = 1;
  std::vector<std::string> sets;
  std::string format = "text";
  std::string output;
};

// Adds --seed, --jobs, --set, --format and --output to `cmd`.
void AddShared(CLI::App* cmd, SharedFlags* f);

// --seed as given; nullopt when not given.
std::optional<std::string> GivenSeed(const SharedFlags& f);

// --precision P%: the run goes on until every measured interval's
// half-width is within P% of its value, or 16 times run.duration.
void AddPrecision(CLI::App* cmd, double* fraction);

analysis::Format ToFormat(const std::string& s);

// The --set assignments the flags stand for, --seed first.
std::vector<std::string> Overrides(const SharedFlags& f);

// Prints the error to stderr and returns kExitBadInput.
int Fail(const absl::Status& s);

// Writes `text` to `path`. A regular file (or a new one) is written through
// a temporary file and a rename, so a reader never sees half a file and a
// failed run leaves none. Anything else the path names (a symlink, a FIFO,
// a device such as /dev/stdout) is written in place and never replaced.
absl::Status WriteFileAtomically(const std::string& path, const std::string& text);

// Writes `text` to --output, or to stdout when it is not given.
int Emit(const SharedFlags& f, const std::string& text);

// Output and trace paths must be writable before minutes of simulation.
absl::Status CheckWritable(const std::string& path);

std::string DefaultScenarioDir();

inline constexpr char kReportHelp[] =
    "Also write DIR/report.md with SVG charts and the JSON they show (DIR whole or not at all; a report "
    "DIR written before is replaced); needs Python 3 with matplotlib";

// --report DIR: checked, and the plotter found, before anything runs.
absl::StatusOr<std::string> PrepareReport(const CLI::Option* opt, const std::string& dir);

// The flags that say what to fit and how, shared by `calibrate` and
// `sweep --refit`: --cell, --range, --tolerance and --max-iter.
struct FitFlags {
  CLI::Option* cell;
  CLI::Option* range;
  CLI::Option* tolerance;
  CLI::Option* max_iter;
};

// CLI11's Range lets NaN through (every comparison with it is false), so
// the floating-point flags check for a finite number first.
extern const CLI::Validator kFinite;

FitFlags AddFitFlags(CLI::App* cmd, analysis::CalibrateSpec* spec, std::string* cell, std::string* range);

// Loads a scenario file and applies the --set assignments that edit the
// file's own definitions (variant[...], published[...]); the others apply
// to each resolved variant.
absl::StatusOr<viosim::ScenarioFile> LoadScenario(const std::string& path, const std::vector<std::string>& overrides);

}  // namespace cli

#endif  // VIOSIM_CLI_COMMON_H_
