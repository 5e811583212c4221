// The rules that tie a resolved scenario's fields together and its fio jobs
// to its stack (scenarios/checks.h): each combination the models cannot run
// is refused by ResolveVariant with the place its value came from and every
// field involved, and every scenario that ships resolves.
#include "scenarios/checks.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/fio_parser.h"
#include "scenarios/loader.h"

namespace viosim {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kKickLock[] = "scenarios/virtio_blk_kick_lock.textproto";
constexpr char kBlkPoll[] = "scenarios/virtio_blk_poll.textproto";
constexpr char kBareMetal[] = "scenarios/baremetal_optane.textproto";
constexpr char kLockBench[] = "scenarios/lockbench.textproto";

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

ScenarioFile Load(const std::string& path) {
  absl::StatusOr<ScenarioFile> file = LoadScenarioFile(path);
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? *std::move(file) : ScenarioFile{};
}

// The message ResolveVariant refuses the variant with; it must be
// InvalidArgument.
std::string Refusal(const ScenarioFile& file, const std::string& variant, const std::vector<std::string>& overrides,
                    absl::string_view last_flag = "--set") {
  absl::StatusOr<Scenario> s = ResolveVariant(file, variant, overrides, last_flag);
  EXPECT_FALSE(s.ok()) << variant << " resolved";
  if (s.ok()) return "";
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  return std::string(s.status().message());
}

TEST(CheckTest, EveryShippedScenarioAndVariantResolves) {
  for (const char* path : {kKickLock, kBlkPoll, kBareMetal, kLockBench}) {
    const ScenarioFile file = Load(path);
    for (const std::string& v : VariantNames(file)) {
      absl::StatusOr<Scenario> s = ResolveVariant(file, v, {});
      EXPECT_TRUE(s.ok()) << path << " " << v << ": " << s.status();
    }
  }
}

// The combination that aborted in the guest driver: more tags than ring
// entries. The flag that set one, the place in the file of the other.
TEST(CheckTest, QueueDepthBeyondTheRingNamesTheFlagAndWhereTheRingIsWritten) {
  const ScenarioFile file = Load(kKickLock);
  const std::string m = Refusal(file, "after", {"stack.virtio_blk.queue_depth=256"});
  EXPECT_THAT(m, HasSubstr(absl::StrCat(
                     kKickLock, " (variant 'after'): --set 'stack.virtio_blk.queue_depth=256': field "
                     "'stack.virtio_blk.queue_depth' (256) exceeds what field 'stack.virtio_blk.ring_size' (128, at ",
                     FieldLocation(file, "stack.virtio_blk.ring_size"), ") can hold")));
  // A smaller ring set by the flag leads the message instead.
  EXPECT_THAT(Refusal(file, "before", {"stack.virtio_blk.ring_size=32"}),
              HasSubstr(absl::StrCat("--set 'stack.virtio_blk.ring_size=32': field 'stack.virtio_blk.queue_depth' "
                                     "(64, at ",
                                     FieldLocation(file, "stack.virtio_blk.queue_depth"), ")")));
}

TEST(CheckTest, ASweepValueIsNamedByItsFlag) {
  const ScenarioFile file = Load(kKickLock);
  EXPECT_THAT(Refusal(file, "after", {"stack.virtio_blk.queue_depth=512"}, "--over"),
              HasSubstr("--over 'stack.virtio_blk.queue_depth=512': field 'stack.virtio_blk.queue_depth' (512)"));
}

TEST(CheckTest, ValuesWrittenInTheFileLeadWithTheirLineInBaseOrOverlay) {
  const std::string job = WriteTemp("c1.fio", "[j]\nrw=randread\nioengine=libaio\niodepth=8\n");
  const std::string path = WriteTemp("c1.textproto", R"pb(name: "c1"
platform { cpus: 2 }
stack { virtio_blk { queue_depth: 64 ring_size: 32 } }
workload { fio { job_file: "c1.fio" } }
variant { name: "v"
  overlay { stack { virtio_blk { irq_cpu: 5 } } } }
)pb");
  (void)job;
  const ScenarioFile file = Load(path);
  const std::string m = Refusal(file, "v", {});
  EXPECT_THAT(m, HasSubstr(absl::StrCat(path, ":3:22 (variant 'v'): field 'stack.virtio_blk.queue_depth' (64) exceeds "
                                        "what field 'stack.virtio_blk.ring_size' (32, at ",
                                        path, ":3:38)")));
  EXPECT_THAT(m, HasSubstr(absl::StrCat(FieldLocation(file, "variant[0].overlay.stack.virtio_blk.irq_cpu"),
                                        " (variant 'v'): field 'stack.virtio_blk.irq_cpu' (5) names a vCPU "
                                        "the guest does not have: field 'platform.cpus' (2, at ",
                                        path, ":2:12)")));
}

TEST(CheckTest, AServiceRatioNeedsLinesThatQueue) {
  const std::string job = WriteTemp("r1.fio", "[j]\nrw=randread\nioengine=libaio\niodepth=8\n");
  const std::string path = WriteTemp("r1.textproto", R"pb(name: "r1"
platform { cpus: 4 scheduler: "fair" cache_lines { service_ratio: 0.5 arbitration: "unqueued" } }
stack { raid10 { } }
workload { fio { job_file: "r1.fio" } }
)pb");
  (void)job;
  const ScenarioFile file = Load(path);
  EXPECT_THAT(Refusal(file, kBaseVariant, {}),
              HasSubstr(absl::StrCat(path, ":2:52: field 'platform.cache_lines.service_ratio' (0.5) only means "
                                     "something for lines that queue, and field 'platform.cache_lines.arbitration' "
                                     "(\"unqueued\", at ", path, ":2:71) makes every transaction pay its own "
                                     "hand-off at once")));
  EXPECT_TRUE(ResolveVariant(file, kBaseVariant, {"platform.cache_lines.arbitration=fifo"}).ok());
}

TEST(CheckTest, RingsMustBePowersOfTwoWithRoomForARequest) {
  const ScenarioFile kick = Load(kKickLock);
  EXPECT_THAT(Refusal(kick, "after", {"stack.virtio_blk.ring_size=2"}),
              HasSubstr("field 'stack.virtio_blk.ring_size' (2) has fewer entries than the 3 descriptors"));
  EXPECT_THAT(Refusal(kick, "after", {"stack.virtio_blk.ring_size=96"}),
              HasSubstr("field 'stack.virtio_blk.ring_size' (96) is not a power of two"));
  const ScenarioFile poll = Load(kBlkPoll);
  EXPECT_THAT(Refusal(poll, "randread-4k-hipri0", {"stack.virtio_blk_mq.ring_size=2"}),
              HasSubstr("field 'stack.virtio_blk_mq.ring_size' (2) has fewer entries"));
  EXPECT_TRUE(ResolveVariant(poll, "randread-4k-hipri0", {"stack.virtio_blk_mq.ring_size=4"}).ok());
}

TEST(CheckTest, LatencySpreadsStayWithinTheirLatencies) {
  EXPECT_THAT(Refusal(Load(kKickLock), "after", {"stack.virtio_blk.disk_latency_exp_mean.value=1ms"}),
              HasSubstr("field 'stack.virtio_blk.disk_latency_exp_mean.value' (1ms) exceeds field "
                        "'stack.virtio_blk.disk_latency.value' (100us, at "));
  EXPECT_THAT(Refusal(Load(kBlkPoll), "read-4k-hipri1", {"stack.virtio_blk_mq.latency_exp_mean.value=1ms"}),
              HasSubstr("field 'stack.virtio_blk_mq.read_latency.value'"));
  // The device profile's own latencies count when the scenario sets none.
  const ScenarioFile bare = Load(kBareMetal);
  absl::StatusOr<fio::JobFile> jobs = fio::ParseJobText("j.fio", "[j]\nrw=randread\n", "");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  const std::vector<std::string> set = {"stack.nvme.latency_exp_mean.value=1ms"};
  absl::StatusOr<Scenario> stack = ResolveVariant(bare, kBaseVariant, set);
  ASSERT_TRUE(stack.ok()) << stack.status();
  const absl::Status s = CheckJobsOnStack(bare, set, *stack, *jobs, std::nullopt);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("field 'stack.nvme.read_latency.value' (4.6us, by default)"));
}

