// A small JSON reader for the fio output tests: keeps object members in
// order (duplicates included, as fio's "global options" can repeat a key)
// and numbers as their literal text, so integers and fio's "%f" floats
// can be told apart and read back exactly.
#ifndef VIOSIM_TESTS_FIO_OUTPUT_JSON_READER_H_
#define VIOSIM_TESTS_FIO_OUTPUT_JSON_READER_H_

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace fio_test {

struct Json {
  enum Kind { kNull, kBool, kNumber, kString, kObject, kArray };
  Kind kind = kNull;
  std::string text;  // a number's literal, or a string's decoded value
  bool boolean = false;
  std::vector<std::pair<std::string, Json>> members;
  std::vector<Json> items;

  bool Has(const std::string& key) const {
    for (const auto& m : members) {
      if (m.first == key) return true;
    }
    return false;
  }
  // The first member named `key`; a null value when there is none.
  const Json& operator[](const std::string& key) const {
    static const Json kMissing;
    for (const auto& m : members) {
      if (m.first == key) return m.second;
    }
    return kMissing;
  }
  bool IsInt() const { return kind == kNumber && text.find_first_of(".eE") == std::string::npos; }
  double Num() const { return std::strtod(text.c_str(), nullptr); }
  uint64_t U64() const { return std::strtoull(text.c_str(), nullptr, 10); }
  int64_t I64() const { return std::strtoll(text.c_str(), nullptr, 10); }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& s) : s_(s) {}

  std::optional<Json> Parse() {
    Json v;
    if (!Value(&v)) return std::nullopt;
    Skip();
    if (p_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void Skip() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\n' || s_[p_] == '\t' || s_[p_] == '\r')) ++p_;
  }
  bool Eat(char c) {
    Skip();
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    out->clear();
    while (p_ < s_.size() && s_[p_] != '"') {
      char c = s_[p_++];
      if (c == '\\') {
        if (p_ >= s_.size()) return false;
        char e = s_[p_++];
        switch (e) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case 'b': c = '\b'; break;
          case 'f': c = '\f'; break;
          case 'u': return false;  // not needed by these tests
          default: c = e; break;
        }
      }
      *out += c;
    }
    return Eat('"');
  }
  bool Value(Json* v) {
    Skip();
    if (p_ >= s_.size()) return false;
    const char c = s_[p_];
    if (c == '{') {
      ++p_;
      v->kind = Json::kObject;
      if (Eat('}')) return true;
      do {
        std::string key;
        Json member;
        if (!String(&key) || !Eat(':') || !Value(&member)) return false;
        v->members.emplace_back(std::move(key), std::move(member));
      } while (Eat(','));
      return Eat('}');
    }
    if (c == '[') {
      ++p_;
      v->kind = Json::kArray;
      if (Eat(']')) return true;
      do {
        Json item;
        if (!Value(&item)) return false;
        v->items.push_back(std::move(item));
      } while (Eat(','));
      return Eat(']');
    }
    if (c == '"') {
      v->kind = Json::kString;
      return String(&v->text);
    }
    if (s_.compare(p_, 4, "true") == 0 || s_.compare(p_, 5, "false") == 0) {
      v->kind = Json::kBool;
      v->boolean = s_[p_] == 't';
      p_ += v->boolean ? 4 : 5;
      return true;
    }
    if (s_.compare(p_, 4, "null") == 0) {
      p_ += 4;
      return true;
    }
    const size_t start = p_;
    while (p_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[p_])) || s_[p_] == '-' ||
                              s_[p_] == '+' || s_[p_] == '.' || s_[p_] == 'e' || s_[p_] == 'E')) {
      ++p_;
    }
    if (p_ == start) return false;
    v->kind = Json::kNumber;
    v->text = s_.substr(start, p_ - start);
    return true;
  }

  const std::string& s_;
  size_t p_ = 0;
};

inline std::optional<Json> ParseJson(const std::string& s) { return JsonParser(s).Parse(); }

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Key paths of a JSON value as the key-tree test data spells them: one
// "<path> <type>" entry per distinct path in first-appearance order, array
// elements as "[]", and the keys of the maps named in `maps` as "*".
inline void KeyTree(const Json& v, const std::string& path, const std::vector<std::string>& maps,
                    std::vector<std::string>* out) {
  static const char* const kTypes[] = {"null", "bool", "number", "string", "object", "array"};
  if (!path.empty()) {
    std::string type = kTypes[v.kind];
    if (v.kind == Json::kNumber) type = v.IsInt() ? "int" : "float";
    const std::string entry = path + " " + type;
    bool seen = false;
    for (const std::string& e : *out) seen = seen || e == entry;
    if (!seen) out->push_back(entry);
  }
  if (v.kind == Json::kObject) {
    const std::string last = path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.') + 1);
    bool is_map = false;
    for (const std::string& m : maps) is_map = is_map || m == last;
    for (const auto& [key, member] : v.members) {
      KeyTree(member, (path.empty() ? "" : path + ".") + (is_map ? "*" : key), maps, out);
    }
  } else if (v.kind == Json::kArray) {
    for (const Json& item : v.items) KeyTree(item, path + "[]", maps, out);
  }
}

}  // namespace fio_test

#endif  // VIOSIM_TESTS_FIO_OUTPUT_JSON_READER_H_
