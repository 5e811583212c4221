// The costed fields of a resolved scenario: which fields count, that each
// one's --set path scales the value it names, and that no Source in any
// scenario file is left covering nothing.
#include "analysis/cost_fields.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/runner.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"

namespace analysis {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

viosim::Scenario Resolve(const std::string& text, const std::string& variant = "") {
  absl::StatusOr<viosim::ScenarioFile> f = viosim::ParseScenarioText("t.textproto", text);
  EXPECT_TRUE(f.ok()) << f.status();
  absl::StatusOr<viosim::Scenario> s = viosim::ResolveVariant(*f, variant, {});
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : viosim::Scenario();
}

constexpr char kLockBench[] = R"pb(
  platform { cpus: 4 lock_handoff { value: "0ns" source { kind: DEFINED ref: "none" } } }
  stack { lock { kind: TICKET } }
  workload {
    lockbench {
      threads: 4
      think { exponential { mean: "10us" } source { kind: DEFINED ref: "think" } }
      hold { uniform { low: "1us" high: "3us" } source { kind: MEASURED ref: "hold" } }
    }
  }
  variant { name: "slow" overlay { workload { lockbench { hold { uniform { high: "5us" } } } } } }
)pb";

TEST(CostFieldsTest, CostValuesAndDistributionParametersCarryTheirSource) {
  const std::vector<CostField> f = CostFields(Resolve(kLockBench, "slow"));
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].path, "platform.lock_handoff.value");
  EXPECT_EQ(f[0].source_path, "platform.lock_handoff.source");
  EXPECT_EQ(f[0].kind, viosim::Source::DEFINED);
  EXPECT_EQ(f[0].duration, sim::Time::Zero());
  EXPECT_EQ(f[1].path, "workload.lockbench.think.exponential.mean");
  EXPECT_EQ(f[1].duration, sim::Time::Micros(10));
  EXPECT_EQ(f[2].path, "workload.lockbench.hold.uniform.low");
  EXPECT_EQ(f[2].kind, viosim::Source::MEASURED);
  EXPECT_EQ(f[2].ref, "hold");
  EXPECT_EQ(f[3].path, "workload.lockbench.hold.uniform.high");
  EXPECT_EQ(f[3].duration, sim::Time::Micros(5));  // the variant's value
  for (const CostField& c : f) EXPECT_EQ(c.value, CostField::Value::kDuration);
}

TEST(CostFieldsTest, EmpiricalPointsCountTheirValuesNotTheirProbabilities) {
  viosim::Scenario s;
  auto* hold = s.mutable_workload()->mutable_lockbench()->mutable_hold();
  hold->mutable_source()->set_kind(viosim::Source::MEASURED);
  for (const auto& [p, v] : {std::pair{0.0, "1us"}, {1.0, "3us"}}) {
    auto* point = hold->mutable_empirical()->add_point();
    point->set_p(p);
    point->set_value(v);
  }
  const std::vector<CostField> f = CostFields(s);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].path, "workload.lockbench.hold.empirical.point[0].value");
  EXPECT_EQ(f[1].path, "workload.lockbench.hold.empirical.point[1].value");
}

TEST(CostFieldsTest, SiblingSourceCoversTheNumbersItNames) {
  viosim::Scenario s;
  auto* mq = s.mutable_stack()->mutable_virtio_blk_mq();
  mq->set_ring_size(256);  // no source: not a cost
  mq->set_read_bandwidth(2.5e9);
  mq->set_write_bandwidth(2.2e9);
  mq->mutable_bandwidth_source()->set_kind(viosim::Source::MEASURED);
  auto* net = s.mutable_stack()->mutable_raid10();
  net->set_lock_word_transfers(2);
  net->mutable_lock_word_transfers_source()->set_kind(viosim::Source::ESTIMATED);
  // Setting raid10 clears the oneof's virtio_blk_mq: only raid10 remains.
  std::vector<CostField> f = CostFields(s);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].path, "stack.raid10.lock_word_transfers");
  EXPECT_EQ(f[0].value, CostField::Value::kReal);
  EXPECT_EQ(f[0].number, 2);

  s.mutable_stack()->mutable_virtio_blk_mq()->set_read_bandwidth(2.5e9);
  s.mutable_stack()->mutable_virtio_blk_mq()->set_write_bandwidth(2.2e9);
  s.mutable_stack()->mutable_virtio_blk_mq()->mutable_bandwidth_source()->set_kind(viosim::Source::MEASURED);
  f = CostFields(s);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].path, "stack.virtio_blk_mq.read_bandwidth");
  EXPECT_EQ(f[0].source_path, "stack.virtio_blk_mq.bandwidth_source");
  EXPECT_EQ(f[1].path, "stack.virtio_blk_mq.write_bandwidth");
  EXPECT_EQ(f[1].number, 2.2e9);
}

