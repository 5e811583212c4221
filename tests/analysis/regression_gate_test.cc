// `viosim gate` as a test: each scenario with published values is one test
// case, run with its own settings and compared with its published
// tolerances and the checked-in baseline (analysis/baseline.textproto).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/gate.h"
#include "analysis/runner.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"

namespace analysis {
namespace {

// Test data paths are relative to the runfiles root of this workspace.
std::vector<std::string> GatedScenarios() {
  absl::StatusOr<std::vector<std::string>> paths = ScenariosWithPublished("scenarios");
  return paths.ok() ? *paths : std::vector<std::string>{};
}

TEST(RegressionGate, FindsScenariosWithPublishedValues) {
  EXPECT_FALSE(GatedScenarios().empty()) << "no scenario with published values under scenarios/";
}

class RegressionGate : public testing::TestWithParam<std::string> {};

// Reproduces the scenario with `overrides` and gates it against the
// checked-in baseline.
void ExpectGatePasses(const std::string& path, const std::vector<std::string>& overrides) {
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<viosim::Baseline> baseline = viosim::LoadBaselineFile("analysis/baseline.textproto");
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  RunRequest req;
  req.jobs = 2;
  req.overrides = overrides;
  absl::StatusOr<Reproduction> rep = Reproduce(*file, req);
  ASSERT_TRUE(rep.ok()) << rep.status();
  ASSERT_FALSE(rep->cells.empty());
  const GateReport report = CheckGate({*rep}, *baseline);
  for (const GateFinding& f : report.findings) {
    EXPECT_TRUE(f.problem.empty()) << f.scenario << " / " << f.variant << " / " << f.metric << ": " << f.problem;
  }
}

TEST_P(RegressionGate, ModeledValuesStayWithinToleranceAndBaseline) { ExpectGatePasses(GetParam(), {}); }

// Another seed moves each value by about its interval, which the drift
// tolerance allows (`viosim gate --seed 4`): the gate tells a change of the
// model from sampling noise.
TEST_P(RegressionGate, AnotherSeedStaysWithinTheDriftTolerance) { ExpectGatePasses(GetParam(), {"run.seed=4"}); }

INSTANTIATE_TEST_SUITE_P(Scenarios, RegressionGate, testing::ValuesIn(GatedScenarios()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           name = name.substr(name.find_last_of('/') + 1);
                           name = name.substr(0, name.find('.'));
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace analysis
