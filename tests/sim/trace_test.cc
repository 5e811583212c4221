#include "sim/trace.h"

#include <cctype>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/time.h"

namespace sim {
namespace {

using ::sim::literals::operator""_ps;
using ::sim::literals::operator""_ns;
using ::sim::literals::operator""_us;
using ::sim::literals::operator""_s;
using ::testing::HasSubstr;

// A strict recursive-descent JSON recognizer (RFC 8259), enough to check
// that the writer's output is well-formed. Also counts the elements of the
// "traceEvents" array (the first array met).
class JsonChecker {
 public:
  explicit JsonChecker(std::string text) : s_(std::move(text)) {}

  bool Valid() {
    SkipSpace();
    if (!Value(0)) return false;
    SkipSpace();
    return pos_ == s_.size();
  }
  int first_array_size() const { return first_array_size_; }

 private:
  bool Value(int depth) {
    if (depth > 64 || pos_ >= s_.size()) return false;
    switch (s_[pos_]) {
      case '{':
        return Object(depth);
      case '[':
        return Array(depth);
      case '"':
        return String();
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        return Number();
    }
  }
  bool Object(int depth) {
    ++pos_;
    SkipSpace();
    if (Peek() == '}') return ++pos_, true;
    for (;;) {
      SkipSpace();
      if (!String()) return false;
      SkipSpace();
      if (Peek() != ':') return false;
      ++pos_;
      SkipSpace();
      if (!Value(depth + 1)) return false;
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == '}') return ++pos_, true;
      return false;
    }
  }
  bool Array(int depth) {
    const bool first = !seen_array_;
    seen_array_ = true;
    int n = 0;
    ++pos_;
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      if (first) first_array_size_ = 0;
      return true;
    }
    for (;;) {
      SkipSpace();
      if (!Value(depth + 1)) return false;
      ++n;
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == ']') {
        ++pos_;
        if (first) first_array_size_ = n;
        return true;
      }
      return false;
    }
  }
  bool String() {
    if (Peek() != '"') return false;
    ++pos_;
    while (pos_ < s_.size()) {
      const unsigned char c = s_[pos_++];
      if (c == '"') return true;
      if (c < 0x20) return false;  // raw control characters are invalid
      if (c == '\\') {
        if (pos_ >= s_.size()) return false;
        const char e = s_[pos_++];
        if (e == 'u') {
          for (int i = 0; i < 4; ++i) {
            if (pos_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[pos_++]))) {
              return false;
            }
          }
        } else if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
          return false;
        }
      }
    }
    return false;
  }
  bool Number() {
    const size_t start = pos_;
    if (Peek() == '-') ++pos_;
    if (Peek() == '0') {
      ++pos_;
    } else if (std::isdigit(static_cast<unsigned char>(Peek()))) {
      while (std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
    } else {
      return false;
    }
    if (Peek() == '.') {
      ++pos_;
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) return false;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      ++pos_;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) return false;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
    }
    return pos_ > start;
  }
  bool Literal(const char* word) {
    const std::string w(word);
    if (s_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r' || s_[pos_] == '\t')) {
      ++pos_;
    }
  }

  const std::string s_;
  size_t pos_ = 0;
  bool seen_array_ = false;
  int first_array_size_ = -1;
};

TEST(JsonCheckerTest, RejectsMalformed) {
  // The checker itself must be able to say no.
  for (const char* bad : {"{", "{\"a\":}", "[1,]", "{\"a\":1,}", "\"x", "01",
                          "{\"a\":\"\x01\"}", "[1 2]", "{\"a\":1}}", "\"\\x\""}) {
    EXPECT_FALSE(JsonChecker(bad).Valid()) << bad;
  }
  for (const char* good : {"{}", "[]", "{\"a\":[1,-2.5e3,\"\\u00e9\",true,null]}"}) {
    EXPECT_TRUE(JsonChecker(good).Valid()) << good;
  }
}

TEST(TraceMicrosTest, ExactFromPicoseconds) {
  EXPECT_EQ(FormatTraceMicros(Time::Zero()), "0.000000");
  EXPECT_EQ(FormatTraceMicros(1_ps), "0.000001");
  EXPECT_EQ(FormatTraceMicros(1500_ns), "1.500000");
  EXPECT_EQ(FormatTraceMicros(35_us), "35.000000");
  EXPECT_EQ(FormatTraceMicros(Time::Picos(123456789012)), "123456.789012");
  EXPECT_EQ(FormatTraceMicros(Time::Zero() - 2_us), "-2.000000");
  EXPECT_EQ(FormatTraceMicros(Time::Zero() - 1_ps), "-0.000001");
  // Large times keep every digit (a double would not: 2^63 ps needs 19).
  EXPECT_EQ(FormatTraceMicros(Time::Max()), "9223372036854.775807");
  EXPECT_EQ(FormatTraceMicros(Time::Picos(INT64_MIN)), "-9223372036854.775808");
}

