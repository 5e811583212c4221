// linebench's figures are consistent, never how fast the host is: the
// distance classes partition every pair of CPUs (on sysfs trees written
// here); the order of owners of a contended line has one entry per success,
// each thread's count matching; shares sum to 1 and the ratio is service /
// mean hand-off; the printed fragment parses as platform.cache_lines; bad
// flags exit 2.
#include <sched.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/line_measure.h"
#include "bench/line_topology.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/bench/cache_lines_fragment.pb.h"

namespace linebench {
namespace {

namespace fs = std::filesystem;

std::string TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t != nullptr ? t : "/tmp";
}

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text << "\n";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A sysfs CPU folder: `sockets` x `llcs` L3 domains x `cores` cores x
// `threads` threads, numbered as Linux numbers them (CPU n's second thread
// is n + the number of cores).
std::string FakeSysfs(const std::string& name, int sockets, int llcs, int cores, int threads, bool with_l3) {
  const fs::path root = fs::path(TmpDir()) / name;
  fs::remove_all(root);
  const int per_socket = llcs * cores;
  const int ncores = sockets * per_socket;
  const int ncpus = ncores * threads;
  Write(root / "online", absl::StrCat("0-", ncpus - 1));
  for (int cpu = 0; cpu < ncpus; ++cpu) {
    const int core = cpu % ncores;
    const int socket = core / per_socket;
    const int llc = core / cores;  // global index
    const fs::path dir = root / absl::StrCat("cpu", cpu);
    Write(dir / "topology/physical_package_id", absl::StrCat(socket));
    Write(dir / "topology/core_id", absl::StrCat(core % per_socket));
    std::vector<std::string> sib;
    for (int t = 0; t < threads; ++t) sib.push_back(absl::StrCat(core + t * ncores));
    Write(dir / "topology/thread_siblings_list", absl::StrJoin(sib, ","));
    Write(dir / "cache/index0/level", "1");
    Write(dir / "cache/index0/shared_cpu_list", absl::StrJoin(sib, ","));
    if (with_l3) {
      std::vector<std::string> l3;
      for (int t = 0; t < threads; ++t) l3.push_back(absl::StrCat(llc * cores + t * ncores, "-",
                                                                 llc * cores + cores - 1 + t * ncores));
      Write(dir / "cache/index3/level", "3");
      Write(dir / "cache/index3/shared_cpu_list", absl::StrJoin(l3, ","));
    }
  }
  return root.string();
}

int Count(Distance d, const std::array<std::vector<std::pair<int, int>>, kDistances>& pairs) {
  return static_cast<int>(pairs[static_cast<int>(d)].size());
}

TEST(LineTopology, ClassesPartitionEveryPairOfTwoSockets) {
  // 2 sockets x 2 L3s x 2 cores x 2 threads = 16 CPUs, 120 pairs.
  absl::StatusOr<Topology> topo = ReadTopology(FakeSysfs("two_sockets", 2, 2, 2, 2, true), {});
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(topo->cpus.size(), 16u);
  EXPECT_EQ(topo->Sockets(), 2);
  EXPECT_EQ(topo->Llcs(), 4);
  EXPECT_TRUE(topo->LlcKnown());
  EXPECT_TRUE(topo->Smt());
  const auto pairs = PairsByDistance(*topo);
  EXPECT_EQ(Count(Distance::kSameCpu, pairs), 0);
  EXPECT_EQ(Count(Distance::kSameCore, pairs), 8);     // one per core
  EXPECT_EQ(Count(Distance::kSameLlc, pairs), 16);     // 4 L3s x (6 - 2 sibling pairs)
  EXPECT_EQ(Count(Distance::kSameSocket, pairs), 32);  // 2 sockets x (28 - 12)
  EXPECT_EQ(Count(Distance::kOtherSocket, pairs), 64);
  EXPECT_EQ(Count(Distance::kSameSocketLlcUnknown, pairs), 0);
  std::set<std::pair<int, int>> seen;
  for (const auto& list : pairs) {
    for (const auto& [a, b] : list) {
      EXPECT_LT(a, b);
      EXPECT_TRUE(seen.insert({a, b}).second) << a << "-" << b << " in two classes";
      EXPECT_EQ(topo->Between(a, b), topo->Between(b, a));
    }
  }
  EXPECT_EQ(seen.size(), 120u);
  EXPECT_EQ(topo->Between(0, 8), Distance::kSameCore);
  EXPECT_EQ(topo->Between(0, 1), Distance::kSameLlc);
  EXPECT_EQ(topo->Between(0, 2), Distance::kSameSocket);
  EXPECT_EQ(topo->Between(0, 4), Distance::kOtherSocket);
  EXPECT_EQ(topo->Between(3, 3), Distance::kSameCpu);
}

TEST(LineTopology, PlacementsFillAnL3OrSpread) {
  absl::StatusOr<Topology> topo = ReadTopology(FakeSysfs("placements", 2, 2, 2, 2, true), {});
  ASSERT_TRUE(topo.ok()) << topo.status();
  const std::vector<int> local = PlacementOrder(*topo, "llc-local");
  const std::vector<int> spread = PlacementOrder(*topo, "spread");
  ASSERT_EQ(local.size(), 16u);
  ASSERT_EQ(std::set<int>(spread.begin(), spread.end()).size(), 16u);
  // One L3's four CPUs first, its two cores before their siblings.
  EXPECT_EQ(local[0], 0);
  EXPECT_EQ(local[1], 1);
  EXPECT_EQ(local[2], 8);
  EXPECT_EQ(local[3], 9);
  // One CPU of each L3 first, sockets alternating.
  std::set<int> llcs;
  for (int i = 0; i < 4; ++i) llcs.insert(topo->Of(spread[i]).llc);
  EXPECT_EQ(llcs.size(), 4u);
  EXPECT_NE(topo->Of(spread[0]).socket, topo->Of(spread[1]).socket);
  EXPECT_NE(topo->Between(spread[0], spread[4]), Distance::kSameCore) << "a second core before a sibling";
}

TEST(LineTopology, WithoutAnL3PairsOfOneSocketAreUnknown) {
  absl::StatusOr<Topology> topo = ReadTopology(FakeSysfs("no_l3", 1, 1, 4, 1, false), {});
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_FALSE(topo->LlcKnown());
  EXPECT_FALSE(topo->Smt());
  const auto pairs = PairsByDistance(*topo);
  EXPECT_EQ(Count(Distance::kSameSocketLlcUnknown, pairs), 6);
  EXPECT_EQ(Count(Distance::kSameLlc, pairs) + Count(Distance::kSameSocket, pairs), 0);
}

TEST(LineTopology, RestrictsToTheCpusAsked) {
  const std::string root = FakeSysfs("restrict", 2, 2, 2, 2, true);
  absl::StatusOr<Topology> topo = ReadTopology(root, {0, 8, 4});
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->cpus.size(), 3u);
  EXPECT_EQ(topo->Of(0).siblings, (std::vector<int>{0, 8}));
  EXPECT_EQ(topo->Of(4).siblings, (std::vector<int>{4}));  // 12 not selected
  absl::StatusOr<Topology> bad = ReadTopology(root, {99});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "CPU 99 is not online")) << bad.status();
}

