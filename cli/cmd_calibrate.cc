// `viosim calibrate`: one field fitted by bisection so that a variant
// reproduces its published CALIBRATION cell; exit 1 when it is not fitted.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/calibrate.h"
#include "analysis/format.h"
#include "analysis/reads.h"
#include "analysis/runner.h"
#include "cli/command.h"
#include "cli/common.h"
#include "scenarios/loader.h"

namespace cli {
namespace {

class CalibrateCmd : public Command {
 public:
  void Add(CLI::App& app) override {
    cmd_ = app.add_subcommand(
        "calibrate", "Fit one field so that a variant reproduces its published CALIBRATION cell, by bisection");
    cmd_->add_option("scenario", path_, "Scenario file (.textproto)")->required()->type_name("SCENARIO");
    cmd_->add_option("--fit", spec_.field,
                     "Field path (as --set takes it) holding a duration or a number, e.g. "
                     "platform.kvm.mmio_exit_user.value")
        ->required()
        ->type_name("FIELD");
    const FitFlags flags = AddFitFlags(cmd_, &spec_, &cell_, &range_);
    flags.cell->required();
    flags.range->required();
    AddShared(cmd_, &f_);
    cmd_->remove_option(cmd_->get_option("--jobs"));  // the search is sequential
  }

  bool Chosen() const override { return static_cast<bool>(*cmd_); }

  std::optional<std::string> SeedText() const override { return GivenSeed(f_); }

  int Run() override {
    if (absl::Status s = CheckWritable(f_.output); !s.ok()) return Fail(s);
    if (absl::Status s = analysis::ParseCellAndRange(cell_, range_, &spec_); !s.ok()) return Fail(s);
    absl::StatusOr<viosim::ScenarioFile> file = LoadScenario(path_, Overrides(f_));
    if (!file.ok()) return Fail(file.status());
    if (absl::Status s = analysis::CheckPathsRead(*file, {}, Overrides(f_)); !s.ok()) return Fail(s);
    analysis::RunRequest req;
    req.overrides = Overrides(f_);
    absl::StatusOr<analysis::Calibration> c = analysis::Calibrate(*file, spec_, req);
    if (!c.ok()) return Fail(c.status());
    const int emitted = Emit(f_, analysis::FormatCalibration(*c, ToFormat(f_.format)));
    if (emitted != kExitOk) return emitted;
    if (c->search.outcome == analysis::BisectionOutcome::kFitted) return kExitOk;
    // Written to a file, the output does not say on the terminal why the exit status is 1.
    if (!f_.output.empty()) std::cerr << "viosim: " << analysis::CalibrationSummary(*c) << "\n";
    return kExitCheckFailed;
  }

 private:
  CLI::App* cmd_ = nullptr;
  SharedFlags f_;
  std::string path_, cell_, range_;
  analysis::CalibrateSpec spec_;
};

}  // namespace

std::unique_ptr<Command> CalibrateCommand() { return std::make_unique<CalibrateCmd>(); }

}  // namespace cli
