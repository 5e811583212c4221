// `viosim sweep`'s pure parts: parsing --over and the three output formats.
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/format.h"
#include "analysis/runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

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
