// The loader's reports of what is wrong with an input (diagnostics.h).
#include "scenarios/diagnostics.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace viosim::internal {

bool Before(const Loc& a, const Loc& b) {
  return a.line != b.line ? a.line < b.line : a.column < b.column;
}

void Diagnostics::Add(const Loc& loc, absl::string_view field, absl::string_view what) {
  std::string text = where_;
  if (loc.known()) absl::StrAppend(&text, ":", loc.line + 1, ":", loc.column + 1);
  if (!field.empty()) absl::StrAppend(&text, ": field '", field, "'");
  absl::StrAppend(&text, ": ", what);
  if (!seen_.insert(text).second) return;
  entries_.push_back({loc, std::move(text)});
}

absl::Status Diagnostics::ToStatus() const {
  if (entries_.empty()) return absl::OkStatus();
  std::vector<Entry> sorted = entries_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Entry& a, const Entry& b) {
                     if (a.loc.known() != b.loc.known()) return a.loc.known();
                     return a.loc.known() && Before(a.loc, b.loc);
                   });
  std::vector<std::string> lines;
  lines.reserve(sorted.size());
  for (const Entry& e : sorted) lines.push_back(e.text);
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

absl::Status JoinErrors(const std::vector<std::string>& messages) {
  if (messages.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(messages, "\n"));
}

void GatheringErrorCollector::AddError(int line, google::protobuf::io::ColumnNumber column,
                                       const std::string& message) {
  errors_.push_back({Loc{line, column}, message});
}
void GatheringErrorCollector::AddWarning(int line, google::protobuf::io::ColumnNumber column,
                                         const std::string& message) {
  errors_.push_back({Loc{line, column}, message});
}

}  // namespace viosim::internal
