// What the files of the scenario loader share among themselves, each
// section defined in the file it names. Only the loader's own files include
// this; everything else uses loader.h.
#ifndef VIOSIM_SCENARIOS_LOADER_INTERNAL_H_
#define VIOSIM_SCENARIOS_LOADER_INTERNAL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"
#include "scenarios/diagnostics.h"
#include "scenarios/scenario.pb.h"

namespace viosim::internal {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using ParseInfoTree = google::protobuf::TextFormat::ParseInfoTree;

// ---------------------------------------------------------------------------
// Field options and the checks of single values (field_checks.cc)

// Whether `f` is a string field with the unit TIME.
bool IsTimeField(const FieldDescriptor* f);

// "cpus, lock_handoff, ..." in declaration order.
std::string FieldNames(const Descriptor* d);

// The names of the values of `e`, comma-separated in declaration order;
// without the value numbered 0 if `skip_zero`.
std::string EnumNames(const EnumDescriptor* e, bool skip_zero);

// What a value of field `f` looks like, for hints in messages.
std::string DescribeType(const FieldDescriptor* f);

// Empty if `text` is acceptable for the TIME field `f`, else what is wrong.
std::string CheckTimeText(const FieldDescriptor* f, absl::string_view text);

// Empty if `value` (written `shown`) is acceptable for the numeric field
// `f`: finite and within the field's (min) and (max), if any.
std::string CheckNumber(const FieldDescriptor* f, double value,
                        absl::string_view shown);

// ---------------------------------------------------------------------------
// Walking a message (field_checks.cc)

// "parent.name" or "parent.name[3]".
std::string JoinPath(absl::string_view parent, absl::string_view name, int index);

// Where `f` (element `index`, -1 if singular) was written, or `fallback`.
Loc LocationIn(const ParseInfoTree* tree, const FieldDescriptor* f, int index,
               const Loc& fallback);

// Where the fields inside `f` (element `index`, -1 if singular) were
// written; null if `tree` is.
const ParseInfoTree* NestedTree(const ParseInfoTree* tree,
                                const FieldDescriptor* f, int index);

// Checks every set field of `m` (at `path`, written at `here`) and of its
// sub-messages against the field's unit and bounds options.
void CheckValues(const Message& m, const ParseInfoTree* tree,
                 const std::string& path, const Loc& here, Diagnostics* d);

// ---------------------------------------------------------------------------
// Text format and its errors (text_errors.cc)

// Gathers everything protobuf's parser reports. Warnings count as errors:
// the parser is told to accept unknown fields only so that it goes on and
// reports all of them (as warnings) rather than stopping at the first.
class GatheringErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  struct Error {
    Loc loc;
    std::string message;
  };

  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override;
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override;

  const std::vector<Error>& errors() const { return errors_; }

 private:
  std::vector<Error> errors_;
};

// A field renamed when the placement switches became viosim.Placement:
// the new spelling, or "" for any other name.
std::string RenamedField(const Descriptor* d, absl::string_view name);

// Parses `text` into `*out` (recording locations in `*tree` if not null)
// and adds every problem to `*d`. Returns false if the parser stopped early,
// so that `*out` holds only what came before the error.
bool ParseMessageText(const std::string& text, Message* out, ParseInfoTree* tree,
                      Diagnostics* d);

// ---------------------------------------------------------------------------
// Field paths and --set (field_path.cc)

// Applies the file-level assignments among `assignments` to `*s` and checks
// the cross-field rules again. `path` names the file in messages.
absl::Status ApplyFileLevel(const std::string& path, Scenario* s,
                            const std::vector<std::string>& assignments);

// ---------------------------------------------------------------------------
// Variants (variants.cc)

// Turns `matrix` into variants ("<row>-<column>", the row's overlay merged
// with the column's) appended after the listed ones, then clears it. Axis
// names must be non-empty and unique; overlays may not nest variants,
// published cells or matrices (CheckScenarioRules checks the first two on
// the generated variants).
void ExpandMatrix(Scenario* s, const ParseInfoTree* tree, Diagnostics* d);

// The rules that involve more than one field: variant names, overlays and
// published cells (each names a metric its variant reports).
void CheckScenarioRules(const Scenario& s, const ParseInfoTree* tree,
                        Diagnostics* d, const Loc& generated_at = Loc{});

}  // namespace viosim::internal

#endif  // VIOSIM_SCENARIOS_LOADER_INTERNAL_H_
