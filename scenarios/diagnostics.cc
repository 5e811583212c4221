// Reports of what is wrong with an input (diagnostics.h).
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
  Record(loc, std::move(text));
}

void Diagnostics::AddAt(absl::string_view file, int line, int order, absl::string_view what) {
  // Line 0: a place without lines, such as a scenario's field.
  std::string text = line > 0 ? absl::StrCat(file, ":", line, ": ", what) : absl::StrCat(file, ": ", what);
  Record(Loc{order, 0}, std::move(text));
}

void Diagnostics::Record(const Loc& loc, std::string text) {
  if (!seen_.insert(text).second) return;
  entries_.push_back({loc, std::move(text)});
}

absl::Status Diagnostics::ToStatus() const {
  if (entries_.empty()) return absl::OkStatus();
  std::vector<const Entry*> sorted;
  sorted.reserve(entries_.size());
  for (const Entry& e : entries_) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Entry* a, const Entry* b) {
                     if (a->loc.known() != b->loc.known()) return a->loc.known();
                     return a->loc.known() && Before(a->loc, b->loc);
                   });
  const size_t shown = max_shown_ > 0 ? std::min(max_shown_, sorted.size()) : sorted.size();
  std::vector<absl::string_view> lines;
  lines.reserve(shown + 1);
  for (size_t i = 0; i < shown; ++i) lines.push_back(sorted[i]->text);
  std::string more;
  if (shown < sorted.size()) {
    more = absl::StrCat("(", sorted.size() - shown, " more errors)");
    lines.push_back(more);
  }
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

absl::Status JoinErrors(const std::vector<std::string>& messages) {
  if (messages.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(messages, "\n"));
}

}  // namespace viosim::internal
