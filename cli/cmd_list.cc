// `viosim list`: every scenario under scenarios/, or one scenario's
// variants, metrics and published values, or with --params every parameter
// each variant reads.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/format.h"
#include "analysis/params_list.h"
#include "analysis/published.h"
#include "analysis/reads.h"
#include "analysis/runner.h"
#include "cli/command.h"
#include "cli/common.h"
#include "scenarios/builder.h"
#include "scenarios/loader.h"

namespace cli {
namespace {

class ListCmd : public Command {
 public:
  void Add(CLI::App& app) override {
    cmd_ = app.add_subcommand("list", "Show a scenario's variants, metrics and published values");
    cmd_->add_option("scenario", path_, "Scenario file (default: list every scenario under scenarios/)")
        ->type_name("SCENARIO");
    cmd_->add_flag("--params", params_,
                   "Every parameter each variant reads: its --set path, value, kind (MEASURED, DERIVED, ESTIMATED, "
                   "FITTED, DEFINED), source and the range the bands draw it from");
    cmd_->add_option("--variant,-v", variants_, "With --params: only this variant (repeatable)")->type_name("NAME");
    AddShared(cmd_, &f_);
  }

  bool Chosen() const override { return static_cast<bool>(*cmd_); }

  std::optional<std::string> SeedText() const override { return GivenSeed(f_); }

  int Run() override {
    if (absl::Status s = CheckWritable(f_.output); !s.ok()) return Fail(s);
    if (path_.empty() && (params_ || !variants_.empty())) {
      return Fail(absl::InvalidArgumentError("--params and --variant need a SCENARIO"));
    }
    if (path_.empty()) {
      absl::StatusOr<std::vector<std::string>> paths = analysis::ScenarioFiles(DefaultScenarioDir());
      if (!paths.ok()) return Fail(paths.status());
      std::vector<viosim::ScenarioFile> files;
      for (const std::string& p : *paths) {
        absl::StatusOr<viosim::ScenarioFile> file = LoadScenario(p, Overrides(f_));
        if (!file.ok()) return Fail(file.status());
        files.push_back(*std::move(file));
      }
      return Emit(f_, analysis::FormatScenarioIndex(*paths, files, ToFormat(f_.format)));
    }
    absl::StatusOr<viosim::ScenarioFile> file = LoadScenario(path_, Overrides(f_));
    if (!file.ok()) return Fail(file.status());
    if (!variants_.empty() && !params_) {
      return Fail(absl::InvalidArgumentError("--variant is for --params (the parameters of that variant)"));
    }
    if (params_) {
      if (absl::Status s = analysis::CheckPathsRead(*file, variants_, Overrides(f_)); !s.ok()) return Fail(s);
      absl::StatusOr<std::vector<analysis::VariantParams>> params =
          analysis::ListParams(*file, variants_, Overrides(f_));
      if (!params.ok()) return Fail(params.status());
      return Emit(f_, analysis::FormatParams(*file, *params, ToFormat(f_.format)));
    }
    // Every variant is resolved, as `run` would: list accepts only what run accepts.
    absl::StatusOr<viosim::Scenario> base = absl::UnknownError("no variant");
    for (const std::string& v : viosim::VariantNames(*file)) {
      absl::StatusOr<viosim::Scenario> resolved = viosim::ResolveVariant(*file, v, Overrides(f_));
      if (!resolved.ok()) return Fail(resolved.status());
      if (!base.ok()) base = *std::move(resolved);
    }
    std::vector<double> references;
    for (const viosim::Published& p : file->scenario.published()) {
      absl::StatusOr<viosim::Scenario> resolved = viosim::ResolveVariant(*file, p.variant(), Overrides(f_));
      if (!resolved.ok()) return Fail(resolved.status());
      absl::StatusOr<double> ref = analysis::ReferenceValue(p, *resolved);
      if (!ref.ok()) return Fail(ref.status());
      references.push_back(*ref);
    }
    return Emit(f_, analysis::FormatList(*file, viosim::MetricNames(*base), references, ToFormat(f_.format)));
  }

 private:
  CLI::App* cmd_ = nullptr;
  SharedFlags f_;
  std::string path_;
  bool params_ = false;
  std::vector<std::string> variants_;
};

}  // namespace

std::unique_ptr<Command> ListCommand() { return std::make_unique<ListCmd>(); }

}  // namespace cli
