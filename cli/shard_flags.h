// The command-line side of sharding: --list, --shard K/N and --format
// jsonl for commands made of independent points, and `viosim merge`.
// Returns text; the commands (command.h) decide where it goes.
#ifndef VIOSIM_CLI_SHARD_FLAGS_H_
#define VIOSIM_CLI_SHARD_FLAGS_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analysis/shard.h"

namespace cli {

// The help group of every flag that names a file or directory viosim
// writes (--output, --trace, --report, --baseline): each is checked by
// OutputPath's rule when the command line is read, before anything runs.
inline constexpr char kOutputGroup[] = "Output";

// Puts `o` in kOutputGroup and refuses, as bad usage, a value that is empty
// (it names no file: `--output ''` must not mean standard output) or whose
// directory does not exist. Returns `o`.
CLI::Option* OutputPath(CLI::Option* o);

struct ShardFlags {
  bool list = false;
  std::string shard;  // "K/N" as given; empty: not asked
};

// Adds --list and --shard to `cmd` and lets its --format (added before)
// also take "jsonl".
void AddShardFlags(CLI::App* cmd, ShardFlags* f);

// True when the command is to list or run points rather than print its
// usual output: --list, --shard or --format jsonl.
bool Sharded(const ShardFlags& f, const std::string& format);

// --list: the ids (of the points --shard owns, when given). Otherwise the
// JSON lines of the points --shard owns (all of them without --shard),
// which needs --format jsonl.
absl::StatusOr<std::string> RunSharded(const analysis::Invocation& inv, const ShardFlags& f,
                                       const std::string& format, int jobs, absl::string_view version);

struct MergeFlags {
  std::vector<std::string> files;
  std::string format = "text";
  std::string output;
};

CLI::App* AddMerge(CLI::App* app, MergeFlags* f);

// Reads every file and merges them (analysis::MergeShards).
absl::StatusOr<analysis::Rendered> RunMerge(const MergeFlags& f, absl::string_view version);

}  // namespace cli

#endif  // VIOSIM_CLI_SHARD_FLAGS_H_
