// Helpers for tests that read files: a file's whole text, and the key paths
// of a JSON value (analysis/json_value.h) as the key-tree test data spells
// them.
#ifndef VIOSIM_TESTS_FIO_OUTPUT_TEST_FILES_H_
#define VIOSIM_TESTS_FIO_OUTPUT_TEST_FILES_H_

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/json_value.h"

namespace fio_test {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Key paths of a JSON value as the key-tree test data spells them: one
// "<path> <type>" entry per distinct path in first-appearance order, array
// elements as "[]", and the keys of the maps named in `maps` as "*". A
// number's type is "int" when its text has no '.', 'e' or 'E', else "float".
inline void KeyTree(const analysis::JsonValue& v, const std::string& path, const std::vector<std::string>& maps,
                    std::vector<std::string>* out) {
  using Kind = analysis::JsonValue::Kind;
  if (!path.empty()) {
    std::string type;
    switch (v.kind) {
      case Kind::kNull: type = "null"; break;
      case Kind::kBool: type = "bool"; break;
      case Kind::kNumber: type = v.str.find_first_of(".eE") == std::string::npos ? "int" : "float"; break;
      case Kind::kString: type = "string"; break;
      case Kind::kObject: type = "object"; break;
      case Kind::kArray: type = "array"; break;
    }
    const std::string entry = path + " " + type;
    bool seen = false;
    for (const std::string& e : *out) seen = seen || e == entry;
    if (!seen) out->push_back(entry);
  }
  if (v.kind == Kind::kObject) {
    const std::string last = path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.') + 1);
    bool is_map = false;
    for (const std::string& m : maps) is_map = is_map || m == last;
    for (const auto& [key, member] : v.members) {
      KeyTree(member, (path.empty() ? "" : path + ".") + (is_map ? "*" : key), maps, out);
    }
  } else if (v.kind == Kind::kArray) {
    for (const analysis::JsonValue& item : v.items) KeyTree(item, path + "[]", maps, out);
  }
}

}  // namespace fio_test

#endif  // VIOSIM_TESTS_FIO_OUTPUT_TEST_FILES_H_
