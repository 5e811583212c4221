// linebench's measurements of one cache line on the host it runs on, with
// threads pinned to CPUs (pthread_setaffinity_np):
//  - the local hit: one thread's fetch_add on a line it owns;
//  - the idle one-way hand-off between two CPUs: compare-and-swap ping-pong
//    on one line, round trip / 2, the method behind the hand-off costs of
//    models/sync/handoff_costs.cc;
//  - one line contended by N threads under lock xadd (fetch_add) or a CAS
//    retry loop, with the global order of its owners: every success returns
//    a distinct old value of the counter, each thread keeps the ones it got,
//    and the old values put the successes in the line's order.
// Figures are wall-clock and as noisy as the host; nothing here is checked
// for speed, only for consistency (tests/bench/linebench_test.cc).
#ifndef VIOSIM_BENCH_LINE_MEASURE_H_
#define VIOSIM_BENCH_LINE_MEASURE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/line_topology.h"

namespace linebench {

// Samples of one figure, in ns per event.
struct Samples {
  std::vector<double> ns;
  int events_per_sample = 0;  // round trips (ping-pong) or operations (local hit)
  double Median() const;
};


// CAS ping-pong between `a` and `b` for about `seconds`: each sample is the
// time of a batch of round trips divided by twice their number.
absl::StatusOr<Samples> PingPong(int a, int b, double seconds);

enum class Op { kXadd, kCas };
inline constexpr uint64_t kStampEvery = 64;
const char* OpName(Op op);  // "xadd", "cas"

struct ContendedRun {
  Op op = Op::kXadd;
  std::vector<int> cpus;             // thread t runs on cpus[t]
  double seconds = 0;                // from the start signal to the stop
  std::vector<uint64_t> successes;   // per thread
  std::vector<uint64_t> failures;    // per thread (CAS only)
  uint64_t final_value = 0;          // the counter after the run
  // owner[k] = the thread whose success was the line's k-th; empty if the
  // logged old values did not form exactly 0..final_value-1, once each.
  std::vector<uint32_t> owner;
  // (old value, clock in ns just after it) of every kStampEvery-th success
  // of each thread, by old value: the line's progress over time.
  std::vector<std::pair<uint64_t, int64_t>> stamps;
  uint64_t Successes() const;
  uint64_t Failures() const;
};

// N = cpus.size() threads, one per CPU, on one line for about `seconds`
// (and until every thread has had a success), or until a thread has logged
// `max_per_thread` successes (fewer for many
// threads: the logs of all threads hold 2^25 successes at most).
absl::StatusOr<ContendedRun> Contend(Op op, const std::vector<int>& cpus, double seconds,
                                     uint64_t max_per_thread = uint64_t{1} << 22);

// The time per success over windows of the run of at least
// max(4096, 128 N) successes each, from its stamps.
Samples Windows(const ContendedRun& run);

// The local hit: one pinned thread's fetch_add on a line it holds, in the
// loop of a contended run (Contend with N = 1) for about `seconds`, so that
// the loop's own work is in it as it is in every service time: ns per
// operation over windows (the whole run if it has none).
absl::StatusOr<Samples> LocalHit(int cpu, double seconds);

// Idle figures by distance (ns); unset: not measured on this host.
using Costs = std::array<std::optional<double>, kDistances>;

struct Analysis {
  uint64_t transactions = 0;
  double run_service_ns = 0;  // seconds / successes: 1 / the run's throughput
  // The median over windows of at least max(4096, 128 N) successes of the
  // time per success in the window, from the stamps: a stretch in which the
  // host's other load kept the threads off their CPUs is one window, not
  // the whole. run_service_ns if the run has fewer than 5 windows.
  double service_ns = 0;
  int windows = 0;
  // Consecutive owners (k-1, k), k = 1..transactions-1, by the distance
  // between their CPUs (same thread: same_cpu).
  std::array<uint64_t, kDistances> pairs{};
  std::array<double, kDistances> share{};
  // Mean over those pairs of the idle cost of their distance; unset if one
  // of the distances met has no measured cost.
  std::optional<double> mean_handoff_ns;
  std::optional<double> ratio;  // service_ns / mean_handoff_ns
  // Share of consecutive owners within one LLC (same_cpu + same_core +
  // same_llc); unset where an LLC is unknown and such pairs occurred.
  std::optional<double> near_share;
  // The most successes of others between two successes of one thread.
  uint64_t max_passed_over = 0;
  int max_passed_over_thread = -1;
  uint64_t min_per_thread = 0, max_per_thread = 0;
};

// REQUIRES: run.owner is not empty.
Analysis Analyze(const ContendedRun& run, const Topology& topo, const Costs& costs);

// The thread counts measured for up to `max` threads: 1, 2, 4, ... and `max`.
std::vector<int> ThreadCounts(int max);

}  // namespace linebench

#endif  // VIOSIM_BENCH_LINE_MEASURE_H_
