// Every job file of the seed posts shipped in scenarios/fio parses.
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scenarios/fio_parser.h"

namespace {

TEST(SeedJobs, EveryShippedJobFileParses) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator("scenarios/fio")) {
    if (e.path().extension() == ".fio") files.push_back(e.path().string());
  }
  ASSERT_GE(files.size(), 3u);
  for (const std::string& f : files) {
    absl::StatusOr<fio::JobFile> jobs = fio::ParseJobFile(f);
    EXPECT_TRUE(jobs.ok()) << f << ": " << jobs.status();
    if (jobs.ok()) {
      EXPECT_FALSE(jobs->jobs.empty()) << f;
    }
  }
}

}  // namespace