TEST(CheckTest, ACostlessVirtioBlkRequestWouldStopTheClock) {
  std::vector<std::string> zero;
  for (const char* f : {"platform.fio.per_io", "stack.virtio_blk.submit", "stack.virtio_blk.map_sg",
                        "stack.virtio_blk.add_sgs", "stack.virtio_blk.complete", "stack.virtio_blk.qemu_pop_submit",
                        "stack.virtio_blk.qemu_complete", "stack.virtio_blk.disk_latency_exp_mean",
                        "stack.virtio_blk.disk_latency"}) {
    zero.push_back(absl::StrCat(f, ".value=0ns"));
  }
  const ScenarioFile file = Load(kKickLock);
  EXPECT_THAT(Refusal(file, "after", zero), HasSubstr("simulated time would never advance"));
  zero.back() = "stack.virtio_blk.disk_latency.value=1ns";
  EXPECT_TRUE(ResolveVariant(file, "after", zero).ok());
}

TEST(CheckTest, TheBlkPollStackTakesOneIoPerVcpu) {
  const ScenarioFile file = Load(kBlkPoll);
  // Four jobs on three vCPUs: two would share one.
  EXPECT_THAT(Refusal(file, "randread-4k-hipri1", {"platform.cpus=3"}),
              AllOf(HasSubstr("scenarios/fio/blk-poll-hipri.fio:"), HasSubstr("job 'randread-4k' on "),
                    HasSubstr("clone 3 shares vCPU 0 with job 'randread-4k' (clone 0)"),
                    HasSubstr("field 'platform.cpus' (3, from --set 'platform.cpus=3')")));
  absl::StatusOr<Scenario> stack = ResolveVariant(file, kBaseVariant, {});
  ASSERT_TRUE(stack.ok()) << stack.status();
  absl::StatusOr<fio::JobFile> deep =
      fio::ParseJobText("deep.fio", "[d]\nrw=randread\nioengine=libaio\niodepth=2\n", "");
  ASSERT_TRUE(deep.ok()) << deep.status();
  EXPECT_THAT(CheckJobsOnStack(file, {}, *stack, *deep, std::nullopt).message(),
              HasSubstr("deep.fio:1: job 'd' on scenarios/virtio_blk_poll.textproto: ioengine=libaio with "
                        "iodepth=2 keeps up to 2 I/Os in flight"));
  // Groups run one after the other: each may use every vCPU.
  absl::StatusOr<fio::JobFile> groups =
      fio::ParseJobText("groups.fio", "[global]\nioengine=pvsync2\nnumjobs=4\nstonewall\n[a]\n[b]\n", "");
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_TRUE(CheckJobsOnStack(file, {}, *stack, *groups, std::nullopt).ok());
}

