// Accept/reject decisions over a corpus of job files (tests/fio/testdata)
// written for viosim to exercise the same features as fio's examples/ set
// sorted in docs/fio-compat.md: plain modeled jobs (tier A), the rw offset
// suffix (A'), structural and no-effect options (B), and jobs that need
// something viosim does not model (rejected).
#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/fio/job.h"
#include "scenarios/fio_parser.h"

namespace fio {
namespace {

constexpr char kDir[] = "tests/fio/testdata/";

struct Case {
  const char* file;
  // Accepted files: checks on the result. Rejected files: the first line of
  // the error, without the directory.
  std::function<void(const JobFile&)> check;
  const char* first_error = nullptr;
};

std::string Path(const char* file) { return std::string(kDir) + file; }

const std::vector<Case>& Cases() {
  static const auto* const cases = new std::vector<Case>{
      // --- tier A: only modeled options --------------------------------------
      {"accept_randrw_mix_global.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 1u);
         const JobOptions& j = f.jobs[0];
         EXPECT_EQ(j.name, "disk");  // name= in [global] renames nothing
         EXPECT_EQ(j.rw, Pattern::kRandRw);
         EXPECT_EQ(j.rwmixread, 70);
         EXPECT_EQ(j.numjobs, 2);
         EXPECT_TRUE(j.time_based);
         EXPECT_EQ(j.runtime_us, 30000000);
         EXPECT_EQ(j.size, uint64_t{2} << 30);
         EXPECT_EQ(j.ioengine, Engine::kLibaio);
         EXPECT_EQ(j.iodepth, 32);
         EXPECT_FALSE(j.direct);
         EXPECT_EQ(f.notes.size(), 1u);  // the direct=0 note
       }},
      {"accept_seq_read_direct.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 1u);
         EXPECT_EQ(f.jobs[0].bs_min[kRead], 131072u);
         EXPECT_TRUE(f.jobs[0].direct);
         EXPECT_TRUE(f.notes.empty());
       }},
      {"accept_latency_triplet.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 1u);
         EXPECT_EQ(f.jobs[0].size, uint64_t{4} << 20);
         EXPECT_EQ(f.jobs[0].iodepth, 8);
         EXPECT_EQ(f.jobs[0].rw, Pattern::kRead);
       }},
      // --- tier A': the rw offset suffix ---------------------------------------
      {"accept_reverse_scan.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 1u);
         EXPECT_EQ(f.jobs[0].rw_seq_add, -16384);
       }},
      // --- tier B: structural and no-effect options -----------------------------
      {"accept_depth_sweep.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 3u);
         EXPECT_EQ(f.jobs[2].iodepth, 64);
         EXPECT_TRUE(f.jobs[0].direct);  // buffered=0
         EXPECT_EQ(f.global_options.back().name, "directory");
       }},
      {"accept_phases_stonewall.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 4u);
         for (const JobOptions& j : f.jobs) EXPECT_TRUE(j.stonewall);
         EXPECT_EQ(f.jobs[3].rw, Pattern::kRandRead);
         EXPECT_EQ(f.global_options.back().name, "filename");  // fio lists it last
       }},
      {"accept_tio_like.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 2u);
         EXPECT_EQ(f.jobs[0].numjobs, 2);  // the ';' comment is cut off
         EXPECT_EQ(f.jobs[0].runtime_us, 20000000);
         EXPECT_EQ(f.jobs[0].bs_min[kWrite], 8192u);
         EXPECT_EQ(f.jobs[0].bs_max[kWrite], 8192u);
         EXPECT_TRUE(f.jobs[1].stonewall);
       }},
      {"accept_loops_small.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 1u);
         EXPECT_EQ(f.jobs[0].loops, 1000);
         EXPECT_TRUE(f.jobs[0].norandommap);
       }},
      {"accept_numa_bind.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 2u);
         EXPECT_EQ(f.jobs[1].options[1].value, "interleave:0-1");
       }},
      {"accept_bw_log_phases.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 2u);
         EXPECT_TRUE(f.jobs[0].group_reporting);
         EXPECT_EQ(f.jobs[1].description, "Then overwrite it at random");
         EXPECT_TRUE(f.jobs[1].stonewall);
         EXPECT_TRUE(f.notes.empty());  // the bandwidth logs are written
         EXPECT_TRUE(f.jobs[1].log.bw);
         EXPECT_EQ(f.jobs[1].log.bw_prefix, "churn-bw");
       }},
      {"accept_chained_groups.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 2u);
         EXPECT_EQ(f.jobs[1].wait_for, "first");
         EXPECT_TRUE(f.jobs[1].new_group);
         EXPECT_EQ(f.jobs[0].size, uint64_t{64} << 20);  // from filesize
       }},
      {"accept_pvsync2_hipri.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 1u);
         EXPECT_TRUE(f.jobs[0].hipri);
         EXPECT_EQ(f.jobs[0].ioengine, Engine::kPvsync2);
       }},
      {"accept_rate_iops.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 1u);
         EXPECT_EQ(f.jobs[0].rate_iops[0], 500u);  // one value: every direction
         EXPECT_EQ(f.jobs[0].rate_iops[1], 500u);
         EXPECT_FALSE(f.jobs[0].rate_poisson);
       }},
      {"accept_bssplit.fio",
       [](const JobFile& f) {
         ASSERT_EQ(f.jobs.size(), 1u);
         ASSERT_EQ(f.jobs[0].bssplit[0].size(), 2u);
         EXPECT_EQ(f.jobs[0].bssplit[0][0].bs, 4096u);  // equal shares keep their order
         EXPECT_EQ(f.jobs[0].bs_min[0], 4096u);
         EXPECT_EQ(f.jobs[0].bs_max[0], 65536u);
       }},
      // --- rejected: fio runs them, viosim does not model what they need -------
      {"reject_verify.fio", nullptr,
       ":8: option 'verify' is understood by fio but not modeled by viosim"},
      {"reject_zoned.fio", nullptr,
       ":5: option 'zonemode' is understood by fio but not modeled by viosim"},
      {"reject_startdelay_rate.fio", nullptr,
       ":10: option 'startdelay' is understood by fio but not modeled by viosim"},
      {"reject_net_engine.fio", nullptr,
       ":2: ioengine=net is understood by fio but not modeled by viosim (modeled engines: "
       "libaio, io_uring, pvsync2, psync, sync)"},
      {"reject_null_engine.fio", nullptr,
       ":5: ioengine=null is understood by fio but not modeled by viosim (modeled engines: "
       "libaio, io_uring, pvsync2, psync, sync)"},

      {"reject_random_distribution.fio", nullptr,
       ":5: option 'random_distribution' is understood by fio but not modeled by viosim"},
      {"reject_latency_target.fio", nullptr,
       ":8: option 'latency_target' is understood by fio but not modeled by viosim"},
      {"reject_steadystate.fio", nullptr,
       ":9: option 'ss' is understood by fio but not modeled by viosim"},
      {"reject_flow.fio", nullptr,
       ":10: option 'flow' is understood by fio but not modeled by viosim"},
      {"reject_cmdprio.fio", nullptr,
       ":6: option 'cmdprio_percentage' is understood by fio but not modeled by viosim"},
      {"reject_dedupe.fio", nullptr,
       ":6: option 'dedupe_percentage' is understood by fio but not modeled by viosim"},
      {"reject_falloc_trim.fio", nullptr,
       ":2: ioengine=falloc is understood by fio but not modeled by viosim (modeled engines: "
       "libaio, io_uring, pvsync2, psync, sync)"},
      {"reject_trim_rw.fio", nullptr,
       ":4: rw=trimwrite is understood by fio but not modeled by viosim (trim is not "
       "modeled)"},
  };
  return *cases;
}

