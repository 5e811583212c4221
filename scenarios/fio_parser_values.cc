// Reading option values: fio's value syntax (sizes with their suffixes,
// times with their units, lists per direction), JobParser's checks of a
// value, and what each modeled option sets (rw, bs, bsrange, rate, bssplit,
// filesize, ioengine and the rest of JobOptions).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "models/fio/job.h"
#include "scenarios/fio_options.h"
#include "scenarios/fio_parser_internal.h"

namespace fio {
namespace parser_internal {

// ---------------------------------------------------------------------------
// fio's value syntax (parse.c at fio-3.33, without the optional arithmetic,
// which Debian's build lacks).

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool IsBlank(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0 ||
         std::iscntrl(static_cast<unsigned char>(c)) != 0;
}

// ${VAR} is replaced by the environment variable VAR, or by nothing when it
// is unset (fio_option_dup_subs).
std::string ExpandEnv(absl::string_view in) {
  std::string out;
  size_t i = 0;
  while (i < in.size()) {
    if (in[i] == '$' && i + 1 < in.size() && in[i + 1] == '{') {
      size_t close = in.find('}', i);
      if (close != absl::string_view::npos) {
        std::string name(in.substr(i + 2, close - i - 2));
        if (const char* env = std::getenv(name.c_str())) out += env;
        i = close + 1;
        continue;
      }
    }
    out += in[i++];
  }
  return out;
}

namespace {

// The size multiplier for the suffix starting at `p` (__get_mult_bytes with
// kb_base 1024): "KiB".."PiB" are powers of 1000, "k"/"KB".."p"/"PB" powers
// of 1024, matched on their first letters, case-insensitively; "%" marks a
// percentage; anything else (including "b") is 1.
struct Multiplier {
  int64_t mult = 1;
  bool percent = false;
};

Multiplier SuffixMultiplier(absl::string_view p) {
  std::string c = absl::AsciiStrToLower(p);
  static const char* const kLetters = "kmgtp";
  for (int pow = 5; pow >= 1; --pow) {
    std::string iec = absl::StrCat(std::string(1, kLetters[pow - 1]), "ib");
    if (absl::StartsWith(c, iec)) {
      int64_t m = 1;
      for (int i = 0; i < pow; ++i) m *= 1000;
      return {m, false};
    }
  }
  for (int pow = 5; pow >= 1; --pow) {
    if (!c.empty() && c[0] == kLetters[pow - 1]) {
      int64_t m = 1;
      for (int i = 0; i < pow; ++i) m *= 1024;
      return {m, false};
    }
  }
  if (!c.empty() && c[0] == '%') return {1, true};
  return {};
}

// get_mult_bytes: skip a sign and the digits; a letter or '%' right after
// them is the suffix. So "16.0k" has no suffix ('.' stops the scan).
Multiplier BytesMultiplier(const std::string& s) {
  if (s.size() < 2) return SuffixMultiplier(s);
  const char* str = s.c_str();
  size_t p = 0;
  bool digit_seen = false;
  while (p <= s.size()) {
    char ch = str[p];
    if (!IsDigit(ch) && ((ch != '+' && ch != '-') || digit_seen)) break;
    digit_seen |= IsDigit(ch);
    ++p;
  }
  if (!IsAlpha(str[p]) && str[p] != '%') return {};
  return SuffixMultiplier(s.substr(p));
}

// get_mult_time, in microseconds: after the digits, "us"/"usec", "ms"/"msec"
// (prefix match), or exactly "s", "m" (minutes), "h", "d". No unit: seconds
// for options counted in seconds. An unknown unit multiplies by 1 (so
// "10sec" is 10 us in fio; so it is here).
int64_t TimeMultiplier(const std::string& s, bool is_seconds) {
  const char* str = s.c_str();
  size_t p = 0;
  while (p <= s.size()) {
    char ch = str[p];
    if (!IsDigit(ch) && ch != '+' && ch != '-') break;
    ++p;
  }
  if (!IsAlpha(str[p])) return is_seconds ? 1000000 : 1;
  std::string c = absl::AsciiStrToLower(s.substr(p));
  if (absl::StartsWith(c, "us")) return 1;
  if (absl::StartsWith(c, "ms")) return 1000;
  if (c == "s") return 1000000;
  if (c == "m") return int64_t{60} * 1000000;
  if (c == "h") return int64_t{3600} * 1000000;
  if (c == "d") return int64_t{86400} * 1000000;
  return 1;
}

enum class NumStatus { kOk, kBad, kTooBig };

struct Number {
  NumStatus status = NumStatus::kBad;
  int64_t value = 0;
  bool percent = false;  // "50%": value is 50
};

// str_to_decimal: strtoll (base 16 if "0x" appears anywhere), then a size
// suffix (`kilo`) or a time unit. Fractions are not read: strtoll stops at
// the '.'.
Number StrToDecimal(const std::string& s, bool kilo, bool is_seconds) {
  Number n;
  if (s.empty()) return n;
  int base = (absl::StrContains(s, "0x") || absl::StrContains(s, "0X")) ? 16 : 10;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, base);
  if (v == 0 && end == s.c_str()) return n;
  if ((v == LLONG_MAX || v == LLONG_MIN) && errno == ERANGE) {
    n.status = NumStatus::kTooBig;
    return n;
  }
  int64_t mult = 1;
  if (kilo) {
    Multiplier m = BytesMultiplier(s);
    if (m.percent) {
      n.status = NumStatus::kOk;
      n.value = v;
      n.percent = true;
      return n;
    }
    mult = m.mult;
  } else {
    mult = TimeMultiplier(s, is_seconds);
  }
  int64_t product = 0;
  if (__builtin_mul_overflow(static_cast<int64_t>(v), mult, &product)) {
    n.status = NumStatus::kTooBig;
    return n;
  }
  n.status = NumStatus::kOk;
  n.value = product;
  return n;
}

// check_int: sscanf "%u" (or "%x" if "0x" appears): leading blanks, a sign,
// digits; whatever follows is ignored.
bool CheckInt(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  int base = (absl::StrContains(s, "0x") || absl::StrContains(s, "0X")) ? 16 : 10;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(s.c_str(), &end, base);
  if (end == s.c_str() || errno == ERANGE) return false;
  *v = x;
  return true;
}

// One round of handle_option's list loop: the text from the current
// position to the end (numbers are read from its start), its index, and
// whether another round follows.
struct Round {
  std::string text;
  int index = 0;
  bool more = false;
};

// handle_option's splitting: each round looks for ',' (a ',' at the very end
// is dropped, leaving an empty last round), else ':' then '-' when
// `colon_dash` (int options; not bsrange).
std::vector<Round> ListRounds(std::string v, bool colon_dash) {
  std::vector<Round> rounds;
  size_t pos = 0;
  for (int index = 0;; ++index) {
    std::string rest = v.substr(pos);
    size_t sep = rest.find(',');
    if (sep != std::string::npos && sep + 1 == rest.size()) {
      // A trailing comma ends the list: this round reads up to it and the
      // next one is empty.
      rest.erase(sep);
      rounds.push_back({rest, index, true});
      rounds.push_back({"", index + 1, false});
      return rounds;
    }
    if (sep == std::string::npos && colon_dash) {
      sep = rest.find(':');
      if (sep == std::string::npos) sep = rest.find('-');
    }
    rounds.push_back({rest, index, sep != std::string::npos});
    if (sep == std::string::npos) return rounds;
    pos += sep + 1;
  }
}

// Which directions a round of a 3-valued option sets (the `first`, `curr`
// and `more` rules of __handle_option): round 0 sets reads; round 1 writes;
// round 2 trims; the last round also fills the directions after it.
std::vector<int> DirectionsOfRound(const Round& r) {
  std::vector<int> dirs;
  if (r.index == 0) dirs.push_back(kRead);
  if (r.index == 1) dirs.push_back(kWrite);
  if (r.index == 2) dirs.push_back(kTrim);
  if (!r.more) {
    if (r.index < 1) dirs.push_back(kWrite);
    if (r.index < 2) dirs.push_back(kTrim);
  }
  return dirs;
}

std::string Quoted(absl::string_view raw, absl::string_view expanded) {
  if (raw == expanded) return absl::StrCat("'", raw, "'");
  return absl::StrCat("'", expanded, "' (from '", raw, "')");
}

}  // namespace

// --- value checks ----------------------------------------------------------

absl::Status JobParser::Invalid(const OptionLine& o, const std::string& value,
                                absl::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat("option '", o.key, "': invalid value ",
                                                 Quoted(o.value, value),
                                                 expected.empty() ? "" : " (",
                                                 expected, expected.empty() ? "" : ")"));
}

