// linebench: measures one cache line on the host it runs on, for the
// scenario's platform.cache_lines (docs/linebench.md): the idle one-way
// hand-off per distance class (same core, same LLC, same socket, other
// socket), and the throughput of one line contended by 1..all CPUs under
// lock xadd and a CAS retry loop, placed LLC by LLC or spread, with the
// order of the line's owners and what follows from it. Prints a table and a
// protobuf text fragment.
#include <sched.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/line_measure.h"
#include "bench/line_topology.h"

namespace linebench {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitInconsistent = 1;
constexpr int kExitBadInput = 2;

struct Flags {
  double seconds = 0.2;
  int max_threads = 0;
  std::string placement = "both";
  std::string ops = "both";
  std::string cpus;
  std::string format = "both";
  int pairs = 3;
  int repeat = 3;
  std::string sysfs = "/sys/devices/system/cpu";
  bool topology_only = false;
};

int Fail(const std::string& message) {
  std::cerr << "linebench: " << message << "\n";
  return kExitBadInput;
}

// The CPUs this process may run on (sched_getaffinity).
std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

// The 1-minute load average (/proc/loadavg), or -1 if unreadable.
double LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  if (!(in >> load)) return -1;
  return load;
}

std::string Ns(double ns) { return absl::StrFormat("%.1fns", ns); }

// The idle figure of one distance class.
struct ClassFigure {
  std::vector<std::pair<int, int>> pairs;  // measured
  std::vector<double> medians;             // per pair
  std::vector<int> samples;                // per pair
  double value = 0;                        // median of the pair medians
};

struct Row {
  std::string placement;
  ContendedRun run;
  Analysis analysis;
};

// `v` with `decimals` decimals, or "-" if unset.
std::string Opt(const std::optional<double>& v, int decimals) {
  return v.has_value() ? absl::StrFormat("%.*f", decimals, *v) : "-";
}

void PrintTopology(const Topology& topo, const std::array<std::vector<std::pair<int, int>>, kDistances>& pairs) {
  std::vector<int> cpus;
  for (const CpuInfo& c : topo.cpus) cpus.push_back(c.cpu);
  std::printf("linebench on %s: %zu CPU(s) [%s], %d socket(s), %s, SMT %s\n", topo.model.c_str(),
              topo.cpus.size(), absl::StrJoin(cpus, ",").c_str(), topo.Sockets(),
              topo.LlcKnown() ? absl::StrCat(topo.Llcs(), " L3 domain(s)").c_str()
                              : "L3 not reported by sysfs (no cache/index*/ of level 3)",
              topo.Smt() ? "on" : "off or absent");
  std::printf("\nCPU pairs by distance (every pair in exactly one class):\n");
  size_t total = 0;
  for (Distance d : kAllDistances) {
    if (d == Distance::kSameCpu) continue;
    const auto& p = pairs[static_cast<int>(d)];
    total += p.size();
    std::printf("  %-13s %6zu pairs\n", DistanceName(d), p.size());
  }
  std::printf("  %-13s %6zu pairs (of %zu CPUs)\n", "total", total, topo.cpus.size());
}

// Why a class has no figure on this host.
std::string WhyNot(Distance d, const Topology& topo) {
  switch (d) {
    case Distance::kSameCore: return "no SMT siblings among the CPUs measured";
    case Distance::kSameLlc:
      return topo.LlcKnown() ? "no two cores share an L3 among the CPUs measured"
                             : "sysfs names no L3 here, so cores of one socket cannot be told apart";
    case Distance::kSameSocket:
      return topo.LlcKnown() ? "one L3 domain per socket among the CPUs measured"
                             : "sysfs names no L3 here, so cores of one socket cannot be told apart";
    case Distance::kOtherSocket: return "one socket among the CPUs measured";
    default: return "not present";
  }
}

