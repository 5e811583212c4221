// `viosim reproduce` and `viosim gate`, which share their work: every
// published cell of the scenarios given (default: every scenario under
// scenarios/ with published values) is run. reproduce prints the modeled
// beside the published values, with prediction bands on request; gate exits
// 1 when a modeled value leaves its published tolerance or the baseline.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "analysis/bands.h"
#include "analysis/format.h"
#include "analysis/gate.h"
#include "analysis/reads.h"
#include "analysis/runner.h"
#include "analysis/shard.h"
#include "cli/command.h"
#include "cli/common.h"
#include "cli/report_dir.h"
#include "cli/shard_flags.h"
#include "scenarios/loader.h"

namespace cli {
namespace {

using analysis::kVersion;

// The flags of `reproduce` or of `gate`: each command sets the fields it
// has flags for and leaves the others as they are here.
struct PublishedFlags {
  bool is_gate = false;
  SharedFlags f;
  std::vector<std::string> paths;
  ShardFlags shard;
  // reproduce's
  CLI::App* rep = nullptr;
  double precision = 0;
  std::string report;
  CLI::Option* report_opt = nullptr;
  analysis::BandSpec band_spec;  // band_spec.seed: from band_seed, when given
  std::string band_seed;         // read by the rule of --seed and run.seed
  // gate's
  std::string baseline_path = "analysis/baseline.textproto";
  bool update_baseline = false;
};

// reproduce and gate share the work: run every published cell.
int RunPublished(const PublishedFlags& p) {
  const bool is_gate = p.is_gate;
  const SharedFlags& f = p.f;
  std::vector<std::string> paths = p.paths;
  if (absl::Status s = CheckWritable(f.output); !s.ok()) return Fail(s);
  absl::StatusOr<std::string> plotter = PrepareReport(is_gate ? nullptr : p.report_opt, p.report);
  if (!plotter.ok()) return Fail(plotter.status());
  if (!is_gate && p.rep->count("--bands") == 0 &&
      (p.rep->count("--band-seed") > 0 || p.rep->count("--band-passes") > 0)) {
    return Fail(absl::InvalidArgumentError("--band-seed and --band-passes need --bands K"));
  }
  if (paths.empty()) {
    absl::StatusOr<std::vector<std::string>> all = analysis::ScenariosWithPublished(DefaultScenarioDir());
    if (!all.ok()) return Fail(all.status());
    paths = *all;
  }
  if (Sharded(p.shard, f.format)) {
    if (!is_gate && p.precision > 0) {
      return Fail(absl::InvalidArgumentError("--precision needs the whole run: not with --list, --shard or --format "
                                             "jsonl"));
    }
    if (is_gate && p.update_baseline) {
      return Fail(absl::InvalidArgumentError("--update-baseline needs the whole run: not with --list, --shard or "
                                             "--format jsonl"));
    }
    if (!is_gate && p.report_opt->count() > 0) {
      return Fail(absl::InvalidArgumentError("--report needs the whole run: not with --list, --shard or --format jsonl"));
    }
    analysis::Invocation inv =
        is_gate ? analysis::Invocation{"gate", paths, Overrides(f), {{"baseline", {p.baseline_path}}}}
                : analysis::Invocation{"reproduce", paths, Overrides(f), {}};
    if (!is_gate && p.rep->count("--bands") > 0) {  // each band point is a point of its own
      inv.args = {{"bands", {absl::StrCat(p.band_spec.k)}},
                  {"band-seed", {absl::StrCat(p.band_spec.seed)}},
                  {"band-passes", {absl::StrCat(p.band_spec.passes)}}};
    }
    absl::StatusOr<std::string> text = RunSharded(inv, p.shard, f.format, f.jobs, kVersion);
    return text.ok() ? Emit(f, *text) : Fail(text.status());
  }
  analysis::RunRequest req;
  req.jobs = f.jobs;
  if (!is_gate) req.options.precision = p.precision;
  std::vector<analysis::Reproduction> reps;
  const bool bands = !is_gate && p.rep->count("--bands") > 0;
  // Each scenario takes the --set paths some variant of it reads; a path
  // no scenario reads is refused before anything runs.
  std::vector<viosim::ScenarioFile> files;
  for (const std::string& path : paths) {
    absl::StatusOr<viosim::ScenarioFile> file = LoadScenario(path, Overrides(f));
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
    absl::StatusOr<viosim::ScenarioFile> file = LoadScenario(paths[i], req.overrides);
    if (!file.ok()) return Fail(file.status());
    if (bands) {  // bad band input fails before anything runs
      if (absl::StatusOr<analysis::BandPlan> plan = analysis::PlanBands(*file, p.band_spec, req); !plan.ok()) {
        return Fail(plan.status());
      }
    }
    absl::StatusOr<analysis::Reproduction> r = analysis::Reproduce(*file, req);
    if (!r.ok()) return Fail(r.status());
    if (bands) {
      if (absl::Status s = analysis::RunBands(*file, p.band_spec, req, &*r); !s.ok()) return Fail(s);
    }
    reps.push_back(*std::move(r));
  }
  if (!is_gate) {
    if (p.report_opt->count() > 0) {
      const std::string json = analysis::FormatCells(reps, analysis::Format::kJson);
      if (absl::Status s = viosim_cli::WriteReportDir(*plotter, "reproduce", json, p.report); !s.ok()) return Fail(s);
    }
    return Emit(f, analysis::FormatCells(reps, ToFormat(f.format), bands));
  }

  std::vector<analysis::Cell> cells;
  for (const auto& r : reps) cells.insert(cells.end(), r.cells.begin(), r.cells.end());
  viosim::Baseline baseline;
  std::error_code ec;
  if (std::filesystem::exists(p.baseline_path, ec)) {
    absl::StatusOr<viosim::Baseline> b = viosim::LoadBaselineFile(p.baseline_path);
    if (!b.ok()) return Fail(b.status());
    baseline = *b;
  } else if (!p.update_baseline) {
    return Fail(absl::NotFoundError(
        absl::StrCat(p.baseline_path, ": no baseline (create it with `viosim gate --update-baseline`)")));
  }
  if (p.update_baseline) {
    viosim::Baseline updated = analysis::UpdateBaseline(baseline, cells);
    if (absl::Status s = WriteFileAtomically(p.baseline_path, viosim::BaselineToText(updated)); !s.ok()) {
      return Fail(s);
    }
    std::cerr << "viosim: wrote " << updated.cell_size() << " cells to " << p.baseline_path << "\n";
    baseline = updated;
  }
  const analysis::GateReport report = analysis::CheckGate(reps, baseline);
  const int emitted = Emit(f, analysis::FormatGate(reps, report, ToFormat(f.format)));
  if (emitted != kExitOk) return emitted;
  return report.failures == 0 ? kExitOk : kExitCheckFailed;
}

class ReproduceCmd : public Command {
 public:
  void Add(CLI::App& app) override {
    CLI::App* rep = app.add_subcommand(
        "reproduce", "Modeled beside published values, error per cell, calibration or prediction marked");
    p_.rep = rep;
    rep->add_option("scenarios", p_.paths,
                    "Scenario files (default: every scenario under scenarios/ with published values)")
        ->type_name("SCENARIO");
    AddShared(rep, &p_.f);
    AddPrecision(rep, &p_.precision);
    AddShardFlags(rep, &p_.shard);
    p_.report_opt = OutputPath(rep->add_option("--report", p_.report, kReportHelp)->type_name("DIR"));
    // Prediction bands (analysis/bands.h, docs/cli.md).
    rep->add_option("--bands", p_.band_spec.k,
                    "Prediction bands: K points of the uncertain costs (Latin hypercube), the fitted costs "
                    "refitted at each, p5/p50/p95 of every PREDICTION cell; with --shard each band point is a "
                    "point of its own (--list names them)")
        ->type_name("K");
    rep->add_option("--band-seed", p_.band_seed, "The Latin hypercube's seed (default 1)")->type_name("N");
    rep->add_option("--band-passes", p_.band_spec.passes, "Rounds of refits per point (1-5)")->capture_default_str();
  }

