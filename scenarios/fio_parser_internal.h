// The parts of the fio job-file parser that its files share: viosim's limits
// on values, the diagnostics, the input read into sections, the state that
// options are applied to, and JobParser, which makes jobs of the sections.
// fio_parser.cc reads the input (job files, includes, command lines);
// fio_parser_jobs.cc makes the jobs; fio_parser_values.cc reads the values
// (fio's value syntax and the modeled options).
#ifndef VIOSIM_SCENARIOS_FIO_PARSER_INTERNAL_H_
#define VIOSIM_SCENARIOS_FIO_PARSER_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "models/fio/job.h"
#include "scenarios/diagnostics.h"
#include "scenarios/fio_options.h"

namespace fio {
namespace parser_internal {

// ---------------------------------------------------------------------------
// Limits. fio accepts larger values; these are the ones viosim refuses as
// certainly mistaken (and too costly to simulate).

constexpr int64_t kPiB = int64_t{1} << 50;
constexpr int64_t kMaxSize = kPiB;               // size=, filesize=, rw offset step
constexpr int64_t kMaxBlockSize = int64_t{1} << 30;  // bs=, bsrange=: 1 GiB
constexpr int64_t kMaxDepth = 65536;             // iodepth and its batches
constexpr int64_t kMaxJobs = 4096;               // numjobs=
constexpr int64_t kMaxTimeUs = int64_t{365} * 24 * 3600 * 1000000;  // 1 year
constexpr int64_t kMaxLoops = 1000000000;
constexpr int kMaxIncludeDepth = 16;
// Includes in all, each file counted every time it is included: depth alone
// does not bound them (a file including the next one three times, 16 deep, is
// 43 million reads).
constexpr int kMaxIncludes = 4096;
constexpr size_t kMaxErrors = 20;

// ---------------------------------------------------------------------------
// Diagnostics

// A place in the input: a file (or the command line) and a line (or argument
// number); `seq` (>= 0) orders places in reading order across included
// files.
struct Place {
  std::string file;
  int line = 0;
  int seq = 0;
};

using viosim::internal::Diagnostics;

// The parser's collector: messages in reading order, kMaxErrors of them
// shown.
inline Diagnostics NewErrors() {
  Diagnostics errors;
  errors.set_max_shown(kMaxErrors);
  return errors;
}

// Records "FILE:LINE: what" at `at`, or "FILE: what" at a place without
// lines (line 0), such as an override from a scenario, whose FILE names the
// field it came from.
inline void AddError(Diagnostics* errors, const Place& at, absl::string_view what) {
  errors->AddAt(at.file, at.line, at.seq, what);
}

// ---------------------------------------------------------------------------
// The input, read into sections

struct OptionLine {
  Place at;
  std::string key;
  std::string value;  // as written, blanks around it removed
  bool bare = false;  // no '=' at all
};

struct Section {
  Place at;
  std::string name;
  bool global = false;
  std::vector<OptionLine> options;
};

// ---------------------------------------------------------------------------
// Applying options

// A setting viosim refuses but a later one may replace (ioengine=, rw=): it
// is reported only if a job ends up with it.
struct Pending {
  bool set = false;
  Place at;
  std::string what;
};

// The state a section starts from: fio's parent thread_data. [global]
// sections change it; a job section starts from a copy.
struct Defaults {
  JobOptions job;
  uint64_t bs[kDdirs] = {4096, 4096, 4096};
  bool range_set[kDdirs] = {false, false, false};
  uint64_t range_min[kDdirs] = {0, 0, 0};
  uint64_t range_max[kDdirs] = {0, 0, 0};
  uint64_t filesize = 0;
  // The engine the engine options (hipri) were parsed for. fio reloads the
  // engine, dropping their values, when a job's engine differs from it.
  std::string eo_engine = "psync";
  Pending engine_issue;
  Pending rw_issue;
};

// What a section collects while its options are read.
struct SectionWork {
  bool is_job = false;
  // Options as written with their report rank (fio lists general options,
  // then filename/filename_format, then engine options).
  std::vector<std::pair<int, WrittenOption>> written;
  std::vector<std::pair<const OptionLine*, const OptionInfo*>> engine_options;
  bool log_option = false;
  std::vector<std::string> notes;  // read-as-fio notes of this section's options
};

// Limits for a numeric option.
struct NumberRule {
  bool time = false;        // a time (us); otherwise a size-style integer
  int64_t min = 0;          // fio's minimum
  int64_t fio_max = -1;     // fio's maximum (-1: none)
  int64_t viosim_max = -1;  // viosim's limit (-1: none)
  const char* limit_text = "";  // how to print viosim_max
  bool seconds = true;      // a time without a unit is in seconds (else us)
};

// Makes the jobs of a file's sections, as fio makes them of its job file.
class JobParser {
 public:
  JobParser(std::string path, Diagnostics* errors) : path_(std::move(path)), errors_(errors) {}

