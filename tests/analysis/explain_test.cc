// `viosim explain`'s elasticities: exact where queueing theory has the
// answer (the lock benchmark is the machine-repairman queue, whose
// throughput's derivatives the mean value analysis gives), the same whatever
// --jobs, and no interval where the model does not vary with the seed.
#include "analysis/explain.h"

#include <cmath>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/mva.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"
#include "scenarios/units.h"

namespace analysis {
namespace {

const CostElasticity* Find(const Explanation& x, const std::string& path) {
  for (const CostElasticity& c : x.costs) {
    if (c.field.path == path) return &c;
  }
  return nullptr;
}

double Micros(const std::string& duration) {
  absl::StatusOr<sim::Time> t = viosim::ParseDuration(duration);
  EXPECT_TRUE(t.ok()) << duration;
  return t.ok() ? t->ToSeconds() * 1e6 : 0;
}

// For each lockbench variant, the elasticities of lock_acquisitions_per_s to
// the hold and think means agree with the MVA's exact derivatives at the
// variant's own parameters, within 5% or the paired interval.
TEST(ExplainTest, LockBenchElasticitiesMatchTheMeanValueAnalysis) {
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile("scenarios/lockbench.textproto");
  ASSERT_TRUE(file.ok()) << file.status();
  for (const std::string& v : viosim::VariantNames(*file)) {
    SCOPED_TRACE(v);
    absl::StatusOr<viosim::Scenario> s = viosim::ResolveVariant(*file, v, {});
    ASSERT_TRUE(s.ok()) << s.status();
    const auto& lb = s->workload().lockbench();
    const RepairmanElasticity exact = MachineRepairmanElasticity(
        lb.threads(), Micros(lb.think().exponential().mean()), Micros(lb.hold().exponential().mean()));

    ExplainSpec spec;
    spec.variant = v;
    spec.metric = "lock_acquisitions_per_s";
    RunRequest req;
    req.jobs = 2;
    absl::StatusOr<Explanation> x = Explain(*file, spec, req);
    ASSERT_TRUE(x.ok()) << x.status();
    ASSERT_TRUE(x->ci_informative);
    for (const auto& [path, want] : {std::pair{"workload.lockbench.think.exponential.mean", exact.think},
                                     {"workload.lockbench.hold.exponential.mean", exact.service}}) {
      const CostElasticity* c = Find(*x, path);
      ASSERT_NE(c, nullptr) << path;
      ASSERT_TRUE(c->skipped.empty()) << c->skipped;
      ASSERT_TRUE(c->ci95.has_value()) << path;
      std::printf("%s %s: elasticity %.4f +/- %.4f, MVA %.4f\n", v.c_str(), path, c->elasticity, *c->ci95, want);
      EXPECT_LE(std::fabs(c->elasticity - want), std::max(0.05 * std::fabs(want), *c->ci95))
          << path << ": " << c->elasticity << " +/- " << *c->ci95 << ", MVA " << want;
    }
    // The free hand-off cannot take a relative step.
    const CostElasticity* handoff = Find(*x, "platform.lock_handoff.value");
    ASSERT_NE(handoff, nullptr);
    EXPECT_FALSE(handoff->skipped.empty());
  }
}

ExplainSpec LockBenchN4() {
  ExplainSpec spec;
  spec.variant = "N4";
  spec.metric = "lock_acquisitions_per_s";
  return spec;
}

TEST(ExplainTest, OutputDoesNotDependOnJobs) {
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile("scenarios/lockbench.textproto");
  ASSERT_TRUE(file.ok()) << file.status();
  std::string first;
  for (int jobs : {1, 3}) {
    RunRequest req;
    req.jobs = jobs;
    req.overrides = {"run.duration=100ms", "run.warmup=1ms"};
    absl::StatusOr<Explanation> x = Explain(*file, LockBenchN4(), req);
    ASSERT_TRUE(x.ok()) << x.status();
    const std::string out = absl::StrCat(FormatExplanation(*x, Format::kText), FormatExplanation(*x, Format::kJson),
                                         FormatExplanation(*x, Format::kCsv));
    if (first.empty()) {
      first = out;
    } else {
      EXPECT_EQ(out, first);
    }
  }
}

TEST(ExplainTest, ADeterministicModelHasNoInformativeInterval) {
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile("scenarios/lockbench.textproto");
  ASSERT_TRUE(file.ok()) << file.status();
  RunRequest req;
  req.overrides = {"run.duration=20ms", "run.warmup=1ms", "workload.lockbench.think.constant.value=10us",
                   "workload.lockbench.hold.constant.value=2us"};
  absl::StatusOr<Explanation> x = Explain(*file, LockBenchN4(), req);
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_FALSE(x->ci_informative);
  EXPECT_FALSE(x->value_ci95.has_value());
  for (const CostElasticity& c : x->costs) EXPECT_FALSE(c.ci95.has_value()) << c.field.path;
  // Four threads, each 10us thinking and 2us holding: the lock is never
  // contended, X = 4 / 12us, so e = -10/12 to think and -2/12 to hold.
  const CostElasticity* think = Find(*x, "workload.lockbench.think.constant.value");
  ASSERT_NE(think, nullptr);
  EXPECT_NEAR(think->elasticity, -10.0 / 12, 0.01);
  EXPECT_TRUE(absl::StrContains(FormatExplanation(*x, Format::kText), "n/i"));
  EXPECT_TRUE(absl::StrContains(FormatExplanation(*x, Format::kJson), "\"ci95\": null"));
}

TEST(ExplainTest, UnknownMetricListsTheMetrics) {
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile("scenarios/lockbench.textproto");
  ASSERT_TRUE(file.ok()) << file.status();
  ExplainSpec spec;
  spec.metric = "nope";
  absl::StatusOr<Explanation> x = Explain(*file, spec, RunRequest{});
  ASSERT_FALSE(x.ok());
  EXPECT_TRUE(absl::StrContains(x.status().message(), "lock_acquisitions_per_s")) << x.status();
}

TEST(ExplainTest, FieldPrefixesChooseTheCostsVaried) {
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile("scenarios/lockbench.textproto");
  ASSERT_TRUE(file.ok()) << file.status();
  RunRequest req;
  req.overrides = {"run.duration=20ms", "run.warmup=1ms"};
  ExplainSpec spec = LockBenchN4();
  spec.fields = {"workload.lockbench.hold"};
  absl::StatusOr<Explanation> x = Explain(*file, spec, req);
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_EQ(x->costs.size(), 1u);
  EXPECT_EQ(x->costs[0].field.path, "workload.lockbench.hold.exponential.mean");
  EXPECT_EQ(x->costed_fields, 3);
  EXPECT_EQ(x->runs, 4);
  spec.fields = {"workload.lockbench.nope"};
  x = Explain(*file, spec, req);
  ASSERT_FALSE(x.ok());
  EXPECT_TRUE(absl::StrContains(x.status().message(), "--field 'workload.lockbench.nope'")) << x.status();
}

TEST(ExplainTest, StepIsAFractionOrAPercentStrictlyBetweenZeroAndOne) {
  EXPECT_DOUBLE_EQ(*ParseStep("10%"), 0.1);
  EXPECT_DOUBLE_EQ(*ParseStep("0.05"), 0.05);
  for (const char* bad : {"0", "100%", "1", "-5%", "x", "", "nan"}) {
    EXPECT_FALSE(ParseStep(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace analysis
