#include "sim/trace.h"

#include <algorithm>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sim {
namespace {

void AppendMicros(std::string* out, Time t) {
  const int64_t ps = t.ps();
  // Work with the magnitude in unsigned arithmetic (INT64_MIN included).
  const uint64_t mag =
      ps < 0 ? uint64_t{0} - static_cast<uint64_t>(ps) : static_cast<uint64_t>(ps);
  absl::StrAppendFormat(out, "%s%d.%06d", ps < 0 ? "-" : "", mag / 1000000,
                        mag % 1000000);
}

}  // namespace

void AppendJsonString(std::string* out, absl::string_view s) {
  out->push_back('"');
  for (const char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        if (u < 0x20) {
          absl::StrAppendFormat(out, "\\u%04x", u);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

std::string FormatTraceMicros(Time t) {
  std::string s;
  AppendMicros(&s, t);
  return s;
}

TraceWriter::TraceWriter() : buffer_("{\"traceEvents\":[") {}

void TraceWriter::BeginEvent() {
  buffer_.append(events_ == 0 ? "\n{" : ",\n{");
  ++events_;
}

void TraceWriter::AppendArgs(std::initializer_list<TraceArg> args) {
  if (args.size() == 0) return;
  buffer_.append(",\"args\":{");
  bool first = true;
  for (const TraceArg& arg : args) {
    if (!first) buffer_.push_back(',');
    first = false;
    AppendJsonString(&buffer_, arg.key);
    buffer_.push_back(':');
    if (arg.is_int) {
      absl::StrAppend(&buffer_, arg.int_value);
    } else {
      AppendJsonString(&buffer_, arg.str_value);
    }
  }
  buffer_.push_back('}');
}

void TraceWriter::SetProcessName(int pid, absl::string_view name) {
  BeginEvent();
  absl::StrAppendFormat(&buffer_,
                        "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d",
                        pid);
  AppendArgs({TraceArg::Str("name", name)});
  buffer_.push_back('}');
}

void TraceWriter::SetThreadName(int pid, int tid, absl::string_view name) {
  BeginEvent();
  absl::StrAppendFormat(
      &buffer_, "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d",
      pid, tid);
  AppendArgs({TraceArg::Str("name", name)});
  buffer_.push_back('}');
}

void TraceWriter::SetThreadSortIndex(int pid, int tid, int index) {
  BeginEvent();
  absl::StrAppendFormat(
      &buffer_,
      "\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d",
      pid, tid);
  AppendArgs({TraceArg::Int("sort_index", index)});
  buffer_.push_back('}');
}

void TraceWriter::SetWindow(Time from, Time to) {
  from_ = from;
  to_ = to;
}

void TraceWriter::Complete(int pid, int tid, absl::string_view name,
                           Time start, Time dur, absl::string_view category,
                           std::initializer_list<TraceArg> args) {
  if (dur < Time::Zero()) dur = Time::Zero();
  if (start < from_ || start + dur > to_) {
    const Time end = std::min(start + dur, to_);
    start = std::max(start, from_);
    if (end <= start) return;
    dur = end - start;
  }
  BeginEvent();
  buffer_.append("\"name\":");
  AppendJsonString(&buffer_, name);
  if (!category.empty()) {
    buffer_.append(",\"cat\":");
    AppendJsonString(&buffer_, category);
  }
  buffer_.append(",\"ph\":\"X\",\"ts\":");
  AppendMicros(&buffer_, start);
  buffer_.append(",\"dur\":");
  AppendMicros(&buffer_, dur);
  absl::StrAppendFormat(&buffer_, ",\"pid\":%d,\"tid\":%d", pid, tid);
  AppendArgs(args);
  buffer_.push_back('}');
}

void TraceWriter::Instant(int pid, int tid, absl::string_view name, Time at,
                          std::initializer_list<TraceArg> args) {
  if (at < from_ || at >= to_) return;
  BeginEvent();
  buffer_.append("\"name\":");
  AppendJsonString(&buffer_, name);
  buffer_.append(",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
  AppendMicros(&buffer_, at);
  absl::StrAppendFormat(&buffer_, ",\"pid\":%d,\"tid\":%d", pid, tid);
  AppendArgs(args);
  buffer_.push_back('}');
}

void TraceWriter::Counter(int pid, absl::string_view name, Time at,
                          int64_t value) {
  if (at < from_ || at >= to_) return;
  BeginEvent();
  buffer_.append("\"name\":");
  AppendJsonString(&buffer_, name);
  buffer_.append(",\"ph\":\"C\",\"ts\":");
  AppendMicros(&buffer_, at);
  absl::StrAppendFormat(&buffer_, ",\"pid\":%d,\"args\":{\"value\":%d}}", pid,
                        value);
}

void TraceWriter::CounterDouble(int pid, absl::string_view name, Time at,
                                double value) {
  if (!std::isfinite(value)) value = 0.0;
  if (at < from_ || at >= to_) return;
  BeginEvent();
  buffer_.append("\"name\":");
  AppendJsonString(&buffer_, name);
  buffer_.append(",\"ph\":\"C\",\"ts\":");
  AppendMicros(&buffer_, at);
  absl::StrAppendFormat(&buffer_, ",\"pid\":%d,\"args\":{\"value\":%.9g}}",
                        pid, value);
}

std::string TraceWriter::Finish() const {
  return absl::StrCat(buffer_, "\n]}\n");
}

}  // namespace sim
