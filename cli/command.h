// One subcommand of viosim: it adds itself and its flags to the command
// line, and runs when the parse chose it. main (viosim.cc) creates every
// command, in the order `viosim --help` lists them.
#ifndef VIOSIM_CLI_COMMAND_H_
#define VIOSIM_CLI_COMMAND_H_

#include <memory>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"

namespace cli {

class Command {
 public:
  virtual ~Command() = default;
  // Creates the subcommand on `app` with its flags.
  virtual void Add(CLI::App& app) = 0;
  // True when the parse chose this subcommand.
  virtual bool Chosen() const = 0;
  // --seed as given (checked by the rule of --set run.seed= before anything
  // runs); nullopt when not given.
  virtual std::optional<std::string> SeedText() const = 0;
  // Runs the command; returns the exit status.
  virtual int Run() = 0;
};

std::unique_ptr<Command> RunCommand();        // cmd_run.cc
std::unique_ptr<Command> SweepCommand();      // cmd_sweep.cc
std::unique_ptr<Command> CalibrateCommand();  // cmd_calibrate.cc
std::unique_ptr<Command> ListCommand();       // cmd_list.cc
std::unique_ptr<Command> ReproduceCommand();  // cmd_reproduce.cc
std::unique_ptr<Command> MergeCommand();      // cmd_merge.cc
std::unique_ptr<Command> GateCommand();       // cmd_reproduce.cc
std::unique_ptr<Command> ExplainCommand();    // cmd_explain.cc
std::unique_ptr<Command> FioCommand();        // cmd_fio.cc
std::unique_ptr<Command> TeachCommand();      // cmd_teach.cc

}  // namespace cli

#endif  // VIOSIM_CLI_COMMAND_H_
