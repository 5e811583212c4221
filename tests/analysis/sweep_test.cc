// `viosim sweep`'s pure parts: parsing --over and the three output formats.
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/format.h"
#include "analysis/runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"

namespace analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseSweepSpecTest, SplitsFieldAndValuesInOrder) {
  absl::StatusOr<SweepSpec> s = ParseSweepSpec("platform.kvm.mmio_exit_user.value=2us,6us,51.5us");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->field, "platform.kvm.mmio_exit_user.value");
  EXPECT_THAT(s->values, ElementsAre("2us", "6us", "51.5us"));
}

TEST(ParseSweepSpecTest, RefusesMalformedSpecsNamingTheFlag) {
  for (const char* bad : {"threads", "=2,4", "workload.lockbench.threads=", "workload.lockbench.threads=2,,4",
                          "workload.lockbench.threads=2,"}) {
    absl::StatusOr<SweepSpec> s = ParseSweepSpec(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.status().message(), HasSubstr(absl::StrCat("--over '", bad, "'")));
  }
}

TEST(ParseSweepSpecTest, DropsTheSpacesAroundEachValue) {
  absl::StatusOr<SweepSpec> s = ParseSweepSpec(" workload.lockbench.threads = 2, 4 ,\t8 ");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->field, "workload.lockbench.threads");
  EXPECT_THAT(s->values, ElementsAre("2", "4", "8"));
  EXPECT_FALSE(ParseSweepSpec("workload.lockbench.threads=2, ,4").ok());
}

TEST(ParseSweepSpecTest, AValueInAScenarioFilesQuotesIsOneValueWithItsCommas) {
  absl::StatusOr<SweepSpec> s = ParseSweepSpec(R"(f="a,b",'c,d',"e\",f",x"y,"open,z)");
  ASSERT_TRUE(s.ok()) << s.status();
  // An unescaped closing quote before a comma or the end closes the value;
  // a quote that is not a value's first character, or one never closed, is
  // an ordinary character.
  EXPECT_THAT(s->values, ElementsAre(R"("a,b")", "'c,d'", R"("e\",f")", R"(x"y)", R"("open)", "z"));
  // Spaces outside the quotes go, those inside stay.
  s = ParseSweepSpec(R"(f= " a, b " , 'c')");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(s->values, ElementsAre(R"(" a, b ")", "'c'"));
  EXPECT_FALSE(ParseSweepSpec(R"(f="a",,b)").ok());
}

// The values are applied as --set applies them and labelled as the field
// reads them: a quoted "10ms" is the duration 10ms, on a time axis, not a
// category called "10ms" with its quotes.
TEST(PlanSweepTest, LabelsEachValueAsTheFieldReadsIt) {
  absl::StatusOr<viosim::ScenarioFile> f = viosim::LoadScenarioFile("fuzz/testdata/banded.textproto");
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<SweepSpec> spec = ParseSweepSpec(R"(run.duration="10ms",'20ms',30ms)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<SweepPlan> plan = PlanSweep(*f, *spec, {"base"}, {}, RunRequest{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->sweep.values, ElementsAre("10ms", "20ms", "30ms"));
  ASSERT_EQ(plan->resolved.size(), 3u);
  EXPECT_EQ(plan->resolved[0].run().duration(), "10ms");
  EXPECT_EQ(plan->resolved[1].run().duration(), "20ms");
  // A quoted value that a scenario file could not read is refused, naming
  // the flag.
  absl::StatusOr<SweepSpec> bad = ParseSweepSpec(R"(run.duration="1\q0ms")");
  ASSERT_TRUE(bad.ok()) << bad.status();
  absl::StatusOr<SweepPlan> refused = PlanSweep(*f, *bad, {"base"}, {}, RunRequest{});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("--over"));
}

Sweep TwoByTwo() {
  Sweep s;
  s.scenario = "sc";
  s.field = "platform.kvm.mmio_exit_user.value";
  s.values = {"2us", "80us"};
  s.variants = {"before", "after"};
  s.metrics = {"iops"};
  auto point = [](const std::string& value, const std::string& variant, double v, std::optional<double> ci) {
    SweepPoint p{value, variant, {}};
    sim::MetricEstimate m;
    m.name = "iops";
    m.value = v;
    m.ci95 = ci;
    p.metrics.push_back(m);
    return p;
  };
  s.points = {point("2us", "before", 32757.65, 322.34), point("2us", "after", 45223.67, std::nullopt),
              point("80us", "before", 10012.9, 99.47), point("80us", "after", 42577.9, 422.7)};
  return s;
}

TEST(FormatSweepTest, TextHasOneRowPerValueAndAColumnPerVariantMetric) {
  const std::string t = FormatSweep(TwoByTwo(), Format::kText);
  EXPECT_THAT(t, HasSubstr("sweep over platform.kvm.mmio_exit_user.value\n"));
  EXPECT_THAT(t, HasSubstr("\nmmio_exit_user.value  before iops     +/-  after iops     +/-\n"
                           "2us                       32757.7  322.34     45223.7       -\n"
                           "80us                      10012.9   99.47     42577.9  422.70\n"));
}

TEST(FormatSweepTest, JsonAndCsvCarryEveryPointAndANullInterval) {
  const std::string j = FormatSweep(TwoByTwo(), Format::kJson);
  EXPECT_THAT(j, HasSubstr("\"field\": \"platform.kvm.mmio_exit_user.value\""));
  EXPECT_THAT(j, HasSubstr("\"value\": \"2us\",\n      \"variant\": \"after\",\n      \"metrics\": {\n"
                           "        \"iops\": 45223.67\n      },\n      \"ci95\": {\n        \"iops\": null\n"));
  EXPECT_EQ(FormatSweep(TwoByTwo(), Format::kCsv),
            "swept_value,variant,metric,value,ci95\n"
            "2us,before,iops,32757.65,322.34\n"
            "2us,after,iops,45223.67,\n"
            "80us,before,iops,10012.9,99.47\n"
            "80us,after,iops,42577.9,422.7\n");
}

TEST(ParseGridSpecTest, TakesOneToThreeDistinctFields) {
  absl::StatusOr<SweepSpec> g = ParseGridSpec({"run.duration=10ms,20ms", "workload.lockbench.threads=2,4,8"});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->field, "run.duration");
  ASSERT_EQ(g->more.size(), 1u);
  EXPECT_EQ(g->more[0].field, "workload.lockbench.threads");
  EXPECT_THAT(g->more[0].values, ElementsAre("2", "4", "8"));
  EXPECT_FALSE(ParseGridSpec({}).ok());
  EXPECT_FALSE(ParseGridSpec({"a=1", "b=1", "c=1", "d=1"}).ok());
  absl::StatusOr<SweepSpec> twice = ParseGridSpec({"run.duration=1ms", "run.duration=2ms"});
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(), HasSubstr("already an axis"));
}

