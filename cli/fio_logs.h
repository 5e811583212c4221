// Where `viosim fio` writes the log files a job asks for (write_bw_log,
// write_lat_log, write_iops_log, write_hist_log): fio writes them in its
// working directory, viosim in --log-dir (default: the working directory).
// A log prefix naming a relative path is taken from that directory.
#ifndef VIOSIM_CLI_FIO_LOGS_H_
#define VIOSIM_CLI_FIO_LOGS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "models/fio/job.h"
#include "models/fio/stats.h"

namespace viosim_cli {

// Before the run: when a job of `jobs` asks for a log, `dir` and the
// directory of every log file the jobs would write must exist and take
// writes. The error names the job file's job and the directory.
absl::Status CheckLogDir(const std::string& dir, const fio::JobFile& jobs);

// After the run: every file whole or none. Each is written to a temporary
// file beside it; only when all are written are they renamed into place,
// and on an error the temporary files are removed. An existing file of the
// same name is replaced (fio appends to it with per_job_logs=0).
absl::Status WriteLogFiles(const std::string& dir, const std::vector<fio::LogFile>& logs);

}  // namespace viosim_cli

#endif  // VIOSIM_CLI_FIO_LOGS_H_
