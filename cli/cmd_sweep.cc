// `viosim sweep`: a scenario's variants run once per value of one field (or
// per point of a grid of two or three), chosen metrics tabulated; with
// --refit, a field fitted to a published cell at each value first.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/calibrate.h"
#include "analysis/format.h"
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

class SweepCmd : public Command {
 public:
  void Add(CLI::App& app) override {
    cmd_ = app.add_subcommand(
        "sweep", "Run a scenario's variants once per value of one field and tabulate chosen metrics");
    cmd_->add_option("scenario", path_, "Scenario file (.textproto)")->required()->type_name("SCENARIO");
    cmd_->add_option("--over", over_,
                     "Field path (as --set takes it) and the values it takes in turn, e.g. "
                     "platform.kvm.mmio_exit_user.value=2us,6us,51.5us (applied after every --set; a value in a "
                     "scenario file's quotes is one value, commas included). Given two or three times: a grid, "
                     "every combination run, the first field varying slowest")
        ->required()
        ->type_name("FIELD=V1,V2,...");
    cmd_->add_option("--variant,-v", variants_, "Variant to run at each value (repeatable; default: all)")
        ->type_name("NAME");
    cmd_->add_option("--metric,-m", metrics_,
                     "Metric to tabulate (repeatable; default: iops if the scenario has it, else its first)")
        ->type_name("NAME");
    refit_spec_.flag = "--refit";
    refit_opt_ = cmd_->add_option("--refit", refit_spec_.field,
                                  "At each value, first fit this field (a duration or a number, by --set path) to the "
                                  "published CALIBRATION cell --cell, within --range, as `calibrate` does; then run "
                                  "the variants with both; with --shard each swept value is a point of its own")
                     ->type_name("FIELD");
    refit_flags_ = AddFitFlags(cmd_, &refit_spec_, &refit_cell_, &refit_range_);
    AddShared(cmd_, &f_);
    AddPrecision(cmd_, &precision_);
    AddShardFlags(cmd_, &shard_);
    report_opt_ = OutputPath(cmd_->add_option("--report", report_, kReportHelp)->type_name("DIR"));
  }

  bool Chosen() const override { return static_cast<bool>(*cmd_); }

  std::optional<std::string> SeedText() const override { return GivenSeed(f_); }