TEST(CheckTest, TheLockBenchNeedsTimeToPassAndACpuPerThread) {
  const ScenarioFile file = Load(kLockBench);
  EXPECT_THAT(Refusal(file, "N4",
                      {"workload.lockbench.think.constant.value=0ns", "workload.lockbench.hold.constant.value=0ns"}),
              AllOf(HasSubstr("--set 'workload.lockbench.think.constant.value=0ns': field 'workload.lockbench.think' "
                              "(mean 0s) and field 'workload.lockbench.hold' (mean 0s, from --set "
                              "'workload.lockbench.hold.constant.value=0ns')"),
                    HasSubstr("simulated time would never advance")));
  EXPECT_TRUE(ResolveVariant(file, "N4", {"workload.lockbench.think.constant.value=0ns"}).ok());
  EXPECT_THAT(Refusal(file, "N4", {"platform.cpus=2"}),
              HasSubstr("field 'workload.lockbench.threads' (4, at "));
  EXPECT_THAT(Refusal(file, "N4", {"workload.lockbench.think.uniform.low=5us", "workload.lockbench.think.uniform.high=1us"}),
              HasSubstr("field 'workload.lockbench.think': Uniform: need 0 <= low <= high"));
}

TEST(CheckTest, SimulatedTimeHasAHorizon) {
  const ScenarioFile file = Load(kLockBench);
  EXPECT_THAT(Refusal(file, "N4", {"run.warmup=600000s", "run.duration=600000s"}),
              HasSubstr("field 'run.duration' (600000s) and field 'run.warmup' (600000s, from --set "
                        "'run.warmup=600000s') add up to more than 1000000s"));
  // One duration beyond the horizon is refused where it is written.
  EXPECT_THAT(Refusal(file, "N4", {"workload.lockbench.hold.exponential.mean=1000001s"}),
              HasSubstr("field 'workload.lockbench.hold.exponential.mean': duration must be at most 1000000s"));
  const std::string path = WriteTemp("h.textproto", "run { duration: \"2000000s\" }\n");
  absl::StatusOr<ScenarioFile> far = LoadScenarioFile(path);
  ASSERT_FALSE(far.ok());
  EXPECT_THAT(far.status().message(), HasSubstr(absl::StrCat(path, ":1:7: field 'run.duration': duration must be at most")));
}

