// A contended cache line. Unqueued: an access pays the table's transfer for
// the distance from the line's last holder when the line is elsewhere, the
// same-CPU cost when it is here, and each transfer is counted by distance.
// Queued (FIFO, nearest-first): a transaction waits for the line; the
// throughput of N CPUs on one line is the exact answer of its closed queue.
#include "models/sync/cache_line.h"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "models/sync/handoff_costs.h"
#include "sim/rng.h"
#include "sim/task.h"
#include "tests/sync/machine.h"

namespace models {
namespace {

using sim::Time;
using namespace sim::literals;  // NOLINT

enum class Op { kRead, kWrite, kRmw };

struct Step {
  int cpu;
  Time at;
  Op op;
  CpuDistance from;  // where the line comes from; kSame: it is here
  Time took = Time::Max();
};

// Runs the steps of CPU `cpu`, in order, each at its time.
sim::Task Accesses(Task& t, CacheLine& line, std::vector<Step>& steps) {
  Cpu& cpu = *t.cpu();
  for (Step& s : steps) {
    if (s.cpu != cpu.id()) continue;
    co_await cpu.RunUser(s.at - cpu.sim().Now());
    const Time start = cpu.sim().Now();
    switch (s.op) {
      case Op::kRead: co_await line.Read(cpu); break;
      case Op::kWrite: co_await line.Write(cpu); break;
      case Op::kRmw: co_await line.AtomicRmw(cpu); break;
    }
    s.took = cpu.sim().Now() - start;
  }
}

TEST(CacheLineTest, AnAccessPaysTheTransferFromTheLastWriterOrTheLocalCost) {
  Machine m(TwoSocketPlaces());
  const LockHandoffCosts costs = OddPicosecondCosts();
  CacheLine line(m.sim, "nr_pending", costs);
  std::vector<Step> steps = {
      {0, 1_us, Op::kWrite, CpuDistance::kSame},    // nobody wrote it: local
      {1, 2_us, Op::kRmw, CpuDistance::kCore},      // from cpu0, its SMT sibling
      {1, 3_us, Op::kRmw, CpuDistance::kSame},      // cpu1 wrote it last
      {2, 4_us, Op::kRead, CpuDistance::kLlc},      // a copy from cpu1
      {2, 5_us, Op::kRead, CpuDistance::kSame},     // the copy hits
      {4, 6_us, Op::kRead, CpuDistance::kSocket},   // a copy from cpu1
      {6, 7_us, Op::kWrite, CpuDistance::kRemote},  // from cpu1, other socket
      {2, 8_us, Op::kWrite, CpuDistance::kRemote},  // its copy is stale: from cpu6
      {0, 9_us, Op::kRead, CpuDistance::kLlc},      // from cpu2
  };
  for (int c : {0, 1, 2, 4, 6}) {
    Task& t = m.NewTask(c);
    m.sched.Start(t, Accesses(t, line, steps));
  }
  m.sim.RunUntil(1_ms);
  for (const Step& s : steps) {
    SCOPED_TRACE(testing::Message() << "cpu" << s.cpu << " at " << s.at.ToMicros() << "us");
    EXPECT_EQ(s.took, costs.Of(s.from));
  }
  EXPECT_EQ(line.last_writer(), &m.cpu(2));
  EXPECT_EQ(line.accesses(), 9u);
  EXPECT_EQ(line.transfers(), 6u);
  EXPECT_EQ(line.transfers_at(CpuDistance::kSame), 0u);
  EXPECT_EQ(line.transfers_at(CpuDistance::kCore), 1u);
  EXPECT_EQ(line.transfers_at(CpuDistance::kLlc), 2u);
  EXPECT_EQ(line.transfers_at(CpuDistance::kSocket), 1u);
  EXPECT_EQ(line.transfers_at(CpuDistance::kRemote), 2u);
  // The accesses are system time on their CPUs.
  EXPECT_EQ(m.cpu(6).TimeIn(CpuTime::kSystem), costs.other_socket.value);
  line.ResetStats();
  EXPECT_EQ(line.accesses(), 0u);
  EXPECT_EQ(line.transfers(), 0u);
  EXPECT_EQ(line.last_writer(), &m.cpu(2));
}

// `n` atomic increments at `first`, `first` + 2us, `first` + 4us...
sim::Task Increments(Task& t, CacheLine& line, int n, Time first) {
  Cpu& cpu = *t.cpu();
  for (int i = 0; i < n; ++i) {
    co_await cpu.RunUser(first + 2_us * i - cpu.sim().Now());
    co_await line.AtomicRmw(cpu);
  }
}

// Two CPUs on two sockets taking turns on an atomic counter move the line
// every time; one CPU alone never does.
TEST(CacheLineTest, AtomicsTakingTurnsAcrossSocketsMoveTheLineEveryTime) {
  const LockHandoffCosts costs = OddPicosecondCosts();
  for (bool alone : {false, true}) {
    SCOPED_TRACE(alone ? "cpu0 alone" : "cpu0 and cpu6");
    Machine m(TwoSocketPlaces());
    CacheLine line(m.sim, "counter", costs);
    Task& a = m.NewTask(0);
    m.sched.Start(a, Increments(a, line, 5, 1_us));
    // Alone, the second task runs once the first has exited.
    Task& b = m.NewTask(alone ? 0 : 6);
    m.sched.Start(b, Increments(b, line, 5, alone ? 12_us : 2_us));
    m.sim.RunUntil(1_ms);
    EXPECT_EQ(line.accesses(), 10u);
    if (alone) {
      EXPECT_EQ(line.transfers(), 0u);
      EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSystem), costs.same_cpu.value * 10);
    } else {
      // The first access finds the line unwritten; the other nine move it.
      EXPECT_EQ(line.transfers_at(CpuDistance::kRemote), 9u);
      EXPECT_EQ(m.cpu(0).TimeIn(CpuTime::kSystem), costs.same_cpu.value + costs.other_socket.value * 4);
      EXPECT_EQ(m.cpu(6).TimeIn(CpuTime::kSystem), costs.other_socket.value * 5);
    }
  }
}

