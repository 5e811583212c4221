// `viosim merge`: the JSON lines of sharded runs joined into the whole
// command's output (shard_flags.h); exit 1 when that command's check
// failed.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/shard.h"
#include "cli/command.h"
#include "cli/common.h"
#include "cli/shard_flags.h"

namespace cli {
namespace {

using analysis::kVersion;

class MergeCmd : public Command {
 public:
  void Add(CLI::App& app) override { cmd_ = AddMerge(&app, &f_); }

  bool Chosen() const override { return static_cast<bool>(*cmd_); }

  std::optional<std::string> SeedText() const override { return std::nullopt; }

  int Run() override {
    if (absl::Status s = CheckWritable(f_.output); !s.ok()) return Fail(s);
    absl::StatusOr<analysis::Rendered> merged = RunMerge(f_, kVersion);
    if (!merged.ok()) return Fail(merged.status());
    SharedFlags out_flags;
    out_flags.output = f_.output;
    const int emitted = Emit(out_flags, merged->text);
    if (emitted != kExitOk) return emitted;
    // Written to a file, the output does not say on the terminal why the exit status is 1.
    if (merged->check_failed && !f_.output.empty() && !merged->note.empty()) {
      std::cerr << "viosim: " << merged->note << "\n";
    }
    return merged->check_failed ? kExitCheckFailed : kExitOk;
  }

 private:
  CLI::App* cmd_ = nullptr;
  MergeFlags f_;
};

}  // namespace

std::unique_ptr<Command> MergeCommand() { return std::make_unique<MergeCmd>(); }

}  // namespace cli
