// A writer of Chrome / Perfetto traces in the JSON trace event format:
//
//   {"traceEvents":[
//   {"name":"process_name","ph":"M","pid":1,"args":{"name":"host"}},
//   {"name":"run","cat":"cpu","ph":"X","ts":1.500000,"dur":2.000000,...},
//   ...
//   ]}
//
// loadable in ui.perfetto.dev or chrome://tracing. Supported events:
// complete ("X"), instant ("i"), counter ("C"), and metadata ("M") naming
// processes and threads. A track is a (pid, tid) pair of ints chosen by the
// caller and named with SetProcessName / SetThreadName.
//
// Timestamps and durations are written in microseconds with exactly six
// decimals, converted from integer picoseconds by integer arithmetic, and
// events appear in call order, so the output is a pure function of the
// calls: byte-for-byte deterministic.
//
// The writer only accumulates text in memory; Finish() returns it. It never
// touches files (the caller writes the result, atomically).
//
// Cost when tracing is off: models hold a `TraceWriter*` that is null when
// tracing is disabled and test it before each call, e.g.
//
//   if (trace_ != nullptr) trace_->Complete(pid, tid, "lock", start, dur);
//
// so disabled tracing costs one predictable null check per site and no
// formatting.
#ifndef VIOSIM_SIM_TRACE_H_
#define VIOSIM_SIM_TRACE_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/strings/string_view.h"
#include "sim/time.h"

namespace sim {

// One "args" entry of an event: a key with an integer or string value.
// Holds views: the strings must outlive the call that receives the arg.
struct TraceArg {
  static TraceArg Int(absl::string_view key, int64_t value) {
    return TraceArg{key, value, absl::string_view(), true};
  }
  static TraceArg Str(absl::string_view key, absl::string_view value) {
    return TraceArg{key, 0, value, false};
  }

  absl::string_view key;
  int64_t int_value;
  absl::string_view str_value;
  bool is_int;
};

class TraceWriter {
 public:
  TraceWriter();

  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Metadata: the display name of process `pid`, of thread (track) `tid` in
  // process `pid`, and the thread's position among its siblings (lower
  // first). May be called at any time; viewers apply them to the whole
  // trace.
  void SetProcessName(int pid, absl::string_view name);
  void SetThreadName(int pid, int tid, absl::string_view name);
  void SetThreadSortIndex(int pid, int tid, int index);

  // The traced window [from, to): every slice is clipped to it (a slice
  // outside it, or left empty by the clip, is not written), and instants
  // and counter samples outside it are not written. So every track is cut
  // at the same edges and nothing nests across them. Default: all time.
  void SetWindow(Time from, Time to);

  // A slice [start, start + dur) on track (pid, tid), clipped to the window.
  // `category` may be empty (then no "cat" field is written). Negative
  // durations are written as 0.
  void Complete(int pid, int tid, absl::string_view name, Time start, Time dur,
                absl::string_view category = "",
                std::initializer_list<TraceArg> args = {});

  // A zero-duration marker on track (pid, tid) (thread scope).
  void Instant(int pid, int tid, absl::string_view name, Time at,
               std::initializer_list<TraceArg> args = {});

  // A sample of counter track `name` in process `pid`: its value from `at`
  // until the next sample. Written as {"value": ...}.
  void Counter(int pid, absl::string_view name, Time at, int64_t value);
  // As above for a real value, written with %.9g; NaN and infinities (not
  // representable in JSON) are written as 0.
  void CounterDouble(int pid, absl::string_view name, Time at, double value);

  // Number of events written so far (metadata included).
  int64_t event_count() const { return events_; }

  // The complete JSON document for the events so far. Does not consume
  // anything: the writer may continue, and a later Finish() returns the
  // longer document.
  std::string Finish() const;

 private:
  // Starts a new event object: separator, then `{`.
  void BeginEvent();
  void AppendArgs(std::initializer_list<TraceArg> args);

  std::string buffer_;  // "{"traceEvents":[" and the events so far
  Time from_ = Time::Zero();
  Time to_ = Time::Max();
  int64_t events_ = 0;
};

// Appends `s` to `out` as a JSON string literal, quotes included: `"` and
// `\` are backslash-escaped, control characters below 0x20 are written as
// \n, \t, ... or \u00XX. Other bytes are copied (strings should be UTF-8).
void AppendJsonString(std::string* out, absl::string_view s);

// `t` in microseconds with exactly six decimals, e.g. "1.500000",
// "0.000001", "-2.000000", computed from the picosecond count by integer
// arithmetic.
std::string FormatTraceMicros(Time t);

}  // namespace sim

#endif  // VIOSIM_SIM_TRACE_H_