TEST(CheckTest, FioJobsMustFitTheHorizonTheBatchesAndMemory) {
  const ScenarioFile file = Load(kBareMetal);
  absl::StatusOr<Scenario> stack = ResolveVariant(file, kBaseVariant, {});
  ASSERT_TRUE(stack.ok()) << stack.status();
  auto check = [&](const std::string& text, std::optional<double> target = std::nullopt) {
    absl::StatusOr<fio::JobFile> jobs = fio::ParseJobText("j.fio", text, "");
    EXPECT_TRUE(jobs.ok()) << jobs.status();
    return jobs.ok() ? CheckJobsOnStack(file, {}, *stack, *jobs, target) : jobs.status();
  };
  EXPECT_THAT(check("[j]\nruntime=365d\ntime_based\n").message(),
              HasSubstr("j.fio:1: job 'j' on scenarios/baremetal_optane.textproto: ramp_time (0s) plus runtime "
                        "(31536000s) exceed 1000000s"));
  EXPECT_THAT(check("[j]\nramp_time=20d\nruntime=1\n").message(), HasSubstr("ramp_time (1728000s)"));
  EXPECT_THAT(check("[j]\nioengine=libaio\niodepth=65536\nnumjobs=4096\n").message(),
              HasSubstr("numjobs=4096 with iodepth=65536 brings the jobs (4240 slots each) and their I/O units to "
                        "285802496 slots"));
  // Jobs weigh beside their I/O units: 4,096 jobs of one I/O each held
  // 2.2 GB, and a hundred such sections were killed by the kernel at 23 GB.
  EXPECT_THAT(check("[j]\nnumjobs=4096\n").message(),
              HasSubstr("numjobs=4096 with iodepth=1 brings the jobs (4240 slots each) and their I/O units to 17371136"));
  std::string sections = "[global]\nnumjobs=2048\n";
  for (int i = 0; i < 100; ++i) absl::StrAppend(&sections, "[s", i, "]\n");
  EXPECT_THAT(check(sections).message(), HasSubstr("j.fio:4: job 's1' on "));
  EXPECT_TRUE(check("[j]\nnumjobs=2048\n").ok());
  EXPECT_THAT(check("[j]\ncpus_allowed=8\n").message(),
              HasSubstr("j.fio:2: cpus_allowed '8': CPU 8 does not exist (the stack has 8): job 'j' on "));
  EXPECT_TRUE(check("[j]\nruntime=2000\ntime_based\n").ok());
  // Run the full length in 50us batches (a 1ms cap), 2000s is too many.
  const std::vector<std::string> short_cap = {"workload.fio.max_group_time=1ms"};
  absl::StatusOr<Scenario> capped = ResolveVariant(file, kBaseVariant, short_cap);
  ASSERT_TRUE(capped.ok()) << capped.status();
  absl::StatusOr<fio::JobFile> long_job = fio::ParseJobText("j.fio", "[j]\nruntime=2000\ntime_based\n", "");
  ASSERT_TRUE(long_job.ok());
  EXPECT_TRUE(CheckJobsOnStack(file, short_cap, *capped, *long_job, std::nullopt).ok());
  EXPECT_THAT(CheckJobsOnStack(file, short_cap, *capped, *long_job, 0.0).message(),
              HasSubstr("spans more than 20000000 measurement batches of 50us"));
}

