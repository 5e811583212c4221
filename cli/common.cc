// What viosim's commands share (common.h).
#include "cli/common.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/report_dir.h"
#include "cli/shard_flags.h"

namespace cli {
namespace {

// Writes `text` into whatever `path` names, following symlinks; a FIFO
// without a reader is an error, not a wait.
absl::Status WriteInPlace(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open for writing: ",
                                                   errno == ENXIO ? "a FIFO with no reader" : std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::ftruncate(fd, 0) != 0) {
    const int error = errno;
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot truncate: ", std::strerror(error)));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      return absl::InvalidArgumentError(absl::StrCat(path, ": write failed: ", std::strerror(error)));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

void AddShared(CLI::App* cmd, SharedFlags* f) {
  cmd->add_option_function<std::string>(
         "--seed", [f](const std::string& s) { f->seed = s, f->seed_set = true; },
         "Random seed for every variant (overrides run.seed)")
      ->type_name("N");
  cmd->add_option("--jobs,-j", f->jobs, "Variants simulated at once; output does not depend on it")
      ->check(CLI::Range(1, 256))
      ->type_name("N");
  cmd->add_option("--set", f->sets,
                  "Override a scalar field by path, e.g. run.duration=2s or workload.lockbench.threads=8 "
                  "(repeatable; applied after the variant's overlay; a string may be written in a scenario file's "
                  "quotes, platform.scheduler=\"fair\")")
      ->type_name("PATH=VALUE");
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"text", "json", "csv"}));
  OutputPath(
      cmd->add_option("--output,-o", f->output, "Write the output to FILE (whole or not at all) instead of stdout")
          ->type_name("FILE"));
}

std::optional<std::string> GivenSeed(const SharedFlags& f) {
  if (!f.seed_set) return std::nullopt;
  return f.seed;
}

void AddPrecision(CLI::App* cmd, double* fraction) {
  cmd->add_option_function<std::string>(
         "--precision",
         [fraction](const std::string& v) {
           std::string t = v;
           if (!t.empty() && t.back() == '%') t.pop_back();
           double p = 0;
           if (!absl::SimpleAtod(t, &p) || !std::isfinite(p) || p <= 0 || p > 100) {
             throw CLI::ValidationError("--precision", "'" + v + "': expected a percentage in (0, 100], e.g. 5%");
           }
           *fraction = p / 100;
         },
         "Batches go on until every measured interval's half-width is within P% of its value, or 16 x "
         "run.duration has been measured; the output says which it was")
      ->type_name("P%");
}

analysis::Format ToFormat(const std::string& s) {
  if (s == "json") return analysis::Format::kJson;
  if (s == "csv") return analysis::Format::kCsv;
  return analysis::Format::kText;
}

std::vector<std::string> Overrides(const SharedFlags& f) {
  std::vector<std::string> o;
  if (f.seed_set) o.push_back(absl::StrCat("run.seed=", f.seed));
  o.insert(o.end(), f.sets.begin(), f.sets.end());
  return o;
}

int Fail(const absl::Status& s) {
  std::cerr << "viosim: " << s.message() << "\n";
  return kExitBadInput;
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  struct stat st;
  const bool exists = ::lstat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) return WriteInPlace(path, text);
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open for writing"));
    out << text;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return absl::InvalidArgumentError(absl::StrCat(path, ": write failed"));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

int Emit(const SharedFlags& f, const std::string& text) {
  if (f.output.empty()) {
    std::cout << text << std::flush;
    return kExitOk;
  }
  absl::Status s = WriteFileAtomically(f.output, text);
  return s.ok() ? kExitOk : Fail(s);
}

absl::Status CheckWritable(const std::string& path) {
  if (path.empty()) return absl::OkStatus();
  std::filesystem::path p(path);
  std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": directory '", dir.string(), "' does not exist"));
  }
  if (std::filesystem::is_directory(p, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
  }
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // Written in place: the target itself must take writes.
    if (::access(path.c_str(), W_OK) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not writable: ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  // A regular file is replaced by a rename in its directory.
  if (::access(dir.c_str(), W_OK) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": directory '", dir.string(), "' is not writable: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

std::string DefaultScenarioDir() { return "scenarios"; }

absl::StatusOr<std::string> PrepareReport(const CLI::Option* opt, const std::string& dir) {
  if (opt == nullptr || opt->count() == 0) return std::string();
  if (absl::Status s = viosim_cli::CheckReportDir(dir); !s.ok()) return s;
  return viosim_cli::FindPlotter();
}

const CLI::Validator kFinite(
    [](std::string& text) -> std::string {
      double v = 0;
      if (absl::SimpleAtod(text, &v) && std::isfinite(v)) return "";
      return absl::StrCat("'", text, "' is not a finite number");
    },
    "", "FINITE");

FitFlags AddFitFlags(CLI::App* cmd, analysis::CalibrateSpec* spec, std::string* cell, std::string* range) {
  FitFlags f;
  f.cell = cmd->add_option("--cell", *cell,
                           "The published cell to fit to (METRIC may be left out when the variant has one cell)")
               ->type_name("VARIANT[/METRIC]");
  f.range = cmd->add_option("--range", *range, "Values of the field that bracket the published value, e.g. 1us,80us (each as --set takes a value)")
                ->type_name("LO,HI");
  f.tolerance =
      cmd->add_option("--tolerance", spec->tolerance_pct, "Stop once the modeled value is this close to published, %")
          ->check(kFinite)
          ->check(CLI::Range(1e-6, 100.0))
          ->capture_default_str()
          ->type_name("PCT");
  f.max_iter = cmd->add_option("--max-iter", spec->max_iter, "Midpoints tried at most")
                   ->check(CLI::Range(1, 1000))
                   ->capture_default_str()
                   ->type_name("N");
  return f;
}

absl::StatusOr<viosim::ScenarioFile> LoadScenario(const std::string& path,
                                                  const std::vector<std::string>& overrides) {
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(path);
  if (!file.ok()) return file.status();
  if (absl::Status s = viosim::ApplyFileOverrides(&*file, overrides); !s.ok()) return s;
  return file;
}

}  // namespace cli