// A line homed on socket 0: two LLCs of socket 1 move it at the
// cross-socket cost, two LLCs of socket 0 at the same-socket one.
TEST(CacheLineTest, AHomeSocketMakesTheOtherSocketsLlcPairsCostACrossSocketMove) {
  const std::vector<CpuPlace> places = {{0, 0, 0}, {0, 1, 1}, {1, 2, 2}, {1, 3, 3}};
  const LockHandoffCosts costs = OddPicosecondCosts();
  for (int home : {0, -1}) {
    SCOPED_TRACE(testing::Message() << "home " << home);
    Machine m(places);
    LineCosts lc{costs};
    lc.home_socket = home;
    CacheLine line(m.sim, "homed", lc);
    std::vector<Step> steps = {
        {0, 1_us, Op::kWrite, CpuDistance::kSame},    // nobody wrote it yet
        {1, 2_us, Op::kWrite, CpuDistance::kSocket},  // LLC 0 to LLC 1 of the home socket
        {2, 3_us, Op::kWrite, CpuDistance::kRemote},
        {3, 4_us, Op::kRead, home == 0 ? CpuDistance::kRemote : CpuDistance::kSocket},
    };
    for (int c = 0; c < 4; ++c) {
      Task& t = m.NewTask(c);
      m.sched.Start(t, Accesses(t, line, steps));
    }
    m.sim.RunUntil(1_ms);
    for (const Step& st : steps) EXPECT_EQ(st.took, costs.Of(st.from)) << "cpu" << st.cpu;
  }
}

// A read and then an atomic of a line another CPU wrote are two
// transactions: the copy the read brought is shared, and the atomic
// upgrades it, invalidating the writer's copy (at the distance from it).
TEST(CacheLineTest, AReadThenAnRmwOfALineAnotherCpuWroteIsTwoTransactions) {
  Machine m(TwoSocketPlaces());
  const LockHandoffCosts costs = OddPicosecondCosts();
  CacheLine line(m.sim, "nr_pending", LineCosts{costs, 1.0, LineArbitration::kFifo});
  std::vector<Step> steps = {
      {6, 1_us, Op::kWrite, CpuDistance::kSame},
      {0, 2_us, Op::kRead, CpuDistance::kRemote},
      {0, 3_us, Op::kRmw, CpuDistance::kRemote},  // the upgrade: cpu6's copy goes
      {0, 4_us, Op::kRmw, CpuDistance::kSame},    // exclusive here now
  };
  for (int c : {0, 6}) {
    Task& t = m.NewTask(c);
    m.sched.Start(t, Accesses(t, line, steps));
  }
  m.sim.RunUntil(1_ms);
  for (const Step& st : steps) EXPECT_EQ(st.took, costs.Of(st.from)) << "at " << st.at.ToMicros();
  EXPECT_EQ(line.transfers(), 2u);
}

