// Fuzz target: fio's job-file language (sections, options, include
// directives, ${VAR} expansion) through the job parser, and the same bytes
// split at spaces as fio's command-line form. Any text must give jobs or an
// error; never a crash, a hang or an abort.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "scenarios/fio_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Includes are looked up in the corpus folder, which holds job files.
  (void)fio::ParseJobText("fuzz.fio", text, "fuzz/corpus/fio");
  std::vector<std::string> args;
  for (absl::string_view a : absl::StrSplit(text, absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
    if (args.size() >= 64) break;
    args.emplace_back(a);
  }
  (void)fio::ParseCommandLine(args);
  return 0;
}
