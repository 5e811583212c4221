#include "cli/teach.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/format.h"
#include "analysis/json.h"
#include "analysis/runner.h"
#include "cli/report_dir.h"
#include "cli/shard_flags.h"
#include "scenarios/units.h"

namespace cli {
namespace {

constexpr char kScript[] =
#include "tools/plot/teach_py.inc"
    ;

// The trace every variant records: the page's window when longer, else
// enough for the window the page chooses (at most this).
const sim::Time kDefaultTrace = sim::Time::Millis(2);
const sim::Time kMaxWindow = sim::Time::Millis(20);

// The Python that draws: $VIOSIM_PYTHON when set, else /usr/bin/python3,
// else python3 on PATH; the first that starts.
absl::StatusOr<std::string> FindPython(const std::string& scratch) {
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("VIOSIM_PYTHON"); p != nullptr && *p != '\0') {
    candidates.push_back(p);
  } else {
    candidates = {"/usr/bin/python3", "python3"};
  }
  const std::string err = absl::StrCat(scratch, "/probe.stderr");
  for (const std::string& python : candidates) {
    if (viosim_cli::RunProcess({python, "-I", "-c", "import json, html"}, err, nullptr) == 0) return python;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("teach needs Python 3 (its standard library only); none of ", candidates.front(),
                   candidates.size() > 1 ? absl::StrCat(", ", candidates.back()) : std::string(),
                   " starts: install Debian's python3, or set VIOSIM_PYTHON"));
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InternalError(absl::StrCat(path, ": cannot read"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A scratch directory, removed with everything in it when this goes.
class Scratch {
 public:
  Scratch() {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string t = (base / "viosim-teach.XXXXXX").string();
    if (::mkdtemp(t.data()) != nullptr) path_ = t;
  }
  ~Scratch() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

CLI::App* AddTeach(CLI::App* app, TeachFlags* f) {
  CLI::App* cmd = app->add_subcommand(
      "teach",
      "Write one self-contained HTML page for a class: per-CPU timelines of two variants on one time scale, "
      "lock_stat and CPU shares beside them, and what changed, in words");
  cmd->add_option("scenario", f->scenario, "Scenario file (.textproto)")->required()->type_name("SCENARIO");
  cmd->add_option("--variant,-v", f->variants, "A variant to show (give two; default: the file's first two)")
      ->type_name("NAME");
  cmd->add_option("--window", f->window,
                  "Length of the drawn window, from the start of the measured window (after the warm-up), e.g. "
                  "40us (default: chosen from the run: six mean holds of the lock held longest, as a 1-2-5 "
                  "step, within 50us..1ms, then widened until every variant takes that lock at least 4 times, "
                  "within 2ms; at most 20ms)")
      ->type_name("DURATION");
  cmd->add_option("--cpus", f->cpus,
                  "CPUs drawn per variant at most; with more, those that held or spun on the lock longest in the "
                  "window (the page says so)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str()
      ->type_name("N");
  OutputPath(cmd->add_option("--output,-o", f->output, "The page to write (whole or not at all)")
                 ->required()
                 ->type_name("FILE.html"));
  cmd->add_option("--set", f->sets, "Override a scalar field by path, as `run --set` does (repeatable)")
      ->type_name("PATH=VALUE");
  cmd->add_option_function<std::string>(
         "--seed", [f](const std::string& s) { f->seed = s, f->seed_set = true; },
         "Random seed for every variant (overrides run.seed)")
      ->type_name("N");
  cmd->add_option("--jobs,-j", f->jobs, "Variants simulated at once; the page does not depend on it")
      ->check(CLI::Range(1, 256))
      ->type_name("N");
  return cmd;
}

std::vector<std::string> TeachOverrides(const TeachFlags& f) {
  std::vector<std::string> o;
  if (f.seed_set) o.push_back(absl::StrCat("run.seed=", f.seed));
  o.insert(o.end(), f.sets.begin(), f.sets.end());
  return o;
}

absl::StatusOr<std::string> MakeTeachPage(const TeachFlags& f, const viosim::ScenarioFile& file,
                                          const std::string& version) {
  std::vector<std::string> variants = f.variants;
  if (variants.empty()) {
    variants = viosim::VariantNames(file);
    if (variants.size() > 2) variants.resize(2);
  }
  if (variants.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat("teach shows two variants; ", variants.size(),
                                                   f.variants.empty() ? " in " : " given for ", file.path,
                                                   " (name them with --variant A --variant B)"));
  }
  sim::Time window = sim::Time::Zero();
  if (!f.window.empty()) {
    absl::StatusOr<sim::Time> w = viosim::ParseDuration(f.window);
    if (!w.ok()) return absl::InvalidArgumentError(absl::StrCat("--window '", f.window, "': ", w.status().message()));
    if (*w <= sim::Time::Zero() || *w > kMaxWindow) {
      return absl::InvalidArgumentError(
          absl::StrCat("--window '", f.window, "': must be above 0 and at most ", viosim::FormatDurationForInput(kMaxWindow)));
    }
    window = *w;
  }
  Scratch scratch;
  if (scratch.path().empty()) {
    return absl::InternalError(absl::StrCat("teach: cannot make a scratch directory: ", std::strerror(errno)));
  }
  absl::StatusOr<std::string> python = FindPython(scratch.path());
  if (!python.ok()) return python.status();

  analysis::RunRequest req;
  req.overrides = TeachOverrides(f);
  req.jobs = f.jobs;
  req.options.trace = true;
  req.options.trace_window = window > kDefaultTrace ? window : kDefaultTrace;
  absl::StatusOr<std::vector<viosim::VariantResult>> results = analysis::RunVariants(file, variants, req);
  if (!results.ok()) return results.status();
  for (const viosim::VariantResult& r : *results) {
    if (window > sim::Time::Zero() && r.duration < window) {
      return absl::InvalidArgumentError(absl::StrCat("--window '", f.window, "': longer than variant ", r.variant,
                                                     "'s measured window (run.duration ",
                                                     viosim::FormatDurationForInput(r.duration), ")"));
    }
  }

  // DATA.json for the drawing script: the run as `run --format json` writes
  // it, each variant's trace, and the page's settings.
  analysis::JsonWriter settings(0);
  settings.BeginObject();
  settings.Key("version").String(version);
  settings.Key("scenario_file").String(std::filesystem::path(file.path).filename().string());
  settings.Key("description").String(file.scenario.description());
  settings.Key("window_us");
  if (window > sim::Time::Zero()) {
    settings.Number(window.ps() / 1e6);
  } else {
    settings.Null();
  }
  settings.Key("trace_us").Number(req.options.trace_window.ps() / 1e6);
  settings.Key("cpus").Int(f.cpus);
  settings.Key("variant_descriptions").BeginArray();
  for (const viosim::VariantResult& r : *results) settings.String(r.description);
  settings.EndArray();
  settings.EndObject();
  std::string data = settings.str();
  while (!data.empty() && (data.back() == '\n' || data.back() == '}')) data.pop_back();
  absl::StrAppend(&data, ",\"run\":",
                  analysis::FormatRun(file.scenario.name(), file.scenario.description(), *results,
                                      analysis::Format::kJson),
                  ",\"traces\":[");
  for (size_t i = 0; i < results->size(); ++i) {
    absl::StrAppend(&data, i == 0 ? "" : ",", (*results)[i].trace_json);
  }
  absl::StrAppend(&data, "]}\n");

  const std::string data_path = absl::StrCat(scratch.path(), "/data.json");
  const std::string page_path = absl::StrCat(scratch.path(), "/page.html");
  {
    std::ofstream out(data_path, std::ios::binary);
    out << data;
    out.close();
    if (!out) return absl::InternalError(absl::StrCat(data_path, ": write failed"));
  }
  std::string tail;
  const int code = viosim_cli::RunProcess({*python, "-I", "-B", "-c", kScript, data_path, page_path},
                                          absl::StrCat(scratch.path(), "/stderr"), &tail);
  if (code != 0) {
    return absl::InternalError(absl::StrCat("teach: drawing the page failed (", *python, " exited ",
                                            code < 0 ? std::string("abnormally") : std::to_string(code), "): ", tail));
  }
  return ReadFile(page_path);
}

}  // namespace cli
