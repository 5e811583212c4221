// Runs the `viosim` binary from a test (a data dependency at cli/viosim)
// and collects its exit status, stdout and stderr; scratch files under the
// test's temporary folder.
#ifndef VIOSIM_TESTS_CLI_RUN_VIOSIM_H_
#define VIOSIM_TESTS_CLI_RUN_VIOSIM_H_

#include <string>

namespace clitest {

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

// The whole file, or "" when it cannot be read.
std::string ReadAll(const std::string& path);

// $TEST_TMPDIR, else /tmp.
std::string TmpDir();

// Writes `text` to TmpDir()/name and returns the path.
std::string WriteTmp(const std::string& name, const std::string& text);

// Runs viosim with `args` (already shell-quoted where needed).
Result Viosim(const std::string& args);

}  // namespace clitest

#endif  // VIOSIM_TESTS_CLI_RUN_VIOSIM_H_