// $ncpus, $pagesize and $mb_memory describe the host fio runs on.
absl::Status JobParser::CheckHostKeywords(const OptionLine& o, const std::string& value) {
  for (const char* kw : {"$ncpus", "$pagesize", "$mb_memory"}) {
    if (absl::StrContains(value, kw)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "option '", o.key, "': '", kw,
          "' stands for a property of the host fio runs on, which viosim does not "
          "model; write the number"));
    }
  }
  return absl::OkStatus();
}

absl::Status JobParser::ParseBool(const OptionLine& o, const std::string& value, bool* out) {
  int64_t v = 0;
  if (!CheckInt(value, &v)) return Invalid(o, value, "0 or 1");
  if (v < 0 || v > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("option '", o.key, "': ", v, " is out of range (0 or 1)"));
  }
  *out = v == 1;
  return absl::OkStatus();
}

absl::Status JobParser::ParseFlag(const OptionLine& o, const std::string& value, bool* out) {
  if (o.bare) {
    *out = true;
    return absl::OkStatus();
  }
  int64_t v = 0;
  if (!CheckInt(value, &v) || v < 0) return Invalid(o, value, "write it bare, =0 or =1");
  *out = v != 0;
  return absl::OkStatus();
}

// A single number (the first of a list, as fio reads it).
absl::StatusOr<int64_t> JobParser::ParseNumber(const OptionLine& o, const std::string& value,
                                               const NumberRule& rule) {
  absl::Status kw = CheckHostKeywords(o, value);
  if (!kw.ok()) return kw;
  Number n = StrToDecimal(value, !rule.time, rule.seconds);
  if (n.status == NumStatus::kBad) {
    return Invalid(o, value, rule.time ? "a time such as 10, 500ms, 2m" : "a number");
  }
  if (n.percent) {
    return absl::InvalidArgumentError(
        absl::StrCat("option '", o.key, "': a percentage (", Quoted(o.value, value),
                     ") is understood by fio but not modeled by viosim"));
  }
  if (n.status == NumStatus::kTooBig ||
      (rule.viosim_max >= 0 && n.value > rule.viosim_max)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "option '", o.key, "': ", Quoted(o.value, value), " is above viosim's limit of ",
        rule.limit_text));
  }
  if (n.value < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("option '", o.key, "': negative value ", Quoted(o.value, value)));
  }
  if (n.value < rule.min) {
    return absl::InvalidArgumentError(
        absl::StrCat("option '", o.key, "': ", n.value, " is below the minimum of ", rule.min));
  }
  if (rule.fio_max >= 0 && n.value > rule.fio_max) {
    return absl::InvalidArgumentError(absl::StrCat(
        "option '", o.key, "': ", n.value, " is above the maximum of ", rule.fio_max));
  }
  return n.value;
}

