// `viosim run`: a scenario's variants and a readable report of them, with
// the gains of one pair, a Chrome/Perfetto trace and the simulator's speed
// on request.
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
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
#include "analysis/format.h"
#include "analysis/gains.h"
#include "analysis/reads.h"
#include "analysis/runner.h"
#include "cli/command.h"
#include "cli/common.h"
#include "cli/shard_flags.h"
#include "scenarios/builder.h"
#include "scenarios/loader.h"

namespace cli {
namespace {

std::string TracePath(const std::string& base, const std::string& variant, bool several) {
  if (!several) return base;
  std::filesystem::path p(base);
  std::filesystem::path out = p.parent_path() / absl::StrCat(p.stem().string(), ".", variant, p.extension().string());
  return out.string();
}

class RunCmd : public Command {
 public:
  void Add(CLI::App& app) override {
    cmd_ = app.add_subcommand("run", "Run a scenario's variants and print a readable report");
    AddPrecision(cmd_, &precision_);
    cmd_->add_option("scenario", path_, "Scenario file (.textproto)")->required()->type_name("SCENARIO");
    cmd_->add_option("--variant,-v", variants_, "Variant to run (repeatable; default: all)")->type_name("NAME");
    cmd_->add_option("--compare", compare_,
                     "The pair whose gains (ratio and difference per metric, 95% intervals from paired batches) to "
                     "print, B against A, the ratio B/A (default: the second of exactly two variants against the "
                     "first)")
        ->type_name("B/A");
    cmd_->add_option("--alternative", alternative_,
                     "Run under the scenario's alternative NAME (a model choice the sources leave open: its overlay "
                     "over every variant)")
        ->type_name("NAME");
    OutputPath(cmd_->add_option("--trace", trace_path_,
                                "Write a Chrome/Perfetto JSON trace of the first 1ms of the measured window to "
                                "FILE (FILE.<variant>.json when several variants run)")
                   ->type_name("FILE"));
    cmd_->add_flag("--perf", perf_, "Print wall-clock speed (events and acquisitions per second) to stderr");
    AddShared(cmd_, &f_);
  }

  bool Chosen() const override { return static_cast<bool>(*cmd_); }

  std::optional<std::string> SeedText() const override { return GivenSeed(f_); }

  int Run() override {
    for (const std::string& p : {f_.output, trace_path_}) {
      if (absl::Status s = CheckWritable(p); !s.ok()) return Fail(s);
    }
    absl::StatusOr<viosim::ScenarioFile> file = LoadScenario(path_, Overrides(f_));
    if (!file.ok()) return Fail(file.status());
    if (!alternative_.empty()) {
      file = viosim::UnderAlternative(*file, alternative_);
      if (!file.ok()) return Fail(file.status());
    }
    std::vector<std::string> variants = variants_.empty() ? viosim::VariantNames(*file) : variants_;
    if (absl::Status s = analysis::CheckPathsRead(*file, variants, Overrides(f_)); !s.ok()) return Fail(s);
    analysis::RunRequest req;
    req.overrides = Overrides(f_);
    req.jobs = f_.jobs;
    req.options.trace = !trace_path_.empty();
    req.options.precision = precision_;
    const auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<viosim::VariantResult>> results = analysis::RunVariants(*file, variants, req);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!results.ok()) return Fail(results.status());
    if (perf_) {
      for (const auto& r : *results) {
        uint64_t acq = 0;
        for (const auto& l : r.locks) acq += l.acquisitions;
        std::cerr << absl::StrFormat(
            "perf: variant %s: %d events, %d lock acquisitions measured; all variants took %.3f s wall "
            "(--jobs %d)\n",
            r.variant, r.events, acq, wall, f_.jobs);
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
    if (!trace_path_.empty()) {
      for (const auto& r : *results) {
        const std::string path = TracePath(trace_path_, r.variant, results->size() > 1);
        struct stat st;
        const bool replaceable = ::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode);
        if (absl::Status s = WriteFileAtomically(path, r.trace_json); !s.ok()) {
          remove_traces();
          return Fail(s);
        }
        if (replaceable) traces_written.push_back(path);
      }
    }
    absl::StatusOr<std::optional<analysis::Comparison>> gains = analysis::CompareOf(*results, compare_);
    if (!gains.ok()) return Fail(gains.status());
    const int emitted = Emit(f_, analysis::FormatRun(file->scenario.name(), file->scenario.description(), *results,
                                                     ToFormat(f_.format), gains->has_value() ? &**gains : nullptr));
    if (emitted != kExitOk) remove_traces();
    return emitted;
  }

 private:
  CLI::App* cmd_ = nullptr;
  SharedFlags f_;
  double precision_ = 0;
  std::string path_;
  std::vector<std::string> variants_;
  std::string compare_;
  std::string alternative_;
  std::string trace_path_;
  bool perf_ = false;
};

}  // namespace

std::unique_ptr<Command> RunCommand() { return std::make_unique<RunCmd>(); }

}  // namespace cli
