// The fio workload on the bare-metal stack against arithmetic that must
// hold: a synchronous job's IOPS is one over its critical path; large
// blocks saturate the device's bandwidth; Little's law; group_reporting
// sums; determinism; and the JSON key tree of real fio 3.33.
#include <algorithm>
#include <cmath>
#include <vector>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "models/block/host_costs.h"
#include "analysis/fio_output.h"
#include "analysis/json_value.h"
#include "scenarios/fio_parser.h"
#include "models/nvme/nvme_device.h"
#include "models/nvme/profile.h"
#include "scenarios/fio_builder.h"
#include "scenarios/loader.h"
#include "sim/simulator.h"
#include "tests/fio_output/test_files.h"

namespace {

viosim::Scenario Stack() {
  absl::StatusOr<viosim::ScenarioFile> f = viosim::LoadScenarioFile("scenarios/baremetal_optane.textproto");
  EXPECT_TRUE(f.ok()) << f.status();
  absl::StatusOr<viosim::Scenario> s = viosim::ResolveVariant(*f, viosim::kBaseVariant, {});
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

// `replicate`: run again at the next seed to tell whether the interval is
// informative (only the tests about it need the second run).
fio::FioReport RunJob(const std::string& job_text, double target_ci_pct = 1, bool replicate = false) {
  absl::StatusOr<fio::JobFile> jobs = fio::ParseJobText("test.fio", job_text, ".");
  EXPECT_TRUE(jobs.ok()) << jobs.status();
  viosim::FioRunOptions opts;
  opts.target_ci_pct = target_ci_pct;
  opts.replicate = replicate;
  absl::StatusOr<fio::FioReport> r = viosim::RunFio(Stack(), *jobs, opts);
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

double Iops(const fio::DirStats& d) { return 1000.0 * static_cast<double>(d.total_ios) / d.runtime_ms; }

TEST(FioWorkload, SyncDepthOneIopsIsOneOverTheCriticalPath) {
  const fio::FioReport r = RunJob("[j]\nioengine=psync\nrw=randread\nbs=4k\nruntime=1\ntime_based\n", 0);
  ASSERT_EQ(r.entities.size(), 1u);
  const models::HostCosts k = models::XeonHostCosts();
  sim::Simulator sim;
  models::NvmeDevice device(sim, models::OptaneP4800X());
  // fio's own work, pread's syscall, the block layer and driver, the
  // device, the interrupt, the wakeup and the switch back to fio.
  const sim::Time t = sim::Time::Nanos(300) + k.syscall.value + k.blk_mq_submit_bio.value + k.nvme_queue_rq.value +
                      k.doorbell_write.value + device.ServiceTime(false, 4096) + k.irq_entry_exit.value +
                      k.nvme_irq.value + k.complete_request.value + k.try_to_wake_up.value +
                      k.context_switch.value;
  const double expected = 1.0 / t.ToSeconds();
  EXPECT_NEAR(Iops(r.entities[0].ddir[fio::kRead]), expected, 0.005 * expected);
  EXPECT_EQ(r.entities[0].ddir[fio::kRead].slat.n(), 0u) << "synchronous engines record no slat";
}

TEST(FioWorkload, LargeBlocksSaturateTheDeviceBandwidth) {
  const models::NvmeProfile p = models::OptaneP4800X();
  for (const bool write : {false, true}) {
    const fio::FioReport r = RunJob(absl::StrCat("[j]\nioengine=libaio\niodepth=32\nrw=", write ? "randwrite" : "randread",
                                              "\nbs=128k\nruntime=1\ntime_based\n"));
    const fio::DirStats& d = r.entities[0].ddir[write ? fio::kWrite : fio::kRead];
    const double bw = (write ? p.write_bandwidth.value : p.read_bandwidth.value);
    EXPECT_NEAR(Iops(d) * 131072, bw, 0.01 * bw) << (write ? "write" : "read");
  }
}

class LittlesLaw : public testing::TestWithParam<int> {};

TEST_P(LittlesLaw, IopsTimesMeanLatencyIsTheMeanInFlight) {
  const fio::FioReport r =
      RunJob(absl::StrCat("[j]\nioengine=libaio\nrw=randread\nbs=4k\nruntime=1\ntime_based\niodepth=", GetParam(), "\n"));
  const fio::ThreadStat& ts = r.entities[0];
  const fio::DirStats& d = ts.ddir[fio::kRead];
  const double l = Iops(d) * d.lat.mean() * 1e-9;
  EXPECT_NEAR(l, ts.mean_in_flight, 0.01 * ts.mean_in_flight);
  EXPECT_LE(ts.mean_in_flight, GetParam() + 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Depths, LittlesLaw, testing::Values(1, 4, 16, 64));

TEST(FioWorkload, GroupReportingSumsThePerJobOutputs) {
  const std::string job = "[j]\nioengine=libaio\niodepth=8\nrw=randrw\nrwmixread=70\nbs=4k\nnumjobs=3\n"
                          "runtime=1\ntime_based\n";
  const fio::FioReport each = RunJob(job);
  const fio::FioReport grouped = RunJob(job + "group_reporting\n");
  ASSERT_EQ(each.entities.size(), 3u);
  ASSERT_EQ(grouped.entities.size(), 1u);
  for (int d : {fio::kRead, fio::kWrite}) {
    uint64_t ios = 0, bytes = 0, max_run = 0;
    for (const fio::ThreadStat& t : each.entities) {
      ios += t.ddir[d].total_ios;
      bytes += t.ddir[d].io_bytes;
      max_run = std::max(max_run, t.ddir[d].runtime_ms);
    }
    const fio::DirStats& g = grouped.entities[0].ddir[d];
    EXPECT_EQ(g.total_ios, ios);
    EXPECT_EQ(g.io_bytes, bytes);
    EXPECT_EQ(g.runtime_ms, max_run);
    EXPECT_EQ(grouped.groups[0].agg_bw[d], each.groups[0].agg_bw[d]);
  }
  EXPECT_EQ(grouped.entities[0].members, 3);
  // rwmix: about 70% reads.
  const double reads = static_cast<double>(grouped.entities[0].ddir[fio::kRead].total_ios);
  const double writes = static_cast<double>(grouped.entities[0].ddir[fio::kWrite].total_ios);
  EXPECT_NEAR(reads / (reads + writes), 0.70, 0.02);
}

TEST(FioWorkload, SameInputsGiveTheSameBytes) {
  const std::string job = "[j]\nioengine=io_uring\niodepth=4\nrw=randrw\nbs=4k-16k\nruntime=1\ntime_based\n";
  EXPECT_EQ(fio::FormatJson(RunJob(job), true), fio::FormatJson(RunJob(job), true));
}

TEST(FioWorkload, RampTimeIsNotMeasured) {
  const fio::FioReport r = RunJob("[j]\nioengine=psync\nrw=read\nbs=4k\nruntime=1\nramp_time=200ms\ntime_based\n", 0);
  const fio::DirStats& d = r.entities[0].ddir[fio::kRead];
  EXPECT_NEAR(static_cast<double>(d.runtime_ms), 1000, 2);
  EXPECT_NEAR(r.simulated_s, 1.2, 0.01);
}

TEST(FioWorkload, SizeBoundJobsStopWhenTheSizeIsDone) {
  const fio::FioReport r = RunJob("[j]\nioengine=libaio\niodepth=4\nrw=write\nbs=64k\nsize=64m\n", 0);
  EXPECT_EQ(r.entities[0].ddir[fio::kWrite].io_bytes, 64u << 20);
}

TEST(FioWorkload, SteadyStateStopsEarlyAndSaysSo) {
  const fio::FioReport r = RunJob("[j]\nioengine=libaio\niodepth=16\nrw=randread\nbs=4k\nruntime=900\ntime_based\n");
  EXPECT_TRUE(r.stopped_at_steady_state);
  EXPECT_LT(r.simulated_s, 10);
  EXPECT_DOUBLE_EQ(r.requested_s, 900);
  EXPECT_LE(r.confidence_pct, 1.0);
}

// The key tree of viosim's JSON for two jobs equals real fio 3.33's, as
// stored by the output tests.
class KeyTree : public testing::TestWithParam<std::string> {};

TEST_P(KeyTree, MatchesRealFio) {
  const std::string dir = "tests/fio_output/testdata/";
  absl::StatusOr<fio::JobFile> jobs = fio::ParseJobFile(dir + "keytree_" + GetParam() + ".fio");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  viosim::FioRunOptions opts;
  opts.replicate = false;
  absl::StatusOr<fio::FioReport> r = viosim::RunFio(Stack(), *jobs, opts);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const bool plus : {false, true}) {
    std::vector<std::string> want;
    for (absl::string_view line :
         absl::StrSplit(fio_test::ReadFile(dir + "keytree_" + GetParam() + (plus ? "_jsonplus" : "_json") + ".txt"),
                        '\n')) {
      if (!line.empty() && line[0] != '#') want.emplace_back(line);
    }
    const auto root = analysis::JsonReader(fio::FormatJson(*r, plus)).Document();
    ASSERT_TRUE(root.ok());
    std::vector<std::string> all, got;
    fio_test::KeyTree(*root, "", {"percentile", "bins", "global options", "job options"}, &all);
    for (const std::string& e : all) {
      if (e.rfind("viosim", 0) != 0) got.push_back(e);
    }
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want) << GetParam() << (plus ? " json+" : " json");
  }
}

INSTANTIATE_TEST_SUITE_P(Jobs, KeyTree, testing::Values("randread", "randrw"));

}  // namespace

// The interval of `viosim fio` is of the rate over the exact window
// (window_iops), and is checked by replication as reproduce's are: over 30
// seeds of a QD1 job each run's half-width covers the seeds' mean rate in
// most runs and is of the size the spread over the seeds gives.
TEST(FioWorkload, TheIntervalAgreesWithTheSpreadOfTheWindowRateOverSeeds) {
  absl::StatusOr<fio::JobFile> jobs =
      fio::ParseJobText("test.fio", "[j]\nioengine=psync\nrw=randread\nbs=4k\nruntime=900\ntime_based\n", ".");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  std::vector<double> rate, hw;
  for (int seed = 1; seed <= 30; ++seed) {
    viosim::Scenario s = Stack();
    s.mutable_run()->set_seed(seed);
    viosim::FioRunOptions opts;
    opts.target_ci_pct = 0.1;
    opts.replicate = false;  // the spread over these seeds is the check
    absl::StatusOr<fio::FioReport> r = viosim::RunFio(s, *jobs, opts);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->has_confidence);
    ASSERT_EQ(r->window_iops.size(), 1u);
    rate.push_back(r->window_iops[0]);
    hw.push_back(r->window_iops[0] * r->confidence_pct / 100);
  }
  double mean = 0, mean_hw = 0;
  for (size_t i = 0; i < rate.size(); ++i) mean += rate[i] / rate.size(), mean_hw += hw[i] / hw.size();
  double ss = 0;
  int covered = 0;
  for (size_t i = 0; i < rate.size(); ++i) {
    ss += (rate[i] - mean) * (rate[i] - mean);
    covered += std::fabs(rate[i] - mean) <= hw[i];
  }
  const double sd = std::sqrt(ss / (rate.size() - 1));
  ASSERT_GT(sd, 0);
  RecordProperty("covered", covered);
  RecordProperty("half_width_over_sd", absl::StrFormat("%.2f", mean_hw / sd));
  // Binomial(30, 0.95): fewer than 24 covered has probability < 1%.
  EXPECT_GE(covered, 24);
  EXPECT_GT(mean_hw / sd, 1.2);
  EXPECT_LT(mean_hw / sd, 3.5);
}

