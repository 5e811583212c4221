// `viosim teach` as a Command: the flags and the page are teach.h's; this
// loads the scenario and writes the page.
#include <memory>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/reads.h"
#include "analysis/shard.h"
#include "cli/command.h"
#include "cli/common.h"
#include "cli/teach.h"
#include "scenarios/loader.h"

namespace cli {
namespace {

using analysis::kVersion;

class TeachCmd : public Command {
 public:
  void Add(CLI::App& app) override { cmd_ = AddTeach(&app, &f_); }

  bool Chosen() const override { return static_cast<bool>(*cmd_); }

  std::optional<std::string> SeedText() const override {
    if (!f_.seed_set) return std::nullopt;
    return f_.seed;
  }

  int Run() override {
    if (absl::Status s = CheckWritable(f_.output); !s.ok()) return Fail(s);
    absl::StatusOr<viosim::ScenarioFile> file = LoadScenario(f_.scenario, TeachOverrides(f_));
    if (!file.ok()) return Fail(file.status());
    if (absl::Status s = analysis::CheckPathsRead(*file, {}, TeachOverrides(f_)); !s.ok()) return Fail(s);
    absl::StatusOr<std::string> page = MakeTeachPage(f_, *file, kVersion);
    if (!page.ok()) return Fail(page.status());
    SharedFlags out_flags;
    out_flags.output = f_.output;
    return Emit(out_flags, *page);
  }

 private:
  CLI::App* cmd_ = nullptr;
  TeachFlags f_;
};

}  // namespace

std::unique_ptr<Command> TeachCommand() { return std::make_unique<TeachCmd>(); }

}  // namespace cli
