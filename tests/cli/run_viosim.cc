#include "tests/cli/run_viosim.h"

#include <sys/wait.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace clitest {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t != nullptr ? t : "/tmp";
}

std::string WriteTmp(const std::string& name, const std::string& text) {
  const std::string path = absl::StrCat(TmpDir(), "/", name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

Result Viosim(const std::string& args) {
  static std::atomic<int> n{0};
  const int call = n++;
  const std::string out = absl::StrCat(TmpDir(), "/stdout.", call), err = absl::StrCat(TmpDir(), "/stderr.", call);
  const std::string cmd = absl::StrCat("cli/viosim ", args, " >", out, " 2>", err);
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadAll(out);
  r.err = ReadAll(err);
  return r;
}

}  // namespace clitest