TEST(LineTopology, ErrorsNameTheFile) {
  const std::string root = FakeSysfs("broken", 1, 1, 2, 1, true);
  fs::remove(fs::path(root) / "cpu1/topology/core_id");
  absl::StatusOr<Topology> missing = ReadTopology(root, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "cpu1/topology/core_id")) << missing.status();
  Write(fs::path(root) / "online", "0-x");
  absl::StatusOr<Topology> garbled = ReadTopology(root, {});
  ASSERT_FALSE(garbled.ok());
  EXPECT_TRUE(absl::StrContains(garbled.status().message(), "online: \"0-x\"")) << garbled.status();
}

TEST(LineTopology, CpuLists) {
  EXPECT_EQ(*ParseCpuList("0-3,8,10-11", "t"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(*ParseCpuList(" 5,1,1 ", "t"), (std::vector<int>{1, 5}));
  for (const char* bad : {"", "a", "3-1", "1,,2", "-1", "1-", "0-70000"}) {
    EXPECT_FALSE(ParseCpuList(bad, "t").ok()) << bad;
  }
}

// A run whose owner order is given, on the 16-CPU tree.
TEST(LineAnalysis, FiguresFollowFromTheOrderOfOwners) {
  absl::StatusOr<Topology> topo = ReadTopology(FakeSysfs("analysis", 2, 2, 2, 2, true), {});
  ASSERT_TRUE(topo.ok()) << topo.status();
  ContendedRun run;
  run.cpus = {0, 8, 1, 4};  // sibling, same L3, other socket of thread 0
  run.owner = {0, 0, 1, 0, 2, 3, 3, 0, 1, 1};
  run.successes = {4, 3, 1, 2};
  run.failures = {0, 0, 0, 0};
  run.final_value = 10;
  run.seconds = 1e-6;  // 100 ns per success
  Costs costs;
  costs[static_cast<int>(Distance::kSameCpu)] = 5;
  costs[static_cast<int>(Distance::kSameCore)] = 10;
  costs[static_cast<int>(Distance::kSameLlc)] = 20;
  costs[static_cast<int>(Distance::kSameSocket)] = 100;
  costs[static_cast<int>(Distance::kOtherSocket)] = 200;
  const Analysis a = Analyze(run, *topo, costs);
  EXPECT_EQ(a.transactions, 10u);
  EXPECT_DOUBLE_EQ(a.run_service_ns, 100);
  EXPECT_EQ(a.windows, 0);  // no stamps
  EXPECT_DOUBLE_EQ(a.service_ns, 100);
  // 0-0 cpu, 0-1 core, 1-0 core, 0-2 llc, 2-3 other (1 vs 4), 3-3 cpu,
  // 3-0 other, 0-1 core, 1-1 cpu.
  EXPECT_EQ(a.pairs[static_cast<int>(Distance::kSameCpu)], 3u);
  EXPECT_EQ(a.pairs[static_cast<int>(Distance::kSameCore)], 3u);
  EXPECT_EQ(a.pairs[static_cast<int>(Distance::kSameLlc)], 1u);
  EXPECT_EQ(a.pairs[static_cast<int>(Distance::kOtherSocket)], 2u);
  ASSERT_TRUE(a.mean_handoff_ns.has_value());
  EXPECT_DOUBLE_EQ(*a.mean_handoff_ns, (3 * 5 + 3 * 10 + 20 + 2 * 200) / 9.0);
  EXPECT_DOUBLE_EQ(*a.ratio, 100 / *a.mean_handoff_ns);
  ASSERT_TRUE(a.near_share.has_value());
  EXPECT_DOUBLE_EQ(*a.near_share, 7 / 9.0);
  // Thread 0 waits from position 4 to 7 (2 others), thread 1 from 2 to 8 (5).
  EXPECT_EQ(a.max_passed_over, 5u);
  EXPECT_EQ(a.max_passed_over_thread, 1);
  EXPECT_EQ(a.min_per_thread, 1u);
  EXPECT_EQ(a.max_per_thread, 4u);
  costs[static_cast<int>(Distance::kOtherSocket)].reset();
  EXPECT_FALSE(Analyze(run, *topo, costs).mean_handoff_ns.has_value()) << "a distance met without a cost";
}

// The service time is the median over windows: a stall of the whole line
// (its threads off their CPUs) is one window, not the run's mean.
TEST(LineAnalysis, WindowsLeaveOutAStall) {
  absl::StatusOr<Topology> topo = ReadTopology(FakeSysfs("windows", 1, 1, 2, 1, true), {});
  ASSERT_TRUE(topo.ok()) << topo.status();
  ContendedRun run;
  run.cpus = {0, 1};
  const uint64_t total = 64 * 1024;
  for (uint64_t k = 0; k < total; ++k) run.owner.push_back(static_cast<uint32_t>(k % 2));
  run.successes = {total / 2, total / 2};
  run.failures = {0, 0};
  run.final_value = total;
  // 10 ns per success, and a 1 ms stall after success 20000.
  int64_t t = 0;
  for (uint64_t k = 0; k < total; k += 32) {
    run.stamps.emplace_back(k, t + (k > 20000 ? 1000000 : 0));
    t += 320;
  }
  run.seconds = (static_cast<double>(total) * 10 + 1e6) * 1e-9;
  Costs costs;
  costs[static_cast<int>(Distance::kSameLlc)] = 40;
  const Analysis a = Analyze(run, *topo, costs);
  EXPECT_EQ(a.windows, 15);  // 64 Ki successes in windows of 4096
  EXPECT_DOUBLE_EQ(a.service_ns, 10);
  EXPECT_NEAR(a.run_service_ns, 10 + 1e6 / total, 1e-9);
  EXPECT_DOUBLE_EQ(*a.ratio, 10.0 / 40);
}

// The CPUs the test may run on (at most 4): the real host's.
std::vector<int> HostCpus() {
  absl::StatusOr<Topology> topo = ReadTopology("/sys/devices/system/cpu", {});
  std::vector<int> cpus;
  if (!topo.ok()) return cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  for (const CpuInfo& c : topo->cpus) {
    if (CPU_ISSET(c.cpu, &set) && cpus.size() < 4) cpus.push_back(c.cpu);
  }
  return cpus;
}

TEST(LineMeasure, EverySuccessIsInTheOrderOnce) {
  const std::vector<int> cpus = HostCpus();
  ASSERT_FALSE(cpus.empty());
  absl::StatusOr<Topology> topo = ReadTopology("/sys/devices/system/cpu", cpus);
  ASSERT_TRUE(topo.ok()) << topo.status();
  for (Op op : {Op::kXadd, Op::kCas}) {
    for (size_t n = 1; n <= cpus.size(); ++n) {
      // A small log: some runs end because a thread's log is full.
      absl::StatusOr<ContendedRun> run =
          Contend(op, std::vector<int>(cpus.begin(), cpus.begin() + n), 0.01, uint64_t{1} << 16);
      ASSERT_TRUE(run.ok()) << run.status();
      ASSERT_FALSE(run->owner.empty()) << OpName(op) << " N=" << n;
      EXPECT_EQ(run->owner.size(), run->Successes());
      EXPECT_EQ(run->final_value, run->Successes());
      std::vector<uint64_t> per_thread(n, 0);
      for (uint32_t t : run->owner) {
        ASSERT_LT(t, n);
        ++per_thread[t];
      }
      EXPECT_EQ(per_thread, run->successes);
      uint64_t stamps = 0;
      for (uint64_t s : run->successes) stamps += (s + kStampEvery - 1) / kStampEvery;
      EXPECT_EQ(run->stamps.size(), stamps);
      for (size_t i = 0; i < run->stamps.size(); ++i) {
        ASSERT_LT(run->stamps[i].first, run->final_value);
        if (i > 0) {
          ASSERT_LT(run->stamps[i - 1].first, run->stamps[i].first);
        }
      }
      if (op == Op::kXadd) {
        EXPECT_EQ(run->Failures(), 0u);
      }
      EXPECT_GT(run->seconds, 0);

      Costs costs;
      for (auto& c : costs) c = 1.0 + (&c - costs.data());
      const Analysis a = Analyze(*run, *topo, costs);
      uint64_t pairs = 0;
      double share = 0;
      for (int d = 0; d < kDistances; ++d) pairs += a.pairs[d], share += a.share[d];
      EXPECT_EQ(pairs, a.transactions - 1);
      if (pairs > 0) {
        EXPECT_NEAR(share, 1.0, 1e-12);
      }
      ASSERT_TRUE(a.ratio.has_value());
      EXPECT_DOUBLE_EQ(*a.ratio, a.service_ns / *a.mean_handoff_ns);
    }
  }
}

TEST(LineMeasure, IdleFiguresArePositive) {
  const std::vector<int> cpus = HostCpus();
  ASSERT_FALSE(cpus.empty());
  absl::StatusOr<Samples> local = LocalHit(cpus[0], 0.005);
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_GE(local->ns.size(), 1u);
  EXPECT_GT(local->Median(), 0);
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU: no pair to ping-pong";
  absl::StatusOr<Samples> pp = PingPong(cpus[0], cpus[1], 0.005);
  ASSERT_TRUE(pp.ok()) << pp.status();
  EXPECT_GE(pp->ns.size(), 3u);
  EXPECT_GT(pp->Median(), 0);
}

TEST(LineMeasure, PinningOutsideTheMaskFails) {
  absl::StatusOr<Samples> s = LocalHit(CPU_SETSIZE - 1, 0.001);
  EXPECT_FALSE(s.ok());
}

// The program itself.
struct Output {
  int status = -1;
  std::string out, err;
};

Output RunLinebench(const std::string& args) {
  const std::string out = TmpDir() + "/linebench.out", err = TmpDir() + "/linebench.err";
  const int s = std::system(absl::StrCat("bench/linebench ", args, " >", out, " 2>", err).c_str());
  return {WIFEXITED(s) ? WEXITSTATUS(s) : -1, ReadFile(out), ReadFile(err)};
}

double Num(absl::string_view s) {
  double v = 0;
  EXPECT_TRUE(absl::SimpleAtod(s, &v)) << s;
  return v;
}

TEST(LinebenchProgram, TablesAreConsistentAndTheFragmentParses) {
  const Output o = RunLinebench("--seconds 0.02 --repeat 1 --pairs 1");
  ASSERT_EQ(o.status, 0) << o.err << o.out;
  // The contended rows: op placement N successes sequence Mops/s run_svc
  // service windows handoff ratio, six shares, near passed min max
  // fail/succ.
  int rows = 0;
  std::set<std::string> ops;
  for (absl::string_view line : absl::StrSplit(o.out, '\n')) {
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() != 22 || (f[0] != "xadd" && f[0] != "cas")) continue;
    ++rows;
    ops.insert(f[0] + " " + f[1]);
    EXPECT_EQ(f[3], f[4]) << "successes and the owner sequence: " << line;
    const double mops = Num(f[5]), run_service = Num(f[6]), service = Num(f[7]);
    EXPECT_NEAR(run_service, 1e3 / mops, 1e-5 * run_service + 6e-4) << line;  // as rounded
    if (Num(f[8]) < 5) {
      EXPECT_EQ(f[6], f[7]) << "fewer than 5 windows: the whole run's figure";
    }
    if (f[9] != "-") {
      const double handoff = Num(f[9]), ratio = Num(f[10]);
      EXPECT_NEAR(ratio, service / handoff, 1e-3 * ratio + 1e-4) << line;
    }
    double shares = 0;
    for (int i = 11; i < 17; ++i) shares += Num(f[i]);
    if (Num(f[3]) > 1) {
      EXPECT_NEAR(shares, 1.0, 1e-3) << line;
    }
    if (f[17] != "-") {
      EXPECT_NEAR(Num(f[17]), Num(f[11]) + Num(f[12]) + Num(f[13]), 2e-4) << line;
    }
    EXPECT_LE(Num(f[19]), Num(f[20])) << line;
    EXPECT_EQ(f[21] == "-", f[0] == "xadd") << line;
  }
  EXPECT_EQ(ops, (std::set<std::string>{"xadd llc-local", "xadd spread", "cas llc-local", "cas spread"}));
  EXPECT_GE(rows, 4);

  // The fragment: from "platform {" to the end.
  const size_t at = o.out.find("\nplatform {");
  ASSERT_NE(at, std::string::npos) << o.out;
  const std::string fragment = o.out.substr(at);
  linebench_test::Fragment parsed;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(fragment, &parsed)) << fragment;
  const linebench_test::CacheLines& lines = parsed.platform().cache_lines();
  for (const viosim::Cost* c : {&lines.same_core(), &lines.same_llc(), &lines.same_socket(), &lines.other_socket()}) {
    if (!c->has_value()) continue;
    EXPECT_TRUE(absl::EndsWith(c->value(), "ns")) << c->value();
    EXPECT_EQ(c->source().kind(), viosim::Source::MEASURED);
    EXPECT_TRUE(absl::StrContains(c->source().ref(), "idle one-way hand-off, median of")) << c->source().ref();
  }
  if (HostCpus().size() >= 2) {
    ASSERT_TRUE(lines.has_service_ratio()) << fragment;
    EXPECT_GT(lines.service_ratio(), 0);
    EXPECT_EQ(lines.service_ratio_source().kind(), viosim::Source::MEASURED);
    EXPECT_TRUE(absl::StrContains(lines.service_ratio_source().ref(), "lock xadd")) << fragment;
  }
  // A class with no pair on this host is said so, not given a value.
  absl::StatusOr<Topology> topo = ReadTopology("/sys/devices/system/cpu", HostCpus());
  ASSERT_TRUE(topo.ok());
  const auto pairs = PairsByDistance(*topo);
  if (pairs[static_cast<int>(Distance::kOtherSocket)].empty()) {
    EXPECT_FALSE(lines.has_other_socket());
    EXPECT_TRUE(absl::StrContains(fragment, "# other_socket: not measurable")) << fragment;
  }
  if (pairs[static_cast<int>(Distance::kSameCore)].empty()) {
    EXPECT_FALSE(lines.has_same_core());
  }
}

