#include "cli/fio_logs.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "models/fio/logs.h"

namespace viosim_cli {
namespace {

std::filesystem::path Place(const std::string& dir, const std::string& name) {
  return std::filesystem::path(dir.empty() ? "." : dir) / name;
}

}  // namespace

absl::Status CheckLogDir(const std::string& dir, const fio::JobFile& jobs) {
  for (const fio::JobOptions& j : jobs.jobs) {
    const fio::LogOptions& l = j.log;
    if (!l.any()) continue;
    for (const auto& [on, prefix] : {std::pair{l.bw, &l.bw_prefix}, std::pair{l.lat, &l.lat_prefix},
                                     std::pair{l.iops, &l.iops_prefix}, std::pair{l.hist, &l.hist_prefix}}) {
      if (!on) continue;
      const std::filesystem::path file = Place(dir, fio::LogFileName(*prefix, j.name, "bw", 1, true));
      const std::filesystem::path parent = file.parent_path();
      std::error_code ec;
      if (!std::filesystem::is_directory(parent, ec)) {
        return absl::InvalidArgumentError(absl::StrCat(jobs.path, ": job '", j.name, "': log directory '",
                                                       parent.string(), "' does not exist (--log-dir)"));
      }
      if (::access(parent.c_str(), W_OK) != 0) {
        return absl::InvalidArgumentError(absl::StrCat(jobs.path, ": job '", j.name, "': log directory '",
                                                       parent.string(), "' is not writable: ", std::strerror(errno)));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status WriteLogFiles(const std::string& dir, const std::vector<fio::LogFile>& logs) {
  std::vector<std::pair<std::string, std::string>> written;  // temporary, final
  auto discard = [&written] {
    for (const auto& w : written) std::remove(w.first.c_str());
  };
  for (const fio::LogFile& log : logs) {
    const std::string path = Place(dir, log.name).string();
    const std::string tmp = absl::StrCat(path, ".tmp.", getpid());
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      discard();
      return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open for writing"));
    }
    written.emplace_back(tmp, path);
    out << log.text;
    out.close();
    if (!out) {
      discard();
      return absl::InvalidArgumentError(absl::StrCat(path, ": write failed"));
    }
  }
  for (size_t i = 0; i < written.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(written[i].first, written[i].second, ec);
    if (ec) {
      for (size_t k = i; k < written.size(); ++k) std::remove(written[k].first.c_str());
      return absl::InvalidArgumentError(absl::StrCat(written[i].second, ": ", ec.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace viosim_cli
