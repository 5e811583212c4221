// Stacks as registered parts (scenarios/stack.h): every part the scenario
// language can name is registered and the other way round, every workload
// is carried by registered parts, each part reports the metrics it
// declares, and an fio workload runs under the one measurement engine with
// the scenario's run block and an exact window.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/builder.h"
#include "scenarios/fio_builder.h"
#include "scenarios/fio_parser.h"
#include "scenarios/loader.h"
#include "scenarios/params.h"
#include "scenarios/scenario.pb.h"
#include "scenarios/stack.h"
#include "sim/simulator.h"

namespace viosim {
namespace {

using ::testing::HasSubstr;

// Every field of the device oneof names a registered part, and every part
// on a stack is one of them (lockbench, which needs no stack, is named by
// its workload).
TEST(StackTest, EveryFieldOfTheDeviceOneofIsARegisteredPartAndNothingElse) {
  const google::protobuf::OneofDescriptor* oneof = Stack::descriptor()->FindOneofByName("device");
  ASSERT_NE(oneof, nullptr);
  std::set<std::string> fields, parts;
  for (int i = 0; i < oneof->field_count(); ++i) fields.insert(oneof->field(i)->name());
  for (const StackPart& p : StackParts()) {
    if (p.on_stack) {
      parts.insert(p.name);
    } else {
      EXPECT_NE(Workload::descriptor()->FindFieldByName(p.name), nullptr) << p.name;
    }
  }
  EXPECT_EQ(fields, parts);
}

// fio runs on every block stack (a part with `build`); every other
// workload is carried by exactly one part, which builds it itself
// (`build_run`), and is the part OwnWorkloadPart finds.
TEST(StackTest, EveryWorkloadIsCarriedByRegisteredParts) {
  const google::protobuf::OneofDescriptor* oneof = Workload::descriptor()->FindOneofByName("kind");
  ASSERT_NE(oneof, nullptr);
  for (const StackPart& p : StackParts()) {
    SCOPED_TRACE(p.name);
    EXPECT_NE(p.build == nullptr, p.build_run == nullptr) << "a part has one builder";
    EXPECT_EQ(p.build != nullptr, p.workload == Workload::kFio) << "a block stack carries fio, and only it";
  }
  for (int i = 0; i < oneof->field_count(); ++i) {
    const auto w = static_cast<Workload::KindCase>(oneof->field(i)->number());
    SCOPED_TRACE(oneof->field(i)->name());
    std::vector<const StackPart*> carriers;
    for (const StackPart& p : StackParts()) {
      if (p.workload == w) carriers.push_back(&p);
    }
    ASSERT_FALSE(carriers.empty()) << "a workload no part carries";
    if (w == Workload::kFio) {
      EXPECT_EQ(OwnWorkloadPart(w), nullptr);
    } else {
      EXPECT_EQ(carriers.size(), 1u);
      EXPECT_EQ(OwnWorkloadPart(w), carriers.front());
    }
  }
  EXPECT_EQ(OwnWorkloadPart(Workload::KIND_NOT_SET), nullptr);
}

TEST(StackTest, TwoPartsInOneStackAreAnErrorNamingTheFileLineAndTheOneof) {
  absl::StatusOr<ScenarioFile> f =
      ParseScenarioText("two.textproto", "name: \"two\"\nstack {\n  nvme { }\n  virtio_blk_mq { }\n}\n");
  ASSERT_FALSE(f.ok());
  // At the second part, the one that cannot be added.
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("two.textproto:4:3: field 'stack.virtio_blk_mq'"));
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("oneof \"device\""));
}

TEST(StackTest, AScenarioWithoutADeviceSaysWhichPartsExist) {
  Scenario s;
  absl::StatusOr<const StackPart*> part = StackPartOf(s);
  ASSERT_FALSE(part.ok());
  EXPECT_EQ(part.status().message(), "field 'stack': the scenario has no block stack to run fio on (one of nvme, "
                                     "virtio_blk, virtio_blk_mq, raid10, raid1)");
}

// A part that carries its own workload is no block stack for fio.
TEST(StackTest, FioOnTheNetworkStackSaysWhatItCarries) {
  Scenario s;
  s.mutable_stack()->mutable_vhost_net();
  absl::StatusOr<const StackPart*> part = StackPartOf(s);
  ASSERT_FALSE(part.ok());
  EXPECT_EQ(part.status().message(),
            "field 'stack.vhost_net': a network stack, which carries workload.iperf, not fio's block I/O");
}

