#include "scenarios/fio_parser.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "models/fio/job.h"
#include "scenarios/fio_options.h"
#include "scenarios/near_names.h"
#include "scenarios/input_file.h"

namespace fio {

const char kCommandLineSource[] = "<command line>";

namespace {

// ---------------------------------------------------------------------------
// Limits. fio accepts larger values; these are the ones viosim refuses as
// certainly mistaken (and too costly to simulate).

constexpr int64_t kPiB = int64_t{1} << 50;
constexpr int64_t kMaxSize = kPiB;               // size=, filesize=, rw offset step
constexpr int64_t kMaxBlockSize = int64_t{1} << 30;  // bs=, bsrange=: 1 GiB
constexpr int64_t kMaxDepth = 65536;             // iodepth and its batches
constexpr int64_t kMaxJobs = 4096;               // numjobs=
constexpr int64_t kMaxTimeUs = int64_t{365} * 24 * 3600 * 1000000;  // 1 year
constexpr int64_t kMaxLoops = 1000000000;
constexpr int kMaxIncludeDepth = 16;
// Includes in all, each file counted every time it is included: depth alone
// does not bound them (a file including the next one three times, 16 deep, is
// 43 million reads).
constexpr int kMaxIncludes = 4096;
constexpr size_t kMaxErrors = 20;

const char kDirectNote[] =
    "direct=0 (buffered I/O through the page cache) is not modeled: jobs run as "
    "direct I/O";
const char kLogNote[] = "write_iolog (fio's record of every I/O issued) is accepted but viosim does not write it";
const char kLogFormNote[] =
    "log_store_compressed, log_unix_epoch and log_alternate_epoch are accepted, but viosim writes its "
    "logs as plain text with times in ms from the job's start";

// ---------------------------------------------------------------------------
// Diagnostics

// A place in the input: a file (or the command line) and a line (or argument
// number); `seq` orders places in reading order across included files.
struct Place {
  std::string file;
  int line = 0;
  int seq = 0;
};

class Errors {
 public:
  void Add(const Place& at, absl::string_view what) {
    // An override from a scenario (line 0) names its field, not a line.
    std::string text = at.line > 0 ? absl::StrCat(at.file, ":", at.line, ": ", what) : absl::StrCat(at.file, ": ", what);
    if (!seen_.insert(text).second) return;
    entries_.push_back({at.seq, std::move(text)});
  }

  bool empty() const { return entries_.empty(); }

  // InvalidArgument with the messages in input order, one per line.
  absl::Status ToStatus() const {
    std::vector<const std::pair<int, std::string>*> sorted;
    sorted.reserve(entries_.size());
    for (const auto& e : entries_) sorted.push_back(&e);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto* a, const auto* b) { return a->first < b->first; });
    std::vector<absl::string_view> lines;
    for (size_t i = 0; i < sorted.size() && i < kMaxErrors; ++i) {
      lines.push_back(sorted[i]->second);
    }
    std::string more;
    if (sorted.size() > kMaxErrors) {
      more = absl::StrCat("(", sorted.size() - kMaxErrors, " more errors)");
      lines.push_back(more);
    }
    return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
  }

 private:
  std::vector<std::pair<int, std::string>> entries_;
  absl::flat_hash_set<std::string> seen_;  // the texts of entries_
};

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

// ---------------------------------------------------------------------------
// The input, read into sections

struct OptionLine {
  Place at;
  std::string key;
  std::string value;  // as written, blanks around it removed
  bool bare = false;  // no '=' at all
};

struct Section {
  Place at;
  std::string name;
  bool global = false;
  std::vector<OptionLine> options;
};

bool IsGlobalName(absl::string_view name) { return absl::StartsWith(name, "global"); }