// A no-effect option: its value must still be one fio accepts.
absl::Status JobParser::CheckValue(const OptionInfo& info, const OptionLine& o,
                                   const std::string& value) {
  switch (info.kind) {
    case ValueKind::kText:
    case ValueKind::kTextOrBare:
    case ValueKind::kUnchecked:
      return absl::OkStatus();
    case ValueKind::kChoice: {
      absl::string_view head = value;
      head = head.substr(0, head.find_first_of(":,"));
      for (absl::string_view c : absl::StrSplit(info.choices, '|')) {
        if (c == head) return absl::OkStatus();
      }
      return Invalid(o, value, absl::StrJoin(absl::StrSplit(info.choices, '|'), ", "));
    }
    case ValueKind::kBool: {
      bool b;
      return ParseBool(o, value, &b);
    }
    case ValueKind::kFlag: {
      bool b;
      return ParseFlag(o, value, &b);
    }
    case ValueKind::kInt:
      return ParseNumber(o, value, NumberRule{}).status();
    case ValueKind::kTime:
      return ParseNumber(o, value, NumberRule{true, 0, -1, kMaxTimeUs, "1 year"}).status();
    case ValueKind::kRange:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

// --- modeled options --------------------------------------------------------

absl::Status JobParser::ApplyModeled(const OptionInfo& info, const OptionLine& o,
                                     const std::string& value, Defaults& d) {
  const absl::string_view name = info.name;
  JobOptions& j = d.job;

  auto number = [&](const NumberRule& rule, auto store) -> absl::Status {
    absl::StatusOr<int64_t> v = ParseNumber(o, value, rule);
    if (!v.ok()) return v.status();
    store(*v);
    return absl::OkStatus();
  };
  const NumberRule kDepthRule{false, 1, -1, kMaxDepth, "65536"};
  const NumberRule kBatchRule{false, 0, -1, kMaxDepth, "65536"};
  const NumberRule kTimeRule{true, 0, -1, kMaxTimeUs, "1 year"};
  const NumberRule kPercentRule{false, 0, 100, -1, ""};

  if (name == "name") {
    // In [global], name= renames no job: each job is named by its section.
    if (in_job_ && !value.empty()) j.name = value;
    return absl::OkStatus();
  }
  if (name == "description") {
    j.description = value;
    return absl::OkStatus();
  }
  if (name == "wait_for") {
    j.wait_for = value;
    return absl::OkStatus();
  }
  if (name == "cpus_allowed") {
    j.cpus_allowed = value;
    j.cpus_allowed_at = absl::StrCat(o.at.file, ":", o.at.line);
    return absl::OkStatus();
  }
  if (name == "rw") return ApplyRw(o, value, d);
  if (name == "rwmixread") return number(kPercentRule, [&](int64_t v) { j.rwmixread = int(v); });
  if (name == "rwmixwrite") {
    return number(kPercentRule, [&](int64_t v) { j.rwmixread = int(100 - v); });
  }
  if (name == "bs") return ApplyBs(o, value, d);
  if (name == "bsrange") return ApplyBsrange(o, value, d);
  if (name == "ioengine") return ApplyEngine(o, value, d);
  if (name == "iodepth") return number(kDepthRule, [&](int64_t v) { j.iodepth = int(v); });
  if (name == "iodepth_batch") {
    return number(kBatchRule, [&](int64_t v) { j.iodepth_batch_submit = int(v); });
  }
  if (name == "iodepth_batch_complete_min") {
    return number(kBatchRule, [&](int64_t v) { j.iodepth_batch_complete_min = int(v); });
  }
  if (name == "iodepth_batch_complete_max") {
    return number(kBatchRule, [&](int64_t v) { j.iodepth_batch_complete_max = int(v); });
  }
  if (name == "numjobs") {
    return number(NumberRule{false, 1, -1, kMaxJobs, "4096"},
                  [&](int64_t v) { j.numjobs = int(v); });
  }
  if (name == "size") {
    absl::Status z = RejectZones(o, value);
    if (!z.ok()) return z;
    return number(NumberRule{false, 0, -1, kMaxSize, "1 PiB"},
                  [&](int64_t v) { j.size = uint64_t(v); });
  }
  if (name == "filesize") return ApplyFilesize(o, value, d);
  if (name == "runtime") return number(kTimeRule, [&](int64_t v) { j.runtime_us = v; });
  // Pacing (fio's rate* and thinktime* options).
  if (name == "rate") return ApplyPerDirection(o, value, j.rate, false);
  if (name == "rate_iops") return ApplyPerDirection(o, value, j.rate_iops, true);
  if (name == "rate_min") return ApplyPerDirection(o, value, j.rate_min, false);
  if (name == "rate_iops_min") return ApplyPerDirection(o, value, j.rate_iops_min, true);
  if (name == "rate_process") {
    if (value != "linear" && value != "poisson") return Invalid(o, value, "linear or poisson");
    j.rate_poisson = value == "poisson";
    return absl::OkStatus();
  }
  if (name == "rate_cycle") {
    return number(NumberRule{false, 0, -1, kMaxTimeUs / 1000, "1 year"}, [&](int64_t v) { j.rate_cycle_ms = v; });
  }
  const NumberRule kMicrosRule{true, 0, -1, kMaxTimeUs, "1 year", /*seconds=*/false};
  if (name == "thinktime") return number(kMicrosRule, [&](int64_t v) { j.thinktime_us = v; });
  if (name == "thinktime_spin") return number(kMicrosRule, [&](int64_t v) { j.thinktime_spin_us = v; });
  if (name == "thinktime_blocks") {
    return number(NumberRule{false, 1, -1, kMaxDepth, "65536"}, [&](int64_t v) { j.thinktime_blocks = v; });
  }
  if (name == "thinktime_blocks_type") {
    if (value != "complete" && value != "issue") return Invalid(o, value, "complete or issue");
    j.thinktime_blocks_issue = value == "issue";
    return absl::OkStatus();
  }
  if (name == "bssplit") return ApplyBssplit(o, value, d);
  if (name == "ramp_time") return number(kTimeRule, [&](int64_t v) { j.ramp_time_us = v; });
  if (name == "loops") {
    return number(NumberRule{false, 0, -1, kMaxLoops, "1000000000"},
                  [&](int64_t v) { j.loops = v == 0 ? 1 : int(v); });
  }
  // write_*_log[=prefix] (options.c str_write_*_log_cb): on, with the
  // value as the file name prefix.
  LogOptions& lg = j.log;
  for (auto [log_name, on, prefix] : {std::tuple{"write_bw_log", &lg.bw, &lg.bw_prefix},
                                      std::tuple{"write_lat_log", &lg.lat, &lg.lat_prefix},
                                      std::tuple{"write_iops_log", &lg.iops, &lg.iops_prefix},
                                      std::tuple{"write_hist_log", &lg.hist, &lg.hist_prefix}}) {
    if (name == log_name) {
      *on = true;
      *prefix = o.bare ? std::string() : value;
      return absl::OkStatus();
    }
  }
  const NumberRule kMsecRule{false, 0, -1, kMaxTimeUs / 1000, "1 year"};
  if (name == "log_avg_msec") return number(kMsecRule, [&](int64_t v) { lg.avg_msec = v; });
  if (name == "log_hist_msec") return number(kMsecRule, [&](int64_t v) { lg.hist_msec = v; });
  if (name == "log_hist_coarseness") {
    // fio's help: "Integer in range [0,6]" (it does not check the bound).
    return number(NumberRule{false, 0, 6, -1, ""}, [&](int64_t v) { lg.hist_coarseness = int(v); });
  }
  bool b = false;
  auto flag = [&](bool* field) -> absl::Status {
    absl::Status st = ParseFlag(o, value, &b);
    if (st.ok()) *field = b;
    return st;
  };
  auto boolean = [&](bool* field, bool invert) -> absl::Status {
    absl::Status st = ParseBool(o, value, &b);
    if (st.ok()) *field = invert ? !b : b;
    return st;
  };
  if (name == "direct") return boolean(&j.direct, false);
  if (name == "buffered") return boolean(&j.direct, true);
  if (name == "randrepeat") return boolean(&j.randrepeat, false);
  if (name == "time_based") return flag(&j.time_based);
  if (name == "group_reporting") return flag(&j.group_reporting);
  if (name == "stonewall") return flag(&j.stonewall);
  if (name == "new_group") return flag(&j.new_group);
  if (name == "norandommap") return flag(&j.norandommap);
  if (name == "per_job_logs") return boolean(&j.log.per_job_logs, false);
  if (name == "log_max_value") return boolean(&j.log.max_value, false);
  if (name == "log_offset") return boolean(&j.log.offset, false);
  if (name == "log_prio") return boolean(&j.log.prio, false);
  return absl::InternalError(absl::StrCat("modeled option '", name, "' has no handler"));
}

// size=10z: a number of zones (FIO_OPT_STR_VAL_ZONE).
absl::Status JobParser::RejectZones(const OptionLine& o, const std::string& value) {
  const char* s = value.c_str();
  char* end = nullptr;
  errno = 0;
  std::strtoul(s, &end, 10);
  if (errno == 0 && end != s && *end == 'z') {
    return absl::InvalidArgumentError(
        absl::StrCat("option '", o.key, "': a number of zones (", Quoted(o.value, value),
                     ") is understood by fio but not modeled by viosim"));
  }
  return absl::OkStatus();
}

// rw=<pattern>[:<n>]. The part before ':' or ',' must be one of fio's
// values exactly. The suffix: I/Os per random offset (random patterns,
// atoi as in fio), or an offset step in bytes (sequential ones).
absl::Status JobParser::ApplyRw(const OptionLine& o, const std::string& value, Defaults& d) {
  struct Kind {
    const char* name;
    Pattern pattern;
    bool random;
  };
  static const Kind kKinds[] = {
      {"read", Pattern::kRead, false},       {"write", Pattern::kWrite, false},
      {"randread", Pattern::kRandRead, true}, {"randwrite", Pattern::kRandWrite, true},
      {"rw", Pattern::kRw, false},           {"readwrite", Pattern::kRw, false},
      {"randrw", Pattern::kRandRw, true},
  };
  static const char* const kTrimKinds[] = {"trim", "randtrim", "trimwrite", "randtrimwrite"};
  absl::string_view head = value;
  head = head.substr(0, head.find_first_of(":,"));
  for (const char* t : kTrimKinds) {
    if (head == t) {
      d.rw_issue = {true, o.at,
                    absl::StrCat("rw=", head, " is understood by fio but not modeled by "
                                 "viosim (trim is not modeled)")};
      return absl::OkStatus();
    }
  }
  const Kind* kind = nullptr;
  for (const Kind& k : kKinds) {
    if (head == k.name) kind = &k;
  }
  if (kind == nullptr) {
    return Invalid(o, value,
                   "fio's values: read, write, randread, randwrite, rw, readwrite, randrw, "
                   "trim, randtrim, trimwrite, randtrimwrite");
  }
  int64_t seq_nr = 1;
  int64_t seq_add = 0;
  size_t colon = value.find(':');
  if (colon != std::string::npos) {
    std::string nr = CleanLine(absl::string_view(value).substr(colon + 1));
    if (kind->random) {
      seq_nr = std::strtoll(nr.c_str(), nullptr, 10);  // atoi
      if (seq_nr < 1 || seq_nr > kMaxDepth * 1024) {
        return absl::InvalidArgumentError(absl::StrCat(
            "option '", o.key, "': ", Quoted(o.value, value),
            ": the number of I/Os per random offset must be 1 to ", kMaxDepth * 1024));
      }
    } else {
      absl::Status kw = CheckHostKeywords(o, nr);
      if (!kw.ok()) return kw;
      Number n = StrToDecimal(nr, /*kilo=*/true, false);
      if (n.status == NumStatus::kBad || n.percent) {
        return absl::InvalidArgumentError(absl::StrCat(
            "option '", o.key, "': cannot read the offset step of ", Quoted(o.value, value)));
      }
      if (n.status == NumStatus::kTooBig || n.value > kMaxSize || n.value < -kMaxSize) {
        return absl::InvalidArgumentError(
            absl::StrCat("option '", o.key, "': the offset step of ", Quoted(o.value, value),
                         " is beyond viosim's limit of 1 PiB"));
      }
      seq_add = n.value;
    }
  }
  d.job.rw = kind->pattern;
  d.job.rw_seq_nr = seq_nr;
  d.job.rw_seq_add = seq_add;
  d.rw_issue = {};
  return absl::OkStatus();
}

// One size of a bs-style list. OK with the value, or a "soft" failure
// (fio tolerates it if another round succeeds) as kBad, or a hard error.
struct JobParser::SizeResult {
  bool ok = false;
  int64_t value = 0;
  std::string soft;  // why this round did not count
};

absl::StatusOr<JobParser::SizeResult> JobParser::ParseBlockSize(const OptionLine& o, const std::string& text,
                                                                const std::string& whole) {
  absl::Status kw = CheckHostKeywords(o, text);
  if (!kw.ok()) return kw;
  Number n = StrToDecimal(text, /*kilo=*/true, false);
  SizeResult r;
  if (n.status == NumStatus::kBad) {
    r.soft = absl::StrCat("option '", o.key, "': invalid value ", Quoted(o.value, whole));
    return r;
  }
  if (n.percent) {
    return absl::InvalidArgumentError(
        absl::StrCat("option '", o.key, "': a percentage in ", Quoted(o.value, whole),
                     " is not a block size"));
  }
  if (n.status == NumStatus::kTooBig || n.value > kMaxBlockSize) {
    return absl::InvalidArgumentError(absl::StrCat("option '", o.key, "': ",
                                                   Quoted(o.value, whole),
                                                   " has a block size above viosim's limit "
                                                   "of 1 GiB"));
  }
  if (n.value < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("option '", o.key, "': negative block size in ", Quoted(o.value, whole)));
  }
  if (n.value < 1) {
    r.soft = absl::StrCat("option '", o.key, "': ", n.value, " is below the minimum of 1");
    return r;
  }
  r.ok = true;
  r.value = n.value;
  return r;
}

// bs=R[,W[,T]]: ',' and also ':' and '-' separate values ("4k-8k" is
// R=4k, W=T=8k); a trailing ',' keeps the rest at their defaults; an
// unreadable value (",8k") keeps its direction unchanged if another one
// reads.
absl::Status JobParser::ApplyBs(const OptionLine& o, const std::string& value, Defaults& d) {
  std::string first_soft;
  bool any = false;
  for (const Round& r : ListRounds(value, /*colon_dash=*/true)) {
    absl::StatusOr<SizeResult> s = ParseBlockSize(o, r.text, value);
    if (!s.ok()) return s.status();
    if (!s->ok) {
      if (first_soft.empty()) first_soft = s->soft;
      continue;
    }
    any = true;
    for (int dir : DirectionsOfRound(r)) d.bs[dir] = uint64_t(s->value);
  }
  if (!any) return absl::InvalidArgumentError(first_soft);
  return absl::OkStatus();
}

// bsrange=min-max[,min-max[,min-max]]: ',' separates directions; '-' or
// ':' separates min and max (swapped if min > max). A single value is an
// error.
absl::Status JobParser::ApplyBsrange(const OptionLine& o, const std::string& value, Defaults& d) {
  std::string first_soft;
  bool any = false;
  for (const Round& r : ListRounds(value, /*colon_dash=*/false)) {
    std::string text = r.text.substr(0, r.text.find(','));
    size_t sep = text.find('-');
    if (sep == std::string::npos) sep = text.find(':');
    if (sep == std::string::npos) {
      if (first_soft.empty()) {
        first_soft = absl::StrCat("option '", o.key, "': ", Quoted(o.value, value),
                                  " is not a range (write min-max, such as 4k-16k)");
      }
      continue;
    }
    absl::StatusOr<SizeResult> lo = ParseBlockSize(o, text.substr(0, sep), value);
    if (!lo.ok()) return lo.status();
    absl::StatusOr<SizeResult> hi = ParseBlockSize(o, text.substr(sep + 1), value);
    if (!hi.ok()) return hi.status();
    if (!lo->ok || !hi->ok) {
      if (first_soft.empty()) first_soft = !lo->ok ? lo->soft : hi->soft;
      continue;
    }
    any = true;
    int64_t a = std::min(lo->value, hi->value);
    int64_t b = std::max(lo->value, hi->value);
    for (int dir : DirectionsOfRound(r)) {
      d.range_set[dir] = true;
      d.range_min[dir] = uint64_t(a);
      d.range_max[dir] = uint64_t(b);
    }
  }
  if (!any) return absl::InvalidArgumentError(first_soft);
  return absl::OkStatus();
}

// rate=r[,w[,t]] and its kin: a value per direction (bytes or I/Os per
// second, 1024-based suffixes), a direction left empty unlimited.
absl::Status JobParser::ApplyPerDirection(const OptionLine& o, const std::string& value, uint64_t (&out)[kDdirs],
                                          bool iops) {
  // rate_iops is fio's 32-bit unsigned; a byte rate is held to 1 TiB/s.
  const NumberRule rule = iops ? NumberRule{false, 0, 4294967295, -1, ""}
                               : NumberRule{false, 0, -1, int64_t{1} << 40, "1 TiB/s"};
  bool any = false;
  for (const Round& r : ListRounds(value, /*colon_dash=*/true)) {
    if (r.text.empty() || r.text[0] == ',') continue;  // this direction left as it was
    const std::string text = r.text.substr(0, r.text.find_first_of(",:-"));
    absl::StatusOr<int64_t> v = ParseNumber(o, text, rule);
    if (!v.ok()) return v.status();
    any = true;
    for (int dir : DirectionsOfRound(r)) out[dir] = uint64_t(*v);
  }
  if (!any) return Invalid(o, value, "a rate, such as 10m or ,500");
  return absl::OkStatus();
}

// bssplit=size/perc:size/perc...[,write list[,trim list]]: without a
// comma one list for every direction; with one, reads get the first and
// writes and trims the second. A share left blank (or /0) takes an equal
// part of what the others leave; the entries are walked in ascending
// order of share, equal shares as written.
absl::Status JobParser::ApplyBssplit(const OptionLine& o, const std::string& value, Defaults& d) {
  std::vector<std::string> lists = absl::StrSplit(value, ',');
  if (lists.size() > 3) return Invalid(o, value, "at most three lists, for read, write and trim");
  for (size_t li = 0; li < lists.size(); ++li) {
    std::vector<JobOptions::BsSplit> entries;
    int given = 0, missing = 0;
    for (absl::string_view e : absl::StrSplit(lists[li], ':', absl::SkipEmpty())) {
      const size_t slash = e.find('/');
      absl::StatusOr<SizeResult> bs = ParseBlockSize(o, std::string(e.substr(0, slash)), value);
      if (!bs.ok()) return bs.status();
      if (!bs->ok) return absl::InvalidArgumentError(bs->soft);
      int perc = -1;
      if (slash != absl::string_view::npos && slash + 1 < e.size()) {
        int64_t p = 0;
        if (!CheckInt(std::string(e.substr(slash + 1)), &p) || p < 0) return Invalid(o, value, "size/percent");
        perc = p == 0 ? -1 : static_cast<int>(std::min<int64_t>(p, 100));
      }
      if (perc < 0) {
        ++missing;
      } else {
        given += perc;
      }
      entries.push_back({uint64_t(bs->value), perc});
      if (entries.size() > 64) return Invalid(o, value, "at most 64 entries (fio's BSSPLIT_MAX)");
    }
    if (entries.empty()) {
      if (lists.size() > 1) continue;  // an empty list leaves its directions as they were
      return Invalid(o, value, "size/percent entries separated by ':'");
    }
    if (given > 100 && missing > 1) {
      return absl::InvalidArgumentError(absl::StrCat("option '", o.key, "': ", Quoted(o.value, value),
                                                     ": the percentages add to more than 100% (fio refuses it)"));
    }
    if (given > 100 && missing == 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "option '", o.key, "': ", Quoted(o.value, value),
          ": the percentages add to more than 100% with a share left blank, whose share fio 3.33 computes by "
          "unsigned arithmetic that wraps; give it one"));
    }
    for (JobOptions::BsSplit& e : entries) {
      if (e.perc < 0) e.perc = missing > 0 ? (100 - given) / missing : 0;
    }
    std::stable_sort(entries.begin(), entries.end(),
                     [](const JobOptions::BsSplit& a, const JobOptions::BsSplit& b) { return a.perc < b.perc; });
    std::vector<int> dirs;
    if (lists.size() == 1) dirs = {kRead, kWrite, kTrim};
    if (lists.size() >= 2) dirs = li == 0 ? std::vector<int>{kRead} : std::vector<int>{kWrite, kTrim};
    if (lists.size() == 3) dirs = {static_cast<int>(li)};
    for (int dir : dirs) d.job.bssplit[dir] = entries;
  }
  return absl::OkStatus();
}

