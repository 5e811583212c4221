// Making jobs of the sections: each option applied to fio's parent or job
// thread_data as fio applies it, engine options after the others, and each
// job checked as fio checks it once its section is read (fixup_options),
// with the notes on what viosim runs differently.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
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
#include "scenarios/near_names.h"

namespace fio {
namespace parser_internal {
namespace {

const char kDirectNote[] =
    "direct=0 (buffered I/O through the page cache) is not modeled: jobs run as "
    "direct I/O";
const char kLogNote[] = "write_iolog (fio's record of every I/O issued) is accepted but viosim does not write it";
const char kLogFormNote[] =
    "log_store_compressed, log_unix_epoch and log_alternate_epoch are accepted, but viosim writes its "
    "logs as plain text with times in ms from the job's start";

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

}  // namespace

bool NeedsValue(ValueKind k) {
  return k != ValueKind::kFlag && k != ValueKind::kTextOrBare;
}

namespace {

int ReportRank(const OptionInfo& info) {
  if (info.engines[0] != '\0') return 2;
  absl::string_view n = info.name;
  if (n == "filename" || n == "filename_format") return 1;
  return 0;
}

}  // namespace

absl::StatusOr<JobFile> JobParser::Run(const std::vector<Section>& sections) {
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

void JobParser::AddNote(JobFile* out, const std::string& note) {
  if (std::find(out->notes.begin(), out->notes.end(), note) == out->notes.end()) {
    out->notes.push_back(note);
  }
}

void JobParser::ParseSection(const Section& s, JobFile* out) {
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

void JobParser::FinishJob(const Section& s, const Defaults& d, std::vector<WrittenOption> written,
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
void JobParser::CheckPacing(const Section& s, JobOptions& job) {
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

void JobParser::Apply(const OptionLine& o, Defaults& d, SectionWork& w) {
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

void JobParser::ApplyEngineOptions(Defaults& d, SectionWork& w) {
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

}  // namespace parser_internal
}  // namespace fio