// Queued at a share: a transaction occupies the line for service_ratio of
// its hand-off, and one asking meanwhile waits for it to end; the CPU that
// had the line goes on hitting its copy until the transaction is done.
TEST(CacheLineTest, AQueuedTransactionWaitsForTheOneInFlightAtItsShare) {
  Machine m(TwoSocketPlaces());
  const LockHandoffCosts costs = OddPicosecondCosts();
  const auto share = [&](CpuDistance d) { return Time::Picos(std::llround(costs.Of(d).ps() * 0.5)); };
  CacheLine line(m.sim, "line", LineCosts{costs, 0.5, LineArbitration::kFifo});
  std::vector<Step> steps = {
      {0, 1_us, Op::kWrite, CpuDistance::kSame},
      {6, 2_us, Op::kRmw, CpuDistance::kRemote},
      {4, Time::Picos(2'000'001), Op::kRmw, CpuDistance::kRemote},  // from cpu6, after cpu6's transaction
      {0, Time::Picos(2'000'001), Op::kRead, CpuDistance::kSame},   // still cpu0's until cpu6 has it
      {0, Time::Picos(2'002'000), Op::kRmw, CpuDistance::kSame},    // but a write waits for the line
  };
  for (int c : {0, 4, 6}) {
    Task& t = m.NewTask(c);
    m.sched.Start(t, Accesses(t, line, steps));
  }
  m.sim.RunUntil(1_ms);
  const Time remote = share(CpuDistance::kRemote), one = Time::Picos(1);
  EXPECT_EQ(steps[1].took, remote);
  EXPECT_EQ(steps[2].took, remote + remote - one);
  EXPECT_EQ(steps[3].took, costs.same_cpu.value);
  // cpu0's write queues behind both, and takes the line back from cpu4.
  const Time late = Time::Picos(2000);
  EXPECT_EQ(steps[4].took, remote * 2 - late + share(CpuDistance::kSocket));
  EXPECT_EQ(line.queued(), 2u);
  EXPECT_EQ(line.wait_sum(), (remote - one) + (remote * 2 - late));
  EXPECT_EQ(line.BusyTime(), remote * 2 + share(CpuDistance::kSocket));
}

// A waiter's transaction ends where the line's next pick is due, and it
// resumes then, before anything queued later for that instant: with
// three CPUs queued behind a fourth (cpu6, taking the line cpu7 wrote), each resumes the moment its
// transaction is done, ahead of a probe whose work, begun after the pick
// that served it, ends at that same moment. The same under the fair
// scheduler (CPUs without the direct path, where the pick itself ends the
// wait: Cpu::ArmWaitEnd) as under the pinned one.
template <class M>
void WaitersResumeWhenDoneBeforeLaterEvents() {
  M m(TwoSocketPlaces());
  const LockHandoffCosts costs = OddPicosecondCosts();
  CacheLine line(m.sim, "line", LineCosts{costs, 1.0, LineArbitration::kFifo});
  std::vector<std::pair<int, Time>> resumed;
  auto rmw = [&](Task& t, Time at) -> sim::Task {
    Cpu& cpu = *t.cpu();
    co_await cpu.RunUser(at - cpu.sim().Now());
    co_await line.AtomicRmw(cpu);
    resumed.emplace_back(cpu.id(), cpu.sim().Now());
  };
  // cpu7 writes the line first; at 1us cpu6 takes it from its SMT sibling,
  // and cpu0, cpu4, cpu2 queue behind it.
  const Time t0 = 1_us;
  const Time t1 = t0 + costs.same_core.value;     // cpu6 done: cpu0 picked (from cpu6)
  const Time t2 = t1 + costs.other_socket.value;  // cpu0 done: cpu4 picked (from cpu0)
  const Time t3 = t2 + costs.same_socket.value;   // cpu4 done: cpu2 picked (from cpu4)
  const Time t4 = t3 + costs.same_socket.value;   // cpu2 done
  const std::vector<std::pair<int, Time>> asks = {
      {7, 500_ns}, {6, t0}, {0, t0 + Time::Picos(1)}, {4, t0 + Time::Picos(2)}, {2, t0 + Time::Picos(3)}};
  for (const auto& [c, at] : asks) {
    Task& t = m.NewTask(c);
    m.sched.Start(t, rmw(t, at));
  }
  // The probes: work begun just after t1 (and t2) that ends at t2 (and t3).
  auto probe = [&](Task& t, Time start, Time end) -> sim::Task {
    Cpu& cpu = *t.cpu();
    co_await cpu.RunUser(start - cpu.sim().Now());
    co_await cpu.Run(end - start);
    resumed.emplace_back(-1, cpu.sim().Now());
  };
  Task& p1 = m.NewTask(1);
  m.sched.Start(p1, probe(p1, t1 + Time::Picos(1), t2));
  Task& p3 = m.NewTask(3);
  m.sched.Start(p3, probe(p3, t2 + Time::Picos(1), t3));
  m.sim.RunUntil(1_ms);
  const std::vector<std::pair<int, Time>> want = {{7, 500_ns + costs.same_cpu.value},
                                                   {6, t1},
                                                   {0, t2},
                                                   {-1, t2},
                                                   {4, t3},
                                                   {-1, t3},
                                                   {2, t4}};
  EXPECT_EQ(resumed, want);
  EXPECT_EQ(line.queued(), 3u);
}

