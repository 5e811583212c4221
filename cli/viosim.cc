// viosim: the command line. Parses flags (CLI11), calls the analysis layer,
// and is the only part of viosim that writes to the terminal or to files.
// Each subcommand is a cli::Command (command.h), in a file of its own.
//
// Exit status: 0 success, 1 a gate or check failed, 2 bad usage or bad input.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analysis/shard.h"
#include "cli/command.h"
#include "cli/common.h"
#include "scenarios/loader.h"

int main(int argc, char** argv) {
  // Under `bazel run`, resolve relative paths from where the user ran it.
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY"); wd != nullptr && *wd != '\0') {
    if (chdir(wd) != 0) std::cerr << "viosim: cannot enter " << wd << "\n";
  }

  CLI::App app{"viosim: a deterministic discrete-event simulator of the virtualized I/O stack"};
  app.set_version_flag("--version", analysis::kVersion);
  app.require_subcommand(1);

  // In the order `viosim --help` lists them.
  std::vector<std::unique_ptr<cli::Command>> commands;
  commands.push_back(cli::RunCommand());
  commands.push_back(cli::SweepCommand());
  commands.push_back(cli::CalibrateCommand());
  commands.push_back(cli::ListCommand());
  commands.push_back(cli::ReproduceCommand());
  commands.push_back(cli::MergeCommand());
  commands.push_back(cli::GateCommand());
  commands.push_back(cli::ExplainCommand());
  commands.push_back(cli::FioCommand());
  commands.push_back(cli::TeachCommand());
  for (const std::unique_ptr<cli::Command>& command : commands) command->Add(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? cli::kExitOk : cli::kExitBadInput;
  }
  for (const std::unique_ptr<cli::Command>& command : commands) {
    if (!command->Chosen()) continue;
    // --seed N is --set run.seed=N: one rule for both, checked before anything runs.
    if (const std::optional<std::string> seed = command->SeedText(); seed.has_value()) {
      viosim::Scenario scratch;
      if (absl::Status s = viosim::ApplyOverride(&scratch, absl::StrCat("run.seed=", *seed), "--seed"); !s.ok()) {
        return cli::Fail(s);
      }
    }
    return command->Run();
  }
  return cli::kExitBadInput;  // not reached: the parse requires one subcommand
}
