// A small JSON reader: a document read into a tree of JsonValue, each value
// with its text as written. It reads the lines RunShard writes, and the
// tests read fio's and viosim's JSON output with it.
#ifndef VIOSIM_ANALYSIS_JSON_VALUE_H_
#define VIOSIM_ANALYSIS_JSON_VALUE_H_

#include <cstddef>
#include <cstdint>
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
  std::string str;  // a string's value, or a number's text as written
  std::vector<JsonValue> items;
  // An object's members in order. Not a vector of std::pair: a pair needs
  // JsonValue complete where it is named, and clang's libstdc++ checks it.
  struct Member;
  std::vector<Member> members;
  absl::string_view raw;  // the value's text as written: a view of the text read

  // The first member named `key`, or nullptr.
  const JsonValue* Find(absl::string_view key) const;
  bool Has(absl::string_view key) const { return Find(key) != nullptr; }
  // The first member named `key`; a null value when there is none.
  const JsonValue& operator[](absl::string_view key) const;
  // A number's value; 0 for any other value.
  double Num() const { return kind == Kind::kNumber ? number : 0; }
  // A number's text read as a whole number, as strtoull and strtoll read
  // it (exact beyond a double's 53 bits); 0 for any other value.
  uint64_t U64() const;
  int64_t I64() const;
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
