// `--report DIR` for `reproduce`, `sweep` and `explain`: a Markdown page and SVG charts
// drawn from viosim's own JSON by tools/plot/report.py (built into the
// binary) under a Python 3 that has matplotlib.
#ifndef VIOSIM_CLI_REPORT_DIR_H_
#define VIOSIM_CLI_REPORT_DIR_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace viosim_cli {

// The Python that draws: $VIOSIM_PYTHON when set, else /usr/bin/python3
// (Debian's, where python3-matplotlib installs), else python3 on PATH; the
// first that imports matplotlib. An error names what was tried and how to
// install it.
absl::StatusOr<std::string> FindPlotter();

// DIR's parent must be a writable directory, and DIR absent or a report
// written before (a directory holding report.md), which is then replaced.
absl::Status CheckReportDir(const std::string& dir);

// Writes DIR whole or not at all: the report is drawn into a scratch
// directory beside DIR, which then takes DIR's place. `kind` is
// "reproduce", "sweep" or "explain"; `json` is that command's --format json output,
// kept as DIR/data.json.
absl::Status WriteReportDir(const std::string& python, const std::string& kind, const std::string& json,
                            const std::string& dir);

// Runs argv (argv[0] looked up on PATH when it has no '/') with the
// caller's environment, its stdout to /dev/null and its stderr to
// `stderr_path`. Returns its exit status, or -1 when it could not start or
// died from a signal; `stderr_tail` gets the end of what it wrote there.
int RunProcess(const std::vector<std::string>& argv, const std::string& stderr_path, std::string* stderr_tail);

}  // namespace viosim_cli

#endif  // VIOSIM_CLI_REPORT_DIR_H_