  absl::StatusOr<JobFile> Run(const std::vector<Section>& sections);

 private:
  // Sections into jobs (fio_parser_jobs.cc).
  static void AddNote(JobFile* out, const std::string& note);
  void Error(const Place& at, absl::string_view what) { AddError(errors_, at, what); }
  void ParseSection(const Section& s, JobFile* out);
  void FinishJob(const Section& s, const Defaults& d, std::vector<WrittenOption> written, JobFile* out);
  void CheckPacing(const Section& s, JobOptions& job);
  void Apply(const OptionLine& o, Defaults& d, SectionWork& w);
  void ApplyEngineOptions(Defaults& d, SectionWork& w);

  // Value checks (fio_parser_values.cc).
  static absl::Status Invalid(const OptionLine& o, const std::string& value, absl::string_view expected);
  static absl::Status CheckHostKeywords(const OptionLine& o, const std::string& value);
  static absl::Status ParseBool(const OptionLine& o, const std::string& value, bool* out);
  static absl::Status ParseFlag(const OptionLine& o, const std::string& value, bool* out);
  static absl::StatusOr<int64_t> ParseNumber(const OptionLine& o, const std::string& value, const NumberRule& rule);
  static absl::Status CheckValue(const OptionInfo& info, const OptionLine& o, const std::string& value);

  // Modeled options (fio_parser_values.cc).
  absl::Status ApplyModeled(const OptionInfo& info, const OptionLine& o, const std::string& value, Defaults& d);
  static absl::Status RejectZones(const OptionLine& o, const std::string& value);
  absl::Status ApplyRw(const OptionLine& o, const std::string& value, Defaults& d);
  struct SizeResult;
  static absl::StatusOr<SizeResult> ParseBlockSize(const OptionLine& o, const std::string& text,
                                                   const std::string& whole);
  absl::Status ApplyBs(const OptionLine& o, const std::string& value, Defaults& d);
  absl::Status ApplyBsrange(const OptionLine& o, const std::string& value, Defaults& d);
  absl::Status ApplyPerDirection(const OptionLine& o, const std::string& value, uint64_t (&out)[kDdirs],
                                 bool iops);
  absl::Status ApplyBssplit(const OptionLine& o, const std::string& value, Defaults& d);
  absl::Status ApplyFilesize(const OptionLine& o, const std::string& value, Defaults& d);
  absl::Status ApplyEngine(const OptionLine& o, const std::string& value, Defaults& d);

  std::string path_;
  Diagnostics* errors_;
  Defaults global_;
  bool in_job_ = false;  // the section being read is a job section
};

// Shared helpers, each defined with its kin.

// fio's value syntax (fio_parser_values.cc).
bool IsDigit(char c);
bool IsAlpha(char c);
bool IsBlank(char c);
std::string ExpandEnv(absl::string_view in);

// fio's line cleanup (fio_parser.cc).
std::string CleanLine(absl::string_view line);

// Whether an option of this kind needs a value (fio_parser_jobs.cc).
bool NeedsValue(ValueKind k);

}  // namespace parser_internal
}  // namespace fio

#endif  // VIOSIM_SCENARIOS_FIO_PARSER_INTERNAL_H_