// A scenario's clat_mean_us and lat_mean_us are Little's law over the
// window (Workload::WindowOpenArea over the completions). In a window long
// against the latency both estimate the mean over the completions, for the
// synchronous path (open from the prepare) and the asynchronous one (open
// from io_submit's return).
TEST(FioWorkload, TheTimeAverageLatencyIsTheCompletionsMeanInALongWindow) {
  for (const char* engine : {"ioengine=psync\n", "ioengine=libaio\niodepth=16\niodepth_batch_submit=4\n"}) {
    absl::StatusOr<fio::JobFile> jobs = fio::ParseJobText(
        "test.fio", absl::StrCat("[j]\n", engine, "rw=randrw\nbs=4k\nnumjobs=2\ntime_based\nruntime=1\n"), ".");
    ASSERT_TRUE(jobs.ok()) << jobs.status();
    sim::Simulator sim;
    absl::StatusOr<viosim::FioRig> rig = viosim::FioRig::Make(sim, Stack(), *jobs, fio::WorkloadControl{});
    ASSERT_TRUE(rig.ok()) << rig.status();
    fio::Workload& w = *rig->workload;
    ASSERT_TRUE(w.Start().ok());
    sim.RunUntil(sim::Time::Millis(2));
    w.ResetCounters();
    sim.RunUntil(sim::Time::Millis(202));
    const fio::Workload::WindowCounters& win = w.window();
    const double ios = static_cast<double>(win.ios[0] + win.ios[1]);
    ASSERT_GT(ios, 10000) << engine;
    for (bool clat : {true, false}) {
      const double completions_mean = (clat ? win.clat_ns : win.lat_ns) / ios;
      const double little = w.WindowOpenArea(clat) / ios;
      EXPECT_NEAR(little, completions_mean, 0.002 * completions_mean) << engine << (clat ? " clat" : " lat");
    }
    if (std::string(engine).find("libaio") != std::string::npos) {
      EXPECT_GT(w.WindowOpenArea(false), w.WindowOpenArea(true)) << "lat includes the submission";
    }
  }
}

// A bandwidth-bound job is set by the device's transfer time alone: the
// run at the next seed gives the same rate, and the JSON prints no
// interval rather than the batches' tiny spread.
TEST(FioWorkload, ADeterministicRateHasNoInformativeInterval) {
  const fio::FioReport r =
      RunJob("[j]\nioengine=libaio\niodepth=16\nrw=read\nbs=128k\nruntime=2\ntime_based\n", 1, /*replicate=*/true);
  ASSERT_TRUE(r.has_confidence);
  EXPECT_FALSE(r.confidence_informative);
  EXPECT_EQ(r.replicate_seed, 2u);
  const std::string json = fio::FormatJson(r, false);
  EXPECT_NE(json.find("\"confidence_pct\" : null,\n    \"confidence_informative\" : false"), std::string::npos) << json;
  const fio::FioReport qd1 = RunJob("[j]\nioengine=psync\nrw=randread\nbs=4k\nruntime=2\ntime_based\n", 1, /*replicate=*/true);
  EXPECT_TRUE(qd1.confidence_informative);
}
