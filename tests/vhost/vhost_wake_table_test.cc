// scenarios/vhost_work_queue.textproto against issue 11's acceptance items
// that the model meets (docs/vhost_wake.md lists the ones it does not):
//   - throughput within 3% of the post in all 8 cells, and never above
//     the link's TCP goodput at its MTU;
//   - with one stream (one waker at a time, no contention on work_lock)
//     both variants give the same vhost CPU% within 1%;
//   - the variant under work_lock holds work_lock longer (the wake-up is
//     inside it) and makes its wakers wait longer;
//   - the what-if direction (the guest receives) also stays at the wire;
//   - what the patch can save anyone (all spinning for work_lock) is below
//     the post's saving, and pi_lock, when modeled, is contended only
//     after the patch (docs/vhost_wake.md, "Mechanisms tried");
// the TCP the streams run (Linux 3.0's, measured over iperf's 10 s run)
// keeps large frames at every stream count, losing only where the host
// queue's skbs run out. (That its FITTED cost is still the fit,
// tests/analysis:calibration_current_test checks for every scenario.)
#include <cmath>
#include <map>
#include <regex>
#include <vector>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/runner.h"
#include "gtest/gtest.h"
#include "models/net/link.h"
#include "scenarios/builder.h"
#include "scenarios/loader.h"

