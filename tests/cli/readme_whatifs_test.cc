// The README's "One what-if per case" section in step with the model: each
// what-if's command is run as the README gives it (with --format json) and
// the sentence the README prints about it is rebuilt from the run's own
// figures; the test fails when the README no longer says it word for word.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "analysis/json_value.h"
#include "gtest/gtest.h"
#include "tests/cli/run_viosim.h"

namespace {

using analysis::JsonValue;

class ReadmeWhatIfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Line breaks inside sentences do not count.
    readme_ = absl::StrReplaceAll(clitest::ReadAll("README.md"), {{"\n  ", " "}, {"\n", " "}});
    ASSERT_FALSE(readme_.empty());
  }
  // Runs viosim with `args` and --format json.
  JsonValue Run(const std::string& args) {
    const clitest::Result r = clitest::Viosim(absl::StrCat(args, " --format json"));
    EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
    absl::StatusOr<JsonValue> j = analysis::JsonReader(r.out).Document();
    EXPECT_TRUE(j.ok()) << args;
    return j.value_or(JsonValue{});
  }
  void ExpectSays(const std::string& sentence) {
    EXPECT_TRUE(absl::StrContains(readme_, sentence)) << "the README should say: " << sentence;
  }
  std::string readme_;
};

// 1234567.4 -> "1,234,567"; halves away from zero, as the README rounds
// (499396.5 -> 499,397).
std::string Grouped(double v) {
  std::string digits = absl::StrFormat("%.0f", std::round(v));
  std::string out;
  const int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// A metric of a `run` variant.
double RunMetric(const JsonValue& run, const std::string& variant, const std::string& metric) {
  for (const JsonValue& v : run["variants"].items) {
    if (v["name"].str == variant) return v["metrics"][metric].Num();
  }
  ADD_FAILURE() << "no variant " << variant;
  return NAN;
}

// A metric of a `sweep` point.
double SweepMetric(const JsonValue& sweep, const std::string& value, const std::string& variant,
                   const std::string& metric) {
  for (const JsonValue& p : sweep["points"].items) {
    if (p["value"].str == value && p["variant"].str == variant) return p["metrics"][metric].Num();
  }
  ADD_FAILURE() << "no point " << value << " / " << variant;
  return NAN;
}

TEST_F(ReadmeWhatIfsTest, Lockbench) {
  const JsonValue base = Run("run scenarios/lockbench.textproto --variant N64");
  const JsonValue slow = Run("run scenarios/lockbench.textproto --variant N64 --set platform.lock_handoff.value=200ns");
  ExpectSays(absl::StrCat("drops throughput from ", Grouped(RunMetric(base, "N64", "lock_acquisitions_per_s")),
                          " to ", Grouped(RunMetric(slow, "N64", "lock_acquisitions_per_s")),
                          " acquisitions/s"));
}

TEST_F(ReadmeWhatIfsTest, KickLock) {
  const JsonValue s = Run(
      "sweep scenarios/virtio_blk_kick_lock.textproto --set platform.kvm.exit_unexplained.value=0us --over "
      "platform.kvm.mmio_exit_user.value=2us,10us,30us,80us --jobs 2");
  ExpectSays(absl::StrCat("gives ", Grouped(SweepMetric(s, "2us", "before", "iops")), " IOPS before and ",
                          Grouped(SweepMetric(s, "2us", "after", "iops")), " after at 2 us, ",
                          Grouped(SweepMetric(s, "80us", "before", "iops")), " and ",
                          Grouped(SweepMetric(s, "80us", "after", "iops")), " at 80 us"));
}

TEST_F(ReadmeWhatIfsTest, BlkPoll) {
  const JsonValue s = Run(
      "sweep scenarios/virtio_blk_poll.textproto --over "
      "stack.virtio_blk_mq.irq_entry.value=400ns,800ns,1600ns,3200ns --variant randread-4k-hipri0 "
      "--variant randread-4k-hipri1 --jobs 2");
  const double irq_lo = SweepMetric(s, "400ns", "randread-4k-hipri0", "iops");
  const double irq_hi = SweepMetric(s, "3200ns", "randread-4k-hipri0", "iops");
  const double polled = SweepMetric(s, "400ns", "randread-4k-hipri1", "iops");
  // "stays": the polled column does not move with the interrupt's cost.
  for (const char* v : {"800ns", "1600ns", "3200ns"}) {
    EXPECT_EQ(SweepMetric(s, v, "randread-4k-hipri1", "iops"), polled) << v;
  }
  ExpectSays(absl::StrCat("takes the interrupt column from ", Grouped(irq_lo), " to ", Grouped(irq_hi),
                          " IOPS while polling stays at ", Grouped(polled), ": polling's gain grows from ",
                          absl::StrFormat("%.0f", 100 * (polled / irq_lo - 1)), "% to ",
                          absl::StrFormat("%.0f", 100 * (polled / irq_hi - 1)), "%"));
}

// The grid of "Does polling pay?": polling's gain in IOPS and in host CPU
// per I/O at the fastest and the slowest device, over every job count.
TEST_F(ReadmeWhatIfsTest, BlkPollGrid) {
  const JsonValue s = Run(
      "sweep scenarios/virtio_blk_poll.textproto --over stack.virtio_blk_mq.read_latency.value=3us,10us,30us,100us,300us,1ms "
      "--over workload.fio.numjobs=1,2,4 -v randread-4k-hipri0 -v randread-4k-hipri1 --metric iops --metric "
      "host_cpu_us_per_io --jobs 2");
  auto span = [&s](const std::string& value, const std::string& metric, const char* fmt) {
    double lo = INFINITY, hi = -INFINITY;
    for (const JsonValue& g : s["gains"].items) {
      if (g["value"].str != value || g["metric"].str != metric) continue;
      lo = std::min(lo, g["ratio"].Num());
      hi = std::max(hi, g["ratio"].Num());
    }
    const std::string a = absl::StrFormat(fmt, lo), b = absl::StrFormat(fmt, hi);
    return a == b ? a : absl::StrCat(a, "-", b);
  };
  ExpectSays(absl::StrCat("Polling's IOPS gain falls from ", span("3us", "iops", "%.2f"), "x at a 3 us device to ",
                          span("1ms", "iops", "%.2f"), "x at 1 ms, while its host CPU per I/O grows from ",
                          span("3us", "host_cpu_us_per_io", "%.1f"), "x to ",
                          span("1ms", "host_cpu_us_per_io", "%.1f"), "x the interrupt path's"));
}

// The load curve: fio's pacing swept on blk-poll.
TEST_F(ReadmeWhatIfsTest, BlkPollLoadCurve) {
  const JsonValue s = Run(
      "sweep scenarios/virtio_blk_poll.textproto -v randread-4k-hipri0 -v randread-4k-hipri1 --set "
      "workload.fio.rate_process=poisson --over workload.fio.rate_iops=5000,10000,20000,30000,35000,40000,50000 "
      "--metric iops --metric clat_mean_us --jobs 2");
  ExpectSays(absl::StrCat(
      "Offered 5,000 to 50,000 IOPS per job, the interrupt path's mean completion latency falls from ",
      absl::StrFormat("%.2f", SweepMetric(s, "5000", "randread-4k-hipri0", "clat_mean_us")), " to ",
      absl::StrFormat("%.2f", SweepMetric(s, "50000", "randread-4k-hipri0", "clat_mean_us")),
      " us as the vCPUs stop halting between I/Os, and its IOPS level off at ",
      Grouped(SweepMetric(s, "50000", "randread-4k-hipri0", "iops")), " where polling goes on to ",
      Grouped(SweepMetric(s, "50000", "randread-4k-hipri1", "iops"))));
}

TEST_F(ReadmeWhatIfsTest, VhostWake) {
  const std::string variants = " --variant streams256-original --variant streams256-modified --jobs 2";
  const JsonValue pinned =
      Run(absl::StrCat("run scenarios/vhost_work_queue.textproto", variants, " --set stack.vhost_net.worker_cpu=1"));
  const JsonValue built = Run(absl::StrCat("run scenarios/vhost_work_queue.textproto", variants));
  auto pct = [](const JsonValue& run, const char* v) {
    return absl::StrFormat("%.2f%%", RunMetric(run, v, "vhost_cpu_pct"));
  };
  ExpectSays(absl::StrCat("gives ", pct(pinned, "streams256-original"), " and ", pct(pinned, "streams256-modified"),
                          " vhost CPU (", pct(built, "streams256-original"), " and ",
                          pct(built, "streams256-modified"), " as built)"));
}

TEST_F(ReadmeWhatIfsTest, Raid10) {
  const JsonValue r = Run("run scenarios/raid10_unplug.textproto --set platform.cache_lines.preset=none --jobs 2");
  ExpectSays(absl::StrCat("gives ", Grouped(RunMetric(r, "before", "iops")), " IOPS before the patch and ",
                          Grouped(RunMetric(r, "after", "iops")), " after"));
}

}  // namespace
