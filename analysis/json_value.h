// A small JSON reader for the lines RunShard writes: a document read into
// a tree of JsonValue, each value with its text as written.
#ifndef VIOSIM_ANALYSIS_JSON_VALUE_H_
#define VIOSIM_ANALYSIS_JSON_VALUE_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace analysis {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool b = false;
  double number = 0;
  std::string str;
  std::vector<JsonValue> items;
  // An object's members in order. Not a vector of std::pair: a pair needs
  // JsonValue complete where it is named, and clang's libstdc++ checks it.
  struct Member;
  std::vector<Member> members;
  absl::string_view raw;  // the value's text as written

  const JsonValue* Find(absl::string_view key) const;
};

struct JsonValue::Member {
  std::string key;
  JsonValue value;
};

// Reads `text` as one JSON document: Document() is its value, or
// InvalidArgument saying what is wrong at which column.
class JsonReader {
 public:
  explicit JsonReader(absl::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> Document();

 private:
  std::string At(absl::string_view what) const;
  bool Fail(absl::string_view what);
  void Space();
  bool Literal(absl::string_view word);
  bool String(std::string* out);
  bool Items(char close, const std::function<bool()>& item);
  bool Value(JsonValue* v, int depth);

  absl::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_JSON_VALUE_H_