namespace viosim {
namespace {

constexpr char kScenario[] = "scenarios/vhost_work_queue.textproto";

struct Row {
  int streams;
  double tp_original, tp_modified;
};
// Seed 002's table (throughput, Gb/s).
constexpr Row kRows[] = {{1, 9.59, 9.59}, {8, 9.61, 9.62}, {64, 9.58, 9.55}, {256, 9.6, 9.6}};

// One variant of the scenario with `sets` applied, run in full.
absl::StatusOr<VariantResult> RunResult(const std::string& variant, const std::vector<std::string>& sets,
                                        const RunOptions& options = RunOptions{}) {
  absl::StatusOr<ScenarioFile> file = LoadScenarioFile(kScenario);
  if (!file.ok()) return file.status();
  absl::StatusOr<Scenario> s = ResolveVariant(*file, variant, sets);
  if (!s.ok()) return s.status();
  return RunScenario(*s, variant, options);
}

std::map<std::string, double> RunVariant(const std::string& variant, const std::vector<std::string>& sets = {}) {
  absl::StatusOr<VariantResult> r = RunResult(variant, sets);
  EXPECT_TRUE(r.ok()) << r.status();
  std::map<std::string, double> m;
  if (r.ok()) {
    for (const auto& e : r->metrics) m[e.name] = e.value;
  }
  return m;
}

double WireGoodputGbps() {
  models::LinkParams p;
  p.rate_bps.value = 10e9;
  p.mtu.value = 1500;
  p.tcpip_header.value = 52;
  p.framing.value = 38;
  return models::Link::MaxGoodputBps(p) / 1e9;
}

TEST(VhostWakeTableTest, ThroughputIsWithinThreePercentAndNeverAboveTheWire) {
  const double wire = WireGoodputGbps();
  EXPECT_NEAR(wire, 9.4148, 1e-3);
  for (const Row& r : kRows) {
    for (const char* col : {"original", "modified"}) {
      const std::string v = absl::StrCat("streams", r.streams, "-", col);
      SCOPED_TRACE(v);
      const double tp = RunVariant(v)["throughput_gbps"];
      const double published = std::string(col) == "original" ? r.tp_original : r.tp_modified;
      EXPECT_LE(std::abs(tp / published - 1), 0.03) << tp;
      EXPECT_LE(tp, wire * (1 + 1e-9)) << "above the link's goodput";
    }
  }
}

// Even a shorter server turnaround, which lets the streams fill the link
// sooner, leaves the throughput at the wire's ceiling, not above it.
TEST(VhostWakeTableTest, AFasterPathDoesNotBeatTheWire) {
  const double tp =
      RunVariant("streams8-original", {"stack.vhost_net.server_turnaround.value=1us"})["throughput_gbps"];
  EXPECT_LE(tp, WireGoodputGbps() * (1 + 1e-9));
  EXPECT_GT(tp, WireGoodputGbps() * 0.99);
}

// The what-if direction (the guest receives: vhost's handle_rx copies each
// data packet into several mergeable buffers, the guest acknowledges it):
// the server's data fills the link but never beats it, and the packets,
// kicks and interrupts keep flowing in both columns.
TEST(VhostWakeTableTest, TheGuestReceivingFillsTheLinkWithoutBeatingIt) {
  for (const char* v : {"streams1-original", "streams256-modified"}) {
    SCOPED_TRACE(v);
    const std::map<std::string, double> m = RunVariant(v, {"workload.iperf.guest_receives=true"});
    EXPECT_LE(m.at("throughput_gbps"), WireGoodputGbps() * (1 + 1e-9));
    EXPECT_GT(m.at("throughput_gbps"), WireGoodputGbps() * 0.99);
    EXPECT_GT(m.at("kicks_per_s"), 0);
    EXPECT_GT(m.at("interrupts_per_s"), 0);
  }
}

TEST(VhostWakeTableTest, OneWakerWithoutContentionGivesTheSameCpuInBothVariants) {
  const std::map<std::string, double> o = RunVariant("streams1-original");
  const std::map<std::string, double> m = RunVariant("streams1-modified");
  // One stream: the kick and the ACKs' softirq are the only wakers.
  EXPECT_LT(o.at("work_lock_wait_mean_us"), 1e-3) << "one stream: next to no contention on work_lock";
  EXPECT_NEAR(m.at("vhost_cpu_pct") / o.at("vhost_cpu_pct"), 1.0, 0.01);
}

TEST(VhostWakeTableTest, TheWakeUnderWorkLockHoldsItLongerAndMakesWakersWait) {
  for (const int n : {64, 256}) {
    SCOPED_TRACE(n);
    const std::map<std::string, double> o = RunVariant(absl::StrCat("streams", n, "-original"));
    const std::map<std::string, double> m = RunVariant(absl::StrCat("streams", n, "-modified"));
    EXPECT_GT(o.at("work_lock_hold_mean_us"), 2 * m.at("work_lock_hold_mean_us"));
    EXPECT_GE(o.at("work_lock_wait_mean_us"), m.at("work_lock_wait_mean_us"));
  }
}

// The patch can save the vhost thread at most what anyone spins for
// work_lock before it (the worker at its loop top, and wakers taking
// interrupts on its CPU). In this model that is below the post's saving
// (6.15, 7.49 and 11.11 points at 8, 64 and 256 streams): docs/vhost_wake.md.
TEST(VhostWakeTableTest, AllSpinningOnWorkLockIsBelowThePostsSaving) {
  const double saving[] = {1.33, 6.15, 7.49, 11.11};
  for (int i = 0; i < 4; ++i) {
    const int n = kRows[i].streams;
    SCOPED_TRACE(n);
    const std::map<std::string, double> o = RunVariant(absl::StrCat("streams", n, "-original"));
    const std::map<std::string, double> m = RunVariant(absl::StrCat("streams", n, "-modified"));
    EXPECT_GE(o.at("work_lock_wait_pct"), m.at("work_lock_wait_pct"));
    EXPECT_LE(o.at("vhost_work_lock_spin_pct"), o.at("work_lock_wait_pct"));
    EXPECT_LT(o.at("work_lock_wait_pct"), saving[i]);
    EXPECT_LE(o.at("vhost_cpu_pct") - m.at("vhost_cpu_pct"), o.at("work_lock_wait_pct") + 0.5);
  }
}

// p->pi_lock (stack.vhost_net.ttwu_pi_lock): before the patch work_lock
// serializes every wake-up of the worker, so pi_lock is never contended;
// after it the wakers that work_lock no longer orders wait for pi_lock.
TEST(VhostWakeTableTest, PiLockIsContendedOnlyAfterThePatch) {
  for (const char* col : {"original", "modified"}) {
    SCOPED_TRACE(col);
    absl::StatusOr<VariantResult> r =
        RunResult(absl::StrCat("streams64-", col), {"stack.vhost_net.ttwu_pi_lock=true"});
    ASSERT_TRUE(r.ok()) << r.status();
    const LockStatRow* pi = nullptr;
    for (const LockStatRow& row : r->locks) {
      if (row.name == "pi_lock(vhost)") pi = &row;
    }
    ASSERT_NE(pi, nullptr);
    EXPECT_GT(pi->acquisitions, 0u);
    if (std::string(col) == "original") {
      EXPECT_EQ(pi->contentions, 0u);
    } else {
      EXPECT_GT(pi->contentions, 0u);
    }
  }
}

struct Slice {
  std::string name;
  int tid;
  double ts, dur;
};

// The complete ("X") events of a trace, in order.
std::vector<Slice> Slices(const std::string& json) {
  std::vector<Slice> out;
  static const std::regex kX(
      R"re(\{"name":"([^"]*)"(?:,"cat":"[^"]*")?,"ph":"X","ts":([0-9.]+),"dur":([0-9.]+),"pid":1,"tid":([0-9]+))re");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), kX); it != std::sregex_iterator(); ++it) {
    out.push_back({(*it)[1].str(), std::stoi((*it)[4].str()), std::stod((*it)[2].str()), std::stod((*it)[3].str())});
  }
  return out;
}

// How many wake-ups of the worker a trace shows inside a work_lock hold on
// the waker's CPU while another CPU spins (for work_lock or anything else).
int WakesUnderWorkLockWhileAnotherSpins(const std::vector<Slice>& slices) {
  int n = 0;
  for (const Slice& w : slices) {
    if (w.name.rfind("wake_up_process(vhost)", 0) != 0) continue;
    bool held = false;
    for (const Slice& h : slices) {
      if (h.name == "work_lock" && h.tid == w.tid && h.ts <= w.ts && w.ts + w.dur <= h.ts + h.dur + 1e-6) held = true;
    }
    if (!held) continue;
    for (const Slice& sp : slices) {
      if (sp.name == "spin" && sp.tid != w.tid && sp.ts < w.ts + w.dur && w.ts < sp.ts + sp.dur) {
        ++n;
        break;
      }
    }
  }
  return n;
}

// --trace: under work_lock a waker's try_to_wake_up shows inside its hold
// while another CPU spins; after the patch it never does.
TEST(VhostWakeTableTest, TheTraceShowsTheWakeInsideTheHoldOnlyBeforeThePatch) {
  for (const char* col : {"original", "modified"}) {
    SCOPED_TRACE(col);
    RunOptions options;
    options.trace = true;
    absl::StatusOr<VariantResult> r =
        RunResult(absl::StrCat("streams256-", col), {"run.warmup=500ms", "run.duration=2ms", "run.batches=2"},
                  options);
    ASSERT_TRUE(r.ok()) << r.status();
    const std::vector<Slice> slices = Slices(r->trace_json);
    ASSERT_GT(slices.size(), 100u);
    const int n = WakesUnderWorkLockWhileAnotherSpins(slices);
    if (std::string(col) == "original") {
      EXPECT_GT(n, 0);
    } else {
      EXPECT_EQ(n, 0);
    }
  }
}

// Linux 3.0's TCP, per stream count: one and eight streams are held by the
// server's window and never lose (the queue of skbs holds them); 64 and 256
// fill the host's 1028-skb queue, drop, recover with MSS-sized
// retransmissions, and still send frames of more than 40 KiB (3.0's
// deferral), so packets per second grow by less than half.
TEST(VhostWakeTableTest, ThreeZeroTcpKeepsFramesLargeAndLosesOnlyPastTheQueue) {
  const std::map<std::string, double> one = RunVariant("streams1-original");
  for (const Row& r : kRows) {
    SCOPED_TRACE(r.streams);
    const std::map<std::string, double> m = RunVariant(absl::StrCat("streams", r.streams, "-original"));
    EXPECT_GT(m.at("tx_frame_kib"), 40);
    EXPECT_LT(m.at("packets_per_s"), 1.5 * one.at("packets_per_s"));
    EXPECT_LE(m.at("host_queue_skbs"), 1028);
    if (r.streams <= 8) {
      EXPECT_EQ(m.at("tcp_retransmits_per_s"), 0);
      EXPECT_EQ(m.at("host_queue_drops_per_s"), 0);
      // In flight at most the server's 3 MiB (2,172 segments); cwnd grows
      // past it only by the TSO headroom tcp_is_cwnd_limited() counts (a
      // skb, 45 segments).
      EXPECT_LE(m.at("tcp_cwnd_segments"), 3145728.0 / 1448 + 45);
    } else {
      EXPECT_GT(m.at("tcp_retransmits_per_s"), 0);
      EXPECT_GT(m.at("host_queue_drops_per_s"), 0);
    }
  }
}

}  // namespace
}  // namespace viosim
