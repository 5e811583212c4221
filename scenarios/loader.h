// Reading, checking and resolving scenario files.
//
// A scenario file is a viosim.Scenario in protobuf text format (see
// scenarios/scenario.proto). Loading parses it and checks every field that
// carries a unit or bounds option, plus the rules that tie fields together
// (variant names, published cells). All problems are reported at once, each
// on its own line in the form
//
//   FILE:LINE:COLUMN: field 'variant[1].overlay.run.duration': what is wrong
//
// with 1-based lines and columns (a tab advances the column to the next
// multiple of 8, as in protobuf's tokenizer). Errors without a place in the
// file (from --set, or found after resolving a variant) leave out
// LINE:COLUMN.
//
// Variants. A file may define named variants, each a partial Scenario merged
// over the base with protobuf merge semantics. The name "base" is reserved:
// it, and the empty name, always select the base scenario without an overlay.
//
// Overrides. `--set field.path=value` assigns one scalar field. The path is
// dotted field names, with [index] after repeated fields:
//   run.duration=6.648s
//   workload.lockbench.threads=8
//   variant[1].overlay.workload.lockbench.threads=3
//   published[0].tolerance_pct=2
// Values are parsed strictly by the field's type (integers, floating point,
// bool as true/false/1/0, enums by value name, strings verbatim) and TIME
// strings and bounds are checked by the same rules as the file.
//
// Nothing here throws or crashes on bad input: every failure is a Status.
#ifndef VIOSIM_SCENARIOS_LOADER_H_
#define VIOSIM_SCENARIOS_LOADER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/text_format.h"
#include "scenarios/scenario.pb.h"

