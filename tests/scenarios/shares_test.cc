// Every share viosim reports is a part of a whole: a metric ending in _pct,
// every CPU's time columns and its interrupts-off time. For every variant of
// every scenario, run short (where the edges of the measured window weigh
// most: work that started before it or ends after it), each must lie
// within [0, 100].
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "analysis/runner.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"

namespace {

std::vector<std::string> ScenarioPaths() {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator("scenarios")) {
    if (e.path().extension() == ".textproto") paths.push_back(e.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Metrics named _pct that count events, not time, against a whole they
// cannot exceed either (kicks, contentions, polled completions over all),
// are shares too: none is left out.
void ExpectShare(double v, const std::string& what) {
  EXPECT_GE(v, 0.0) << what;
  EXPECT_LE(v, 100.0) << what;
}

TEST(SharesTest, EveryShareOfEveryVariantOfEveryScenarioIsWithinItsWhole) {
  const std::vector<std::string> paths = ScenarioPaths();
  ASSERT_GE(paths.size(), 5u);
  int shares = 0;
  for (const std::string& path : paths) {
    absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    std::vector<std::string> variants = viosim::VariantNames(*file);
    absl::StatusOr<viosim::Scenario> base = viosim::ResolveVariant(*file, variants.front(), {});
    ASSERT_TRUE(base.ok()) << base.status();
    if (base->workload().kind_case() == viosim::Workload::KIND_NOT_SET) continue;  // a stack for `viosim fio`
    analysis::RunRequest req;
    // Short windows, cut where the batches fall mid-request.
    req.overrides = {"run.warmup=1.3ms", "run.duration=2.7ms", "run.batches=3"};
    req.jobs = 2;
    absl::StatusOr<std::vector<viosim::VariantResult>> results = analysis::RunVariants(*file, variants, req);
    ASSERT_TRUE(results.ok()) << results.status();
    for (const viosim::VariantResult& r : *results) {
      const std::string at = path + " variant " + r.variant;
      for (const sim::MetricEstimate& m : r.metrics) {
        if (!absl::EndsWith(m.name, "_pct")) continue;
        ExpectShare(m.value, at + " metric " + m.name);
        ++shares;
      }
      for (const viosim::CpuRow& c : r.cpus) {
        ASSERT_EQ(c.state_pct.size(), r.cpu_states.size()) << at;
        double sum = 0;
        for (size_t i = 0; i < c.state_pct.size(); ++i) {
          ExpectShare(c.state_pct[i], at + " " + c.name + " " + r.cpu_states[i]);
          if (r.cpu_states[i] != "guest") sum += c.state_pct[i];
          ++shares;
        }
        ExpectShare(c.irq_off_pct, at + " " + c.name + " irq off");
      }
    }
  }
  EXPECT_GT(shares, 100);
}

}  // namespace
