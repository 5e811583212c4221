// A contended cache line: an access pays the table's transfer for the
// distance from the last writer when the line is elsewhere, the same-CPU
// cost when it is here, and each transfer is counted by distance.
#include "models/sync/cache_line.h"

#include <vector>

#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "models/sync/handoff_costs.h"
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
  CacheLine line("nr_pending", costs);
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
    CacheLine line("counter", costs);
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
// cross-socket cost, two LLCs of socket 0 at the same-socket one; the cost
// returned for the caller's own Run is the same as the access's.
TEST(CacheLineTest, AHomeSocketMakesTheOtherSocketsLlcPairsCostACrossSocketMove) {
  const std::vector<CpuPlace> places = {{0, 0, 0}, {0, 1, 1}, {1, 2, 2}, {1, 3, 3}};
  Machine m(places);
  const LockHandoffCosts costs = EpycRomeHandoffCosts();
  CacheLine homed("homed", costs), plain("plain", costs);
  homed.set_home_socket(0);
  EXPECT_EQ(homed.WriteCost(m.cpu(0)), costs.same_cpu.value);  // nobody wrote it yet
  EXPECT_EQ(homed.WriteCost(m.cpu(1)), costs.same_socket.value);
  EXPECT_EQ(homed.WriteCost(m.cpu(2)), costs.other_socket.value);
  EXPECT_EQ(homed.ReadCost(m.cpu(3)), costs.other_socket.value);
  EXPECT_EQ(homed.transfers_at(CpuDistance::kRemote), 2u);
  plain.WriteCost(m.cpu(2));
  EXPECT_EQ(plain.ReadCost(m.cpu(3)), costs.same_socket.value);
}

// Serialized (the what-if): two CPUs that want the line at once take turns;
// the second pays the first's transfer as well as its own.
TEST(CacheLineTest, ASerializedLineQueuesATransferBehindTheOneInFlight) {
  Machine m(TwoSocketPlaces());
  const LockHandoffCosts costs = EpycRomeHandoffCosts();
  CacheLine line("line", costs);
  line.set_serialized(true);
  EXPECT_EQ(line.WriteCost(m.cpu(0)), costs.same_cpu.value);
  // At time zero, CPU 6 (the other socket) and CPU 4 (another LLC) ask.
  EXPECT_EQ(line.WriteCost(m.cpu(6)), costs.other_socket.value);
  EXPECT_EQ(line.WriteCost(m.cpu(4)), costs.other_socket.value + costs.other_socket.value);
  EXPECT_EQ(line.transfers(), 2u);
}

// With a scale, a queued transfer occupies the line for that share of its
// distance's cost, and the one behind it waits that long; without
// serialization the scale changes nothing.
TEST(CacheLineTest, ASerializedLinesTransfersTakeTheirScaledShare) {
  Machine m(TwoSocketPlaces());
  const LockHandoffCosts costs = EpycRomeHandoffCosts();
  const Time half = Time::Picos(costs.other_socket.value.ps() / 2);
  CacheLine line("line", costs);
  line.set_serialized(true, 0.5);
  EXPECT_EQ(line.WriteCost(m.cpu(0)), costs.same_cpu.value);
  EXPECT_EQ(line.WriteCost(m.cpu(6)), half);
  EXPECT_EQ(line.WriteCost(m.cpu(4)), half + half);

  CacheLine free_running("free", costs);
  free_running.set_serialized(false, 0.5);
  free_running.WriteCost(m.cpu(0));
  EXPECT_EQ(free_running.WriteCost(m.cpu(6)), costs.other_socket.value);
  EXPECT_EQ(free_running.WriteCost(m.cpu(4)), costs.other_socket.value);
}

}  // namespace
}  // namespace models