absl::StatusOr<Scenario> Resolved(const std::string& file, const std::string& variant) {
  absl::StatusOr<ScenarioFile> f = LoadScenarioFile(absl::StrCat("scenarios/", file));
  if (!f.ok()) return f.status();
  return ResolveVariant(*f, variant, {});
}

std::vector<std::string> ScenarioPaths() {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator("scenarios")) {
    if (e.path().extension() == ".textproto") paths.push_back(e.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Each registered part, built from every variant of every scenario under
// scenarios/ that uses it, reports exactly the metrics its part declares,
// in that order, and every part is built by some scenario. The names the
// loader knows a variant by (MetricNames) hold them: all of them for a part
// that carries its own workload, after fio's for a block stack under fio.
TEST(StackTest, EachPartReportsTheMetricsItDeclares) {
  absl::StatusOr<fio::JobFile> jobs = fio::ParseCommandLine({"--name=j", "--rw=randread", "--bs=4k"});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  const std::vector<std::string> paths = ScenarioPaths();
  ASSERT_GE(paths.size(), 7u);
  std::set<std::string> built;
  for (const std::string& path : paths) {
    absl::StatusOr<ScenarioFile> f = LoadScenarioFile(path);
    ASSERT_TRUE(f.ok()) << f.status();
    for (const std::string& variant : VariantNames(*f)) {
      SCOPED_TRACE(absl::StrCat(path, " variant ", variant));
      absl::StatusOr<Scenario> s = ResolveVariant(*f, variant, {});
      ASSERT_TRUE(s.ok()) << s.status();
      sim::Simulator sim;
      std::vector<std::string> names;
      const StackPart* part = OwnWorkloadPart(WorkloadOf(*s));
      if (part != nullptr) {
        absl::StatusOr<std::unique_ptr<BuiltRun>> run = part->build_run(sim, Params(*s, nullptr));
        ASSERT_TRUE(run.ok()) << run.status();
        for (const sim::RatioMetric& m : (*run)->Metrics()) names.push_back(m.name);
        EXPECT_EQ(MetricNames(*s), part->metric_names());
      } else {
        // fio, or a stack alone for `viosim fio --stack`: a block stack.
        absl::StatusOr<const StackPart*> block = StackPartOf(*s);
        ASSERT_TRUE(block.ok()) << block.status();
        part = *block;
        absl::StatusOr<FioRig> rig = FioRig::Make(sim, *s, *jobs, fio::WorkloadControl());
        ASSERT_TRUE(rig.ok()) << rig.status();
        for (const sim::RatioMetric& m : rig->stack->Metrics()) names.push_back(m.name);
        if (WorkloadOf(*s) == Workload::kFio) {
          const std::vector<std::string> all = MetricNames(*s);
          EXPECT_NE(std::search(all.begin(), all.end(), names.begin(), names.end()), all.end());
        }
      }
      EXPECT_EQ(names, part->metric_names());
      built.insert(part->name);
    }
  }
  EXPECT_EQ(built.size(), StackParts().size()) << "a registered part no scenario builds";
}

// viosim run of an fio workload: warm-up, duration and batches come from the
// scenario's run block, and IOPS is completions over the window's exact
// length (no rounding of the runtime).
TEST(StackTest, FioRunsUnderTheScenariosRunBlockWithAnExactWindow) {
  absl::StatusOr<ScenarioFile> f = LoadScenarioFile("scenarios/virtio_blk_poll.textproto");
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<Scenario> s = ResolveVariant(
      *f, "randread-4k-hipri0", {"run.warmup=5ms", "run.duration=30ms", "run.batches=10"});
  ASSERT_TRUE(s.ok()) << s.status();
  RunOptions options;
  options.base_dir = "scenarios";
  absl::StatusOr<VariantResult> r = RunScenario(*s, "randread-4k-hipri0", options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->warmup, sim::Time::Millis(5));
  EXPECT_EQ(r->duration, sim::Time::Millis(30));
  EXPECT_EQ(r->batches, 10);
  ASSERT_FALSE(r->metrics.empty());
  const sim::MetricEstimate& iops = r->metrics[0];
  ASSERT_EQ(iops.name, "iops");
  ASSERT_TRUE(iops.ci95.has_value());
  // iops x 30ms is the number of completions in the window: a whole number.
  const double completions = iops.value * 0.030;
  EXPECT_GT(completions, 1000);
  EXPECT_NEAR(completions, std::round(completions), 1e-6);
  // The per-CPU table has the kernel's columns, and the vCPUs' exit and guest.
  EXPECT_EQ(r->cpu_states, (std::vector<std::string>{"user", "system", "irq", "softirq", "idle", "spin", "poll",
                                                      "exit", "guest"}));
  ASSERT_EQ(r->cpus.size(), 4u);
  double sum = 0;
  for (size_t i = 0; i + 1 < r->cpus[0].state_pct.size(); ++i) sum += r->cpus[0].state_pct[i];  // guest overlaps
  EXPECT_NEAR(sum, 100.0, 1e-6);
}

// The trace's window edges: every slice is clipped to the traced window (a
// lock held since before it starts at the edge, as the CPU's slice does, so
// the two nest), and slices in progress at its end are closed there: a vCPU
// that never idles (kick inside the lock: it spins or exits) is covered
// from edge to edge with no gap (and no other CPU's slices on its track).
TEST(StackTest, TraceSlicesAreClippedToTheWindowAndClosedAtItsEnd) {
  absl::StatusOr<Scenario> s = Resolved("virtio_blk_kick_lock.textproto", "before");
  ASSERT_TRUE(s.ok()) << s.status();
  RunOptions options;
  options.base_dir = "scenarios";
  options.trace = true;
  options.trace_window = sim::Time::Micros(500);
  absl::StatusOr<VariantResult> r = RunScenario(*s, "before", options);
  ASSERT_TRUE(r.ok()) << r.status();
  const double from = r->warmup.ToMicros(), to = from + 500;
  const std::regex slice(
      R"re(\{"name":"([^"]*)","cat":"([^"]*)","ph":"X","ts":([0-9.]+),"dur":([0-9.]+),"pid":1,"tid":([0-9]+))re");
  std::map<int, double> cpu_time;
  int slices = 0;
  for (auto it = std::sregex_iterator(r->trace_json.begin(), r->trace_json.end(), slice);
       it != std::sregex_iterator(); ++it) {
    const double ts = std::stod((*it)[3]), dur = std::stod((*it)[4]);
    ++slices;
    EXPECT_GE(ts, from - 1e-6) << (*it)[0];
    EXPECT_LE(ts + dur, to + 1e-6) << (*it)[0];
    if ((*it)[2] == "cpu") cpu_time[std::stoi((*it)[5])] += dur;
  }
  EXPECT_GT(slices, 40);
  for (int vcpu = 0; vcpu < 4; ++vcpu) EXPECT_NEAR(cpu_time[vcpu], 500, 1e-3) << "vcpu" << vcpu;
  // QEMU's host CPUs have tracks of their own after the vCPUs'.
  EXPECT_NE(r->trace_json.find(R"("tid":8,"args":{"name":"host4 qemu/main"})"), std::string::npos);
}

TEST(StackTest, AJobFileWithMoreThanOneGroupIsRefusedByTheEngineNamingTheField) {
  absl::StatusOr<ScenarioFile> f = LoadScenarioFile("scenarios/virtio_blk_poll.textproto");
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<Scenario> s = ResolveVariant(*f, "randread-4k-hipri0", {"workload.fio.section="});
  ASSERT_TRUE(s.ok()) << s.status();
  RunOptions options;
  options.base_dir = "scenarios";
  absl::StatusOr<VariantResult> r = RunScenario(*s, "randread-4k-hipri0", options);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("workload.fio"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("groups"));
}

// A run that seeds no random stream (vhost-wake's model has none) is the
// same at every seed: the run at the next seed is answered from the first,
// with its own seed. A run that draws (fio's random offsets) is run again
// and differs.
TEST(RunScenarioTest, OnlyARunWithoutRandomStreamsIsAnsweredForAnotherSeed) {
  // Variant `v` of `path`, shortened, at `seed`. Kept results live as long
  // as the process: a warm-up of its own per execution of this test keeps
  // a repeated test (--gtest_repeat) from finding its earlier results.
  static int round = 0;
  const std::string warmup = absl::StrCat("run.warmup=", 1000 + ++round, "us");
  auto run = [&](const char* path, const char* v, int seed) {
    absl::StatusOr<ScenarioFile> f = LoadScenarioFile(path);
    EXPECT_TRUE(f.ok()) << f.status();
    absl::StatusOr<Scenario> s = ResolveVariant(
        *f, v, {warmup, "run.duration=5ms", "run.batches=5", absl::StrCat("run.seed=", seed)});
    EXPECT_TRUE(s.ok()) << s.status();
    RunOptions options;
    options.base_dir = "scenarios";
    absl::StatusOr<VariantResult> r = RunScenario(*s, v, options);
    EXPECT_TRUE(r.ok()) << r.status();
    return *r;
  };
  const uint64_t answered = RunsAnsweredFromAnotherSeed();
  const VariantResult a = run("scenarios/vhost_work_queue.textproto", "streams8-original", 1);
  const VariantResult b = run("scenarios/vhost_work_queue.textproto", "streams8-original", 2);
  EXPECT_EQ(RunsAnsweredFromAnotherSeed(), answered + 1);
  EXPECT_EQ(a.seed, 1u);
  EXPECT_EQ(b.seed, 2u);
  ASSERT_EQ(a.metrics.size(), b.metrics.size());
  for (size_t i = 0; i < a.metrics.size(); ++i) EXPECT_EQ(a.metrics[i].value, b.metrics[i].value);

  const VariantResult c = run("scenarios/virtio_blk_poll.textproto", "randread-4k-hipri0", 1);
  const VariantResult d = run("scenarios/virtio_blk_poll.textproto", "randread-4k-hipri0", 2);
  EXPECT_EQ(RunsAnsweredFromAnotherSeed(), answered + 1);
  EXPECT_NE(c.events, d.events);
}

// Any run is deterministic: the same scenario, seed and options again (a
// calibration pass that repeats the one before) is answered from the first
// run, a draw-making model included; the job file's text is part of what
// ran.
TEST(RunScenarioTest, ARunRepeatedExactlyIsAnsweredFromTheFirst) {
  const std::string dir = testing::TempDir();
  const std::string job = absl::StrCat(dir, "/repeat.fio");
  auto write_job = [&](int numjobs) {
    std::ofstream(job) << "[global]\nioengine=pvsync2\ndirect=1\nhipri=0\nnumjobs=" << numjobs
                       << "\n[randread-4k]\nrw=randread\nbs=4k\n";
  };
  // A warm-up of its own per execution, as above.
  static int round = 0;
  const std::string warmup = absl::StrCat("run.warmup=", 1000 + ++round, "us");
  auto run = [&](int seed) {
    absl::StatusOr<ScenarioFile> f = LoadScenarioFile("scenarios/virtio_blk_poll.textproto");
    EXPECT_TRUE(f.ok()) << f.status();
    absl::StatusOr<Scenario> s =
        ResolveVariant(*f, "randread-4k-hipri0",
                       {warmup, "run.duration=5ms", "run.batches=5", absl::StrCat("run.seed=", seed),
                        absl::StrCat("workload.fio.job_file=", job)});
    EXPECT_TRUE(s.ok()) << s.status();
    RunOptions options;
    options.base_dir = "scenarios";
    absl::StatusOr<VariantResult> r = RunScenario(*s, "randread-4k-hipri0", options);
    EXPECT_TRUE(r.ok()) << r.status();
    return *r;
  };
  write_job(2);
  const uint64_t repeats = RunsAnsweredAsRepeats();
  const VariantResult a = run(7);
  const VariantResult b = run(7);
  EXPECT_EQ(RunsAnsweredAsRepeats(), repeats + 1);
  EXPECT_EQ(a.events, b.events);
  const VariantResult c = run(8);  // another seed: run
  EXPECT_EQ(RunsAnsweredAsRepeats(), repeats + 1);
  EXPECT_NE(c.events, a.events);
  write_job(4);  // the same name, another workload: run
  const VariantResult d = run(7);
  EXPECT_EQ(RunsAnsweredAsRepeats(), repeats + 1);
  EXPECT_NE(d.events, a.events);
  // A job file that reads the environment is not kept: the same text is
  // another workload when the variable changes.
  std::ofstream(job) << "[global]\nioengine=pvsync2\ndirect=1\nhipri=0\nnumjobs=${VIOSIM_STACK_TEST_JOBS}"
                     << "\n[randread-4k]\nrw=randread\nbs=4k\n";
  setenv("VIOSIM_STACK_TEST_JOBS", "2", 1);
  const VariantResult e = run(7);
  setenv("VIOSIM_STACK_TEST_JOBS", "4", 1);
  const VariantResult f = run(7);
  unsetenv("VIOSIM_STACK_TEST_JOBS");
  EXPECT_EQ(RunsAnsweredAsRepeats(), repeats + 1);
  EXPECT_EQ(e.events, a.events);
  EXPECT_EQ(f.events, d.events);
}

}  // namespace
}  // namespace viosim
