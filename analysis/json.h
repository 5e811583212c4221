// A minimal JSON writer for viosim's machine-readable output: objects,
// arrays, strings and numbers, written in the order given so output is
// byte-deterministic. Numbers use up to 10 significant digits; non-finite
// numbers are written as null.
#ifndef VIOSIM_ANALYSIS_JSON_H_
#define VIOSIM_ANALYSIS_JSON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace analysis {

class JsonWriter {
 public:
  // `indent` spaces per level; 0 writes everything on one line.
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  // Inside an object: the key of the next value.
  JsonWriter& Key(absl::string_view key);
  JsonWriter& String(absl::string_view s);
  JsonWriter& Number(double v);
  JsonWriter& Int(int64_t v);
  JsonWriter& Uint(uint64_t v);
  JsonWriter& Bool(bool b);
  JsonWriter& Null();

  // The text so far, with a final newline once the outermost value is closed.
  const std::string& str() const { return out_; }

  static std::string Quote(absl::string_view s);

 private:
  void BeforeValue();
  void Newline();

  struct Level {
    bool object;
    int count;
  };
  std::string out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
  int indent_;
};

// Formats a number the way JsonWriter does (also for CSV).
std::string FormatNumber(double v);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_JSON_H_