TEST(CacheLineTest, AWaiterResumesWhenItsTransactionIsDoneBeforeLaterEventsOfThatInstant) {
  {
    SCOPED_TRACE("pinned FIFO scheduler");
    WaitersResumeWhenDoneBeforeLaterEvents<Machine>();
  }
  {
    SCOPED_TRACE("fair scheduler");
    WaitersResumeWhenDoneBeforeLaterEvents<FairMachine>();
  }
}

// The pick that ends a waiter's wait (Cpu::ArmWaitEnd) may itself wake
// someone for its own instant: here an interrupt handler on the waiter's
// CPU, queued behind it, whose transaction takes the line from that same
// CPU at no cost (a same-CPU cost of zero). The wait's end is then queued
// in the place it reserved, after that wakeup (Cpu::WaitEndQueued): the
// handler finishes first, and the task, held back while it ran, goes on at
// the same instant.
TEST(CacheLineTest, AWaitEndedByAPickThatWakesAHandlerAtOnceComesAfterIt) {
  FairMachine m(TwoSocketPlaces());
  LockHandoffCosts costs = OddPicosecondCosts();
  costs.same_cpu.value = Time::Zero();
  CacheLine line(m.sim, "line", LineCosts{costs, 1.0, LineArbitration::kFifo});
  std::vector<std::pair<std::string, Time>> log;
  auto write_at = [&](Task& t, Time at, std::string who) -> sim::Task {
    Cpu& cpu = *t.cpu();
    co_await cpu.RunUser(at - cpu.sim().Now());
    co_await line.Write(cpu);
    log.emplace_back(who, cpu.sim().Now());
  };
  auto handler = [&](Cpu& cpu) -> sim::Task {
    co_await line.Write(cpu);
    log.emplace_back("handler", cpu.sim().Now());
  };
  auto raise_at = [&](Cpu& cpu, Time at) -> sim::Task {
    co_await m.sim.Delay(at - m.sim.Now());
    cpu.RaiseIrq(handler(cpu));
  };
  // cpu4 writes the line first (no transaction: nobody had it); at 1us
  // cpu0 takes it from cpu4; cpu2's task queues behind, then a handler on
  // cpu2 while that task waits.
  Task& a = m.NewTask(4);
  m.sched.Start(a, write_at(a, 500_ns, "cpu4"));
  Task& b = m.NewTask(0);
  m.sched.Start(b, write_at(b, 1_us, "cpu0"));
  Task& c = m.NewTask(2);
  m.sched.Start(c, write_at(c, 1_us + Time::Picos(1), "cpu2"));
  m.sim.Spawn(raise_at(m.cpu(2), 1_us + Time::Picos(2)));
  m.sim.RunUntil(1_ms);
  const Time t1 = 1_us + costs.same_socket.value;  // cpu0 done: cpu2's task picked
  const Time t2 = t1 + costs.same_llc.value;       // cpu2's task done: the handler picked, served at once
  const std::vector<std::pair<std::string, Time>> want = {
      {"cpu4", 500_ns}, {"cpu0", t1}, {"handler", t2}, {"cpu2", t2}};
  EXPECT_EQ(log, want);
  EXPECT_EQ(line.queued(), 2u);
  EXPECT_EQ(line.last_writer(), &m.cpu(2));
}

