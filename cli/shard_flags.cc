#include "cli/shard_flags.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "scenarios/input_file.h"

namespace cli {

CLI::Option* OutputPath(CLI::Option* o) {
  static const CLI::Validator kOutputPath(
      [](std::string& path) -> std::string {
        if (path.empty()) return "an empty path names no file";
        const std::filesystem::path p(path);
        std::error_code ec;
        if (p.has_parent_path() && !std::filesystem::is_directory(p.parent_path(), ec)) {
          return absl::StrCat("'", path, "': directory '", p.parent_path().string(), "' does not exist");
        }
        return "";
      },
      "", "OUTPUT");
  return o->group(kOutputGroup)->check(kOutputPath);
}

void AddShardFlags(CLI::App* cmd, ShardFlags* f) {
  cmd->add_flag("--list", f->list, "Print the id of each point this command runs, one a line, and run nothing");
  cmd->add_option("--shard", f->shard,
                  "Run only shard K of N (the points whose index modulo N is K) and write their results as "
                  "JSON lines (needs --format jsonl); `viosim merge` joins the parts")
      ->type_name("K/N");
  CLI::Option* format = cmd->get_option("--format");
  format->get_validator()->active(false);
  format->check(CLI::IsMember({"text", "json", "csv", "jsonl"}));
  format->description("Output format (jsonl: one line per point, for `viosim merge`)");
}

bool Sharded(const ShardFlags& f, const std::string& format) {
  return f.list || !f.shard.empty() || format == "jsonl";
}

absl::StatusOr<std::string> RunSharded(const analysis::Invocation& inv, const ShardFlags& f,
                                       const std::string& format, int jobs, absl::string_view version) {
  analysis::ShardSpec shard;
  if (!f.shard.empty()) {
    absl::StatusOr<analysis::ShardSpec> s = analysis::ParseShard(f.shard);
    if (!s.ok()) return s.status();
    shard = *s;
  }
  if (!f.list && format != "jsonl") {
    return absl::InvalidArgumentError(absl::StrCat("--shard ", f.shard, " writes one JSON line per point: add "
                                                   "--format jsonl (and join the parts with `viosim merge`)"));
  }
  absl::StatusOr<analysis::PointSet> set = analysis::BuildPointSet(inv);
  if (!set.ok()) return set.status();
  if (static_cast<size_t>(shard.n) > set->ids.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--shard ", f.shard, ": N is more than the ", set->ids.size(),
                                                   " points (see --list)"));
  }
  if (f.list) {
    std::string out;
    for (size_t i = 0; i < set->ids.size(); ++i) {
      if (shard.Owns(i)) absl::StrAppend(&out, set->ids[i], "\n");
    }
    return out;
  }
  return analysis::RunShard(inv, *set, shard, jobs, version);
}

CLI::App* AddMerge(CLI::App* app, MergeFlags* f) {
  CLI::App* merge = app->add_subcommand(
      "merge", "Join the JSON lines of sharded runs (--shard K/N --format jsonl) into the whole command's output");
  merge->add_option("files", f->files, "Parts written by the shards, in any order")->required()->type_name("FILE");
  merge->add_option("--format", f->format, "Output format, as the unsharded command takes it")
      ->check(CLI::IsMember({"text", "json", "csv"}))
      ->capture_default_str();
  OutputPath(merge->add_option("--output,-o", f->output,
                               "Write the output to FILE (whole or not at all) instead of stdout")
                 ->type_name("FILE"));
  return merge;
}

absl::StatusOr<analysis::Rendered> RunMerge(const MergeFlags& f, absl::string_view version) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const std::string& path : f.files) {
    absl::StatusOr<std::string> text = viosim::ReadInputFile(path, "part");
    if (!text.ok()) return absl::InvalidArgumentError(text.status().message());
    // A part is viosim's own JSON, UTF-8 throughout: any other byte is damage.
    if (const std::string what = viosim::Utf8Problem(*text); !what.empty()) {
      const size_t valid = viosim::ValidUtf8Prefix(*text);
      const size_t line = 1 + static_cast<size_t>(std::count(text->begin(), text->begin() + valid, '\n'));
      return absl::InvalidArgumentError(absl::StrCat(path, ":", line, ": ", what));
    }
    files.emplace_back(path, *std::move(text));
  }
  const analysis::Format format = f.format == "json"  ? analysis::Format::kJson
                                  : f.format == "csv" ? analysis::Format::kCsv
                                                      : analysis::Format::kText;
  return analysis::MergeShards(files, format, version);
}

}  // namespace cli