TEST(LinebenchProgram, TopologyOnlyOnAFakeTree) {
  const Output o = RunLinebench(absl::StrCat("--topology-only --sysfs ", FakeSysfs("program", 2, 2, 2, 2, true)));
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(absl::StrContains(o.out, "16 CPU(s)")) << o.out;
  EXPECT_TRUE(absl::StrContains(o.out, "2 socket(s), 4 L3 domain(s), SMT on")) << o.out;
  EXPECT_TRUE(absl::StrContains(o.out, "total            120 pairs")) << o.out;
}

TEST(LinebenchProgram, BadFlagsExit2) {
  for (const char* args : {"--seconds 0", "--seconds x", "--placement near", "--ops add", "--format json",
                           "--cpus 0-x", "--cpus 65000", "--max-threads 0", "--pairs 0", "--bogus",
                           "--sysfs /nonexistent"}) {
    const Output o = RunLinebench(args);
    EXPECT_EQ(o.status, 2) << args << ": " << o.out << o.err;
    EXPECT_FALSE(o.err.empty()) << args;
    EXPECT_TRUE(o.out.empty()) << args << ": " << o.out;
  }
}

TEST(LinebenchProgram, EveryFlagIsDocumented) {
  const Output o = RunLinebench("--help");
  ASSERT_EQ(o.status, 0);
  const std::string doc = ReadFile("docs/linebench.md");
  ASSERT_FALSE(doc.empty());
  for (absl::string_view line : absl::StrSplit(o.out, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "--")) continue;
    const std::string flag = absl::StrCat("`--", line.substr(0, line.find_first_of(" =")));
    if (flag == "`--help") continue;
    EXPECT_TRUE(absl::StrContains(doc, flag)) << flag << " is not in docs/linebench.md";
  }
}

}  // namespace
}  // namespace linebench