  bool Chosen() const override { return static_cast<bool>(*p_.rep); }

  std::optional<std::string> SeedText() const override { return GivenSeed(p_.f); }

  int Run() override {
    if (!p_.band_seed.empty()) {
      viosim::Scenario scratch;
      if (absl::Status s = viosim::ApplyOverride(&scratch, absl::StrCat("run.seed=", p_.band_seed), "--band-seed");
          !s.ok()) {
        return Fail(s);
      }
      p_.band_spec.seed = scratch.run().seed();
    }
    return RunPublished(p_);
  }

 private:
  PublishedFlags p_;
};

class GateCmd : public Command {
 public:
  GateCmd() { p_.is_gate = true; }

  void Add(CLI::App& app) override {
    gate_ = app.add_subcommand(
        "gate", "Regression gate: exit 1 when a modeled value leaves its published tolerance or the baseline");
    gate_->add_option("scenarios", p_.paths, "Scenario files (default: all with published values)")
        ->type_name("SCENARIO");
    OutputPath(gate_->add_option("--baseline", p_.baseline_path,
                                 "Baseline of modeled values (read; rewritten by --update-baseline)")
                   ->capture_default_str());
    gate_->add_flag("--update-baseline", p_.update_baseline, "Rewrite the baseline from this run's modeled values");
    AddShared(gate_, &p_.f);
    AddShardFlags(gate_, &p_.shard);
  }

  bool Chosen() const override { return static_cast<bool>(*gate_); }

  std::optional<std::string> SeedText() const override { return GivenSeed(p_.f); }

  int Run() override { return RunPublished(p_); }

 private:
  CLI::App* gate_ = nullptr;
  PublishedFlags p_;
};

}  // namespace

std::unique_ptr<Command> ReproduceCommand() { return std::make_unique<ReproduceCmd>(); }

std::unique_ptr<Command> GateCommand() { return std::make_unique<GateCmd>(); }

}  // namespace cli