// Nearest-first: the line goes to the waiter in its holder's LLC before an
// older one on the other socket, unless that one has been passed over
// max_bypass times; FIFO serves by arrival.
TEST(CacheLineTest, NearestFirstServesTheHoldersLlcFirstUpToTheBypassBound) {
  const LockHandoffCosts costs = OddPicosecondCosts();
  struct Case {
    LineArbitration policy;
    int max_bypass;
    std::vector<int> order;  // of cpu6 (asks first), cpu2, cpu3 (same LLC as cpu0)
  };
  const Case cases[] = {
      {LineArbitration::kFifo, 1, {6, 2, 3}},
      {LineArbitration::kNearestFirst, 1000, {2, 3, 6}},
      {LineArbitration::kNearestFirst, 1, {2, 6, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << LineArbitrationName(c.policy) << " bypass " << c.max_bypass);
    Machine m(TwoSocketPlaces());
    LineCosts lc{costs, 1.0, c.policy};
    lc.max_bypass = c.max_bypass;
    CacheLine line(m.sim, "line", lc);
    // cpu4 (LLC 1) writes it, then cpu0 (LLC 0) takes it; while cpu0's
    // transaction is in flight cpu6 (the other socket), cpu2 and cpu3 (both
    // in cpu0's LLC) ask, in that order.
    std::vector<Step> steps = {
        {4, 1_us, Op::kWrite, CpuDistance::kSame},
        {0, 2_us, Op::kRmw, CpuDistance::kSocket},
        {6, Time::Picos(2'000'010), Op::kRmw, CpuDistance::kSame},
        {2, Time::Picos(2'000'020), Op::kRmw, CpuDistance::kSame},
        {3, Time::Picos(2'000'030), Op::kRmw, CpuDistance::kSame},
    };
    for (int k : {0, 2, 3, 4, 6}) {
      Task& t = m.NewTask(k);
      m.sched.Start(t, Accesses(t, line, steps));
    }
    m.sim.RunUntil(1_ms);
    std::vector<std::pair<Time, int>> done;
    for (size_t i = 2; i < steps.size(); ++i) done.push_back({steps[i].at + steps[i].took, steps[i].cpu});
    std::sort(done.begin(), done.end());
    std::vector<int> order;
    for (const auto& [t, cpu] : done) order.push_back(cpu);
    EXPECT_EQ(order, c.order);
  }
}

// Ideal: every access costs the same-CPU figure and nothing queues.
TEST(CacheLineTest, AnIdealLineNeverMovesOrWaits) {
  Machine m(TwoSocketPlaces());
  const LockHandoffCosts costs = OddPicosecondCosts();
  CacheLine line(m.sim, "line", LineCosts{costs, 1.0, LineArbitration::kFifo});
  line.set_ideal(true);
  std::vector<Step> steps = {
      {0, 1_us, Op::kWrite, CpuDistance::kSame},
      {6, 2_us, Op::kRmw, CpuDistance::kSame},
      {4, 2_us, Op::kRmw, CpuDistance::kSame},
  };
  for (int c : {0, 4, 6}) {
    Task& t = m.NewTask(c);
    m.sched.Start(t, Accesses(t, line, steps));
  }
  m.sim.RunUntil(1_ms);
  for (const Step& st : steps) EXPECT_EQ(st.took, costs.same_cpu.value);
  EXPECT_EQ(line.transfers(), 0u);
  EXPECT_EQ(line.queued(), 0u);
}

// ---- N CPUs on one line: a closed queue with an exact answer ----

// N CPUs each think for an exponential time (mean Z) and then do an atomic
// on one line whose every move costs S and whose hits cost nothing. The
// number n of CPUs at the line after each event (a transaction's end, or a
// hit) is a Markov chain: from n >= 1 the next transaction starts at once
// and each of the N - n thinking CPUs asks during its S with probability
// p = 1 - exp(-S/Z); from n = 0 the first CPU to ask (after Z/N on
// average) is the line's last holder with probability 1/N -- a hit, no
// service -- and another CPU otherwise, whose transaction takes S with
// N - 1 thinking. The accesses per unit of time are one over the mean time
// between events. Exact for any work-conserving order (FIFO or
// nearest-first): the chain only counts CPUs.
double ExactAccessRate(int n, double z, double s) {
  const double p = 1 - std::exp(-s / z);
  auto binom = [p](int trials, int k) {
    return std::exp(std::lgamma(trials + 1) - std::lgamma(k + 1) - std::lgamma(trials - k + 1)) *
           std::pow(p, k) * std::pow(1 - p, trials - k);
  };
  // Transition matrix over 0..n-1, then the stationary vector by power
  // iteration (the chain is aperiodic: state 0 returns to itself).
  std::vector<std::vector<double>> t(n, std::vector<double>(n, 0.0));
  for (int a = 0; a <= n - 1; ++a) t[0][a] += (n - 1.0) / n * binom(n - 1, a);
  t[0][0] += 1.0 / n;
  for (int k = 1; k < n; ++k) {
    for (int a = 0; a <= n - k; ++a) t[k][std::min(n - 1, k - 1 + a)] += binom(n - k, a);
  }
  std::vector<double> pi(n, 1.0 / n);
  for (int it = 0; it < 20000; ++it) {
    std::vector<double> next(n, 0.0);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) next[j] += pi[i] * t[i][j];
    }
    pi = next;
  }
  const double cycle = pi[0] * (z / n + (n - 1.0) / n * s) + (1 - pi[0]) * s;
  return 1 / cycle;
}