// fio's line cleanup: blanks at the front go; ';' or '#' anywhere ends the
// line; blanks and control characters (the '\r' of CRLF) at the end go.
std::string CleanLine(absl::string_view line) {
  size_t b = 0;
  while (b < line.size() && IsBlank(line[b])) ++b;
  line.remove_prefix(b);
  size_t cut = line.find_first_of(";#");
  if (cut != absl::string_view::npos) line = line.substr(0, cut);
  while (!line.empty() && IsBlank(line.back())) line.remove_suffix(1);
  return std::string(line);
}

OptionLine SplitOption(const std::string& s, const Place& at) {
  OptionLine o;
  o.at = at;
  size_t eq = s.find('=');
  if (eq == std::string::npos) {
    o.key = s;
    o.bare = true;
    return o;
  }
  absl::string_view key(s.data(), eq);
  while (!key.empty() && IsBlank(key.back())) key.remove_suffix(1);
  absl::string_view value(s.data() + eq + 1, s.size() - eq - 1);
  while (!value.empty() && IsBlank(value.front())) value.remove_prefix(1);
  o.key = std::string(key);
  o.value = std::string(value);
  return o;
}

std::string Dirname(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// What a job-file line is, for messages about the line as a whole: "option
// 'bs'", "section header", "include".
std::string LineWhat(absl::string_view line) {
  if (absl::StartsWith(line, "[")) return "section header";
  if (absl::StartsWith(line, "include") && (line.size() == 7 || IsBlank(line[7]))) return "include";
  const size_t end = line.find_first_of("= \t");
  return absl::StrCat("option '", absl::CHexEscape(line.substr(0, end)), "'");
}

// Reads job-file text into sections, following includes.
class JobTextReader {
 public:
  explicit JobTextReader(Errors* errors) : errors_(errors) {}

  // `depth` > 0 for included files.
  void Read(const std::string& file, const std::string& text, const std::string& dir,
            int depth) {
    int lineno = 0;
    for (absl::string_view raw : absl::StrSplit(text, '\n')) {
      if (stopped_) return;
      ++lineno;
      std::string s = CleanLine(raw);
      if (s.empty()) continue;
      Place at{file, lineno, seq_++};
      if (std::string what = viosim::Utf8Problem(s); !what.empty()) {
        errors_->Add(at, absl::StrCat(LineWhat(s), ": ", what));
        continue;
      }
      if (s[0] == '[') {
        if (depth > 0) {
          errors_->Add(at, "a section header in an included file (fio allows no new "
                           "sections in included files)");
          continue;
        }
        if (s.size() < 2 || s.back() != ']') {
          errors_->Add(at, absl::StrCat("malformed section header '", s, "'"));
          continue;
        }
        std::string name = s.substr(1, s.size() - 2);
        if (name.empty()) {
          errors_->Add(at, "a section with an empty name");
          continue;
        }
        sections_.push_back({at, name, IsGlobalName(name), {}});
        continue;
      }
      bool include = absl::StartsWith(s, "include") &&
                     (s.size() == 7 || IsBlank(s[7]));
      if (sections_.empty()) {
        OptionLine o = SplitOption(s, at);
        errors_->Add(at, include ? std::string("include outside of [] job section")
                                 : absl::StrCat("option '", o.key,
                                                "' outside of [] job section"));
        continue;
      }
      if (include) {
        Include(at, CleanLine(absl::string_view(s).substr(7)), dir, depth);
        continue;
      }
      sections_.back().options.push_back(SplitOption(s, at));
    }
  }

  std::vector<Section>& sections() { return sections_; }

 private:
  void Include(const Place& at, const std::string& name, const std::string& dir,
               int depth) {
    if (name.empty()) {
      errors_->Add(at, "include without a file name");
      return;
    }
    if (depth + 1 > kMaxIncludeDepth) {
      errors_->Add(at, absl::StrCat("include '", name, "': includes nested more than ",
                                    kMaxIncludeDepth, " deep (a loop?)"));
      stopped_ = true;
      return;
    }
    if (++includes_ > kMaxIncludes) {
      errors_->Add(at, absl::StrCat("include '", name, "': more than ", kMaxIncludes,
                                    " includes in all (a file included again and again?)"));
      stopped_ = true;
      return;
    }
    // fio: as given (from the working directory), else from the including
    // file's directory.
    std::string path = name;
    absl::StatusOr<std::string> text = viosim::ReadInputFile(path, "included file");
    if (absl::IsNotFound(text.status()) && name[0] != '/' && !dir.empty()) {
      const std::string beside = absl::StrCat(dir, "/", name);
      absl::StatusOr<std::string> other = viosim::ReadInputFile(beside, "included file");
      if (!absl::IsNotFound(other.status())) {
        path = beside;
        text = std::move(other);
      } else {
        text = absl::NotFoundError(absl::StrCat(text.status().message(), " (also tried '",
                                                beside, "')"));
      }
    }
    if (!text.ok()) {
      errors_->Add(at, absl::StrCat("include '", name, "': ", text.status().message()));
      return;
    }
    included_bytes_ += static_cast<int64_t>(text->size());
    if (included_bytes_ > viosim::kMaxInputFileBytes) {
      errors_->Add(at, absl::StrCat("include '", name, "': the included files come to more than ",
                                    viosim::kMaxInputFileBytes, " bytes in all (a file included again and again?)"));
      stopped_ = true;
      return;
    }
    Read(path, *text, Dirname(path), depth + 1);
  }

  Errors* errors_;
  std::vector<Section> sections_;
  int seq_ = 0;
  int includes_ = 0;
  int64_t included_bytes_ = 0;
  // An include bound was passed: reading ends (its error is the last).
  bool stopped_ = false;
};

// ---------------------------------------------------------------------------
// Applying options

// A setting viosim refuses but a later one may replace (ioengine=, rw=): it
// is reported only if a job ends up with it.
struct Pending {
  bool set = false;
  Place at;
  std::string what;
};

// The state a section starts from: fio's parent thread_data. [global]
// sections change it; a job section starts from a copy.
struct Defaults {
  JobOptions job;
  uint64_t bs[kDdirs] = {4096, 4096, 4096};
  bool range_set[kDdirs] = {false, false, false};
  uint64_t range_min[kDdirs] = {0, 0, 0};
  uint64_t range_max[kDdirs] = {0, 0, 0};
  uint64_t filesize = 0;
  // The engine the engine options (hipri) were parsed for. fio reloads the
  // engine, dropping their values, when a job's engine differs from it.
  std::string eo_engine = "psync";
  Pending engine_issue;
  Pending rw_issue;
};

// What a section collects while its options are read.
struct SectionWork {
  bool is_job = false;
  // Options as written with their report rank (fio lists general options,
  // then filename/filename_format, then engine options).
  std::vector<std::pair<int, WrittenOption>> written;
  std::vector<std::pair<const OptionLine*, const OptionInfo*>> engine_options;
  bool log_option = false;
  std::vector<std::string> notes;  // read-as-fio notes of this section's options
};

// The part of a number's text that fio's parser passes over without reading:
// what follows the leading digits and the unit fio recognises ("e3" of
// "1e3", ".5" of "1.5", "z" of "4kz", "sec" of "10sec", which fio reads as
// 10 us), or "" when it reads all of it. Each round of a list or range
// ("4k,8k", "4k-64k") is looked at; text that does not start with a
// number is left to the option's own checks.
std::string UnreadTail(ValueKind kind, const std::string& value) {
  std::string unread;
  for (absl::string_view part : absl::StrSplit(value, absl::ByAnyChar(",:-"))) {
    size_t p = 0;
    if (absl::StartsWithIgnoreCase(part, "0x")) {
      p = 2;
      while (p < part.size() && std::isxdigit(static_cast<unsigned char>(part[p]))) ++p;
    } else {
      while (p < part.size() && (IsDigit(part[p]) || (p == 0 && part[p] == '+'))) ++p;
    }
    if (p == 0 || (p == 1 && part[0] == '+')) continue;
    const std::string tail = absl::AsciiStrToLower(part.substr(p));
    size_t known = 0;  // how much of the tail is a unit fio recognises
    if (kind == ValueKind::kTime) {
      for (const char* u : {"usec", "us", "msec", "ms"}) {
        if (absl::StartsWith(tail, u)) {
          known = std::strlen(u);
          break;
        }
      }
      if (tail == "s" || tail == "m" || tail == "h" || tail == "d") known = 1;
    } else if (kind == ValueKind::kInt || kind == ValueKind::kRange) {
      if (!tail.empty() && std::strchr("kmgtp", tail[0]) != nullptr) {
        known = 1;
        for (const char* rest : {"ib", "b", "i"}) {
          if (absl::StartsWith(absl::string_view(tail).substr(1), rest)) {
            known += std::strlen(rest);
            break;
          }
        }
      } else if (absl::StartsWith(tail, "%") || absl::StartsWith(tail, "b")) {
        known = 1;
      }
    }
    if (known < tail.size()) absl::StrAppend(&unread, unread.empty() ? "" : ", ", "'", tail.substr(known), "'");
  }
  return unread;
}

bool NeedsValue(ValueKind k) {
  return k != ValueKind::kFlag && k != ValueKind::kTextOrBare;
}

int ReportRank(const OptionInfo& info) {
  if (info.engines[0] != '\0') return 2;
  absl::string_view n = info.name;
  if (n == "filename" || n == "filename_format") return 1;
  return 0;
}

// Limits for a numeric option.
struct NumberRule {
  bool time = false;        // a time (us); otherwise a size-style integer
  int64_t min = 0;          // fio's minimum
  int64_t fio_max = -1;     // fio's maximum (-1: none)
  int64_t viosim_max = -1;  // viosim's limit (-1: none)
  const char* limit_text = "";  // how to print viosim_max
  bool seconds = true;      // a time without a unit is in seconds (else us)
};

class JobParser {
 public:
  JobParser(std::string path, Errors* errors) : path_(std::move(path)), errors_(errors) {}

  absl::StatusOr<JobFile> Run(const std::vector<Section>& sections) {
    JobFile out;
    out.path = path_;
    for (const Section& s : sections) ParseSection(s, &out);
    // wait_for naming no job: fio starts the job without waiting.
    for (const JobOptions& j : out.jobs) {
      if (j.wait_for.empty()) continue;
      bool found = false;
      for (const JobOptions& k : out.jobs) found |= (k.name == j.wait_for && &k != &j);
      if (!found) {
        AddNote(&out, absl::StrCat("job '", j.name, "': wait_for=", j.wait_for,
                                   " names no other job, so it starts without waiting "
                                   "(as in fio)"));
      }
    }
    if (!errors_->empty()) return errors_->ToStatus();
    if (out.jobs.empty()) return absl::InvalidArgumentError(absl::StrCat(path_, ": no jobs defined"));
    return out;
  }

 private:
  static void AddNote(JobFile* out, const std::string& note) {
    if (std::find(out->notes.begin(), out->notes.end(), note) == out->notes.end()) {
      out->notes.push_back(note);
    }
  }

  void Error(const Place& at, absl::string_view what) { errors_->Add(at, what); }

  void ParseSection(const Section& s, JobFile* out) {
    Defaults d = global_;
    SectionWork w;
    w.is_job = !s.global;
    in_job_ = w.is_job;
    if (w.is_job) {
      d.job.name = s.name;
      d.job.line = s.at.line;
    }
    for (const OptionLine& o : s.options) Apply(o, d, w);
    ApplyEngineOptions(d, w);
    for (const std::string& note : w.notes) AddNote(out, note);

    std::stable_sort(w.written.begin(), w.written.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<WrittenOption> written;
    for (auto& r : w.written) written.push_back(std::move(r.second));
    if (w.log_option) AddNote(out, kLogNote);

    if (!w.is_job) {
      for (WrittenOption& o : written) out->global_options.push_back(std::move(o));
      global_ = std::move(d);
      return;
    }
    FinishJob(s, d, std::move(written), out);
  }

  void FinishJob(const Section& s, const Defaults& d, std::vector<WrittenOption> written,
                 JobFile* out) {
    JobOptions job = d.job;
    job.options = std::move(written);
    for (int dir = 0; dir < kDdirs; ++dir) {
      job.bs_min[dir] = d.range_set[dir] ? d.range_min[dir] : d.bs[dir];
      job.bs_max[dir] = d.range_set[dir] ? d.range_max[dir] : d.bs[dir];
      // bssplit sets both to its smallest and largest listed size, chosen
      // or not.
      if (!job.bssplit[dir].empty()) {
        job.bs_min[dir] = job.bs_max[dir] = job.bssplit[dir].front().bs;
        for (const JobOptions::BsSplit& e : job.bssplit[dir]) {
          job.bs_min[dir] = std::min(job.bs_min[dir], e.bs);
          job.bs_max[dir] = std::max(job.bs_max[dir], e.bs);
        }
      }
    }
    CheckPacing(s, job);
    if (d.engine_issue.set) Error(d.engine_issue.at, d.engine_issue.what);
    if (d.rw_issue.set) Error(d.rw_issue.at, d.rw_issue.what);
    if (job.ioengine_name != d.eo_engine) job.hipri = false;
    if (job.size == 0) job.size = d.filesize;
    uint64_t min_bs = std::min({job.bs_min[kRead], job.bs_min[kWrite], job.bs_min[kTrim]});
    if (job.size != 0 && job.size < min_bs) {
      Error(s.at, absl::StrCat("job '", job.name, "': size ", job.size,
                               " is smaller than the minimum block size ", min_bs,
                               " (fio: size too small)"));
    }
    if (job.time_based && job.runtime_us == 0) {
      job.time_based = false;
      AddNote(out, absl::StrCat("job '", job.name,
                                "': time_based without a runtime: fio warns that "
                                "time_based requires a runtime/timeout setting and "
                                "ignores it, so the job is bounded by size"));
    }
    if (!job.direct) AddNote(out, kDirectNote);
    out->jobs.push_back(std::move(job));
  }

  // init.c fixup_options' checks of the rate options, and what fio 3.33
  // does not survive.
  void CheckPacing(const Section& s, JobOptions& job) {
    uint64_t rate = 0, iops = 0, rate_min = 0, iops_min = 0;
    for (int dir = 0; dir < kDdirs; ++dir) {
      rate += job.rate[dir];
      iops += job.rate_iops[dir];
      rate_min += job.rate_min[dir];
      iops_min += job.rate_iops_min[dir];
    }
    if ((rate && iops) || (rate_min && iops_min)) {
      Error(s.at, absl::StrCat("job '", job.name, "': rate and rate_iops are mutually exclusive (fio refuses it)"));
    }
    for (int dir = 0; dir < kDdirs; ++dir) {
      if ((job.rate[dir] && job.rate[dir] < job.rate_min[dir]) ||
          (job.rate_iops[dir] && job.rate_iops[dir] < job.rate_iops_min[dir])) {
        Error(s.at, absl::StrCat("job '", job.name, "': minimum rate exceeds rate, ddir ", dir, " (fio refuses it)"));
      }
    }
    if (job.rate_poisson && job.Rated()) {
      // usec_for_io divides by each issued direction's IOPS.
      for (int dir : {kRead, kWrite}) {
        const bool issues = dir == kRead ? !IsWriteOnly(job.rw) : (IsWriteOnly(job.rw) || IsMixed(job.rw));
        if (issues && job.rate[dir] == 0 && job.rate_iops[dir] == 0) {
          Error(s.at, absl::StrCat("job '", job.name, "': rate_process=poisson with no rate for ",
                                   dir == kRead ? "reads" : "writes",
                                   ", which the job issues: fio 3.33 dies there with SIGFPE (divides by a zero rate)"));
        } else if (issues && job.rate[dir] != 0 && job.rate[dir] < job.bs_min[dir]) {
          Error(s.at, absl::StrCat("job '", job.name, "': rate_process=poisson with a rate for ",
                                   dir == kRead ? "reads" : "writes", " below one block a second (",
                                   job.rate[dir], " B/s against ", job.bs_min[dir],
                                   " B blocks): fio 3.33 dies there with SIGFPE (its IOPS is 0)"));
        }
      }
    }
    job.thinktime_spin_us = std::min(job.thinktime_spin_us, job.thinktime_us);
  }

  // --- one option ----------------------------------------------------------

  void Apply(const OptionLine& o, Defaults& d, SectionWork& w) {
    const OptionInfo* info = FindOption(o.key);
    if (info == nullptr) {
      std::vector<std::string> names;
      for (const OptionInfo* i : AllOptions()) {
        names.push_back(i->name);
        if (i->alias[0] != '\0') names.push_back(i->alias);
      }
      const std::vector<std::string> near = viosim::NearNames(o.key, names, 3, std::max<size_t>(1, o.key.size() / 3));
      Error(o.at, absl::StrCat("unknown option '", o.key, "'",
                               near.empty() ? "" : absl::StrCat("; did you mean ", absl::StrJoin(near, ", "), "?")));
      return;
    }
    if (info->engines[0] != '\0') {
      // Parsed against the section's engine once the section is read, as
      // fio parses engine options after the general ones.
      w.engine_options.push_back({&o, info});
      return;
    }
    if (info->support == Support::kNotModeled) {
      Error(o.at, absl::StrCat("option '", o.key,
                               "' is understood by fio but not modeled by viosim"));
      return;
    }
    if (o.bare && NeedsValue(info->kind)) {
      Error(o.at, absl::StrCat("option '", o.key, "' requires an argument"));
      return;
    }
    const std::string value = ExpandEnv(o.value);
    absl::Status st = info->support == Support::kModeled ? ApplyModeled(*info, o, value, d)
                                                         : CheckValue(*info, o, value);
    if (!st.ok()) {
      Error(o.at, st.message());
      return;
    }
    if (info->kind == ValueKind::kInt || info->kind == ValueKind::kTime || info->kind == ValueKind::kRange ||
        info->kind == ValueKind::kBool || (info->kind == ValueKind::kFlag && !o.bare)) {
      if (const std::string unread = UnreadTail(info->kind, value); !unread.empty()) {
        w.notes.push_back(absl::StrCat(o.at.file, ":", o.at.line, ": option '", o.key, "=", o.value, "': fio does not read ",
                                       unread, " of it (no fractions or exponents; only its leading number and unit "
                                       "count), and neither does viosim"));
      }
    }
    absl::string_view name = info->name;
    if (name == "filename") d.job.filename = value;  // for the disk stats' device name
    if (name == "write_iolog") w.log_option = true;
    if (name == "log_store_compressed" || name == "log_unix_epoch" || name == "log_alternate_epoch") {
      bool on = false;
      if (ParseBool(o, value, &on).ok() && on) w.notes.push_back(kLogFormNote);
    }
    w.written.push_back({ReportRank(*info), WrittenOption{info->name, o.value, o.bare}});
  }

  void ApplyEngineOptions(Defaults& d, SectionWork& w) {
    if (w.engine_options.empty()) return;
    const std::string engine = d.job.ioengine_name;
    const bool modeled = FindEngine(engine) == EngineSupport::kModeled;
    if (engine != d.eo_engine) d.job.hipri = false;  // fio loads the engine afresh
    d.eo_engine = engine;
    for (const auto& [o, info] : w.engine_options) {
      if (!EngineOwns(*info, engine)) {
        // fio: "Bad option <hipri>" and the job is dropped.
        Error(o->at, absl::StrCat("option '", o->key, "' is not valid for ioengine=", engine));
        continue;
      }
      // An option of an engine viosim does not model: moot, as the engine
      // itself is refused for every job that keeps it.
      if (!modeled) continue;
      if (info->support == Support::kNotModeled) {
        Error(o->at, absl::StrCat("option '", o->key,
                                  "' is understood by fio but not modeled by viosim"));
        continue;
      }
      const std::string value = ExpandEnv(o->value);
      bool on = false;
      absl::Status st = ParseFlag(*o, value, &on);
      if (!st.ok()) {
        Error(o->at, st.message());
        continue;
      }
      if (absl::string_view(info->name) == "hipri") d.job.hipri = on;
      w.written.push_back({ReportRank(*info), WrittenOption{info->name, o->value, o->bare}});
    }
  }

  // --- value checks ----------------------------------------------------------

  static absl::Status Invalid(const OptionLine& o, const std::string& value,
                              absl::string_view expected) {
    return absl::InvalidArgumentError(absl::StrCat("option '", o.key, "': invalid value ",
                                                   Quoted(o.value, value),
                                                   expected.empty() ? "" : " (",
                                                   expected, expected.empty() ? "" : ")"));
  }

  // $ncpus, $pagesize and $mb_memory describe the host fio runs on.
  static absl::Status CheckHostKeywords(const OptionLine& o, const std::string& value) {
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

  static absl::Status ParseBool(const OptionLine& o, const std::string& value, bool* out) {
    int64_t v = 0;
    if (!CheckInt(value, &v)) return Invalid(o, value, "0 or 1");
    if (v < 0 || v > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("option '", o.key, "': ", v, " is out of range (0 or 1)"));
    }
    *out = v == 1;
    return absl::OkStatus();
  }

  static absl::Status ParseFlag(const OptionLine& o, const std::string& value, bool* out) {
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
  static absl::StatusOr<int64_t> ParseNumber(const OptionLine& o, const std::string& value,
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
  static absl::Status CheckValue(const OptionInfo& info, const OptionLine& o,
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

  absl::Status ApplyModeled(const OptionInfo& info, const OptionLine& o,
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
  static absl::Status RejectZones(const OptionLine& o, const std::string& value) {
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
  absl::Status ApplyRw(const OptionLine& o, const std::string& value, Defaults& d) {
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
  struct SizeResult {
    bool ok = false;
    int64_t value = 0;
    std::string soft;  // why this round did not count
  };

  static absl::StatusOr<SizeResult> ParseBlockSize(const OptionLine& o, const std::string& text,
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
  absl::Status ApplyBs(const OptionLine& o, const std::string& value, Defaults& d) {
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
  absl::Status ApplyBsrange(const OptionLine& o, const std::string& value, Defaults& d) {
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
  absl::Status ApplyPerDirection(const OptionLine& o, const std::string& value, uint64_t (&out)[kDdirs],
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
  absl::Status ApplyBssplit(const OptionLine& o, const std::string& value, Defaults& d) {
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
  absl::Status ApplyFilesize(const OptionLine& o, const std::string& value, Defaults& d) {
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

  absl::Status ApplyEngine(const OptionLine& o, const std::string& value, Defaults& d) {
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

  std::string path_;
  Errors* errors_;
  Defaults global_;
  bool in_job_ = false;  // the section being read is a job section
};

// fio's program options (init.c l_opts): valid on fio's command line, but not
// job options.
bool IsProgramOption(absl::string_view key) {
  static const char* const kProgram[] = {
      "output", "latency-log", "bandwidth-log", "minimal", "output-format", "terse-version",
      "version", "help", "cmdhelp", "enghelp", "showcmd", "readonly", "eta", "eta-interval",
      "eta-newline", "status-interval", "section", "alloc-size", "warnings-fatal",
      "max-jobs", "server", "daemonize", "client", "remote-config", "idle-prof",
      "inflate-log", "trigger-file", "trigger-timeout", "trigger", "trigger-remote",
      "aux-path", "debug", "parse-only", "merge-blktrace-only", "crctest", "cpuclock-test",
      "append-terse", "terse", "latency-log"};
  for (const char* p : kProgram) {
    if (key == p) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<JobFile> ParseJobText(const std::string& path_for_messages,
                                     const std::string& text,
                                     const std::string& dir_for_includes) {
  Errors errors;
  JobTextReader reader(&errors);
  reader.Read(path_for_messages, text, dir_for_includes, 0);
  JobParser parser(path_for_messages, &errors);
  return parser.Run(reader.sections());
}

absl::StatusOr<JobFile> ParseJobText(const std::string& path_for_messages, const std::string& text,
                                     const std::string& dir_for_includes,
                                     const std::vector<OptionOverride>& overrides) {
  Errors errors;
  JobTextReader reader(&errors);
  reader.Read(path_for_messages, text, dir_for_includes, 0);
  std::vector<Section>& sections = reader.sections();
  // After every line of the file, in the order given.
  int seq = 1 << 30;
  for (const OptionOverride& o : overrides) {
    bool found = false;
    for (Section& sec : sections) {
      if (sec.global || (!o.section.empty() && sec.name != o.section)) continue;
      found = true;
      OptionLine line;
      line.at = Place{o.origin, 0, seq++};
      line.key = o.key;
      line.value = o.value;
      sec.options.push_back(std::move(line));
    }
    if (!found) {
      errors.Add(Place{o.origin, 0, seq++},
                 o.section.empty() ? absl::StrCat("the job file ", path_for_messages, " has no job section")
                                   : absl::StrCat("no job section '", o.section, "' in ", path_for_messages));
    }
  }
  JobParser parser(path_for_messages, &errors);
  return parser.Run(sections);
}

absl::StatusOr<JobFile> ParseJobFile(const std::string& path) {
  absl::StatusOr<std::string> text = viosim::ReadInputFile(path, "fio job file");
  if (!text.ok()) return text.status();
  return ParseJobText(path, *text, Dirname(path));
}

absl::StatusOr<JobFile> ParseCommandLine(const std::vector<std::string>& args) {
  Errors errors;
  std::vector<Section> sections;
  // Options before the first --name go to fio's default (global) job.
  sections.push_back({Place{kCommandLineSource, 0, 0}, "global", true, {}});
  int seq = 1;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    Place at{kCommandLineSource, int(i + 1), seq++};
    if (std::string what = viosim::Utf8Problem(a); !what.empty()) {
      errors.Add(at, absl::StrCat("argument: ", what));
      continue;
    }
    if (a.size() < 2 || a[0] != '-') {
      errors.Add(at, absl::StrCat("unexpected argument '", a,
                                  "' (job options are written --key=value; job files "
                                  "are read with ParseJobFile)"));
      continue;
    }
    absl::string_view body = a;
    body.remove_prefix(body.size() > 1 && body[1] == '-' ? 2 : 1);
    OptionLine o;
    o.at = at;
    size_t eq = body.find('=');
    if (eq == absl::string_view::npos) {
      o.key = std::string(body);
      o.bare = true;
    } else {
      o.key = std::string(body.substr(0, eq));
      o.value = std::string(body.substr(eq + 1));
    }
    if (IsProgramOption(o.key)) {
      errors.Add(at, absl::StrCat("'--", o.key, "' is a fio program option, not a job option"));
      continue;
    }
    // getopt: an option that takes a value may have it in the next argument.
    const OptionInfo* info = FindOption(o.key);
    if (o.bare && info != nullptr && NeedsValue(info->kind) && i + 1 < args.size() &&
        !absl::StartsWith(args[i + 1], "-")) {
      o.value = args[++i];
      o.bare = false;
    }
    if (o.key == "name") {
      sections.push_back({at, o.value, IsGlobalName(o.value) && !o.bare, {}});
    }
    sections.back().options.push_back(std::move(o));
  }
  JobParser parser(kCommandLineSource, &errors);
  return parser.Run(sections);
}

}  // namespace fio