// filesize=N (or low-high, which fio draws from at random per file: not
// modeled). It stands for size= when size is not given (one file).
absl::Status JobParser::ApplyFilesize(const OptionLine& o, const std::string& value, Defaults& d) {
  const NumberRule rule{false, 1, -1, kMaxSize, "1 PiB"};
  std::vector<int64_t> sizes;
  for (const Round& r : ListRounds(value, /*colon_dash=*/true)) {
    if (r.text.empty()) continue;
    absl::StatusOr<int64_t> v = ParseNumber(o, r.text, rule);
    if (!v.ok()) return v.status();
    sizes.push_back(*v);
  }
  if (sizes.empty()) return Invalid(o, value, "a size");
  for (int64_t s : sizes) {
    if (s != sizes[0]) {
      return absl::InvalidArgumentError(
          absl::StrCat("option '", o.key, "': a range of file sizes (",
                       Quoted(o.value, value),
                       ") is understood by fio but not modeled by viosim"));
    }
  }
  d.filesize = uint64_t(sizes[0]);
  return absl::OkStatus();
}

absl::Status JobParser::ApplyEngine(const OptionLine& o, const std::string& value, Defaults& d) {
  std::string name = value.substr(0, value.find(':'));
  switch (FindEngine(name)) {
    case EngineSupport::kModeled: {
      static const std::pair<const char*, Engine> kEngines[] = {
          {"libaio", Engine::kLibaio}, {"io_uring", Engine::kIoUring},
          {"pvsync2", Engine::kPvsync2}, {"psync", Engine::kPsync}, {"sync", Engine::kSync}};
      for (const auto& [n, e] : kEngines) {
        if (name == n) d.job.ioengine = e;
      }
      d.job.ioengine_name = name;
      d.engine_issue = {};
      return absl::OkStatus();
    }
    case EngineSupport::kNotModeled:
      d.job.ioengine_name = name;
      d.engine_issue = {true, o.at,
                        absl::StrCat("ioengine=", name,
                                     " is understood by fio but not modeled by viosim "
                                     "(modeled engines: ",
                                     kModeledEngineList, ")")};
      return absl::OkStatus();
    case EngineSupport::kUnknown:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown ioengine ", Quoted(o.value, value), " (modeled engines: ",
                   kModeledEngineList, ")"));
}

}  // namespace parser_internal
}  // namespace fio
