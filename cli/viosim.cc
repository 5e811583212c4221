// viosim: the command line. Parses flags (CLI11), calls the analysis layer,
// and is the only part of viosim that writes to the terminal or to files.
//
// Exit status: 0 success, 1 a gate or check failed, 2 bad usage or bad input.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/bands.h"
#include "analysis/calibrate.h"
#include "analysis/explain.h"
#include "analysis/ideal.h"
#include "analysis/format.h"
#include "analysis/gate.h"
#include "analysis/params_list.h"
#include "analysis/published.h"
#include "analysis/reads.h"
#include "analysis/runner.h"
#include "analysis/fio_output.h"
#include "cli/fio_logs.h"
#include "cli/shard_flags.h"
#include "cli/report_dir.h"
#include "cli/teach.h"
#include "scenarios/fio_parser.h"
#include "scenarios/builder.h"
#include "scenarios/checks.h"
#include "scenarios/default_stack.h"
#include "scenarios/fio_builder.h"
#include "scenarios/loader.h"

namespace {

using analysis::kVersion;
constexpr int kExitOk = 0;
constexpr int kExitCheckFailed = 1;
constexpr int kExitBadInput = 2;

struct SharedFlags {
  std::string seed;  // as written: checked by the rule of --set run.seed=
  bool seed_set = false;
  int jobs = 1;
  std::vector<std::string> sets;
  std::string format = "text";
  std::string output;
};

void AddShared(CLI::App* cmd, SharedFlags* f) {
  cmd->add_option_function<std::string>(
         "--seed", [f](const std::string& s) { f->seed = s, f->seed_set = true; },
         "Random seed for every variant (overrides run.seed)")
      ->type_name("N");
  cmd->add_option("--jobs,-j", f->jobs, "Variants simulated at once; output does not depend on it")
      ->check(CLI::Range(1, 256))
      ->type_name("N");
  cmd->add_option("--set", f->sets,
                  "Override a scalar field by path, e.g. run.duration=2s or workload.lockbench.threads=8 "
                  "(repeatable; applied after the variant's overlay; a string may be written in a scenario file's "
                  "quotes, platform.scheduler=\"fair\")")
      ->type_name("PATH=VALUE");
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"text", "json", "csv"}));
  cli::OutputPath(
      cmd->add_option("--output,-o", f->output, "Write the output to FILE (whole or not at all) instead of stdout")
          ->type_name("FILE"));
}

// --precision P%: the run goes on until every measured interval's
// half-width is within P% of its value, or 16 times run.duration.
void AddPrecision(CLI::App* cmd, double* fraction) {
  cmd->add_option_function<std::string>(
         "--precision",
         [fraction](const std::string& v) {
           std::string t = v;
           if (!t.empty() && t.back() == '%') t.pop_back();
           double p = 0;
           if (!absl::SimpleAtod(t, &p) || !std::isfinite(p) || p <= 0 || p > 100) {
             throw CLI::ValidationError("--precision", "'" + v + "': expected a percentage in (0, 100], e.g. 5%");
           }
           *fraction = p / 100;
         },
         "Batches go on until every measured interval's half-width is within P% of its value, or 16 x "
         "run.duration has been measured; the output says which it was")
      ->type_name("P%");
}

analysis::Format ToFormat(const std::string& s) {
  if (s == "json") return analysis::Format::kJson;
  if (s == "csv") return analysis::Format::kCsv;
  return analysis::Format::kText;
}

std::vector<std::string> Overrides(const SharedFlags& f) {
  std::vector<std::string> o;
  if (f.seed_set) o.push_back(absl::StrCat("run.seed=", f.seed));
  o.insert(o.end(), f.sets.begin(), f.sets.end());
  return o;
}

int Fail(const absl::Status& s) {
  std::cerr << "viosim: " << s.message() << "\n";
  return kExitBadInput;
}

// Writes `text` into whatever `path` names, following symlinks; a FIFO
// without a reader is an error, not a wait.
absl::Status WriteInPlace(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open for writing: ",
                                                   errno == ENXIO ? "a FIFO with no reader" : std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::ftruncate(fd, 0) != 0) {
    const int error = errno;
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot truncate: ", std::strerror(error)));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      return absl::InvalidArgumentError(absl::StrCat(path, ": write failed: ", std::strerror(error)));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// Writes `text` to `path`. A regular file (or a new one) is written through
// a temporary file and a rename, so a reader never sees half a file and a
// failed run leaves none. Anything else the path names (a symlink, a FIFO,
// a device such as /dev/stdout) is written in place and never replaced.
absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  struct stat st;
  const bool exists = ::lstat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) return WriteInPlace(path, text);
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open for writing"));
    out << text;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return absl::InvalidArgumentError(absl::StrCat(path, ": write failed"));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

int Emit(const SharedFlags& f, const std::string& text) {
  if (f.output.empty()) {
    std::cout << text << std::flush;
    return kExitOk;
  }
  absl::Status s = WriteFileAtomically(f.output, text);
  return s.ok() ? kExitOk : Fail(s);
}