int Main(int argc, char** argv) {
  Flags f;
  CLI::App app{
      "linebench: idle hand-off of a cache line per CPU distance, and one line's throughput under lock xadd "
      "and a CAS loop for 1..all CPUs, as the scenario's platform.cache_lines (docs/linebench.md)"};
  app.add_option("--seconds", f.seconds, "Duration of each measurement, in seconds")
      ->check(CLI::Range(0.001, 60.0))
      ->capture_default_str();
  app.add_option("--max-threads", f.max_threads, "Most threads on the contended line (default: every CPU)")
      ->check(CLI::Range(1, 65536));
  app.add_option("--placement", f.placement, "CPUs of an N-thread run: llc-local (fill one L3 first), spread "
                                             "(round-robin over L3s and sockets) or both")
      ->check(CLI::IsMember({"llc-local", "spread", "both"}))
      ->capture_default_str();
  app.add_option("--ops", f.ops, "Operations on the contended line: xadd (fetch_add), cas (CAS retry loop) or both")
      ->check(CLI::IsMember({"xadd", "cas", "both"}))
      ->capture_default_str();
  app.add_option("--cpus", f.cpus, "Only these CPUs, as a CPU list (0-3,8); default: every online CPU allowed")
      ->type_name("LIST");
  app.add_option("--format", f.format, "Output: text (tables), textproto (the scenario fragment) or both")
      ->check(CLI::IsMember({"text", "textproto", "both"}))
      ->capture_default_str();
  app.add_option("--pairs", f.pairs, "CPU pairs measured per distance class")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--repeat", f.repeat,
                 "Runs of each contended measurement; the one of median throughput is reported (a host's other "
                 "load lands in the others)")
      ->check(CLI::Range(1, 99))
      ->capture_default_str();
  app.add_option("--sysfs", f.sysfs, "The CPU folder of sysfs the topology is read from")
      ->type_name("DIR")
      ->capture_default_str();
  app.add_flag("--topology-only", f.topology_only, "Print the topology and its pairs by distance, measure nothing");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }

  std::vector<int> only;
  if (!f.cpus.empty()) {
    absl::StatusOr<std::vector<int>> list = ParseCpuList(f.cpus, "--cpus");
    if (!list.ok()) return Fail(std::string(list.status().message()));
    only = *list;
  }
  absl::StatusOr<Topology> all = ReadTopology(f.sysfs, only);
  if (!all.ok()) return Fail(std::string(all.status().message()));
  if (!f.topology_only) {
    // Measure only CPUs this process may be pinned to.
    const std::vector<int> allowed = AllowedCpus();
    std::vector<int> usable;
    for (const CpuInfo& c : all->cpus) {
      const bool ok = std::binary_search(allowed.begin(), allowed.end(), c.cpu);
      if (!ok && !only.empty()) {
        return Fail(absl::StrCat("--cpus: CPU ", c.cpu, " is online but not in this process's affinity mask"));
      }
      if (ok) usable.push_back(c.cpu);
    }
    if (usable.size() != all->cpus.size()) {
      all = ReadTopology(f.sysfs, usable);
      if (!all.ok()) return Fail(std::string(all.status().message()));
    }
  }
  const Topology& topo = *all;
  if (topo.cpus.empty()) return Fail("no CPU to measure");
  const bool text = f.format != "textproto";
  const auto pairs = PairsByDistance(topo);
  if (text || f.topology_only) PrintTopology(topo, pairs);
  if (f.topology_only) return kExitOk;

  const int ncpus = static_cast<int>(topo.cpus.size());
  int max_threads = f.max_threads == 0 ? ncpus : std::min(f.max_threads, ncpus);
  const std::string date = absl::FormatTime("%Y-%m-%d", absl::Now(), absl::UTCTimeZone());

  // A busy host's other threads take CPUs from the measuring ones: say so.
  const double load = LoadAverage();
  const std::string busy =
      load > 0.5 ? absl::StrFormat("the host was busy (load average %.2f at the start): the figures include its other "
                                   "load",
                                   load)
                 : "";
  if (text && !busy.empty()) std::printf("\nNote: %s.\n", busy.c_str());

  // Idle figures.
  Costs costs;
  absl::StatusOr<Samples> local = LocalHit(topo.cpus.front().cpu, f.seconds);
  if (!local.ok()) return Fail(std::string(local.status().message()));
  costs[static_cast<int>(Distance::kSameCpu)] = local->Median();
  std::array<ClassFigure, kDistances> figures;
  for (Distance d : kAllDistances) {
    const auto& all_pairs = pairs[static_cast<int>(d)];
    if (d == Distance::kSameCpu || all_pairs.empty()) continue;
    ClassFigure& fig = figures[static_cast<int>(d)];
    const size_t k = std::min<size_t>(f.pairs, all_pairs.size());
    for (size_t i = 0; i < k; ++i) fig.pairs.push_back(all_pairs[i * all_pairs.size() / k]);
    for (const auto& [a, b] : fig.pairs) {
      absl::StatusOr<Samples> s = PingPong(a, b, f.seconds);
      if (!s.ok()) return Fail(std::string(s.status().message()));
      fig.medians.push_back(s->Median());
      fig.samples.push_back(static_cast<int>(s->ns.size()));
    }
    fig.value = Samples{fig.medians, 1}.Median();
    costs[static_cast<int>(d)] = fig.value;
  }
  if (text) {
    std::printf("\nIdle one-way hand-off (CAS ping-pong on one line, round trip / 2; each pair the median of "
                "its samples of 256 round trips; a class the median of its pairs):\n");
    std::printf("  %-13s %9s  %s\n", "class", "ns", "pairs (ns, samples)");
    std::printf("  %-13s %9.2f  cpu%d alone: fetch_add on a line it holds, the contended runs' loop (median of %zu "
                "windows of %d)\n",
                "same_cpu", local->Median(), topo.cpus.front().cpu, local->ns.size(), local->events_per_sample);
    for (Distance d : kAllDistances) {
      if (d == Distance::kSameCpu) continue;
      const ClassFigure& fig = figures[static_cast<int>(d)];
      if (fig.pairs.empty()) {
        if (d == Distance::kSameSocketLlcUnknown) continue;
        std::printf("  %-13s %9s  not measurable: %s\n", DistanceName(d), "-", WhyNot(d, topo).c_str());
        continue;
      }
      std::vector<std::string> each;
      for (size_t i = 0; i < fig.pairs.size(); ++i) {
        each.push_back(absl::StrFormat("cpu%d-cpu%d %.2f (%d)", fig.pairs[i].first, fig.pairs[i].second,
                                       fig.medians[i], fig.samples[i]));
      }
      std::printf("  %-13s %9.2f  %s\n", DistanceName(d), fig.value, absl::StrJoin(each, ", ").c_str());
    }
  }

  // One contended line.
  std::vector<Op> ops;
  if (f.ops != "cas") ops.push_back(Op::kXadd);
  if (f.ops != "xadd") ops.push_back(Op::kCas);
  std::vector<std::string> placements;
  if (f.placement != "spread") placements.push_back("llc-local");
  if (f.placement != "llc-local") placements.push_back("spread");
  std::vector<Row> rows;
  bool consistent = true;
  for (Op op : ops) {
    for (const std::string& placement : placements) {
      const std::vector<int> order = PlacementOrder(topo, placement);
      for (int n : ThreadCounts(max_threads)) {
        std::vector<ContendedRun> runs;
        for (int i = 0; i < f.repeat; ++i) {
          absl::StatusOr<ContendedRun> run =
              Contend(op, std::vector<int>(order.begin(), order.begin() + n), f.seconds);
          if (!run.ok()) return Fail(std::string(run.status().message()));
          runs.push_back(*std::move(run));
        }
        auto rate = [](const ContendedRun& r) { return static_cast<double>(r.Successes()) / r.seconds; };
        std::nth_element(runs.begin(), runs.begin() + runs.size() / 2, runs.end(),
                         [&](const ContendedRun& a, const ContendedRun& b) { return rate(a) < rate(b); });
        Row row{placement, std::move(runs[runs.size() / 2]), {}};
        if (row.run.owner.empty()) {
          consistent = false;
          std::cerr << "linebench: " << OpName(op) << " " << placement << " N=" << n
                    << ": the logged old values are not 0.." << row.run.final_value
                    << " once each; no order of owners\n";
        } else {
          row.analysis = Analyze(row.run, topo, costs);
        }
        rows.push_back(std::move(row));
      }
    }
  }
  if (text) {
    std::printf("\nOne contended line, %.3f s per run, the run of median throughput of %d. run_svc = 1 / the run's "
                "throughput; service = median over windows (at least max(4096, 128 N) successes) of the time per "
                "success; handoff = mean idle figure of consecutive owners' distance; ratio = service / handoff; "
                "shares of consecutive owners by distance; near = within one L3; passed = most successes of others "
                "between two of one thread's:\n",
                f.seconds, f.repeat);
    std::printf("  %-4s %-9s %5s %11s %11s %9s %9s %9s %7s %8s %8s %9s %9s %9s %11s %12s %9s %7s %10s %10s %10s %9s\n",
                "op", "placement", "N", "successes", "sequence", "Mops/s", "run_svc", "service", "windows", "handoff",
                "ratio", "same_cpu", "same_core", "same_llc", "same_socket", "other_socket", "unknown", "near",
                "passed", "min/thread", "max/thread", "fail/succ");
    for (const Row& r : rows) {
      const Analysis& a = r.analysis;
      const double succ = static_cast<double>(r.run.Successes());
      std::printf("  %-4s %-9s %5zu %11llu %11zu %9.6g %9.3f %9.3f %7d %8s %8s", OpName(r.run.op),
                  r.placement.c_str(), r.run.cpus.size(), static_cast<unsigned long long>(r.run.Successes()),
                  r.run.owner.size(), succ / r.run.seconds / 1e6, a.run_service_ns, a.service_ns, a.windows,
                  Opt(a.mean_handoff_ns, 3).c_str(), Opt(a.ratio, 4).c_str());
      for (Distance d : kAllDistances) std::printf(" %9.4f", a.share[static_cast<int>(d)]);
      std::printf(" %7s %10llu %10llu %10llu %9s\n", Opt(a.near_share, 4).c_str(),
                  static_cast<unsigned long long>(a.max_passed_over),
                  static_cast<unsigned long long>(a.min_per_thread), static_cast<unsigned long long>(a.max_per_thread),
                  r.run.op == Op::kCas ? absl::StrFormat("%.3f", r.run.Failures() / succ).c_str() : "-");
    }
  }

  if (f.format != "text") {
    if (text) std::printf("\n");
    const std::string on = absl::StrCat("viosim linebench on ", absl::CEscape(topo.model), ", ", date);
    std::printf("# platform.cache_lines measured by viosim linebench (docs/linebench.md), %s\n", date.c_str());
    if (!busy.empty()) std::printf("# Note: %s.\n", busy.c_str());
    std::printf("platform {\n  cache_lines {\n");
    for (Distance d : {Distance::kSameCore, Distance::kSameLlc, Distance::kSameSocket, Distance::kOtherSocket}) {
      const ClassFigure& fig = figures[static_cast<int>(d)];
      if (fig.pairs.empty()) {
        std::printf("    # %s: not measurable on this host (%s)\n", DistanceName(d), WhyNot(d, topo).c_str());
        continue;
      }
      std::vector<std::string> each;
      for (size_t i = 0; i < fig.pairs.size(); ++i) {
        each.push_back(absl::StrFormat("cpu%d-cpu%d %s", fig.pairs[i].first, fig.pairs[i].second, Ns(fig.medians[i])));
      }
      std::printf("    %s { value: \"%s\" source { kind: MEASURED ref: \"%s: idle one-way hand-off, median of %zu "
                  "pair(s) (%s), each the median of samples of 256 CAS ping-pong round trips / 2\" } }\n",
                  DistanceName(d), Ns(fig.value).c_str(), on.c_str(), fig.pairs.size(), absl::StrJoin(each, ", ").c_str());
    }
    const ClassFigure& unknown = figures[static_cast<int>(Distance::kSameSocketLlcUnknown)];
    if (!unknown.pairs.empty()) {
      std::printf("    # pairs of cores on one socket, L3 unknown (same_llc or same_socket): %s, not emitted\n",
                  Ns(unknown.value).c_str());
    }
    // The ratio and near share: xadd at the most threads, spread if measured.
    const Row* full = nullptr;
    for (const Row& r : rows) {
      if (r.run.op != Op::kXadd || r.run.owner.empty() || static_cast<int>(r.run.cpus.size()) != max_threads) continue;
      if (full == nullptr || r.placement == "spread") full = &r;
    }
    if (full == nullptr) {
      std::printf("    # service_ratio, near_share: not measured (no lock xadd run: --ops %s)\n", f.ops.c_str());
    } else if (max_threads < 2) {
      std::printf("    # service_ratio, near_share: not measurable with one thread (one CPU or --max-threads 1: no second owner)\n");
    } else {
      const Analysis& a = full->analysis;
      if (a.ratio.has_value()) {
        std::printf("    service_ratio: %.4f\n", *a.ratio);
        std::printf("    service_ratio_source { kind: MEASURED ref: \"%s: lock xadd, %d threads %s: service %s / mean "
                    "consecutive-owner hand-off %s\" }\n",
                    on.c_str(), max_threads, full->placement.c_str(),
                    absl::StrFormat("%.2f ns (%s)", a.service_ns,
                                    a.windows >= 5 ? absl::StrCat("median of ", a.windows, " windows")
                                                   : std::string("the whole run"))
                        .c_str(),
                    absl::StrFormat("%.2f ns", *a.mean_handoff_ns).c_str());
      }
      std::printf("    # passed over: at most %llu successes of others between two of one thread's (lock xadd, %d "
                  "threads %s), a measured bound for max_bypass\n",
                  static_cast<unsigned long long>(a.max_passed_over), max_threads, full->placement.c_str());
      if (a.near_share.has_value()) {
        std::printf("    near_share: %.4f  # share of consecutive owners within one LLC, lock xadd, %d threads %s\n",
                    *a.near_share, max_threads, full->placement.c_str());
      } else {
        std::printf("    # near_share: not measurable (sysfs names no L3, so a pair of cores of one socket may or "
                    "may not share one)\n");
      }
    }
    std::printf("  }\n}\n");
  }
  return consistent ? kExitOk : kExitInconsistent;
}

}  // namespace
}  // namespace linebench

int main(int argc, char** argv) { return linebench::Main(argc, argv); }
