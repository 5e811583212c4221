#include "cli/report_dir.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

extern char** environ;

namespace viosim_cli {
namespace {

constexpr char kScript[] =
#include "tools/plot/report_py.inc"
    ;

constexpr char kInstallHint[] =
    "install Debian's python3-matplotlib (tools/setup.sh does), or set VIOSIM_PYTHON to a Python 3 "
    "that has matplotlib";

// Runs argv (argv[0] looked up on PATH when it has no '/') with `env`, its
// stdout to /dev/null and its stderr to `stderr_path` (or /dev/null when
// empty). Returns its exit status, or -1 when it could not start or died
// from a signal.
int Run(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& stderr_path) {
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    const int err =
        stderr_path.empty() ? null : ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (null < 0 || err < 0) ::_exit(127);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(err, 2);
    ::execvpe(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The environment the plotter runs in: the caller's, with matplotlib's
// backend and configuration fixed, so nothing outside the scratch directory
// is read or written and the charts do not depend on a user's settings.
std::vector<std::string> PlotEnv(const std::string& config_dir) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const absl::string_view v(*e);
    if (absl::StartsWith(v, "MPL") || absl::StartsWith(v, "SOURCE_DATE_EPOCH=")) continue;
    env.emplace_back(v.data(), v.size());
  }
  env.push_back("MPLBACKEND=Agg");
  env.push_back(absl::StrCat("MPLCONFIGDIR=", config_dir));
  env.push_back("SOURCE_DATE_EPOCH=0");
  return env;
}

std::string ReadTail(const std::string& path, size_t max_chars) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  if (text.size() > max_chars) text = absl::StrCat("...", text.substr(text.size() - max_chars));
  return text;
}

std::filesystem::path Normalized(const std::string& dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return std::filesystem::path(d);
}

}  // namespace

int RunProcess(const std::vector<std::string>& argv, const std::string& stderr_path, std::string* stderr_tail) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  const int code = Run(argv, env, stderr_path);
  if (stderr_tail != nullptr) *stderr_tail = ReadTail(stderr_path, 2000);
  return code;
}

absl::StatusOr<std::string> FindPlotter() {
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("VIOSIM_PYTHON"); p != nullptr && *p != '\0') {
    candidates.push_back(p);
  } else {
    candidates = {"/usr/bin/python3", "python3"};
  }
  const std::vector<std::string> env = PlotEnv("/nonexistent");
  for (const std::string& python : candidates) {
    if (Run({python, "-I", "-c", "import matplotlib"}, env, "") == 0) return python;
  }
  return absl::FailedPreconditionError(absl::StrCat("--report needs a Python 3 with matplotlib; none of ",
                                                    absl::StrJoin(candidates, ", "), " imports it: ", kInstallHint));
}

absl::Status CheckReportDir(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("--report: empty directory name");
  const std::filesystem::path p = Normalized(dir);
  const std::filesystem::path parent = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(parent, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--report ", dir, ": directory '", parent.string(), "' does not exist"));
  }
  if (::access(parent.c_str(), W_OK) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("--report ", dir, ": directory '", parent.string(),
                                                   "' is not writable: ", std::strerror(errno)));
  }
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) return absl::OkStatus();
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("--report ", dir, ": exists and is not a directory"));
  }
  if (!std::filesystem::exists(p / "report.md", ec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--report ", dir, ": is a directory without report.md, not a report viosim wrote; refusing to replace it"));
  }
  return absl::OkStatus();
}

absl::Status WriteReportDir(const std::string& python, const std::string& kind, const std::string& json,
                            const std::string& dir) {
  if (absl::Status s = CheckReportDir(dir); !s.ok()) return s;
  const std::filesystem::path p = Normalized(dir);
  const std::filesystem::path parent = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::string scratch_template = (parent / absl::StrCat(".", p.filename().string(), ".report.XXXXXX")).string();
  if (::mkdtemp(scratch_template.data()) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--report ", dir, ": cannot make a scratch directory: ", std::strerror(errno)));
  }
  const std::filesystem::path scratch(scratch_template);
  auto fail = [&](const std::string& why) {
    std::error_code ignored;
    std::filesystem::remove_all(scratch, ignored);
    return absl::InvalidArgumentError(absl::StrCat("--report ", dir, ": ", why));
  };
  const std::filesystem::path out = scratch / "report", config = scratch / "mplconfig";
  std::error_code ec;
  std::filesystem::create_directory(out, ec);
  if (!ec) std::filesystem::create_directory(config, ec);
  if (ec) return fail(ec.message());
  const std::string data = (out / "data.json").string();
  {
    std::ofstream f(data, std::ios::binary);
    f << json;
    f.close();
    if (!f) return fail("cannot write data.json");
  }
  const std::string err = (scratch / "stderr").string();
  const int code = Run({python, "-I", "-B", "-c", kScript, kind, data, out.string()}, PlotEnv(config.string()), err);
  if (code != 0) {
    return fail(absl::StrCat("drawing the report failed (", python, " exited ",
                             code < 0 ? std::string("abnormally") : std::to_string(code), "): ", ReadTail(err, 2000)));
  }
  struct stat st;
  if (::lstat(p.c_str(), &st) == 0) {
    // A report written before: swap the two in one step, then drop the old one.
    if (::renameat2(AT_FDCWD, out.c_str(), AT_FDCWD, p.c_str(), RENAME_EXCHANGE) != 0) {
      return fail(absl::StrCat("cannot replace the previous report: ", std::strerror(errno)));
    }
  } else if (::rename(out.c_str(), p.c_str()) != 0) {
    return fail(std::strerror(errno));
  }
  std::filesystem::remove_all(scratch, ec);
  return absl::OkStatus();
}

}  // namespace viosim_cli
