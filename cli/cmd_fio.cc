// `viosim fio`: an fio job file (or fio's command line) run on a modeled
// stack, answered in fio 3.33's own output formats, with the log files the
// job asks for; exit 1 when a job ends in error, as fio.
#include <filesystem>
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
#include "analysis/fio_output.h"
#include "analysis/reads.h"
#include "cli/command.h"
#include "cli/common.h"
#include "cli/fio_logs.h"
#include "cli/shard_flags.h"
#include "models/fio/job.h"
#include "models/fio/stats.h"
#include "scenarios/checks.h"
#include "scenarios/default_stack.h"
#include "scenarios/fio_builder.h"
#include "scenarios/fio_parser.h"
#include "scenarios/loader.h"

namespace cli {
namespace {

class FioCmd : public Command {
 public:
  void Add(CLI::App& app) override {
    cmd_ = app.add_subcommand(
        "fio", "Run an fio job file on a modeled stack and answer in fio 3.33's own output formats");
    cmd_->add_option("job", job_,
                     "fio job file, or after `--` the job as fio's command line (--name=x --rw=randread ...)")
        ->required()
        ->type_name("JOB.fio");
    cmd_->add_option("--stack", stack_,
                     "Scenario describing the stack to run on (default: scenarios/baremetal_optane.textproto, "
                     "built in when not found)")
        ->type_name("SCENARIO");
    cmd_->add_option("--variant,-v", variant_,
                     "Run on this variant of the stack scenario (default: the scenario as written, its base)")
        ->type_name("NAME");
    cmd_->add_option("--output-format", format_, "fio's output format")
        ->check(CLI::IsMember({"normal", "json", "json+", "terse"}))
        ->capture_default_str();
    cmd_->add_option("--target-ci", target_,
                     "Stop once IOPS is steady within this 95% half-width, percent of the mean (default: "
                     "the stack's workload.fio.target_ci_pct, 1)")
        ->check(kFinite)
        ->check(CLI::Range(0.01, 100.0))
        ->type_name("PCT");
    cmd_->add_flag("--full", full_, "Simulate the full length the job asks for (no steady-state stop)");
    cmd_->add_option("--set", sets_, "Override a scalar field of the stack scenario by path")
        ->type_name("PATH=VALUE");
    cmd_->add_option_function<std::string>(
            "--seed", [this](const std::string& v) { seed_ = v, seed_set_ = true; },
            "Random seed (overrides run.seed)")
        ->type_name("N");
    OutputPath(cmd_->add_option("--output,-o", output_, "Write the output to FILE (whole or not at all)")
                   ->type_name("FILE"));
    OutputPath(cmd_->add_option("--log-dir", log_dir_,
                                "Write the job's log files (write_bw_log, write_lat_log, write_iops_log, "
                                "write_hist_log) into DIR, all whole or none (fio writes them in its working "
                                "directory)")
                   ->capture_default_str()
                   ->type_name("DIR"));
  }

  bool Chosen() const override { return static_cast<bool>(*cmd_); }

  std::optional<std::string> SeedText() const override {
    if (!seed_set_) return std::nullopt;
    return seed_;
  }

  int Run() override {
    if (absl::Status s = CheckWritable(output_); !s.ok()) return Fail(s);
    absl::StatusOr<fio::JobFile> jobs =
        job_.size() == 1 && job_[0].rfind("--", 0) != 0 ? fio::ParseJobFile(job_[0]) : fio::ParseCommandLine(job_);
    if (!jobs.ok()) return Fail(jobs.status());
    if (absl::Status s = viosim_cli::CheckLogDir(log_dir_, *jobs); !s.ok()) return Fail(s);
    const std::string job_name = job_.size() == 1 ? job_[0] : std::string(fio::kCommandLineSource);
    std::vector<std::string> overrides = sets_;
    if (seed_set_) overrides.insert(overrides.begin(), absl::StrCat("run.seed=", seed_));
    absl::StatusOr<viosim::ScenarioFile> file;
    std::error_code ec;
    if (stack_.empty() && !std::filesystem::exists(viosim::kDefaultStackPath, ec)) {
      file = viosim::ParseScenarioText(absl::StrCat("<built-in ", viosim::kDefaultStackPath, ">"),
                                       viosim::kDefaultStackText);
      if (file.ok()) {
        if (absl::Status s = viosim::ApplyFileOverrides(&*file, overrides); !s.ok()) return Fail(s);
      }
    } else {
      file = LoadScenario(stack_.empty() ? viosim::kDefaultStackPath : stack_, overrides);
    }
    if (!file.ok()) return Fail(file.status());
    absl::StatusOr<viosim::Scenario> stack =
        viosim::ResolveVariant(*file, variant_.empty() ? std::string(viosim::kBaseVariant) : variant_, overrides);
    if (!stack.ok()) return Fail(stack.status());
    viosim::FioRunOptions opts;
    if (full_) opts.target_ci_pct = 0;
    if (target_ > 0) opts.target_ci_pct = target_;
    if (absl::Status s = viosim::CheckJobsOnStack(*file, overrides, *stack, *jobs, opts.target_ci_pct); !s.ok()) {
      return Fail(s);
    }
    absl::StatusOr<viosim::ReadSet> reads = viosim::FioReads(*stack, *jobs, opts);
    if (!reads.ok()) return Fail(reads.status());
    if (absl::Status s =
            analysis::CheckSetsIn(*reads, sets_, absl::StrCat("the stack of ", file->path, " running ", job_name));
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
    if (format_ == "normal") {
      text = fio::FormatNormal(*report);
    } else if (format_ == "terse") {
      text = fio::FormatTerse(*report);
    } else {
      text = fio::FormatJson(*report, format_ == "json+");
    }
    if (absl::Status s = viosim_cli::WriteLogFiles(log_dir_, report->logs); !s.ok()) return Fail(s);
    for (const std::string& m : report->messages) std::cerr << m << "\n";
    SharedFlags out_flags;
    out_flags.output = output_;
    const int emitted = Emit(out_flags, text);
    if (emitted != kExitOk) return emitted;
    // As fio: a job that ended in error (a rate floor not met) exits 1.
    for (const fio::ThreadStat& ts : report->entities) {
      if (ts.error != 0) return kExitCheckFailed;
    }
    return kExitOk;
  }

 private:
  CLI::App* cmd_ = nullptr;
  std::vector<std::string> job_;
  std::string stack_;
  std::string variant_;
  std::string format_ = "normal";
  double target_ = -1;
  bool full_ = false;
  std::vector<std::string> sets_;
  std::string output_;
  std::string seed_;
  bool seed_set_ = false;
  std::string log_dir_ = ".";
};

}  // namespace

std::unique_ptr<Command> FioCommand() { return std::make_unique<FioCmd>(); }

}  // namespace cli