// Output and trace paths must be writable before minutes of simulation.
absl::Status CheckWritable(const std::string& path) {
  if (path.empty()) return absl::OkStatus();
  std::filesystem::path p(path);
  std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": directory '", dir.string(), "' does not exist"));
  }
  if (std::filesystem::is_directory(p, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
  }
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // Written in place: the target itself must take writes.
    if (::access(path.c_str(), W_OK) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not writable: ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  // A regular file is replaced by a rename in its directory.
  if (::access(dir.c_str(), W_OK) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": directory '", dir.string(), "' is not writable: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

std::string TracePath(const std::string& base, const std::string& variant, bool several) {
  if (!several) return base;
  std::filesystem::path p(base);
  std::filesystem::path out = p.parent_path() / absl::StrCat(p.stem().string(), ".", variant, p.extension().string());
  return out.string();
}

std::string DefaultScenarioDir() { return "scenarios"; }

constexpr char kReportHelp[] =
    "Also write DIR/report.md with SVG charts and the JSON they show (DIR whole or not at all; a report "
    "DIR written before is replaced); needs Python 3 with matplotlib";

// --report DIR: checked, and the plotter found, before anything runs.
absl::StatusOr<std::string> PrepareReport(const CLI::Option* opt, const std::string& dir) {
  if (opt == nullptr || opt->count() == 0) return std::string();
  if (absl::Status s = viosim_cli::CheckReportDir(dir); !s.ok()) return s;
  return viosim_cli::FindPlotter();
}

// The flags that say what to fit and how, shared by `calibrate` and
// `sweep --refit`: --cell, --range, --tolerance and --max-iter.
struct FitFlags {
  CLI::Option* cell;
  CLI::Option* range;
  CLI::Option* tolerance;
  CLI::Option* max_iter;
};

// CLI11's Range lets NaN through (every comparison with it is false), so
// the floating-point flags check for a finite number first.
const CLI::Validator kFinite(
    [](std::string& text) -> std::string {
      double v = 0;
      if (absl::SimpleAtod(text, &v) && std::isfinite(v)) return "";
      return absl::StrCat("'", text, "' is not a finite number");
    },
    "", "FINITE");

FitFlags AddFitFlags(CLI::App* cmd, analysis::CalibrateSpec* spec, std::string* cell, std::string* range) {
  FitFlags f;
  f.cell = cmd->add_option("--cell", *cell,
                           "The published cell to fit to (METRIC may be left out when the variant has one cell)")
               ->type_name("VARIANT[/METRIC]");
  f.range = cmd->add_option("--range", *range, "Values of the field that bracket the published value, e.g. 1us,80us (each as --set takes a value)")
                ->type_name("LO,HI");
  f.tolerance =
      cmd->add_option("--tolerance", spec->tolerance_pct, "Stop once the modeled value is this close to published, %")
          ->check(kFinite)
          ->check(CLI::Range(1e-6, 100.0))
          ->capture_default_str()
          ->type_name("PCT");
  f.max_iter = cmd->add_option("--max-iter", spec->max_iter, "Midpoints tried at most")
                   ->check(CLI::Range(1, 1000))
                   ->capture_default_str()
                   ->type_name("N");
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  // Under `bazel run`, resolve relative paths from where the user ran it.
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY"); wd != nullptr && *wd != '\0') {
    if (chdir(wd) != 0) std::cerr << "viosim: cannot enter " << wd << "\n";
  }

  CLI::App app{"viosim: a deterministic discrete-event simulator of the virtualized I/O stack"};
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(1);

  SharedFlags run_f, list_f, rep_f, gate_f, sweep_f, cal_f;

  CLI::App* run = app.add_subcommand("run", "Run a scenario's variants and print a readable report");
  double run_precision = 0, sweep_precision = 0, rep_precision = 0;
  AddPrecision(run, &run_precision);
  std::string run_path;
  std::vector<std::string> run_variants;
  std::string trace_path;
  bool perf = false;
  run->add_option("scenario", run_path, "Scenario file (.textproto)")->required()->type_name("SCENARIO");
  run->add_option("--variant,-v", run_variants, "Variant to run (repeatable; default: all)")->type_name("NAME");
  std::string run_compare;
  run->add_option("--compare", run_compare,
                  "The pair whose gains (ratio and difference per metric, 95% intervals from paired batches) to "
                  "print, B against A, the ratio B/A (default: the second of exactly two variants against the first)")
      ->type_name("B/A");
  std::string run_alternative;
  run->add_option("--alternative", run_alternative,
                  "Run under the scenario's alternative NAME (a model choice the sources leave open: its overlay over "
                  "every variant)")
      ->type_name("NAME");
  cli::OutputPath(run->add_option("--trace", trace_path,
                                  "Write a Chrome/Perfetto JSON trace of the first 1ms of the measured window to "
                                  "FILE (FILE.<variant>.json when several variants run)")
                      ->type_name("FILE"));
  run->add_flag("--perf", perf, "Print wall-clock speed (events and acquisitions per second) to stderr");
  AddShared(run, &run_f);

  CLI::App* sweep = app.add_subcommand(
      "sweep", "Run a scenario's variants once per value of one field and tabulate chosen metrics");
  std::string sweep_path;
  std::vector<std::string> sweep_over;
  std::vector<std::string> sweep_variants, sweep_metrics;
  sweep->add_option("scenario", sweep_path, "Scenario file (.textproto)")->required()->type_name("SCENARIO");
  sweep->add_option("--over", sweep_over,
                    "Field path (as --set takes it) and the values it takes in turn, e.g. "
                    "platform.kvm.mmio_exit_user.value=2us,6us,51.5us (applied after every --set; a value in a "
                    "scenario file's quotes is one value, commas included). Given two or three times: a grid, "
                    "every combination run, the first field varying slowest")
      ->required()
      ->type_name("FIELD=V1,V2,...");
  sweep->add_option("--variant,-v", sweep_variants, "Variant to run at each value (repeatable; default: all)")
      ->type_name("NAME");
  sweep->add_option("--metric,-m", sweep_metrics,
                    "Metric to tabulate (repeatable; default: iops if the scenario has it, else its first)")
      ->type_name("NAME");
  std::string refit_cell, refit_range;
  analysis::CalibrateSpec refit_spec;
  refit_spec.flag = "--refit";
  CLI::Option* refit_opt =
      sweep->add_option("--refit", refit_spec.field,
                        "At each value, first fit this field (a duration or a number, by --set path) to the "
                        "published CALIBRATION cell --cell, within --range, as `calibrate` does; then run the "
                        "variants with both; with --shard each swept value is a point of its own")
          ->type_name("FIELD");
  const FitFlags refit_flags = AddFitFlags(sweep, &refit_spec, &refit_cell, &refit_range);
  AddShared(sweep, &sweep_f);
  AddPrecision(sweep, &sweep_precision);
  cli::ShardFlags sweep_shard;
  cli::AddShardFlags(sweep, &sweep_shard);
  std::string sweep_report;
  CLI::Option* sweep_report_opt =
      cli::OutputPath(sweep->add_option("--report", sweep_report, kReportHelp)->type_name("DIR"));

  CLI::App* cal = app.add_subcommand(
      "calibrate", "Fit one field so that a variant reproduces its published CALIBRATION cell, by bisection");
  std::string cal_path, cal_cell, cal_range;
  analysis::CalibrateSpec cal_spec;
  cal->add_option("scenario", cal_path, "Scenario file (.textproto)")->required()->type_name("SCENARIO");
  cal->add_option("--fit", cal_spec.field,
                  "Field path (as --set takes it) holding a duration or a number, e.g. "
                  "platform.kvm.mmio_exit_user.value")
      ->required()
      ->type_name("FIELD");
  const FitFlags cal_flags = AddFitFlags(cal, &cal_spec, &cal_cell, &cal_range);
  cal_flags.cell->required();
  cal_flags.range->required();
  AddShared(cal, &cal_f);
  cal->remove_option(cal->get_option("--jobs"));  // the search is sequential

  CLI::App* list = app.add_subcommand("list", "Show a scenario's variants, metrics and published values");
  std::string list_path;
  list->add_option("scenario", list_path, "Scenario file (default: list every scenario under scenarios/)")
      ->type_name("SCENARIO");
  bool list_params = false;
  std::vector<std::string> list_variants;
  list->add_flag("--params", list_params,
                 "Every parameter each variant reads: its --set path, value, kind (MEASURED, DERIVED, ESTIMATED, "
                 "FITTED, DEFINED), source and the range the bands draw it from");
  list->add_option("--variant,-v", list_variants, "With --params: only this variant (repeatable)")->type_name("NAME");
  AddShared(list, &list_f);

  CLI::App* rep = app.add_subcommand(
      "reproduce", "Modeled beside published values, error per cell, calibration or prediction marked");
  std::vector<std::string> rep_paths;
  rep->add_option("scenarios", rep_paths,
                  "Scenario files (default: every scenario under scenarios/ with published values)")
      ->type_name("SCENARIO");
  AddShared(rep, &rep_f);
  AddPrecision(rep, &rep_precision);
  cli::ShardFlags rep_shard;
  cli::AddShardFlags(rep, &rep_shard);
  cli::MergeFlags merge_f;
  CLI::App* merge = cli::AddMerge(&app, &merge_f);
  std::string rep_report;
  CLI::Option* rep_report_opt = cli::OutputPath(rep->add_option("--report", rep_report, kReportHelp)->type_name("DIR"));
  // Prediction bands (analysis/bands.h, docs/cli.md).
  analysis::BandSpec band_spec;
  rep->add_option("--bands", band_spec.k,
                  "Prediction bands: K points of the uncertain costs (Latin hypercube), the fitted costs "
                  "refitted at each, p5/p50/p95 of every PREDICTION cell; with --shard each band point is a "
                  "point of its own (--list names them)")
      ->type_name("K");
  std::string band_seed;  // read by the rule of --seed and run.seed
  rep->add_option("--band-seed", band_seed, "The Latin hypercube's seed (default 1)")->type_name("N");
  rep->add_option("--band-passes", band_spec.passes, "Rounds of refits per point (1-5)")->capture_default_str();

  CLI::App* gate = app.add_subcommand(
      "gate", "Regression gate: exit 1 when a modeled value leaves its published tolerance or the baseline");
  std::vector<std::string> gate_paths;
  std::string baseline_path = "analysis/baseline.textproto";
  bool update_baseline = false;
  gate->add_option("scenarios", gate_paths, "Scenario files (default: all with published values)")
      ->type_name("SCENARIO");
  cli::OutputPath(gate->add_option("--baseline", baseline_path,
                                   "Baseline of modeled values (read; rewritten by --update-baseline)")
                      ->capture_default_str());
  gate->add_flag("--update-baseline", update_baseline, "Rewrite the baseline from this run's modeled values");
  AddShared(gate, &gate_f);
  cli::ShardFlags gate_shard;
  cli::AddShardFlags(gate, &gate_shard);

  // explain: every costed field's elasticity on one metric (analysis/explain.h).
  SharedFlags explain_f;
  CLI::App* explain = app.add_subcommand(
      "explain", "Rank every costed field by the elasticity of a metric to it, beside the mechanism view");
  std::string explain_path, explain_step = "10%";
  analysis::ExplainSpec explain_spec;
  explain->add_option("scenario", explain_path, "Scenario file (.textproto)")->required()->type_name("SCENARIO");
  explain->add_option("--variant,-v", explain_spec.variant, "Variant to explain (default: the file's first)")
      ->type_name("NAME");
  explain->add_option("--metric,-m", explain_spec.metric, "Metric (default: iops if reported, else the first)")
      ->type_name("NAME");
  explain->add_option("--field", explain_spec.fields,
                      "Vary only the costed fields whose path starts with this (repeatable; default: all)")
      ->type_name("PREFIX");
  explain->add_option("--step", explain_step, "Relative step each cost takes both ways, e.g. 10% or 0.05")
      ->capture_default_str()
      ->type_name("S");
  std::vector<std::string> explain_ideal;
  CLI::Option* explain_ideal_opt =
      explain
          ->add_option("--ideal", explain_ideal,
                       "Instead of elasticities: the most each lock, wait-queue lock, mutex and hot cache line could "
                       "move the metric, each made ideal in turn (or only NAME, as lock_stat names it)")
          ->expected(0, 1)
          ->type_name("[NAME]");
  AddShared(explain, &explain_f);
  std::string explain_report;
  CLI::Option* explain_report_opt =
      cli::OutputPath(explain->add_option("--report", explain_report, kReportHelp)->type_name("DIR"));

  CLI::App* fio_cmd = app.add_subcommand(
      "fio", "Run an fio job file on a modeled stack and answer in fio 3.33's own output formats");
  std::vector<std::string> fio_job;
  std::string fio_stack;
  std::string fio_format = "normal";
  double fio_target = -1;
  bool fio_full = false;
  std::vector<std::string> fio_sets;
  std::string fio_output;
  std::string fio_seed;
  bool fio_seed_set = false;
  fio_cmd->add_option("job", fio_job,
                      "fio job file, or after `--` the job as fio's command line (--name=x --rw=randread ...)")
      ->required()
      ->type_name("JOB.fio");
  fio_cmd->add_option("--stack", fio_stack,
                      "Scenario describing the stack to run on (default: scenarios/baremetal_optane.textproto, "
                      "built in when not found)")
      ->type_name("SCENARIO");
  std::string fio_variant;
  fio_cmd->add_option("--variant,-v", fio_variant,
                      "Run on this variant of the stack scenario (default: the scenario as written, its base)")
      ->type_name("NAME");
  fio_cmd->add_option("--output-format", fio_format, "fio's output format")
      ->check(CLI::IsMember({"normal", "json", "json+", "terse"}))
      ->capture_default_str();
  fio_cmd->add_option("--target-ci", fio_target,
                      "Stop once IOPS is steady within this 95% half-width, percent of the mean (default: "
                      "the stack's workload.fio.target_ci_pct, 1)")
      ->check(kFinite)
      ->check(CLI::Range(0.01, 100.0))
      ->type_name("PCT");
  fio_cmd->add_flag("--full", fio_full, "Simulate the full length the job asks for (no steady-state stop)");
  fio_cmd->add_option("--set", fio_sets, "Override a scalar field of the stack scenario by path")
      ->type_name("PATH=VALUE");
  fio_cmd->add_option_function<std::string>(
         "--seed", [&](const std::string& v) { fio_seed = v, fio_seed_set = true; },
         "Random seed (overrides run.seed)")
      ->type_name("N");
  cli::OutputPath(fio_cmd->add_option("--output,-o", fio_output, "Write the output to FILE (whole or not at all)")
                      ->type_name("FILE"));
  std::string fio_log_dir = ".";
  cli::OutputPath(fio_cmd->add_option("--log-dir", fio_log_dir,
                                      "Write the job's log files (write_bw_log, write_lat_log, write_iops_log, "
                                      "write_hist_log) into DIR, all whole or none (fio writes them in its working "
                                      "directory)")
                      ->capture_default_str()
                      ->type_name("DIR"));

  cli::TeachFlags teach_f;
  CLI::App* teach = cli::AddTeach(&app, &teach_f);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  // --seed N is --set run.seed=N: one rule for both, checked before anything runs.
  for (const auto& [given, text] : {std::pair{run_f.seed_set, run_f.seed}, {sweep_f.seed_set, sweep_f.seed},
                                    {cal_f.seed_set, cal_f.seed}, {list_f.seed_set, list_f.seed},
                                    {rep_f.seed_set, rep_f.seed}, {gate_f.seed_set, gate_f.seed},
                                    {fio_seed_set, fio_seed}, {explain_f.seed_set, explain_f.seed},
                                    {teach_f.seed_set, teach_f.seed}}) {
    if (!given) continue;
    viosim::Scenario scratch;
    if (absl::Status s = viosim::ApplyOverride(&scratch, absl::StrCat("run.seed=", text), "--seed"); !s.ok()) {
      return Fail(s);
    }
  }
  if (!band_seed.empty()) {
    viosim::Scenario scratch;
    if (absl::Status s = viosim::ApplyOverride(&scratch, absl::StrCat("run.seed=", band_seed), "--band-seed");
        !s.ok()) {
      return Fail(s);
    }
    band_spec.seed = scratch.run().seed();
  }

  // Loads a scenario file and applies the --set assignments that edit the
  // file's own definitions (variant[...], published[...]); the others apply
  // to each resolved variant.
  auto load = [](const std::string& path,
                 const std::vector<std::string>& overrides) -> absl::StatusOr<viosim::ScenarioFile> {
    absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(path);
    if (!file.ok()) return file.status();
    if (absl::Status s = viosim::ApplyFileOverrides(&*file, overrides); !s.ok()) return s;
    return file;
  };

  if (*merge) {
    if (absl::Status s = CheckWritable(merge_f.output); !s.ok()) return Fail(s);
    absl::StatusOr<analysis::Rendered> merged = cli::RunMerge(merge_f, kVersion);
    if (!merged.ok()) return Fail(merged.status());
    SharedFlags out_flags;
    out_flags.output = merge_f.output;
    const int emitted = Emit(out_flags, merged->text);
    if (emitted != kExitOk) return emitted;
    // Written to a file, the output does not say on the terminal why the exit status is 1.
    if (merged->check_failed && !merge_f.output.empty() && !merged->note.empty()) {
      std::cerr << "viosim: " << merged->note << "\n";
    }
    return merged->check_failed ? kExitCheckFailed : kExitOk;
  }

  if (*teach) {
    if (absl::Status s = CheckWritable(teach_f.output); !s.ok()) return Fail(s);
    absl::StatusOr<viosim::ScenarioFile> file = load(teach_f.scenario, cli::TeachOverrides(teach_f));
    if (!file.ok()) return Fail(file.status());
    if (absl::Status s = analysis::CheckPathsRead(*file, {}, cli::TeachOverrides(teach_f)); !s.ok()) return Fail(s);
    absl::StatusOr<std::string> page = cli::MakeTeachPage(teach_f, *file, kVersion);
    if (!page.ok()) return Fail(page.status());
    SharedFlags out_flags;
    out_flags.output = teach_f.output;
    return Emit(out_flags, *page);
  }

  if (*run) {
    for (const std::string& p : {run_f.output, trace_path}) {
      if (absl::Status s = CheckWritable(p); !s.ok()) return Fail(s);
    }
    absl::StatusOr<viosim::ScenarioFile> file = load(run_path, Overrides(run_f));
    if (!file.ok()) return Fail(file.status());
    if (!run_alternative.empty()) {
      file = viosim::UnderAlternative(*file, run_alternative);
      if (!file.ok()) return Fail(file.status());
    }
    std::vector<std::string> variants = run_variants.empty() ? viosim::VariantNames(*file) : run_variants;
    if (absl::Status s = analysis::CheckPathsRead(*file, variants, Overrides(run_f)); !s.ok()) return Fail(s);
    analysis::RunRequest req;
    req.overrides = Overrides(run_f);
    req.jobs = run_f.jobs;
    req.options.trace = !trace_path.empty();
    req.options.precision = run_precision;
    const auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<viosim::VariantResult>> results = analysis::RunVariants(*file, variants, req);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!results.ok()) return Fail(results.status());
    if (perf) {
      for (const auto& r : *results) {
        uint64_t acq = 0;
        for (const auto& l : r.locks) acq += l.acquisitions;
        std::cerr << absl::StrFormat(
            "perf: variant %s: %d events, %d lock acquisitions measured; all variants took %.3f s wall "
            "(--jobs %d)\n",
            r.variant, r.events, acq, wall, run_f.jobs);
      }
      if (results->size() == 1) {
        const auto& r = results->front();
        uint64_t acq = 0;
        for (const auto& l : r.locks) acq += l.acquisitions;
        std::cerr << absl::StrFormat("perf: %.2fM events/s, %.2fM lock acquisitions/s (wall clock)\n",
                                     r.events / wall / 1e6, acq / wall / 1e6);
      }
    }
    // A failed run leaves no trace files behind: those written go again if a later write fails.
    std::vector<std::string> traces_written;
    auto remove_traces = [&traces_written] {
      for (const std::string& p : traces_written) std::remove(p.c_str());
    };
    if (!trace_path.empty()) {
      for (const auto& r : *results) {
        const std::string path = TracePath(trace_path, r.variant, results->size() > 1);
        struct stat st;
        const bool replaceable = ::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode);
        if (absl::Status s = WriteFileAtomically(path, r.trace_json); !s.ok()) {
          remove_traces();
          return Fail(s);
        }
        if (replaceable) traces_written.push_back(path);
      }
    }
    absl::StatusOr<std::optional<analysis::Comparison>> gains = analysis::CompareOf(*results, run_compare);
    if (!gains.ok()) return Fail(gains.status());
    const int emitted = Emit(run_f, analysis::FormatRun(file->scenario.name(), file->scenario.description(),
                                                        *results, ToFormat(run_f.format),
                                                        gains->has_value() ? &**gains : nullptr));
    if (emitted != kExitOk) remove_traces();
    return emitted;
  }

  if (*sweep) {
    // --cell, --range, --tolerance and --max-iter say how --refit fits, and
    // --refit needs the first two.
    const bool refit = refit_opt->count() > 0;
    for (const CLI::Option* o : {refit_flags.cell, refit_flags.range, refit_flags.tolerance, refit_flags.max_iter}) {
      if (!refit && o->count() > 0) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(
            o->get_name(), " is for --refit FIELD (the field refitted at each value), which is not given")));
      }
    }
    for (const CLI::Option* o : {refit_flags.cell, refit_flags.range}) {
      if (refit && o->count() == 0) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(
            "--refit '", refit_spec.field, "' needs --cell VARIANT[/METRIC] and --range LO,HI; ", o->get_name(),
            " is not given")));
      }
    }
    if (absl::Status s = CheckWritable(sweep_f.output); !s.ok()) return Fail(s);
    if (cli::Sharded(sweep_shard, sweep_f.format)) {
      if (sweep_precision > 0) {
        return Fail(absl::InvalidArgumentError("--precision needs the whole run: not with --list, --shard or --format "
                                               "jsonl"));
      }
      if (sweep_report_opt->count() > 0) {
        return Fail(absl::InvalidArgumentError("--report needs the whole run: not with --list, --shard or --format jsonl"));
      }
      analysis::Invocation inv{
          "sweep", {sweep_path}, Overrides(sweep_f), {{"over", sweep_over}, {"variant", sweep_variants},
                                                      {"metric", sweep_metrics}}};
      if (refit) {  // one point per value: its refit, then its variants
        inv.args.insert(inv.args.end(), {{"refit", {refit_spec.field}},
                                         {"cell", {refit_cell}},
                                         {"range", {refit_range}},
                                         {"tolerance", {absl::StrFormat("%.17g", refit_spec.tolerance_pct)}},
                                         {"max-iter", {absl::StrCat(refit_spec.max_iter)}}});
      }
      absl::StatusOr<std::string> text = cli::RunSharded(inv, sweep_shard, sweep_f.format, sweep_f.jobs, kVersion);
      return text.ok() ? Emit(sweep_f, *text) : Fail(text.status());
    }
    absl::StatusOr<std::string> plotter = PrepareReport(sweep_report_opt, sweep_report);
    if (!plotter.ok()) return Fail(plotter.status());
    absl::StatusOr<analysis::SweepSpec> spec = analysis::ParseGridSpec(sweep_over);
    if (!spec.ok()) return Fail(spec.status());
    if (refit) {
      if (absl::Status s = analysis::ParseCellAndRange(refit_cell, refit_range, &refit_spec); !s.ok()) return Fail(s);
    }
    absl::StatusOr<viosim::ScenarioFile> file = load(sweep_path, Overrides(sweep_f));
    if (!file.ok()) return Fail(file.status());
    // --over and --refit are checked with the sweep's plan (PlanSweep, PlanCalibration).
    if (absl::Status s = analysis::CheckPathsRead(*file, {}, Overrides(sweep_f)); !s.ok()) return Fail(s);
    analysis::RunRequest req;
    req.overrides = Overrides(sweep_f);
    req.jobs = sweep_f.jobs;
    req.options.precision = sweep_precision;
    if (!refit) {
      absl::StatusOr<analysis::Sweep> result = analysis::RunSweep(*file, *spec, sweep_variants, sweep_metrics, req);
      if (!result.ok()) return Fail(result.status());
      if (sweep_report_opt->count() > 0) {
        const std::string json = analysis::FormatSweep(*result, analysis::Format::kJson);
        if (absl::Status s = viosim_cli::WriteReportDir(*plotter, "sweep", json, sweep_report); !s.ok()) return Fail(s);
      }
      return Emit(sweep_f, analysis::FormatSweep(*result, ToFormat(sweep_f.format)));
    }
    absl::StatusOr<analysis::RefitSweep> result =
        analysis::RunRefitSweep(*file, *spec, refit_spec, sweep_variants, sweep_metrics, req);
    if (!result.ok()) return Fail(result.status());
    if (sweep_report_opt->count() > 0) {
      const std::string json = analysis::FormatRefitSweep(*result, analysis::Format::kJson);
      if (absl::Status s = viosim_cli::WriteReportDir(*plotter, "sweep", json, sweep_report); !s.ok()) return Fail(s);
    }
    const int emitted = Emit(sweep_f, analysis::FormatRefitSweep(*result, ToFormat(sweep_f.format)));
    if (emitted != kExitOk) return emitted;
    std::vector<std::string> not_fitted;
    for (size_t i = 0; i < result->fits.size(); ++i) {
      if (result->fits[i].search.outcome != analysis::BisectionOutcome::kFitted) {
        not_fitted.push_back(result->sweep.values[i]);
      }
    }
    if (not_fitted.empty()) return kExitOk;
    // Written to a file, the output does not say on the terminal why the exit status is 1.
    if (!sweep_f.output.empty()) {
      std::cerr << "viosim: " << refit_spec.field << " not fitted at " << spec->field << " = "
                << absl::StrJoin(not_fitted, ", ") << "\n";
    }
    return kExitCheckFailed;
  }

  if (*cal) {
    if (absl::Status s = CheckWritable(cal_f.output); !s.ok()) return Fail(s);
    if (absl::Status s = analysis::ParseCellAndRange(cal_cell, cal_range, &cal_spec); !s.ok()) return Fail(s);
    absl::StatusOr<viosim::ScenarioFile> file = load(cal_path, Overrides(cal_f));
    if (!file.ok()) return Fail(file.status());
    if (absl::Status s = analysis::CheckPathsRead(*file, {}, Overrides(cal_f)); !s.ok()) return Fail(s);
    analysis::RunRequest req;
    req.overrides = Overrides(cal_f);
    absl::StatusOr<analysis::Calibration> c = analysis::Calibrate(*file, cal_spec, req);
    if (!c.ok()) return Fail(c.status());
    const int emitted = Emit(cal_f, analysis::FormatCalibration(*c, ToFormat(cal_f.format)));
    if (emitted != kExitOk) return emitted;
    if (c->search.outcome == analysis::BisectionOutcome::kFitted) return kExitOk;
    // Written to a file, the output does not say on the terminal why the exit status is 1.
    if (!cal_f.output.empty()) std::cerr << "viosim: " << analysis::CalibrationSummary(*c) << "\n";
    return kExitCheckFailed;
  }

  if (*explain) {
    if (absl::Status s = CheckWritable(explain_f.output); !s.ok()) return Fail(s);
    absl::StatusOr<double> step = analysis::ParseStep(explain_step);
    if (!step.ok()) return Fail(step.status());
    explain_spec.step = *step;
    absl::StatusOr<std::string> plotter = PrepareReport(explain_report_opt, explain_report);
    if (!plotter.ok()) return Fail(plotter.status());
    absl::StatusOr<viosim::ScenarioFile> file = load(explain_path, Overrides(explain_f));
    if (!file.ok()) return Fail(file.status());
    if (absl::Status s = analysis::CheckPathsRead(*file, {}, Overrides(explain_f)); !s.ok()) return Fail(s);
    analysis::RunRequest req;
    req.overrides = Overrides(explain_f);
    req.jobs = explain_f.jobs;
    if (explain_ideal_opt->count() > 0) {
      for (const CLI::Option* o : {explain->get_option("--field"), explain->get_option("--step"), explain_report_opt}) {
        if (o->count() > 0) {
          return Fail(absl::InvalidArgumentError(absl::StrCat(o->get_name(), " is for elasticities, not --ideal")));
        }
      }
      absl::StatusOr<analysis::IdealExplanation> ideal = analysis::ExplainIdeal(
          *file, explain_spec.variant, explain_spec.metric, explain_ideal.empty() ? "" : explain_ideal.front(), req);
      if (!ideal.ok()) return Fail(ideal.status());
      return Emit(explain_f, analysis::FormatIdeal(*ideal, ToFormat(explain_f.format)));
    }
    absl::StatusOr<analysis::Explanation> x = analysis::Explain(*file, explain_spec, req);
    if (!x.ok()) return Fail(x.status());
    if (explain_report_opt->count() > 0) {
      const std::string json = analysis::FormatExplanation(*x, analysis::Format::kJson);
      if (absl::Status s = viosim_cli::WriteReportDir(*plotter, "explain", json, explain_report); !s.ok()) {
        return Fail(s);
      }
    }
    return Emit(explain_f, analysis::FormatExplanation(*x, ToFormat(explain_f.format)));
  }

  if (*fio_cmd) {
    if (absl::Status s = CheckWritable(fio_output); !s.ok()) return Fail(s);
    absl::StatusOr<fio::JobFile> jobs =
        fio_job.size() == 1 && fio_job[0].rfind("--", 0) != 0 ? fio::ParseJobFile(fio_job[0])
                                                             : fio::ParseCommandLine(fio_job);
    if (!jobs.ok()) return Fail(jobs.status());
    if (absl::Status s = viosim_cli::CheckLogDir(fio_log_dir, *jobs); !s.ok()) return Fail(s);
    const std::string job_name = fio_job.size() == 1 ? fio_job[0] : std::string(fio::kCommandLineSource);
    std::vector<std::string> overrides = fio_sets;
    if (fio_seed_set) overrides.insert(overrides.begin(), absl::StrCat("run.seed=", fio_seed));
    absl::StatusOr<viosim::ScenarioFile> file;
    std::error_code ec;
    if (fio_stack.empty() && !std::filesystem::exists(viosim::kDefaultStackPath, ec)) {
      file = viosim::ParseScenarioText(absl::StrCat("<built-in ", viosim::kDefaultStackPath, ">"),
                                       viosim::kDefaultStackText);
      if (file.ok()) {
        if (absl::Status s = viosim::ApplyFileOverrides(&*file, overrides); !s.ok()) return Fail(s);
      }
    } else {
      file = load(fio_stack.empty() ? viosim::kDefaultStackPath : fio_stack, overrides);
    }
    if (!file.ok()) return Fail(file.status());
    absl::StatusOr<viosim::Scenario> stack =
        viosim::ResolveVariant(*file, fio_variant.empty() ? std::string(viosim::kBaseVariant) : fio_variant, overrides);
    if (!stack.ok()) return Fail(stack.status());
    viosim::FioRunOptions opts;
    if (fio_full) opts.target_ci_pct = 0;
    if (fio_target > 0) opts.target_ci_pct = fio_target;
    if (absl::Status s = viosim::CheckJobsOnStack(*file, overrides, *stack, *jobs, opts.target_ci_pct); !s.ok()) {
      return Fail(s);
    }
    absl::StatusOr<viosim::ReadSet> reads = viosim::FioReads(*stack, *jobs, opts);
    if (!reads.ok()) return Fail(reads.status());
    if (absl::Status s = analysis::CheckSetsIn(*reads, fio_sets, absl::StrCat("the stack of ", file->path, " running ",
                                                                           job_name));
        !s.ok()) {
      return Fail(s);
    }
    for (const std::string& note : jobs->notes) std::cerr << "viosim: " << job_name << ": " << note << "\n";
    absl::StatusOr<fio::FioReport> report = viosim::RunFio(*stack, *jobs, opts);
    if (!report.ok()) return Fail(report.status());
    const std::string asked = report->requested_s > 0
                                  ? absl::StrFormat("of the %.3f s the job asks for", report->requested_s)
                                  : std::string("(the job sets neither runtime nor size)");
    const std::string ci =
        !report->has_confidence ? std::string("too few batches for an IOPS confidence interval")
        : !report->confidence_informative
            ? absl::StrFormat("no informative IOPS interval: the same rate at seed %d (a deterministic bottleneck)",
                              report->replicate_seed)
            : absl::StrFormat("IOPS 95%% confidence half-width %.2g%% of the mean (the rate over the exact "
                              "window, viosim.window_iops)",
                              report->confidence_pct);
    std::cerr << absl::StrFormat("viosim: simulated %.3f s %s, %s; %s\n", report->simulated_s, asked,
                                 report->stopped_at_steady_state ? "stopped at steady state"
                                                                 : "to the job's end or the time cap",
                                 ci);
    std::string text;
    if (fio_format == "normal") {
      text = fio::FormatNormal(*report);
    } else if (fio_format == "terse") {
      text = fio::FormatTerse(*report);
    } else {
      text = fio::FormatJson(*report, fio_format == "json+");
    }
    if (absl::Status s = viosim_cli::WriteLogFiles(fio_log_dir, report->logs); !s.ok()) return Fail(s);
    for (const std::string& m : report->messages) std::cerr << m << "\n";
    SharedFlags out_flags;
    out_flags.output = fio_output;
    const int emitted = Emit(out_flags, text);
    if (emitted != kExitOk) return emitted;
    // As fio: a job that ended in error (a rate floor not met) exits 1.
    for (const fio::ThreadStat& ts : report->entities) {
      if (ts.error != 0) return kExitCheckFailed;
    }
    return kExitOk;
  }

  if (*list) {
    if (absl::Status s = CheckWritable(list_f.output); !s.ok()) return Fail(s);
    if (list_path.empty() && (list_params || !list_variants.empty())) {
      return Fail(absl::InvalidArgumentError("--params and --variant need a SCENARIO"));
    }
    if (list_path.empty()) {
      absl::StatusOr<std::vector<std::string>> paths = analysis::ScenarioFiles(DefaultScenarioDir());
      if (!paths.ok()) return Fail(paths.status());
      std::vector<viosim::ScenarioFile> files;
      for (const std::string& p : *paths) {
        absl::StatusOr<viosim::ScenarioFile> file = load(p, Overrides(list_f));
        if (!file.ok()) return Fail(file.status());
        files.push_back(*std::move(file));
      }
      return Emit(list_f, analysis::FormatScenarioIndex(*paths, files, ToFormat(list_f.format)));
    }
    absl::StatusOr<viosim::ScenarioFile> file = load(list_path, Overrides(list_f));
    if (!file.ok()) return Fail(file.status());
    if (!list_variants.empty() && !list_params) {
      return Fail(absl::InvalidArgumentError("--variant is for --params (the parameters of that variant)"));
    }
    if (list_params) {
      if (absl::Status s = analysis::CheckPathsRead(*file, list_variants, Overrides(list_f)); !s.ok()) return Fail(s);
      absl::StatusOr<std::vector<analysis::VariantParams>> params =
          analysis::ListParams(*file, list_variants, Overrides(list_f));
      if (!params.ok()) return Fail(params.status());
      return Emit(list_f, analysis::FormatParams(*file, *params, ToFormat(list_f.format)));
    }
    // Every variant is resolved, as `run` would: list accepts only what run accepts.
    absl::StatusOr<viosim::Scenario> base = absl::UnknownError("no variant");
    for (const std::string& v : viosim::VariantNames(*file)) {
      absl::StatusOr<viosim::Scenario> resolved = viosim::ResolveVariant(*file, v, Overrides(list_f));
      if (!resolved.ok()) return Fail(resolved.status());
      if (!base.ok()) base = *std::move(resolved);
    }
    std::vector<double> references;
    for (const viosim::Published& p : file->scenario.published()) {
      absl::StatusOr<viosim::Scenario> resolved = viosim::ResolveVariant(*file, p.variant(), Overrides(list_f));
      if (!resolved.ok()) return Fail(resolved.status());
      absl::StatusOr<double> ref = analysis::ReferenceValue(p, *resolved);
      if (!ref.ok()) return Fail(ref.status());
      references.push_back(*ref);
    }
    return Emit(list_f, analysis::FormatList(*file, viosim::MetricNames(*base), references,
                                             ToFormat(list_f.format)));
  }

  // reproduce and gate share the work: run every published cell.
  const bool is_gate = static_cast<bool>(*gate);
  SharedFlags& f = is_gate ? gate_f : rep_f;
  std::vector<std::string> paths = is_gate ? gate_paths : rep_paths;
  if (absl::Status s = CheckWritable(f.output); !s.ok()) return Fail(s);
  absl::StatusOr<std::string> plotter = PrepareReport(is_gate ? nullptr : rep_report_opt, rep_report);
  if (!plotter.ok()) return Fail(plotter.status());
  if (!is_gate && rep->count("--bands") == 0 && (rep->count("--band-seed") > 0 || rep->count("--band-passes") > 0)) {
    return Fail(absl::InvalidArgumentError("--band-seed and --band-passes need --bands K"));
  }
  if (paths.empty()) {
    absl::StatusOr<std::vector<std::string>> all = analysis::ScenariosWithPublished(DefaultScenarioDir());
    if (!all.ok()) return Fail(all.status());
    paths = *all;
  }
  if (const cli::ShardFlags& shard = is_gate ? gate_shard : rep_shard; cli::Sharded(shard, f.format)) {
    if (!is_gate && rep_precision > 0) {
      return Fail(absl::InvalidArgumentError("--precision needs the whole run: not with --list, --shard or --format "
                                             "jsonl"));
    }
    if (is_gate && update_baseline) {
      return Fail(absl::InvalidArgumentError("--update-baseline needs the whole run: not with --list, --shard or "
                                             "--format jsonl"));
    }
    if (!is_gate && rep_report_opt->count() > 0) {
      return Fail(absl::InvalidArgumentError("--report needs the whole run: not with --list, --shard or --format jsonl"));
    }
    analysis::Invocation inv =
        is_gate ? analysis::Invocation{"gate", paths, Overrides(f), {{"baseline", {baseline_path}}}}
                : analysis::Invocation{"reproduce", paths, Overrides(f), {}};
    if (!is_gate && rep->count("--bands") > 0) {  // each band point is a point of its own
      inv.args = {{"bands", {absl::StrCat(band_spec.k)}},
                  {"band-seed", {absl::StrCat(band_spec.seed)}},
                  {"band-passes", {absl::StrCat(band_spec.passes)}}};
    }
    absl::StatusOr<std::string> text = cli::RunSharded(inv, shard, f.format, f.jobs, kVersion);
    return text.ok() ? Emit(f, *text) : Fail(text.status());
  }
  analysis::RunRequest req;
  req.jobs = f.jobs;
  if (!is_gate) req.options.precision = rep_precision;
  std::vector<analysis::Reproduction> reps;
  const bool bands = !is_gate && rep->count("--bands") > 0;
  // Each scenario takes the --set paths some variant of it reads; a path
  // no scenario reads is refused before anything runs.
  std::vector<viosim::ScenarioFile> files;
  for (const std::string& p : paths) {
    absl::StatusOr<viosim::ScenarioFile> file = load(p, Overrides(f));
    if (!file.ok()) return Fail(file.status());
    files.push_back(*std::move(file));
  }
  std::vector<const viosim::ScenarioFile*> file_ptrs;
  for (const viosim::ScenarioFile& file : files) file_ptrs.push_back(&file);
  absl::StatusOr<analysis::OverridePlan> override_plan = analysis::PlanOverrides(file_ptrs, Overrides(f));
  if (!override_plan.ok()) return Fail(override_plan.status());
  for (const std::string& note : override_plan->notes) std::cerr << "viosim: " << note << "\n";
  for (size_t i = 0; i < paths.size(); ++i) {
    req.overrides = override_plan->files[i].applied;
    absl::StatusOr<viosim::ScenarioFile> file = load(paths[i], req.overrides);
    if (!file.ok()) return Fail(file.status());
    if (bands) {  // bad band input fails before anything runs
      if (absl::StatusOr<analysis::BandPlan> plan = analysis::PlanBands(*file, band_spec, req); !plan.ok()) {
        return Fail(plan.status());
      }
    }
    absl::StatusOr<analysis::Reproduction> r = analysis::Reproduce(*file, req);
    if (!r.ok()) return Fail(r.status());
    if (bands) {
      if (absl::Status s = analysis::RunBands(*file, band_spec, req, &*r); !s.ok()) return Fail(s);
    }
    reps.push_back(*std::move(r));
  }
  if (!is_gate) {
    if (rep_report_opt->count() > 0) {
      const std::string json = analysis::FormatCells(reps, analysis::Format::kJson);
      if (absl::Status s = viosim_cli::WriteReportDir(*plotter, "reproduce", json, rep_report); !s.ok()) return Fail(s);
    }
    return Emit(f, analysis::FormatCells(reps, ToFormat(f.format), bands));
  }

  std::vector<analysis::Cell> cells;
  for (const auto& r : reps) cells.insert(cells.end(), r.cells.begin(), r.cells.end());
  viosim::Baseline baseline;
  std::error_code ec;
  if (std::filesystem::exists(baseline_path, ec)) {
    absl::StatusOr<viosim::Baseline> b = viosim::LoadBaselineFile(baseline_path);
    if (!b.ok()) return Fail(b.status());
    baseline = *b;
  } else if (!update_baseline) {
    return Fail(absl::NotFoundError(
        absl::StrCat(baseline_path, ": no baseline (create it with `viosim gate --update-baseline`)")));
  }
  if (update_baseline) {
    viosim::Baseline updated = analysis::UpdateBaseline(baseline, cells);
    if (absl::Status s = WriteFileAtomically(baseline_path, viosim::BaselineToText(updated)); !s.ok()) {
      return Fail(s);
    }
    std::cerr << "viosim: wrote " << updated.cell_size() << " cells to " << baseline_path << "\n";
    baseline = updated;
  }
  const analysis::GateReport report = analysis::CheckGate(reps, baseline);
  const int emitted = Emit(f, analysis::FormatGate(reps, report, ToFormat(f.format)));
  if (emitted != kExitOk) return emitted;
  return report.failures == 0 ? kExitOk : kExitCheckFailed;
}