sim::Task ThinkAndAccess(Task& t, CacheLine& line, Time mean_think, uint64_t seed, uint64_t* done) {
  Cpu& cpu = *t.cpu();
  sim::Rng rng = sim::Rng::ForStream(seed, cpu.name());
  for (;;) {
    const double u = rng.UniformOpen01();
    co_await cpu.RunUser(Time::Picos(std::llround(-std::log(u) * static_cast<double>(mean_think.ps()))));
    co_await line.AtomicRmw(cpu);
    ++*done;
  }
}

struct Load {
  LineArbitration policy;
  int n;
  Time think;
};
void PrintTo(const Load& l, std::ostream* os) {
  *os << LineArbitrationName(l.policy) << " N=" << l.n << " Z=" << l.think.ToMicros() << "us";
}

class ClosedQueueTest : public testing::TestWithParam<Load> {};

// The model's accesses per second over 10 batches: their 95% interval holds
// the exact rate.
TEST_P(ClosedQueueTest, AccessRateIsTheExactAnswerWithinItsInterval) {
  const Load& l = GetParam();
  const Time s = 100_ns;
  const Source kTest{SourceKind::kDefined, "test"};
  LockHandoffCosts costs{{Time::Zero(), kTest}, {s, kTest}, {s, kTest}, {s, kTest}, {s, kTest}};
  std::vector<CpuPlace> places;
  for (int i = 0; i < l.n; ++i) places.push_back({i % 2, i % 4, i});  // spread, so nearest-first has a choice
  Machine m(places);
  LineCosts lc{costs, 1.0, l.policy};
  lc.max_bypass = 64;
  CacheLine line(m.sim, "line", lc);
  uint64_t done = 0;
  for (int c = 0; c < l.n; ++c) {
    Task& t = m.NewTask(c);
    m.sched.Start(t, ThinkAndAccess(t, line, l.think, 7, &done));
  }
  const Time batch = 4_ms;
  m.sim.RunUntil(1_ms);
  std::vector<double> rates;
  for (int b = 0; b < 10; ++b) {
    const uint64_t before = done;
    m.sim.RunUntil(m.sim.Now() + batch);
    rates.push_back(static_cast<double>(done - before) / batch.ToSeconds());
  }
  double mean = 0, var = 0;
  for (double r : rates) mean += r / rates.size();
  for (double r : rates) var += (r - mean) * (r - mean) / (rates.size() - 1);
  const double half = 2.262 * std::sqrt(var / rates.size());
  const double exact = ExactAccessRate(l.n, l.think.ToSeconds(), s.ToSeconds());
  EXPECT_NEAR(mean, exact, half) << "exact " << exact << ", modeled " << mean << " +- " << half;
  EXPECT_LT(half, 0.02 * exact);  // the interval says something
}

INSTANTIATE_TEST_SUITE_P(
    Loads, ClosedQueueTest,
    testing::Values(Load{LineArbitration::kFifo, 2, 200_ns}, Load{LineArbitration::kFifo, 8, 1_us},
                    Load{LineArbitration::kFifo, 32, 2_us}, Load{LineArbitration::kFifo, 32, 10_us},
                    Load{LineArbitration::kNearestFirst, 8, 1_us}, Load{LineArbitration::kNearestFirst, 32, 2_us},
                    Load{LineArbitration::kNearestFirst, 32, 10_us}));

}  // namespace
}  // namespace models
