#include "analysis/json.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace analysis {

std::string FormatNumber(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == 0) return "0";  // also turns -0 into 0
  return absl::StrFormat("%.10g", v);
}

std::string JsonWriter::Quote(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

void JsonWriter::Newline() {
  if (indent_ == 0) return;
  out_ += '\n';
  out_.append(stack_.size() * indent_, ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!stack_.empty()) {
    if (stack_.back().count++ > 0) out_ += ',';
    Newline();
  }
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  stack_.push_back({true, 0});
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  const bool empty = stack_.back().count == 0;
  stack_.pop_back();
  if (!empty) Newline();
  out_ += '}';
  if (stack_.empty()) out_ += '\n';
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  stack_.push_back({false, 0});
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  const bool empty = stack_.back().count == 0;
  stack_.pop_back();
  if (!empty) Newline();
  out_ += ']';
  if (stack_.empty()) out_ += '\n';
  return *this;
}

JsonWriter& JsonWriter::Key(absl::string_view key) {
  BeforeValue();
  absl::StrAppend(&out_, Quote(key), indent_ == 0 ? ":" : ": ");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(absl::string_view s) {
  BeforeValue();
  out_ += Quote(s);
  return *this;
}

JsonWriter& JsonWriter::Number(double v) {
  BeforeValue();
  out_ += FormatNumber(v);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t v) {
  BeforeValue();
  absl::StrAppend(&out_, v);
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  absl::StrAppend(&out_, v);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool b) {
  BeforeValue();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

}  // namespace analysis