  int Run() override {
    // --cell, --range, --tolerance and --max-iter say how --refit fits, and
    // --refit needs the first two.
    const bool refit = refit_opt_->count() > 0;
    for (const CLI::Option* o :
         {refit_flags_.cell, refit_flags_.range, refit_flags_.tolerance, refit_flags_.max_iter}) {
      if (!refit && o->count() > 0) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(
            o->get_name(), " is for --refit FIELD (the field refitted at each value), which is not given")));
      }
    }
    for (const CLI::Option* o : {refit_flags_.cell, refit_flags_.range}) {
      if (refit && o->count() == 0) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(
            "--refit '", refit_spec_.field, "' needs --cell VARIANT[/METRIC] and --range LO,HI; ", o->get_name(),
            " is not given")));
      }
    }
    if (absl::Status s = CheckWritable(f_.output); !s.ok()) return Fail(s);
    if (Sharded(shard_, f_.format)) {
      if (precision_ > 0) {
        return Fail(absl::InvalidArgumentError("--precision needs the whole run: not with --list, --shard or --format "
                                               "jsonl"));
      }
      if (report_opt_->count() > 0) {
        return Fail(absl::InvalidArgumentError("--report needs the whole run: not with --list, --shard or --format jsonl"));
      }
      analysis::Invocation inv{
          "sweep", {path_}, Overrides(f_), {{"over", over_}, {"variant", variants_}, {"metric", metrics_}}};
      if (refit) {  // one point per value: its refit, then its variants
        inv.args.insert(inv.args.end(), {{"refit", {refit_spec_.field}},
                                         {"cell", {refit_cell_}},
                                         {"range", {refit_range_}},
                                         {"tolerance", {absl::StrFormat("%.17g", refit_spec_.tolerance_pct)}},
                                         {"max-iter", {absl::StrCat(refit_spec_.max_iter)}}});
      }
      absl::StatusOr<std::string> text = RunSharded(inv, shard_, f_.format, f_.jobs, kVersion);
      return text.ok() ? Emit(f_, *text) : Fail(text.status());
    }
    absl::StatusOr<std::string> plotter = PrepareReport(report_opt_, report_);
    if (!plotter.ok()) return Fail(plotter.status());
    absl::StatusOr<analysis::SweepSpec> spec = analysis::ParseGridSpec(over_);
    if (!spec.ok()) return Fail(spec.status());
    if (refit) {
      if (absl::Status s = analysis::ParseCellAndRange(refit_cell_, refit_range_, &refit_spec_); !s.ok()) {
        return Fail(s);
      }
    }
    absl::StatusOr<viosim::ScenarioFile> file = LoadScenario(path_, Overrides(f_));
    if (!file.ok()) return Fail(file.status());
    // --over and --refit are checked with the sweep's plan (PlanSweep, PlanCalibration).
    if (absl::Status s = analysis::CheckPathsRead(*file, {}, Overrides(f_)); !s.ok()) return Fail(s);
    analysis::RunRequest req;
    req.overrides = Overrides(f_);
    req.jobs = f_.jobs;
    req.options.precision = precision_;
    if (!refit) {
      absl::StatusOr<analysis::Sweep> result = analysis::RunSweep(*file, *spec, variants_, metrics_, req);
      if (!result.ok()) return Fail(result.status());
      if (report_opt_->count() > 0) {
        const std::string json = analysis::FormatSweep(*result, analysis::Format::kJson);
        if (absl::Status s = viosim_cli::WriteReportDir(*plotter, "sweep", json, report_); !s.ok()) return Fail(s);
      }
      return Emit(f_, analysis::FormatSweep(*result, ToFormat(f_.format)));
    }
    absl::StatusOr<analysis::RefitSweep> result =
        analysis::RunRefitSweep(*file, *spec, refit_spec_, variants_, metrics_, req);
    if (!result.ok()) return Fail(result.status());
    if (report_opt_->count() > 0) {
      const std::string json = analysis::FormatRefitSweep(*result, analysis::Format::kJson);
      if (absl::Status s = viosim_cli::WriteReportDir(*plotter, "sweep", json, report_); !s.ok()) return Fail(s);
    }
    const int emitted = Emit(f_, analysis::FormatRefitSweep(*result, ToFormat(f_.format)));
    if (emitted != kExitOk) return emitted;
    std::vector<std::string> not_fitted;
    for (size_t i = 0; i < result->fits.size(); ++i) {
      if (result->fits[i].search.outcome != analysis::BisectionOutcome::kFitted) {
        not_fitted.push_back(result->sweep.values[i]);
      }
    }
    if (not_fitted.empty()) return kExitOk;
    // Written to a file, the output does not say on the terminal why the exit status is 1.
    if (!f_.output.empty()) {
      std::cerr << "viosim: " << refit_spec_.field << " not fitted at " << spec->field << " = "
                << absl::StrJoin(not_fitted, ", ") << "\n";
    }
    return kExitCheckFailed;
  }

 private:
  CLI::App* cmd_ = nullptr;
  SharedFlags f_;
  double precision_ = 0;
  std::string path_;
  std::vector<std::string> over_;
  std::vector<std::string> variants_, metrics_;
  std::string refit_cell_, refit_range_;
  analysis::CalibrateSpec refit_spec_;
  CLI::Option* refit_opt_ = nullptr;
  FitFlags refit_flags_{};
  ShardFlags shard_;
  std::string report_;
  CLI::Option* report_opt_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> SweepCommand() { return std::make_unique<SweepCmd>(); }

}  // namespace cli
