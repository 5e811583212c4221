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

}  // namespace
}  // namespace analysis
