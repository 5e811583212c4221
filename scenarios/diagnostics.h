// The loader's reports of what is wrong with an input: places in the text,
// the messages about one input gathered into a single Status, and the
// collector of what protobuf's parser and tokenizer report.
#ifndef VIOSIM_SCENARIOS_DIAGNOSTICS_H_
#define VIOSIM_SCENARIOS_DIAGNOSTICS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/io/tokenizer.h"

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
class Diagnostics {
 public:
  // `where` starts every message: a file name, or a file name with context.
  explicit Diagnostics(std::string where) : where_(std::move(where)) {}

  // Records "WHERE:LINE:COL: field 'FIELD': WHAT"; the place is left out if
  // `loc` is unknown and the field part if `field` is empty.
  void Add(const Loc& loc, absl::string_view field, absl::string_view what);

  bool empty() const { return entries_.empty(); }

  // OK if nothing was recorded; otherwise InvalidArgument with one message
  // per line, in the order of their places in the text (messages without a
  // place last, in the order recorded).
  absl::Status ToStatus() const;

 private:
  struct Entry {
    Loc loc;
    std::string text;
  };

  std::string where_;
  std::vector<Entry> entries_;
  absl::flat_hash_set<std::string> seen_;  // the texts of entries_
};

// Joins error messages (each possibly several lines) into one status.
absl::Status JoinErrors(const std::vector<std::string>& messages);

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

}  // namespace viosim::internal

#endif  // VIOSIM_SCENARIOS_DIAGNOSTICS_H_