TEST(CheckTest, APerPageCostTimesALargeBlockMustFitTheHorizon) {
  EXPECT_THAT(Refusal(Load(kBlkPoll), "read-128k-hipri0", {"stack.virtio_blk_mq.per_page.value=100000s"}),
              AllOf(HasSubstr("scenarios/fio/blk-poll-irq.fio:"),
                    HasSubstr("a block of 131072 bytes has 31 pages after its first, each costing field "
                              "'stack.virtio_blk_mq.per_page.value' (100000s, from --set"),
                    HasSubstr("one request would take more than 1000000s")));
  EXPECT_TRUE(ResolveVariant(Load(kBlkPoll), "read-4k-hipri0", {"stack.virtio_blk_mq.per_page.value=100000s"}).ok());
}

TEST(CheckTest, JobsThatWouldWaitForeverAreNamed) {
  const ScenarioFile file = Load(kBareMetal);
  absl::StatusOr<Scenario> stack = ResolveVariant(file, kBaseVariant, {});
  ASSERT_TRUE(stack.ok()) << stack.status();
  auto check = [&](const std::string& text) {
    absl::StatusOr<fio::JobFile> jobs = fio::ParseJobText("w.fio", text, "");
    EXPECT_TRUE(jobs.ok()) << jobs.status();
    return jobs.ok() ? CheckJobsOnStack(file, {}, *stack, *jobs, std::nullopt) : jobs.status();
  };
  EXPECT_THAT(check("[a]\nwait_for=b\n[b]\nwait_for=a\n").message(),
              AllOf(HasSubstr("w.fio:1: job 'a' on scenarios/baremetal_optane.textproto: wait_for=b leads back to "
                              "this job"),
                    HasSubstr("w.fio:3: job 'b' on ")));
  EXPECT_THAT(check("[a]\nwait_for=a\nnumjobs=2\n").message(), HasSubstr("(its own 2 clones)"));
  EXPECT_THAT(check("[a]\nwait_for=b\n[b]\nstonewall\n").message(),
              HasSubstr("wait_for=b names job 'b' (line 3) of a later group"));
  // Waiting for a job of the same or an earlier group is what wait_for is for.
  EXPECT_TRUE(check("[a]\n[b]\nwait_for=a\n[c]\nstonewall\nwait_for=b\n").ok());
  EXPECT_TRUE(check("[a]\nwait_for=a\n").ok());  // its own name and no clone: no wait
}

TEST(CheckTest, AGroupTimeCapMustLeaveRoomForItsBatches) {
  EXPECT_THAT(Refusal(Load(kKickLock), "after", {"workload.fio.max_group_time=19ps"}),
              HasSubstr("field 'workload.fio.max_group_time' (19ps) is too short to measure in 20 batches; it must "
                        "be at least 20ps"));
  EXPECT_TRUE(ResolveVariant(Load(kKickLock), "after", {"workload.fio.max_group_time=20ps"}).ok());
}

TEST(CheckTest, StacksThatWouldNotFitInMemory) {
  const ScenarioFile bare = Load(kBareMetal);
  absl::StatusOr<fio::JobFile> jobs = fio::ParseJobText("j.fio", "[j]\n", "");
  ASSERT_TRUE(jobs.ok());
  const std::vector<std::string> set = {"platform.cpus=4096", "stack.nvme.queue_depth=65536"};
  absl::StatusOr<Scenario> stack = ResolveVariant(bare, kBaseVariant, set);
  ASSERT_TRUE(stack.ok()) << stack.status();
  EXPECT_THAT(CheckJobsOnStack(bare, set, *stack, *jobs, std::nullopt).message(),
              HasSubstr("scenarios/baremetal_optane.textproto: --set 'platform.cpus=4096': field 'platform.cpus' "
                        "(4096) x field 'stack.nvme.queue_depth' (65536, from --set "
                        "'stack.nvme.queue_depth=65536') make 536870912 blk-mq tags"));
  EXPECT_THAT(Refusal(Load(kBlkPoll), "read-4k-hipri0", {"platform.cpus=4096", "stack.virtio_blk_mq.ring_size=32768"}),
              HasSubstr("make 134217728 virtqueue entries"));
}

TEST(CheckTest, AMissingJobSectionIsNamedBeforeAnythingRuns) {
  EXPECT_THAT(Refusal(Load(kBlkPoll), "read-4k-hipri0", {"workload.fio.section=nope"}),
              AllOf(HasSubstr("field 'workload.fio.section' (nope)"), HasSubstr("no job section of that name")));
}

}  // namespace
}  // namespace viosim
