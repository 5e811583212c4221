#ifndef VIOSIM_SCENARIOS_INPUT_FILE_H_
#define VIOSIM_SCENARIOS_INPUT_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace viosim {

// The most bytes any input file may hold (scenario, fio job file, include,
// baseline): 16 MiB, hundreds of times the largest file the project ships.
// A larger file is refused before it is read, so a device that never ends
// (/dev/zero) cannot grow memory without bound.
inline constexpr int64_t kMaxInputFileBytes = int64_t{16} << 20;

// Reads the whole of `path`, which must name a regular file (a FIFO, a
// device or a directory is refused: it may never end) of at most
// kMaxInputFileBytes. `what` names the file in messages ("scenario file").
// NotFound if it cannot be opened, InvalidArgument if it is not a regular
// file or too large.
absl::StatusOr<std::string> ReadInputFile(const std::string& path,
                                          absl::string_view what);

// Empty if `text` is valid UTF-8, else what is wrong, naming the first
// byte that is not, e.g. "not valid UTF-8: byte 0xff at byte 3". Every
// string an input gives viosim is shown again (messages, JSON output), so
// every input's strings must be UTF-8: scenario, baseline and fio job files
// and --set values.
std::string Utf8Problem(absl::string_view text);

// The length of the longest prefix of `text` that is valid UTF-8 (the
// byte Utf8Problem names is the one after it; text.size() if valid).
size_t ValidUtf8Prefix(absl::string_view text);

}  // namespace viosim

#endif  // VIOSIM_SCENARIOS_INPUT_FILE_H_
