// Reports of what is wrong with an input, for the scenario loader and the
// fio job-file parser: places in the text, and the messages about one input
// gathered into a single Status.
#ifndef VIOSIM_SCENARIOS_DIAGNOSTICS_H_
#define VIOSIM_SCENARIOS_DIAGNOSTICS_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace viosim::internal {

// A place in the text, 0-based as protobuf reports it; line < 0 if unknown.
struct Loc {
  int line = -1;
  int column = -1;

  bool known() const { return line >= 0; }
};

// Whether `a` comes before `b` in the text.
bool Before(const Loc& a, const Loc& b);

// Collects error messages about one input and turns them into a Status.
// A message recorded twice is kept once.
class Diagnostics {
 public:
  // For messages that each name their own place (AddAt).
  Diagnostics() = default;
  // `where` starts every message of Add: a file name, or a file name with
  // context.
  explicit Diagnostics(std::string where) : where_(std::move(where)) {}

  // Records "WHERE:LINE:COL: field 'FIELD': WHAT"; the place is left out if
  // `loc` is unknown and the field part if `field` is empty.
  void Add(const Loc& loc, absl::string_view field, absl::string_view what);

  // Records "FILE:LINE: WHAT", or "FILE: WHAT" if `line` is 0, for an input
  // read from several places (a file and the files it includes, a command
  // line): `file` names the place instead of WHERE, `line` is 1-based, and
  // `order` (>= 0) is the message's rank in reading order, by which it is
  // sorted. A collector takes messages of Add or of AddAt, not both: their
  // places do not compare.
  void AddAt(absl::string_view file, int line, int order, absl::string_view what);

  // Shows at most `n` messages; those after them are counted in a last
  // line, "(K more errors)". Every message is shown unless this is called.
  void set_max_shown(size_t n) { max_shown_ = n; }

  bool empty() const { return entries_.empty(); }

  // OK if nothing was recorded; otherwise InvalidArgument with one message
  // per line, in the order of their places (Add: in the text, messages
  // without a place last, in the order recorded; AddAt: by `order`).
  absl::Status ToStatus() const;

 private:
  struct Entry {
    Loc loc;  // AddAt: line `order`, column 0
    std::string text;
  };

  void Record(const Loc& loc, std::string text);

  std::string where_;
  size_t max_shown_ = 0;  // 0: no limit
  std::vector<Entry> entries_;
  absl::flat_hash_set<std::string> seen_;  // the texts of entries_
};

// Joins error messages (each possibly several lines) into one status.
absl::Status JoinErrors(const std::vector<std::string>& messages);

}  // namespace viosim::internal

#endif  // VIOSIM_SCENARIOS_DIAGNOSTICS_H_