namespace viosim {

// The name that selects the base scenario (no overlay). A variant may not be
// called this.
extern const char kBaseVariant[];

// The most variants a scenario may have, listed and made by its matrix
// together. Every command resolves variants one at a time from the whole
// file, so a file's cost grows with the square of its variants: 1,024 load
// and `list` in about 0.2 s, 4,096 in 3.5 s, and a 1,000 x 1,000 matrix of
// 47 KB would not finish. A table wider than this is a sweep's job.
inline constexpr int kMaxVariants = 1024;

// A scenario file as loaded: its text, the parsed message and where each
// field was found in the text.
struct ScenarioFile {
  std::string path;  // as given to LoadScenarioFile; used in messages
  std::string text;  // the file's contents
  Scenario scenario;  // as written, variants and published cells included
  // Line and column of every field of `scenario` in `text` (0-based, as
  // protobuf records them). Shared so that ScenarioFile stays copyable.
  std::shared_ptr<const google::protobuf::TextFormat::ParseInfoTree> locations;
};

// Reads and checks the scenario file at `path`.
//
// Returns NotFound (naming `path`) if the file cannot be read, and
// InvalidArgument listing every problem if it does not parse or does not
// pass the checks: a TIME string that does not parse, is negative, or is zero
// where the field does not allow zero; a number outside the field's (min) and
// (max); a non-finite floating-point value; a variant without a name, with a
// duplicate name or named "base"; a variant overlay containing `variant` or
// `published`; a published cell without a metric, a reference (value or
// analytic) or a role, or naming a variant that does not exist.
absl::StatusOr<ScenarioFile> LoadScenarioFile(const std::string& path);

// As LoadScenarioFile, for text already in memory. `path` is used only in
// messages.
absl::StatusOr<ScenarioFile> ParseScenarioText(const std::string& path,
                                               const std::string& text);

// `file` under its alternative `name`: the alternative's overlay merged
// over the base scenario and over every variant's overlay (so it wins over
// both), the alternatives themselves cleared. InvalidArgument naming the
// alternatives when the file has none of that name.
absl::StatusOr<ScenarioFile> UnderAlternative(const ScenarioFile& file, absl::string_view name);

// The variants of `file` in file order. A file without variants has one,
// kBaseVariant, which is the base scenario itself.
std::vector<std::string> VariantNames(const ScenarioFile& file);

// Whether two variant names select the same variant ("" and "base" both
// select the base scenario).
bool SameVariant(absl::string_view a, absl::string_view b);

// The variant's description, or the scenario's for the base.
std::string VariantDescription(const ScenarioFile& file, absl::string_view variant_name);

// Applies one `--set` assignment "field.path=value" to `*scenario`.
// Intermediate singular messages are created as needed; repeated fields need
// an index within their current size. Returns InvalidArgument of the form
//   --set 'a.b=c': field 'a.b': what is wrong
// for a malformed assignment, an unknown field name (the message lists the
// fields that exist there), a path ending at a message, a missing, needless
// or out-of-range index, or a value that does not parse or fails the field's
// unit or bounds. On error `*scenario` is unchanged. `flag` is the flag
// named in messages ("--over" for a sweep's values). A string value written
// in a scenario file's quotes ("fair" or 'fair') is read as the file would
// read it.
absl::Status ApplyOverride(Scenario* scenario, absl::string_view assignment,
                           absl::string_view flag = "--set");

// The value a --set assignment's right side `text` gives a string field:
// `text` read as a scenario file reads it when it is written in the file's
// quotes ("10ms" gives 10ms, "a\"b" gives a"b), else `text` as given
// (also when the quotes do not read, which ApplyOverride refuses). For
// labelling values as the field holds them.
std::string ValueAsRead(absl::string_view text);

// What the scalar field at a --set path holds: a duration string (a TIME
// field), an integer, a real number (double or float), or anything else.
enum class ScalarKind { kDuration, kInteger, kReal, kOther };

// The kind of the scalar field that `path` (the left side of a --set
// assignment) names in `scenario`. Returns InvalidArgument of the form
//   FLAG 'a.b': field 'a.b': what is wrong
// for every path ApplyOverride would refuse (unknown field, a message, a
// bad index).
absl::StatusOr<ScalarKind> ScalarKindAt(const Scenario& scenario, absl::string_view path,
                                        absl::string_view flag);

// When the --set path `path` runs into another member of the oneof that
// `scenario` holds at some step (another stack, another workload kind: the
// ones ApplyOverride refuses), the path of the member `scenario` has there
// ("stack.raid10"); else nullopt. A path that does not walk is nullopt.
std::optional<std::string> OneofMemberHeld(const Scenario& scenario, absl::string_view path);

// The field path of an assignment "PATH=VALUE", without spaces around it.
std::string AssignmentPath(absl::string_view assignment);

// Applies `assignments` in order; all errors are reported together, one per
// line. Assignments that succeed stay applied even if others fail.
absl::Status ApplyOverrides(Scenario* scenario,
                            const std::vector<std::string>& assignments);

// True if `assignment` targets the file's variants or published cells (its
// path starts with `variant` or `published`) rather than the scenario that
// is run.
bool IsFileLevelOverride(absl::string_view assignment);

// Applies the file-level assignments among `assignments` (see
// IsFileLevelOverride) to `file->scenario`, ignoring the others, and checks
// the cross-field rules again. Use it to see published cells as changed by
// --set. Assignments are absolute, so applying them twice (here and again in
// ResolveVariant) is harmless.
absl::Status ApplyFileOverrides(ScenarioFile* file,
                                const std::vector<std::string>& assignments);

// The scenario to run for `variant_name`: the base scenario with `variant`
// and `published` cleared, the variant's overlay merged over it (nothing for
// "" and kBaseVariant), then the assignments that are not file-level applied
// in order, so they win over the overlay. File-level assignments are applied
// first to a copy of the file, so --set can edit a variant's overlay.
// Returns InvalidArgument for an unknown variant ("FILE: unknown variant 'x'
// (variants: a, b)"), for any failing assignment and for a combination of
// values the models cannot run (scenarios/checks.h; a scenario with an fio
// workload has its job file read for that, NotFound if it cannot be).
// `last_flag` is the flag messages name for the last of `overrides` (a
// sweep's --over value comes last). The result has passed the unit and
// bounds checks, so its TIME strings can be read with TimeOf.
absl::StatusOr<Scenario> ResolveVariant(
    const ScenarioFile& file, absl::string_view variant_name,
    const std::vector<std::string>& overrides, absl::string_view last_flag = "--set");

// "FILE:LINE:COLUMN" (1-based) of the field at `field_path` (the syntax of
// --set paths, e.g. "published[2]" or "run.duration") in `file`, or just
// "FILE" if the path is not found or the field was not written in the file.
std::string FieldLocation(const ScenarioFile& file, absl::string_view field_path);

// Reads a baseline file (a viosim.Baseline in text format). Returns NotFound
// if it cannot be read and InvalidArgument, with FILE:LINE:COLUMN and field
// for each error, if it does not parse.
absl::StatusOr<Baseline> LoadBaselineFile(const std::string& path);

// `baseline` in text format, fields in field-number order and cells in the
// order given, so equal messages give equal text. Doubles are written so
// they read back exactly.
std::string BaselineToText(const Baseline& baseline);

namespace internal {
// For tests: the loader's report of a protobuf parse error at 0-based
// `line`:`column` of `text` (a `root` message) whose text is `message`, as
// ":LINE:COL: field 'F': WHAT". Which field, which place and what is added
// come from the text alone; `message` is only shown.
std::string ExplainTextError(const std::string& text, int line, int column, const std::string& message,
                             const google::protobuf::Descriptor* root);
}  // namespace internal

}  // namespace viosim

#endif  // VIOSIM_SCENARIOS_LOADER_H_
