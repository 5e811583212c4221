// `viosim explain`: every costed field ranked by the elasticity of one
// metric to it, beside the mechanism view (analysis/explain.h); with
// --ideal, the most each lock or hot cache line could move the metric.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "analysis/explain.h"
#include "analysis/format.h"
#include "analysis/ideal.h"
#include "analysis/reads.h"
#include "analysis/runner.h"
#include "cli/command.h"
#include "cli/common.h"
#include "cli/report_dir.h"
#include "cli/shard_flags.h"
#include "scenarios/loader.h"

namespace cli {
namespace {

class ExplainCmd : public Command {
 public:
  void Add(CLI::App& app) override {
    cmd_ = app.add_subcommand(
        "explain", "Rank every costed field by the elasticity of a metric to it, beside the mechanism view");
    cmd_->add_option("scenario", path_, "Scenario file (.textproto)")->required()->type_name("SCENARIO");
    cmd_->add_option("--variant,-v", spec_.variant, "Variant to explain (default: the file's first)")
        ->type_name("NAME");
    cmd_->add_option("--metric,-m", spec_.metric, "Metric (default: iops if reported, else the first)")
        ->type_name("NAME");
    cmd_->add_option("--field", spec_.fields,
                     "Vary only the costed fields whose path starts with this (repeatable; default: all)")
        ->type_name("PREFIX");
    cmd_->add_option("--step", step_, "Relative step each cost takes both ways, e.g. 10% or 0.05")
        ->capture_default_str()
        ->type_name("S");
    ideal_opt_ = cmd_->add_option("--ideal", ideal_,
                                  "Instead of elasticities: the most each lock, wait-queue lock, mutex and hot cache "
                                  "line could move the metric, each made ideal in turn (or only NAME, as lock_stat "
                                  "names it)")
                     ->expected(0, 1)
                     ->type_name("[NAME]");
    AddShared(cmd_, &f_);
    report_opt_ = OutputPath(cmd_->add_option("--report", report_, kReportHelp)->type_name("DIR"));
  }

  bool Chosen() const override { return static_cast<bool>(*cmd_); }

  std::optional<std::string> SeedText() const override { return GivenSeed(f_); }

  int Run() override {
    if (absl::Status s = CheckWritable(f_.output); !s.ok()) return Fail(s);
    absl::StatusOr<double> step = analysis::ParseStep(step_);
    if (!step.ok()) return Fail(step.status());
    spec_.step = *step;
    absl::StatusOr<std::string> plotter = PrepareReport(report_opt_, report_);
    if (!plotter.ok()) return Fail(plotter.status());
    absl::StatusOr<viosim::ScenarioFile> file = LoadScenario(path_, Overrides(f_));
    if (!file.ok()) return Fail(file.status());
    if (absl::Status s = analysis::CheckPathsRead(*file, {}, Overrides(f_)); !s.ok()) return Fail(s);
    analysis::RunRequest req;
    req.overrides = Overrides(f_);
    req.jobs = f_.jobs;
    if (ideal_opt_->count() > 0) {
      for (const CLI::Option* o : {cmd_->get_option("--field"), cmd_->get_option("--step"), report_opt_}) {
        if (o->count() > 0) {
          return Fail(absl::InvalidArgumentError(absl::StrCat(o->get_name(), " is for elasticities, not --ideal")));
        }
      }
      absl::StatusOr<analysis::IdealExplanation> ideal =
          analysis::ExplainIdeal(*file, spec_.variant, spec_.metric, ideal_.empty() ? "" : ideal_.front(), req);
      if (!ideal.ok()) return Fail(ideal.status());
      return Emit(f_, analysis::FormatIdeal(*ideal, ToFormat(f_.format)));
    }
    absl::StatusOr<analysis::Explanation> x = analysis::Explain(*file, spec_, req);
    if (!x.ok()) return Fail(x.status());
    if (report_opt_->count() > 0) {
      const std::string json = analysis::FormatExplanation(*x, analysis::Format::kJson);
      if (absl::Status s = viosim_cli::WriteReportDir(*plotter, "explain", json, report_); !s.ok()) {
        return Fail(s);
      }
    }
    return Emit(f_, analysis::FormatExplanation(*x, ToFormat(f_.format)));
  }

 private:
  CLI::App* cmd_ = nullptr;
  SharedFlags f_;
  std::string path_, step_ = "10%";
  analysis::ExplainSpec spec_;
  std::vector<std::string> ideal_;
  CLI::Option* ideal_opt_ = nullptr;
  std::string report_;
  CLI::Option* report_opt_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> ExplainCommand() { return std::make_unique<ExplainCmd>(); }

}  // namespace cli
