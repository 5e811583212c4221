// The virtio_blk guest stack over KVM/QEMU (scenarios/virtio_blk_kick_lock)
// on short fio runs: the lock/exit interplay as the stack's metrics show it.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "scenarios/fio_parser.h"
#include "scenarios/fio_builder.h"
#include "scenarios/loader.h"
#include "scenarios/units.h"
#include "sim/trace.h"

namespace viosim {
namespace {

struct Outcome {
  std::string trace;
  sim::Time exit_round_trip;  // the scenario's userspace MMIO exit
  double iops = 0;
  std::map<std::string, double> m;
  models::LockStat vq_lock;
};

// Runs the scenario's variant with `jobs` fio threads on `cpus` vCPUs for a
// short, fixed time.
Outcome RunVariant(const std::string& variant, int cpus, int jobs, bool trace = false,
                   const std::vector<std::string>& sets = {}) {
  absl::StatusOr<ScenarioFile> file = LoadScenarioFile("scenarios/virtio_blk_kick_lock.textproto");
  EXPECT_TRUE(file.ok()) << file.status();
  Scenario s = file->scenario;
  s.clear_variant();
  s.clear_published();
  for (const Variant& v : file->scenario.variant()) {
    if (v.name() == variant) s.MergeFrom(v.overlay());
  }
  EXPECT_TRUE(ApplyOverride(&s, absl::StrCat("platform.cpus=", cpus)).ok());
  for (const std::string& set : sets) EXPECT_TRUE(ApplyOverride(&s, set).ok()) << set;
  const std::string job = absl::StrCat(
      "[global]\ndirect=1\nbs=4k\nioengine=libaio\niodepth=64\nfilename=/dev/vdc\n"
      "time_based=1\nruntime=300ms\ngroup_reporting=1\n[f1]\nrw=randread\nnumjobs=",
      jobs, "\n");
  absl::StatusOr<fio::JobFile> jf = fio::ParseJobText("test.fio", job, "");
  EXPECT_TRUE(jf.ok()) << jf.status();
  StackExtras extras;
  FioRunOptions options;
  options.target_ci_pct = 0;
  options.replicate = false;  // one run: the tests read its extras and trace
  options.extras = &extras;
  sim::TraceWriter writer;
  if (trace) {
    options.trace = &writer;
    options.trace_start = sim::Time::Millis(50);
    options.trace_window = sim::Time::Micros(500);
  }
  absl::StatusOr<fio::FioReport> report = RunFio(s, *jf, options);
  EXPECT_TRUE(report.ok()) << report.status();
  Outcome o;
  // The scenario's userspace MMIO exit, both parts: the sourced round trip
  // and the time per exit no source explains.
  absl::StatusOr<sim::Time> exit = TimeOf(s.platform().kvm().mmio_exit_user().value());
  absl::StatusOr<sim::Time> unexplained = TimeOf(s.platform().kvm().exit_unexplained().value());
  EXPECT_TRUE(exit.ok()) << exit.status();
  EXPECT_TRUE(unexplained.ok()) << unexplained.status();
  if (exit.ok() && unexplained.ok()) o.exit_round_trip = *exit + *unexplained;
  for (const auto& [name, value] : extras.metrics) o.m[name] = value;
  // The stack's lock_stat rows: vq_lock and QEMU's BQL.
  int vq_locks = 0;
  for (const StackExtras::Lock& l : extras.locks) {
    if (l.name != "vq_lock") continue;
    o.vq_lock = l.stat;
    ++vq_locks;
  }
  EXPECT_EQ(vq_locks, 1);
  double ios = 0;
  uint64_t ms = 0;
  for (const fio::ThreadStat& t : report->entities) {
    ios += static_cast<double>(t.ddir[0].total_ios);
    ms = std::max(ms, t.ddir[0].runtime_ms);
  }
  o.iops = ms > 0 ? ios * 1000.0 / static_cast<double>(ms) : 0;
  if (trace) o.trace = writer.Finish();
  return o;
}

// One vCPU: the submitter and the interrupt handler share it, and both take
// vq_lock with interrupts off, so the lock is never contended and nothing
// spins, whichever side of the lock the kick is on.
TEST(VirtioBlkStack, OneVcpuNeverSpins) {
  for (const char* variant : {"before", "after"}) {
    const Outcome o = RunVariant(variant, 1, 1);
    EXPECT_GT(o.iops, 0) << variant;
    EXPECT_GT(o.vq_lock.acquisitions, 100u) << variant;
    EXPECT_EQ(o.vq_lock.contentions, 0u) << variant;
    EXPECT_EQ(o.m.at("vq_lock_wait_mean_us"), 0.0) << variant;
    EXPECT_EQ(o.m.at("vcpu_spin_pct"), 0.0) << variant;
  }
}

// Four vCPUs, kick inside the lock: every request kicks (nobody can add
// while the holder is out, so EVENT_IDX suppresses nothing), the lock is
// held for at least the exit round trip, and the others spin.
TEST(VirtioBlkStack, KickInsideTheLockSerializesTheExit) {
  const Outcome o = RunVariant("before", 4, 4);
  EXPECT_NEAR(o.m.at("kicks_per_request"), 1.0, 0.01);
  EXPECT_LT(o.m.at("kicks_suppressed_pct"), 1.0);
  EXPECT_GT(o.exit_round_trip, sim::Time::Zero());
  EXPECT_GT(o.m.at("vq_lock_hold_mean_us"), o.exit_round_trip.ToMicros());
  EXPECT_GT(o.m.at("vcpu_spin_pct"), 30.0);
}

// Notify outside the lock: the hold is the ring add, most kicks are
// suppressed because QEMU's pop loop is still running, and throughput rises.
TEST(VirtioBlkStack, NotifyOutsideTheLockSuppressesKicks) {
  const Outcome before = RunVariant("before", 4, 4);
  const Outcome after = RunVariant("after", 4, 4);
  EXPECT_LT(after.m.at("kicks_per_request"), 0.5);
  EXPECT_LT(after.m.at("vq_lock_hold_mean_us"), 5.0);
  EXPECT_LT(after.m.at("vcpu_spin_pct"), 10.0);
  EXPECT_GT(after.iops, 2.0 * before.iops);
}

// The transport decides how the interrupt is acknowledged, and KVM how the
// notify leaves the guest; the driver is the same code on both. virtio-mmio:
// every interrupt reads InterruptStatus and writes InterruptACK, two
// userspace exits. virtio-pci's MSI-X vector names the queue: none. With
// an ioeventfd the notify is an in-kernel exit on either.
TEST(VirtioBlkStack, TheTransportAcknowledgesTheInterrupt) {
  const Outcome mmio = RunVariant("after", 4, 4);
  const Outcome pci = RunVariant("after", 4, 4, false, {"stack.virtio_blk.transport=VIRTIO_PCI"});
  for (const Outcome* o : {&mmio, &pci}) EXPECT_GT(o->m.at("interrupts_per_request"), 0.0);
  EXPECT_GT(mmio.m.at("isr_exits_per_s"), 0.0);
  EXPECT_EQ(pci.m.at("isr_exits_per_s"), 0.0);
  EXPECT_GT(pci.iops, mmio.iops);  // the acknowledgement's exits were under the BQL
  const std::vector<std::string> ioeventfd = {"platform.kvm.ioeventfd=true",
                                              "platform.kvm.mmio_exit_kernel.value=1us"};
  const Outcome kernel = RunVariant("before", 4, 4, false, ioeventfd);
  EXPECT_GT(kernel.m.at("notify_exits_per_s"), 0.0);
  EXPECT_LT(kernel.m.at("vq_lock_hold_mean_us"), mmio.exit_round_trip.ToMicros());
}

// The trace shows a vCPU in the exit while the others spin on vq_lock.
TEST(VirtioBlkStack, TraceShowsExitsAndSpinning) {
  const Outcome o = RunVariant("before", 4, 4, /*trace=*/true);
  auto slice = [](models::CpuTime t) { return absl::StrCat("\"name\":\"", models::CpuTimeName(t), "\""); };
  EXPECT_NE(o.trace.find(slice(models::CpuTime::kExit)), std::string::npos);
  EXPECT_NE(o.trace.find(slice(models::CpuTime::kSpin)), std::string::npos);
  EXPECT_NE(o.trace.find("\"name\":\"vq_lock\""), std::string::npos);
}

// QEMU's threads on a pool of host CPUs (stack.virtio_blk.host_cpus): with
// aio=native, 5 threads on 8 cores never meet, and the run is the run of a
// core per role; with the pool's 64 workers on 2 cores they do, and the
// vCPUs lose time to their threads' preemptions (steal), which a core per
// role never costs them.
TEST(VirtioBlkStack, APoolOfHostCpusStealsFromTheVcpusOnlyWhenItIsShort) {
  const std::vector<std::string> native = {"stack.virtio_blk.aio=AIO_NATIVE"};
  std::vector<std::string> native_pool = native;
  native_pool.push_back("stack.virtio_blk.host_cpus=8");
  const Outcome own = RunVariant("after", 4, 4, false, native);
  const Outcome pooled = RunVariant("after", 4, 4, false, native_pool);
  EXPECT_EQ(pooled.iops, own.iops);
  EXPECT_EQ(pooled.m.at("vcpu_steal_pct"), 0.0);
  const Outcome pinned = RunVariant("after", 4, 4);
  const Outcome short_pool = RunVariant("after", 4, 4, false, {"stack.virtio_blk.host_cpus=2"});
  EXPECT_EQ(pinned.m.at("vcpu_steal_pct"), 0.0);
  EXPECT_GT(short_pool.m.at("vcpu_steal_pct"), 1.0);
  EXPECT_LT(short_pool.iops, pinned.iops);
}

// Idle vCPUs halt in the host after the patch (their threads asleep in
// kvm_vcpu_block); before it they are busy all but the first moments of
// this short run.
TEST(VirtioBlkStack, IdleVcpusHaltInTheHost) {
  const Outcome before = RunVariant("before", 4, 4);
  const Outcome after = RunVariant("after", 4, 4);
  EXPECT_GT(after.m.at("wfi_exits_per_s"), 0.0);
  EXPECT_LT(before.m.at("wfi_exits_per_s"), after.m.at("wfi_exits_per_s") / 10);
  EXPECT_GT(after.m.at("vcpu_idle_pct"), 10.0);
}

}  // namespace
}  // namespace viosim