class ExamplesTest : public testing::TestWithParam<Case> {};

TEST_P(ExamplesTest, GetsTheDocumentedAnswer) {
  const Case& c = GetParam();
  absl::StatusOr<JobFile> f = ParseJobFile(Path(c.file));
  if (c.first_error == nullptr) {
    ASSERT_TRUE(f.ok()) << c.file << " was rejected: " << f.status();
    c.check(*f);
    return;
  }
  ASSERT_FALSE(f.ok()) << c.file << " was accepted";
  std::string message(f.status().message());
  EXPECT_EQ(message.substr(0, message.find('\n')), Path(c.file) + c.first_error);
}

INSTANTIATE_TEST_SUITE_P(Corpus, ExamplesTest, testing::ValuesIn(Cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.file;
                           name = name.substr(0, name.find('.'));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// Every accept_*/reject_* file in the corpus has a decision above, and the
// prefix of its name agrees with it.
TEST(ExamplesCorpusTest, EveryFileIsDecided) {
  std::vector<std::string> listed;
  for (const Case& c : Cases()) {
    listed.push_back(c.file);
    EXPECT_EQ(absl::StartsWith(c.file, "accept_"), c.first_error == nullptr) << c.file;
  }
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    std::string name = entry.path().filename().string();
    if (!absl::StartsWith(name, "accept_") && !absl::StartsWith(name, "reject_")) continue;
    ++seen;
    EXPECT_NE(std::find(listed.begin(), listed.end(), name), listed.end())
        << name << " has no decision in examples_test.cc";
  }
  EXPECT_EQ(seen, static_cast<int>(listed.size()));
}

}  // namespace
}  // namespace fio
