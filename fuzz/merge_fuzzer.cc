// Fuzz target: the part files `viosim merge` reads (the JSON lines of
// `--shard K/N --format jsonl`) through MergeShards: the JSON reader, the
// checks that every part comes from one invocation of one binary on
// unchanged scenario files, the invocation read back and re-planned
// (BuildPointSet, which loads the scenarios it names, and PlanBands for a
// bands part), every point's fields, and the rendering. Any text must give
// the merged output or an error; never a crash, a hang or an abort.
//
// The input is split at its first form feed into two part files, so that
// parts disagreeing with each other are reached as well as lines within
// one part. The input's length modulo three picks the output format.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/format.h"
#include "analysis/shard.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<std::string, std::string>> files;
  if (const size_t ff = text.find('\f'); ff != std::string::npos) {
    files.emplace_back("part-a.jsonl", text.substr(0, ff));
    files.emplace_back("part-b.jsonl", text.substr(ff + 1));
  } else {
    files.emplace_back("part-a.jsonl", text);
  }
  static constexpr analysis::Format kFormats[] = {analysis::Format::kText, analysis::Format::kJson,
                                                  analysis::Format::kCsv};
  const analysis::Format f = kFormats[size % 3];
  // The binary's own version, which the seed parts carry: inputs get past
  // the version check to the checks after it.
  (void)analysis::MergeShards(files, f, analysis::kVersion);
  return 0;
}
