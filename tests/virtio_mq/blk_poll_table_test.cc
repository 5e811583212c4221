// scenarios/virtio_blk_poll.textproto over the whole published table of
// seed 003 (Hajnoczi, 2021-05-20), with the tolerances of issue 5:
//   hipri=0 column MAE <= 5% (calibration), hipri=1 column MAE <= 8%;
//   4k/16k rows: modeled gain within 6 points of the published gain (the
//   write 16k row excepted: its hipri=1 cell is the outlier the issue says
//   not to fit. With equal hipri=0 IOPS, randwrite 16k gains +18.5% and
//   write 16k +5.7%, so no model that treats both alike can be within 6
//   points of both: docs/virtio_blk_poll.md. The test checks that the
//   model does treat them alike);
//   64k/128k rows: gain below 2%, IOPS x bs within 3% of the device ceiling.
#include <cmath>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/runner.h"
#include "gtest/gtest.h"
#include "scenarios/builder.h"
#include "scenarios/loader.h"

namespace viosim {
namespace {

struct Row {
  const char* rw;
  const char* bs;
  int bytes;
  double h0, h1;
};

// The cover letter's table.
constexpr Row kTable[] = {
    {"randread", "4k", 4096, 149426, 170763},     {"randread", "16k", 16384, 118939, 134269},
    {"randread", "64k", 65536, 34886, 34906},     {"randread", "128k", 131072, 17655, 17667},
    {"randwrite", "4k", 4096, 138578, 163600},    {"randwrite", "16k", 16384, 102089, 120950},
    {"randwrite", "64k", 65536, 32364, 32561},    {"randwrite", "128k", 131072, 16154, 16237},
    {"read", "4k", 4096, 146032, 170620},         {"read", "16k", 16384, 117097, 130437},
    {"read", "64k", 65536, 34834, 35037},         {"read", "128k", 131072, 17680, 17658},
    {"write", "4k", 4096, 134562, 151422},        {"write", "16k", 16384, 101796, 107606},
    {"write", "64k", 65536, 32364, 32594},        {"write", "128k", 131072, 16259, 16265},
};

std::map<std::string, double> RunRow(const ScenarioFile& file, const Row& r, int hipri) {
  absl::StatusOr<Scenario> s = ResolveVariant(
      // The column's variant (its job file), switched to this row's section.
      file, absl::StrCat("randread-4k-hipri", hipri),
      {absl::StrCat("workload.fio.section=", r.rw, "-", r.bs)});
  EXPECT_TRUE(s.ok()) << s.status();
  RunOptions options;
  options.base_dir = "scenarios";
  absl::StatusOr<VariantResult> res = RunScenario(*s, "row", options);
  EXPECT_TRUE(res.ok()) << res.status();
  std::map<std::string, double> m;
  if (res.ok()) {
    for (const auto& e : res->metrics) m[e.name] = e.value;
  }
  return m;
}

TEST(BlkPollTableTest, AllRowsWithinTheIssuesTolerances) {
  absl::StatusOr<ScenarioFile> file = LoadScenarioFile("scenarios/virtio_blk_poll.textproto");
  ASSERT_TRUE(file.ok()) << file.status();
  const Scenario& sc = file->scenario;
  const double read_bw = sc.stack().virtio_blk_mq().read_bandwidth();
  const double write_bw = sc.stack().virtio_blk_mq().write_bandwidth();
  double err0 = 0, err1 = 0;
  std::map<std::string, double> gains;
  for (const Row& r : kTable) {
    const std::map<std::string, double> m0 = RunRow(*file, r, 0);
    const std::map<std::string, double> m1 = RunRow(*file, r, 1);
    const double i0 = m0.at("iops"), i1 = m1.at("iops");
    err0 += std::abs(i0 / r.h0 - 1);
    err1 += std::abs(i1 / r.h1 - 1);
    const double gain = 100 * (i1 / i0 - 1), pub_gain = 100 * (r.h1 / r.h0 - 1);
    gains[absl::StrCat(r.rw, "-", r.bs)] = gain;
    SCOPED_TRACE(absl::StrCat(r.rw, " ", r.bs, ": modeled ", i0, " / ", i1, " gain ", gain, "%; published ", r.h0,
                              " / ", r.h1, " gain ", pub_gain, "%"));
    // The polled column (almost) never takes an interrupt -- a rare one is
    // possible when the IOThread's batched notify runs just after the poller
    // turned callbacks back on; the other column always does.
    EXPECT_LT(m1.at("interrupts_per_request"), 0.001);
    EXPECT_NEAR(m0.at("interrupts_per_request"), 1, 0.01);
    EXPECT_GT(m1.at("vcpu_util_pct"), 99);
    if (r.bytes <= 16384) {
      if (std::string(r.rw) != "write" || r.bytes != 16384) {
        EXPECT_NEAR(gain, pub_gain, 6);
      }
    } else {
      EXPECT_LT(std::abs(gain), 2);
      const double ceiling = std::string(r.rw).find("write") != std::string::npos ? write_bw : read_bw;
      EXPECT_NEAR(i0 * r.bytes / ceiling, 1, 0.03);
      EXPECT_NEAR(i1 * r.bytes / ceiling, 1, 0.03);
    }
  }
  // The excepted row: on this device a sequential and a random 16k write
  // cost the same, so their gains agree (which is why both published gains,
  // 12.8 points apart, cannot be met).
  EXPECT_NEAR(gains.at("write-16k"), gains.at("randwrite-16k"), 0.5);
  EXPECT_LE(100 * err0 / 16, 5) << "hipri=0 column MAE";
  EXPECT_LE(100 * err1 / 16, 8) << "hipri=1 column MAE";
}

// The hipri=1 column holds 4 independent predictions, not 16: the model
// gives read and randread (write and randwrite) one value, and the 64k/128k
// rows are bound by a bandwidth fitted on the hipri=0 column, so they repeat
// a calibration cell. Each independent prediction's cells are gated one by
// one against their tolerance (a known gap must stay outside it), not only
// through a column average.
TEST(BlkPollTableTest, EachIndependentPredictionWithinItsTolerance) {
  absl::StatusOr<ScenarioFile> file = LoadScenarioFile("scenarios/virtio_blk_poll.textproto");
  ASSERT_TRUE(file.ok()) << file.status();
  analysis::RunRequest req;
  req.jobs = 2;
  absl::StatusOr<analysis::Reproduction> rep = analysis::Reproduce(*file, req);
  ASSERT_TRUE(rep.ok()) << rep.status();
  const analysis::PredictionCount n = analysis::CountPredictions(rep->cells);
  EXPECT_EQ(n.prediction_cells, 16);
  EXPECT_EQ(n.independent.size(), 4u);
  EXPECT_EQ(n.repeats_calibration.size(), 8u);
  for (const auto& [p, c] : n.repeats_calibration) {
    const analysis::Cell& cell = rep->cells[p];
    EXPECT_TRUE(absl::StrContains(cell.variant, "64k") || absl::StrContains(cell.variant, "128k")) << cell.variant;
  }
  for (const auto& group : n.independent) {
    for (size_t i : group) {
      const analysis::Cell& c = rep->cells[i];
      SCOPED_TRACE(absl::StrCat(c.variant, ": modeled ", c.modeled, " published ", c.published));
      EXPECT_EQ(c.role, "prediction");
      EXPECT_EQ(c.within, c.known_gap.empty()) << c.error_pct << "% against " << c.tolerance_pct << "%";
    }
  }
}

}  // namespace
}  // namespace viosim