TEST(JsonStringTest, Escaping) {
  std::string out;
  AppendJsonString(&out, "plain");
  EXPECT_EQ(out, "\"plain\"");
  out.clear();
  AppendJsonString(&out, "a\"b\\c\nd\te\rf\bg\fh");
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\nd\\te\\rf\\bg\\fh\"");
  out.clear();
  AppendJsonString(&out, std::string("x\x01y\x1f", 4) + std::string(1, '\0'));
  EXPECT_EQ(out, "\"x\\u0001y\\u001f\\u0000\"");
  out.clear();
  AppendJsonString(&out, "caf\xc3\xa9 /");  // UTF-8 passes through
  EXPECT_EQ(out, "\"caf\xc3\xa9 /\"");
}

TEST(TraceWriterTest, EmptyTraceIsValid) {
  TraceWriter w;
  const std::string json = w.Finish();
  EXPECT_EQ(json, "{\"traceEvents\":[\n]}\n");
  JsonChecker checker(json);
  EXPECT_TRUE(checker.Valid());
  EXPECT_EQ(checker.first_array_size(), 0);
  EXPECT_EQ(w.event_count(), 0);
}

void WriteSample(TraceWriter& w) {
  w.SetProcessName(1, "host \"A\"");
  w.SetThreadName(1, 2, "cpu\\0");
  w.SetThreadSortIndex(1, 2, 5);
  w.Complete(1, 2, "lock", 1500_ns, 2_us, "sync",
             {TraceArg::Int("waiters", 3), TraceArg::Str("owner", "vm\n1")});
  w.Complete(1, 2, "unlock", 3500_ns, Time::Zero() - 1_us);
  w.Instant(1, 3, "irq", 7_us + 1_ps, {TraceArg::Int("vector", -1)});
  w.Counter(1, "queue depth", 10_us, 42);
  w.CounterDouble(1, "util", 10_us, 0.25);
  w.CounterDouble(1, "bad", 11_us, std::numeric_limits<double>::quiet_NaN());
}

TEST(TraceWriterTest, ExactBytes) {
  TraceWriter w;
  WriteSample(w);
  EXPECT_EQ(w.event_count(), 9);
  const std::string expected =
      "{\"traceEvents\":[\n"
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,"
      "\"args\":{\"name\":\"host \\\"A\\\"\"}},\n"
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,"
      "\"args\":{\"name\":\"cpu\\\\0\"}},\n"
      "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":2,"
      "\"args\":{\"sort_index\":5}},\n"
      "{\"name\":\"lock\",\"cat\":\"sync\",\"ph\":\"X\",\"ts\":1.500000,"
      "\"dur\":2.000000,\"pid\":1,\"tid\":2,"
      "\"args\":{\"waiters\":3,\"owner\":\"vm\\n1\"}},\n"
      "{\"name\":\"unlock\",\"ph\":\"X\",\"ts\":3.500000,\"dur\":0.000000,"
      "\"pid\":1,\"tid\":2},\n"
      "{\"name\":\"irq\",\"ph\":\"i\",\"s\":\"t\",\"ts\":7.000001,\"pid\":1,"
      "\"tid\":3,\"args\":{\"vector\":-1}},\n"
      "{\"name\":\"queue depth\",\"ph\":\"C\",\"ts\":10.000000,\"pid\":1,"
      "\"args\":{\"value\":42}},\n"
      "{\"name\":\"util\",\"ph\":\"C\",\"ts\":10.000000,\"pid\":1,"
      "\"args\":{\"value\":0.25}},\n"
      "{\"name\":\"bad\",\"ph\":\"C\",\"ts\":11.000000,\"pid\":1,"
      "\"args\":{\"value\":0}}\n"
      "]}\n";
  EXPECT_EQ(w.Finish(), expected);
}

TEST(TraceWriterTest, WellFormedAndDeterministic) {
  TraceWriter a, b;
  WriteSample(a);
  WriteSample(b);
  const std::string json = a.Finish();
  EXPECT_EQ(json, b.Finish());
  JsonChecker checker(json);
  EXPECT_TRUE(checker.Valid()) << json;
  EXPECT_EQ(checker.first_array_size(), 9);
  // Finish does not consume: more events give a longer valid document.
  a.Instant(2, 1, "later", 1_s);
  const std::string longer = a.Finish();
  EXPECT_THAT(longer, HasSubstr("\"ts\":1000000.000000"));
  JsonChecker checker2(longer);
  EXPECT_TRUE(checker2.Valid());
  EXPECT_EQ(checker2.first_array_size(), 10);
}

TEST(TraceWriterTest, HostileNamesStayValid) {
  TraceWriter w;
  std::string nasty;
  for (int c = 0; c < 128; ++c) nasty.push_back(static_cast<char>(c));
  w.SetThreadName(0, 0, nasty);
  w.Complete(0, 0, nasty, 1_us, 1_us, nasty, {TraceArg::Str(nasty, nasty)});
  w.Instant(0, 0, "}]\"{", Time::Zero());
  JsonChecker checker(w.Finish());
  EXPECT_TRUE(checker.Valid());
  EXPECT_EQ(checker.first_array_size(), 3);
}

TEST(TraceWriterTest, ManyEventsScale) {
  TraceWriter w;
  for (int i = 0; i < 100000; ++i) {
    w.Complete(1, i % 8, "op", Time::Nanos(100 * i), 50_ns);
  }
  const std::string json = w.Finish();
  JsonChecker checker(json);
  EXPECT_TRUE(checker.Valid());
  EXPECT_EQ(checker.first_array_size(), 100000);
}

}  // namespace
}  // namespace sim
