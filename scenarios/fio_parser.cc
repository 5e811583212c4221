#include "scenarios/fio_parser.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "models/fio/job.h"
#include "scenarios/fio_options.h"
#include "scenarios/fio_parser_internal.h"
#include "scenarios/input_file.h"

namespace fio {

const char kCommandLineSource[] = "<command line>";

namespace parser_internal {
namespace {

// ---------------------------------------------------------------------------
// The input, read into sections

bool IsGlobalName(absl::string_view name) { return absl::StartsWith(name, "global"); }

}  // namespace

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

namespace {

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
  explicit JobTextReader(Diagnostics* errors) : errors_(errors) {}

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
        AddError(errors_, at, absl::StrCat(LineWhat(s), ": ", what));
        continue;
      }
      if (s[0] == '[') {
        if (depth > 0) {
          AddError(errors_, at,
                   "a section header in an included file (fio allows no new sections in included files)");
          continue;
        }
        if (s.size() < 2 || s.back() != ']') {
          AddError(errors_, at, absl::StrCat("malformed section header '", s, "'"));
          continue;
        }
        std::string name = s.substr(1, s.size() - 2);
        if (name.empty()) {
          AddError(errors_, at, "a section with an empty name");
          continue;
        }
        sections_.push_back({at, name, IsGlobalName(name), {}});
        continue;
      }
      bool include = absl::StartsWith(s, "include") &&
                     (s.size() == 7 || IsBlank(s[7]));
      if (sections_.empty()) {
        OptionLine o = SplitOption(s, at);
        AddError(errors_, at,
                 include ? std::string("include outside of [] job section")
                         : absl::StrCat("option '", o.key, "' outside of [] job section"));
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
      AddError(errors_, at, "include without a file name");
      return;
    }
    if (depth + 1 > kMaxIncludeDepth) {
      AddError(errors_, at, absl::StrCat("include '", name, "': includes nested more than ",
                                         kMaxIncludeDepth, " deep (a loop?)"));
      stopped_ = true;
      return;
    }
    if (++includes_ > kMaxIncludes) {
      AddError(errors_, at, absl::StrCat("include '", name, "': more than ", kMaxIncludes,
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
      AddError(errors_, at, absl::StrCat("include '", name, "': ", text.status().message()));
      return;
    }
    included_bytes_ += static_cast<int64_t>(text->size());
    if (included_bytes_ > viosim::kMaxInputFileBytes) {
      AddError(errors_, at, absl::StrCat("include '", name, "': the included files come to more than ",
                                         viosim::kMaxInputFileBytes,
                                         " bytes in all (a file included again and again?)"));
      stopped_ = true;
      return;
    }
    Read(path, *text, Dirname(path), depth + 1);
  }

  Diagnostics* errors_;
  std::vector<Section> sections_;
  int seq_ = 0;
  int includes_ = 0;
  int64_t included_bytes_ = 0;
  // An include bound was passed: reading ends (its error is the last).
  bool stopped_ = false;
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
}  // namespace parser_internal

using parser_internal::AddError;
using parser_internal::Diagnostics;
using parser_internal::Dirname;
using parser_internal::IsGlobalName;
using parser_internal::IsProgramOption;
using parser_internal::JobParser;
using parser_internal::JobTextReader;
using parser_internal::NeedsValue;
using parser_internal::NewErrors;
using parser_internal::OptionLine;
using parser_internal::Place;
using parser_internal::Section;

absl::StatusOr<JobFile> ParseJobText(const std::string& path_for_messages,
                                     const std::string& text,
                                     const std::string& dir_for_includes) {
  Diagnostics errors = NewErrors();
  JobTextReader reader(&errors);
  reader.Read(path_for_messages, text, dir_for_includes, 0);
  JobParser parser(path_for_messages, &errors);
  return parser.Run(reader.sections());
}

absl::StatusOr<JobFile> ParseJobText(const std::string& path_for_messages, const std::string& text,
                                     const std::string& dir_for_includes,
                                     const std::vector<OptionOverride>& overrides) {
  Diagnostics errors = NewErrors();
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
      AddError(&errors, Place{o.origin, 0, seq++},
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
  Diagnostics errors = NewErrors();
  std::vector<Section> sections;
  // Options before the first --name go to fio's default (global) job.
  sections.push_back({Place{kCommandLineSource, 0, 0}, "global", true, {}});
  int seq = 1;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    Place at{kCommandLineSource, int(i + 1), seq++};
    if (std::string what = viosim::Utf8Problem(a); !what.empty()) {
      AddError(&errors, at, absl::StrCat("argument: ", what));
      continue;
    }
    if (a.size() < 2 || a[0] != '-') {
      AddError(&errors, at, absl::StrCat("unexpected argument '", a,
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
      AddError(&errors, at, absl::StrCat("'--", o.key, "' is a fio program option, not a job option"));
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