// A 2x2 grid with two variants: every combination, the first field
// slowest, each pair of variants at one place; the place on the second
// axis travels with each point into every format.
TEST(RunSweepTest, AGridCoversEveryCombination) {
  absl::StatusOr<viosim::ScenarioFile> f = viosim::LoadScenarioFile("fuzz/testdata/banded.textproto");
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<SweepSpec> spec =
      ParseGridSpec({"workload.lockbench.hold.exponential.mean=1us,3us", "platform.lock_handoff.value=0ns,2us"});
  ASSERT_TRUE(spec.ok()) << spec.status();
  RunRequest req;
  req.overrides = {"run.duration=2ms", "run.warmup=0.5ms"};
  absl::StatusOr<Sweep> s = RunSweep(*f, *spec, {"base", "t5"}, {"lock_acquisitions_per_s"}, req);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->points.size(), 8u);
  std::vector<std::string> places;
  for (const SweepPoint& p : s->points) {
    ASSERT_EQ(p.at.size(), 1u);
    places.push_back(absl::StrCat(p.value, "/", p.at[0], "/", p.variant));
  }
  EXPECT_THAT(places, ElementsAre("1us/0ns/base", "1us/0ns/t5", "1us/2us/base", "1us/2us/t5", "3us/0ns/base",
                                  "3us/0ns/t5", "3us/2us/base", "3us/2us/t5"));
  // A longer hold, or a costlier hand-off, lowers the rate.
  EXPECT_LT(s->points[4].metrics[0].value, s->points[0].metrics[0].value);
  EXPECT_LT(s->points[3].metrics[0].value, s->points[1].metrics[0].value);
  const std::string text = FormatSweep(*s, Format::kText);
  EXPECT_THAT(text, HasSubstr("sweep over workload.lockbench.hold.exponential.mean x platform.lock_handoff.value\n"));
  EXPECT_THAT(text, HasSubstr("\nexponential.mean  lock_handoff.value  base lock_acquisitions_per_s"));
  EXPECT_THAT(text, HasSubstr("\n3us               2us  "));
  EXPECT_THAT(text, HasSubstr("gains (the ratio"));
  const std::string json = FormatSweep(*s, Format::kJson);
  EXPECT_THAT(json, HasSubstr("\"more\": [\n    {\n      \"field\": \"platform.lock_handoff.value\""));
  EXPECT_THAT(json, HasSubstr("\"value\": \"3us\",\n      \"at\": [\n        \"2us\"\n      ],\n      \"variant\": \"t5\""));
  const std::string csv = FormatSweep(*s, Format::kCsv);
  EXPECT_THAT(csv, HasSubstr("swept_value,swept_value_2,variant,metric,value,ci95\n1us,0ns,base,"));
}

}  // namespace
}  // namespace analysis