TEST(CostFieldsTest, ScaledAssignmentRoundsAndRefusesBadFactors) {
  CostField d;
  d.path = "a.value";
  d.duration = sim::Time::Nanos(2001);
  EXPECT_EQ(*ScaledAssignment(d, 1.1), "a.value=2201100ps");
  EXPECT_EQ(*ScaledAssignment(d, 1.0 / 3), "a.value=667000ps");
  CostField i;
  i.path = "b";
  i.value = CostField::Value::kInteger;
  i.number = 7;
  EXPECT_EQ(*ScaledAssignment(i, 1.1), "b=8");
  EXPECT_EQ(*ScaledAssignment(i, 0.9), "b=6");
  CostField r;
  r.path = "c";
  r.value = CostField::Value::kReal;
  r.number = 0.1;
  EXPECT_EQ(*ScaledAssignment(r, 3), "c=0.30000000000000004");
  EXPECT_FALSE(ScaledAssignment(d, -1).ok());
  EXPECT_FALSE(ScaledAssignment(d, 1.0 / 0.0).ok());
  EXPECT_FALSE(ScaledAssignment(d, 1e30).ok());
}

// Every Source set under `m` (not in variants or published cells), by path.
void Sources(const Message& m, const std::string& path, std::set<std::string>* out) {
  std::vector<const FieldDescriptor*> fields;
  m.GetReflection()->ListFields(m, &fields);
  for (const FieldDescriptor* fd : fields) {
    if (fd->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || fd->is_repeated()) continue;
    const std::string sub = path.empty() ? fd->name() : absl::StrCat(path, ".", fd->name());
    if (fd->message_type() == viosim::Source::descriptor()) {
      out->insert(sub);
    } else {
      Sources(m.GetReflection()->GetMessage(m, fd), sub, out);
    }
  }
}

// In every variant of every scenario file: each Source covers at least one
// field (a new `X_source` whose siblings the naming rule misses fails
// here), and each field's path scales the value it was read from.
TEST(CostFieldsTest, EveryScenarioSourceCoversAFieldAndEveryPathScales) {
  absl::StatusOr<std::vector<std::string>> files = ScenarioFiles("scenarios");
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_FALSE(files->empty());
  for (const std::string& path : *files) {
    absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    for (const std::string& v : viosim::VariantNames(*file)) {
      SCOPED_TRACE(absl::StrCat(path, " variant ", v));
      absl::StatusOr<viosim::Scenario> s = viosim::ResolveVariant(*file, v, {});
      ASSERT_TRUE(s.ok()) << s.status();
      const std::vector<CostField> fields = CostFields(*s);
      std::set<std::string> sources, covering;
      Sources(*s, "", &sources);
      for (const CostField& f : fields) covering.insert(f.source_path);
      for (const std::string& src : sources) EXPECT_TRUE(covering.count(src)) << src << " covers no field";
      for (const CostField& f : fields) {
        // Scaled by 1 the field reads back the same; by 2, twice as much.
        for (double k : {1.0, 2.0}) {
          absl::StatusOr<std::string> a = ScaledAssignment(f, k);
          ASSERT_TRUE(a.ok()) << a.status();
          viosim::Scenario scaled = *s;
          ASSERT_TRUE(viosim::ApplyOverride(&scaled, *a).ok()) << *a;
          bool found = false;
          for (const CostField& g : CostFields(scaled)) {
            if (g.path != f.path) continue;
            found = true;
            if (f.value == CostField::Value::kDuration) {
              EXPECT_EQ(g.duration.ps(), f.duration.ps() * static_cast<int64_t>(k)) << *a;
            } else {
              EXPECT_EQ(g.number, f.number * k) << *a;
            }
          }
          EXPECT_TRUE(found) << f.path;
        }
      }
    }
  }
}

}  // namespace
}  // namespace analysis
