// Reading fio 3.33 jobs: job files and `--name=x --rw=...` command lines.
//
// The parser follows fio's own rules (init.c, parse.c, options.c at
// fio-3.33), quirks included, so that a job file means here what it means to
// fio:
//  - Sections are `[name]`. A section whose name starts with "global" sets
//    defaults for the job sections after it; a job copies the defaults in
//    force when its section starts. Several global sections are allowed.
//  - `;` or `#` starts a comment anywhere in a line; whitespace around keys
//    and `=` is ignored; CRLF line ends are fine; a repeated option: the last
//    one wins. `include FILE` inside a section reads FILE's options into it
//    (FILE is looked up from the working directory, then from the including
//    file's directory).
//  - Values use fio's syntax: size suffixes with kb_base 1024 (k = KB =
//    1024, KiB = 1000), 0x hex, no fractions (16.0k is 16 bytes), times in
//    seconds by default with us/ms/s/m/h/d, `${VAR}` from the environment,
//    bs lists split on `,` `:` and `-`.
//  - Aliases are resolved: options are recorded under fio's canonical names,
//    with their values as written, in the order fio's reports list them.
//
// Options are sorted by scenarios/fio_options.h into modeled, accepted without
// effect, and known to fio but not modeled. A job that needs something
// viosim does not model is refused with a message naming the file, the line
// and the option, instead of being simulated as something else. Where fio
// would run a job that viosim runs differently, the job is accepted and
// JobFile::notes says what changes; in particular direct=0 (fio's default)
// is noted once and the workload must run every job as direct I/O.
//
// numjobs is recorded, not expanded: the workload model makes the clones.
#ifndef VIOSIM_SCENARIOS_FIO_PARSER_H_
#define VIOSIM_SCENARIOS_FIO_PARSER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/fio/job.h"

namespace fio {

// Where command-line errors say they come from: "<command line>:3: ..."
// names the third argument.
extern const char kCommandLineSource[];

// Reads and parses the job file at `path`. NotFound (naming the path) if it
// cannot be read; otherwise as ParseJobText, with includes looked up from the
// working directory and then from the directory of `path`.
absl::StatusOr<JobFile> ParseJobFile(const std::string& path);

// Parses the text of a job file. Errors are InvalidArgument, one per line of
// the message, each "FILE:LINE: what", where FILE is `path_for_messages` (or
// the included file). Relative include paths that are not found from the
// working directory are looked up in `dir_for_includes` ("" = the working
// directory only).
absl::StatusOr<JobFile> ParseJobText(const std::string& path_for_messages,
                                     const std::string& text,
                                     const std::string& dir_for_includes);

// An option set over a job file's (a scenario's workload.fio.option): for
// every job section when `section` is empty, else for the section of that
// name; appended after the section's own lines, so it wins as a later line
// does, and checked by the same rules. Errors name `origin` in place of a
// file and line.
struct OptionOverride {
  std::string section;
  std::string key;
  std::string value;
  std::string origin;  // e.g. "field 'workload.fio.numjobs' (100)"
};

// ParseJobText with `overrides` applied; InvalidArgument naming the
// override's origin when its section is not a job section of the file.
absl::StatusOr<JobFile> ParseJobText(const std::string& path_for_messages, const std::string& text,
                                     const std::string& dir_for_includes,
                                     const std::vector<OptionOverride>& overrides);

// Parses fio's command-line form of jobs: job options as `--key=value`
// (also `-key=value`, `--key value` for options that take a value, and bare
// `--key` for flags). `--name=x` starts a new job (a global section if x
// starts with "global"); options before the first --name are global.
// `args` holds job options only: program options such as --output-format
// are an error, and so is a job file argument. Errors are
// "<command line>:N: what", N being the 1-based index in `args`.
absl::StatusOr<JobFile> ParseCommandLine(const std::vector<std::string>& args);

}  // namespace fio

#endif  // VIOSIM_SCENARIOS_FIO_PARSER_H_
