// The small JSON reader (see json_value.h).
#include "analysis/json_value.h"

#include <charconv>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace analysis {

const JsonValue* JsonValue::Find(absl::string_view key) const {
  for (const Member& m : members) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

const JsonValue& JsonValue::operator[](absl::string_view key) const {
  static const JsonValue* const kMissing = new JsonValue;
  const JsonValue* v = Find(key);
  return v != nullptr ? *v : *kMissing;
}

uint64_t JsonValue::U64() const { return kind == Kind::kNumber ? std::strtoull(str.c_str(), nullptr, 10) : 0; }

int64_t JsonValue::I64() const { return kind == Kind::kNumber ? std::strtoll(str.c_str(), nullptr, 10) : 0; }

absl::StatusOr<JsonValue> JsonReader::Document() {
  JsonValue v;
  if (!Value(&v, 0)) return absl::InvalidArgumentError(error_);
  Space();
  if (pos_ != text_.size()) return absl::InvalidArgumentError(At("text after the JSON value"));
  return v;
}

std::string JsonReader::At(absl::string_view what) const { return absl::StrCat(what, " at column ", pos_ + 1); }

bool JsonReader::Fail(absl::string_view what) {
  if (error_.empty()) error_ = At(what);
  return false;
}

void JsonReader::Space() {
  while (pos_ < text_.size() &&
         (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' || text_[pos_] == '\r')) {
    ++pos_;
  }
}

bool JsonReader::Literal(absl::string_view word) {
  if (text_.substr(pos_, word.size()) != word) return Fail("not JSON");
  pos_ += word.size();
  return true;
}

bool JsonReader::String(std::string* out) {
  if (pos_ >= text_.size() || text_[pos_] != '"') return Fail("expected a string");
  ++pos_;
  while (pos_ < text_.size()) {
    const char c = text_[pos_++];
    if (c == '"') return true;
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (pos_ >= text_.size()) break;
    const char e = text_[pos_++];
    switch (e) {
      case '"': case '\\': case '/': out->push_back(e); break;
      case 'n': out->push_back('\n'); break;
      case 't': out->push_back('\t'); break;
      case 'r': out->push_back('\r'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'u': {
        unsigned code = 0;
        if (pos_ + 4 > text_.size() ||
            std::from_chars(text_.data() + pos_, text_.data() + pos_ + 4, code, 16).ptr != text_.data() + pos_ + 4) {
          return Fail("bad \\u escape");
        }
        pos_ += 4;
        // The writer escapes only control characters this way.
        if (code > 0x7f) return Fail("\\u escape beyond ASCII");
        out->push_back(static_cast<char>(code));
        break;
      }
      default: return Fail("bad escape in a string");
    }
  }
  return Fail("unterminated string");
}

// From the opening bracket at pos_: items separated by ',' up to `close`,
// each read by `item`.
bool JsonReader::Items(char close, const std::function<bool()>& item) {
  ++pos_;
  Space();
  if (pos_ < text_.size() && text_[pos_] == close) {
    ++pos_;
    return true;
  }
  while (item()) {
    Space();
    if (pos_ < text_.size() && text_[pos_] == ',') {
      ++pos_;
    } else if (pos_ < text_.size() && text_[pos_] == close) {
      ++pos_;
      return true;
    } else {
      return Fail(absl::StrCat("expected ',' or '", std::string(1, close), "'"));
    }
  }
  return false;
}

bool JsonReader::Value(JsonValue* v, int depth) {
  if (depth > 16) return Fail("nested too deeply");
  Space();
  if (pos_ >= text_.size()) return Fail("expected a value");
  const size_t start = pos_;
  const char c = text_[pos_];
  bool ok = true;
  if (c == '{') {
    v->kind = JsonValue::Kind::kObject;
    ok = Items('}', [&] {
      Space();
      std::string key;
      JsonValue item;
      if (!String(&key)) return false;
      Space();
      if (pos_ >= text_.size() || text_[pos_++] != ':') return Fail("expected ':'");
      if (!Value(&item, depth + 1)) return false;
      v->members.push_back(JsonValue::Member{std::move(key), std::move(item)});
      return true;
    });
  } else if (c == '[') {
    v->kind = JsonValue::Kind::kArray;
    ok = Items(']', [&] {
      JsonValue item;
      if (!Value(&item, depth + 1)) return false;
      v->items.push_back(std::move(item));
      return true;
    });
  } else if (c == '"') {
    v->kind = JsonValue::Kind::kString;
    ok = String(&v->str);
  } else if (c == 't' || c == 'f') {
    v->kind = JsonValue::Kind::kBool;
    v->b = c == 't';
    ok = Literal(c == 't' ? "true" : "false");
  } else if (c == 'n') {
    ok = Literal("null");
  } else {
    v->kind = JsonValue::Kind::kNumber;
    size_t end = pos_;
    while (end < text_.size() && absl::string_view("+-0123456789.eE").find(text_[end]) != absl::string_view::npos) {
      ++end;
    }
    const auto r = std::from_chars(text_.data() + pos_, text_.data() + end, v->number);
    if (end == pos_ || r.ptr != text_.data() + end) return Fail("bad number");
    v->str = std::string(text_.substr(pos_, end - pos_));
    pos_ = end;
  }
  if (ok) v->raw = text_.substr(start, pos_ - start);
  return ok;
}

}  // namespace analysis
