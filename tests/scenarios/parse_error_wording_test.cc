// The loader explains protobuf's parse errors from the text's structure
// alone: which field, where, and what is added ("the fields of X are: ...",
// "'f' takes ...", "missing ...") never depend on the wording of protobuf's
// message, which may change between protobuf versions. Each broken text
// below is parsed by protobuf; its every error is explained once with
// protobuf's own message and once with a message of no known words, and the
// two explanations must differ only in the message shown.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"
#include "scenarios/scenario.pb.h"

namespace viosim {
namespace {

using ::testing::HasSubstr;

struct Reported {
  int line;
  int column;
  std::string message;
};

class Collector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    errors.push_back({line, column, message});
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    errors.push_back({line, column, message});
  }
  std::vector<Reported> errors;
};

// Protobuf's errors for `text`, parsed as the loader parses it.
std::vector<Reported> ProtobufErrors(const std::string& text) {
  Collector c;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&c);
  parser.AllowUnknownField(true);
  Scenario s;
  parser.ParseFromString(text, &s);
  return c.errors;
}

constexpr char kNoWords[] = "qqq zzz";

const char* const kBroken[] = {
    "name: \"t\"\nplatform {\n  cpus: 4\n  lock_handoff {\n    value: \"1ns\"\n",
    "platform {\n  cpus:",
    "platform {\n  cpuz: 4\n}\n",
    "variant { name: \"a\" }\nvariant {\n  name: \"b\"\n  overlay { run { seeed: 3 } }\n}\n",
    "platform {\n  cpus: \"four\"\n}\n",
    "workload { lockbench { threads: abc } }\n",
    "name: \"x\"\nplatform: 5\n",
    "stack {\n  lock { kind: SPIN }\n}\n",
    "platform {\n  name: \"box\n}\n",
    "nmae: \"x\"\nplatform { cpuz: 4 }\nrun { seeed: 1 }\n",
    "platform { cpus: 4 cpus: 5 }\n",
    "platform { cpus: 4 }\nplatform { cpus: 5 }\n",
    "workload { lockbench { threads: 2 } fio { } }\n",
    "platform { cpus: 99999999999 }\n",
    "run { seed: -1 }\n",
    "platform { cpus 4 }\n",
    "platform { cpus: 4 ]\n",
    "platform { cpus: 4 } }\n",
    "platform { [foo.bar]: 1 }\n",
    "published { role: PREDICTIONX }\n",
    "platform { name: 5 }\n",
    "platform { cpus: [1, 2] }\n",
    "platform { cpus: 4;;; }\n",
    "run { duration: }\n",
    "platform { lock_handoff: \"1ns\" }\n",
    "variant [ { name: \"a\" }, { name: \"b\" overlay { run { seeed: 3 } } } ]\n",
    "run { seed: 0x }\n",
    "platform { cpus: 4 description: 'unterminated }\n",
    "@@@\n",
};

TEST(ParseErrorWordingTest, ExplanationsDoNotDependOnProtobufsWording) {
  int explained = 0;
  for (const char* text : kBroken) {
    SCOPED_TRACE(text);
    const std::vector<Reported> errors = ProtobufErrors(text);
    ASSERT_FALSE(errors.empty());
    for (const Reported& e : errors) {
      const std::string with_words =
          internal::ExplainTextError(text, e.line, e.column, e.message, Scenario::descriptor());
      const std::string without =
          internal::ExplainTextError(text, e.line, e.column, kNoWords, Scenario::descriptor());
      absl::string_view shown = absl::StripTrailingAsciiWhitespace(e.message);
      absl::ConsumeSuffix(&shown, ".");
      EXPECT_EQ(absl::StrReplaceAll(with_words, {{shown, kNoWords}}), without) << e.message;
      ++explained;
    }
  }
  EXPECT_GE(explained, 30);
}

std::string First(const std::string& text) {
  const std::vector<Reported> errors = ProtobufErrors(text);
  EXPECT_FALSE(errors.empty());
  if (errors.empty()) return "";
  return internal::ExplainTextError(text, errors[0].line, errors[0].column, kNoWords, Scenario::descriptor());
}

// What the structure alone says, for each kind of error.
TEST(ParseErrorWordingTest, TheStructureSaysWhichFieldAndWhat) {
  // An unknown field: at its name, with the fields that exist.
  EXPECT_THAT(First("platform {\n  cpuz: 4\n}\n"),
              HasSubstr(":2:3: field 'platform.cpuz': qqq zzz; the fields of viosim.Platform are: name,"));
  // A value of the wrong kind: the field and what it takes.
  EXPECT_THAT(First("platform {\n  cpus: \"four\"\n}\n"),
              HasSubstr(":2:9: field 'platform.cpus': qqq zzz; 'cpus' takes a number of type int32"));
  // An unknown enum value, reported by protobuf after it: at the field.
  EXPECT_THAT(First("stack {\n  lock { kind: SPIN }\n}\n"),
              HasSubstr(":2:10: field 'stack.lock.kind': qqq zzz; 'kind' takes one of"));
  // A second member of a oneof: at the second, where the conflict is.
  EXPECT_THAT(First("workload { lockbench { threads: 2 } fio { } }\n"),
              HasSubstr(":1:37: field 'workload.fio': qqq zzz"));
  // A singular field set twice: at the second.
  EXPECT_THAT(First("platform { cpus: 4 cpus: 5 }\n"), HasSubstr(":1:20: field 'platform.cpus': qqq zzz"));
  // The end of the file: what is missing, and no protobuf words at all.
  EXPECT_THAT(First("platform {\n  cpus:"),
              HasSubstr(":2:8: field 'platform.cpus': unexpected end of file with 1 block still open; missing "
                        "the value of 'cpus'"));
  EXPECT_THAT(First("platform {\n"),
              HasSubstr("field 'platform': unexpected end of file with 1 block still open; missing a closing '}'"));
  // A syntax error after a value is not blamed on the value.
  EXPECT_THAT(First("platform { cpus: 4 ]\n"), HasSubstr(":1:20: field 'platform': qqq zzz"));
}

}  // namespace
}  // namespace viosim
