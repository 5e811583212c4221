#include "sim/simulator.h"

#include <coroutine>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/frame_pool.h"
#include "sim/task.h"
#include "sim/time.h"

namespace sim {
namespace {

using namespace sim::literals;

Task Record(Simulator& sim, Time delay, std::string tag, std::vector<std::string>* log) {
  co_await sim.Delay(delay);
  log->push_back(tag + "@" + FormatTime(sim.Now()));
}

TEST(SimulatorTest, EqualTimesRunInSchedulingOrder) {
  Simulator sim;
  std::vector<std::string> log;
  for (std::string tag : {"a", "b", "c", "d"}) sim.Spawn(Record(sim, 5_us, tag, &log));
  sim.Spawn(Record(sim, 1_us, "early", &log));
  sim.RunUntil(1_ms);
  EXPECT_EQ(log, (std::vector<std::string>{"early@1us", "a@5us", "b@5us", "c@5us", "d@5us"}));
}

// Parks the caller; `*slot` holds its handle.
struct Park {
  std::coroutine_handle<>* slot;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) { *slot = h; }
  void await_resume() const noexcept {}
};

Task Parked(Simulator& sim, std::string tag, std::coroutine_handle<>* slot, std::vector<std::string>* log) {
  co_await Park{slot};
  log->push_back(tag + "@" + FormatTime(sim.Now()));
}

TEST(SimulatorTest, RetargetResumesAnotherHandleInTheSamePlaceOfTheOrder) {
  Simulator sim;
  std::vector<std::string> log;
  std::coroutine_handle<> a, b;
  sim.Spawn(Parked(sim, "a", &a, &log));
  sim.Spawn(Parked(sim, "b", &b, &log));
  sim.RunUntil(Time::Zero());
  sim.Spawn(Record(sim, 5_us, "first", &log));
  sim.RunUntil(Time::Zero());  // "first" schedules its 5us resumption
  sim.ScheduleAt(5_us, a);
  sim.Spawn(Record(sim, 5_us, "last", &log));
  sim.RunUntil(1_us);
  EXPECT_FALSE(sim.Retarget(4_us, a, b));  // no resumption of `a` at 4us
  EXPECT_TRUE(sim.Retarget(5_us, a, b));
  sim.RunUntil(1_ms);
  EXPECT_EQ(log, (std::vector<std::string>{"first@5us", "b@5us", "last@5us"}));
}

// A place in the order reserved (ReserveSeq) and filled later
// (ScheduleAtSeq) runs where a ScheduleAt made at the reservation would
// have: after what was queued for that instant before it, before what was
// queued after it, whatever layout the queue is in by then.
TEST(SimulatorTest, AReservedPlaceInTheOrderIsKeptWhenFilledLater) {
  for (int crowd : {0, 300}) {  // 300 pending: the queue is a timing wheel
    SCOPED_TRACE(crowd);
    Simulator sim;
    std::vector<std::string> log;
    std::coroutine_handle<> a;
    sim.Spawn(Parked(sim, "a", &a, &log));
    for (int i = 0; i < crowd; ++i) sim.Spawn(Record(sim, 1_ms + Time::Picos(i), "", &log));
    sim.Spawn(Record(sim, 5_us, "before", &log));
    sim.RunUntil(Time::Zero());
    const uint64_t seq = sim.ReserveSeq();
    sim.Spawn(Record(sim, 5_us, "after", &log));
    sim.RunUntil(2_us);
    sim.ScheduleAtSeq(5_us, seq, a);
    sim.RunUntil(10_us);
    EXPECT_EQ(log, (std::vector<std::string>{"before@5us", "a@5us", "after@5us"}));
  }
}

TEST(SimulatorTest, EventsOutsideTheTimedQueueAreCountedApart) {
  Simulator sim;
  std::vector<std::string> log;
  // Each process starts through a wakeup, then waits once in the queue.
  for (std::string tag : {"a", "b", "c"}) sim.Spawn(Record(sim, 5_us, tag, &log));
  sim.RunUntil(1_ms);
  EXPECT_EQ(sim.events(), 6u);
  EXPECT_EQ(sim.untimed_events(), 3u);
  sim.RanInline();
  EXPECT_EQ(sim.events(), 7u);
  EXPECT_EQ(sim.untimed_events(), 4u);
  std::coroutine_handle<> parked;
  sim.Spawn(Parked(sim, "p", &parked, &log));
  ASSERT_TRUE(sim.Step());  // its start, a wakeup
  EXPECT_EQ(sim.untimed_events(), 5u);
  std::coroutine_handle<> h = sim.WakeLast(parked);  // nothing else pending: run here
  ASSERT_TRUE(h);
  h.resume();
  sim.Spawn(Record(sim, 1_us, "d", &log));
  ASSERT_TRUE(sim.Step());
  ASSERT_TRUE(sim.Step());  // d's wait, from the queue
  EXPECT_EQ(sim.events(), 11u);
  EXPECT_EQ(sim.untimed_events(), 7u);
  EXPECT_EQ(log.back(), "d@1.001ms");
}

TEST(SimulatorTest, RunUntilStopsAtLimitAndAdvancesClock) {
  Simulator sim;
  std::vector<std::string> log;
  sim.Spawn(Record(sim, 10_us, "x", &log));
  sim.RunUntil(9_us);
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(sim.Now(), 9_us);
  sim.RunUntil(10_us);  // an event exactly at the limit runs
  EXPECT_EQ(log, std::vector<std::string>{"x@10us"});
}

Task Child(Simulator& sim, int* steps) {
  co_await sim.Delay(2_us);
  ++*steps;
  co_await sim.Delay(3_us);
  ++*steps;
}

Task Parent(Simulator& sim, int* steps, Time* joined_at) {
  co_await Child(sim, steps);
  *joined_at = sim.Now();
}

TEST(SimulatorTest, AwaitingAChildJoinsIt) {
  Simulator sim;
  int steps = 0;
  Time joined = Time::Zero();
  sim.Spawn(Parent(sim, &steps, &joined));
  sim.RunUntil(1_ms);
  EXPECT_EQ(steps, 2);
  EXPECT_EQ(joined, 5_us);
  // Spawn start, two delays; the join itself costs no event.
  EXPECT_EQ(sim.events(), 3u);
}

Task Waiter(Simulator& sim, Signal& s, int id, std::vector<int>* order) {
  co_await s.Wait();
  order->push_back(id);
}

Task Notifier(Simulator& sim, Signal& s) {
  co_await sim.Delay(1_us);
  s.NotifyOne();
  co_await sim.Delay(1_us);
  s.NotifyAll();
}

TEST(SimulatorTest, SignalWakesWaitersInFifoOrder) {
  Simulator sim;
  Signal s(sim);
  std::vector<int> order;
  for (int i = 0; i < 3; ++i) sim.Spawn(Waiter(sim, s, i, &order));
  sim.Spawn(Notifier(sim, s));
  sim.RunUntil(1500_ns);
  EXPECT_EQ(order, std::vector<int>{0});
  sim.RunUntil(3_us);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  EXPECT_FALSE(s.has_waiters());
}

Task Worker(Simulator& sim, WaitGroup& wg, Time d) {
  co_await sim.Delay(d);
  wg.Done();
}

Task Joiner(Simulator& sim, WaitGroup& wg, Time* at) {
  co_await wg.Wait();
  *at = sim.Now();
}

TEST(SimulatorTest, WaitGroupJoinsSpawnedProcesses) {
  Simulator sim;
  WaitGroup wg(sim);
  Time at = Time::Zero();
  for (Time d : {3_us, 7_us, 5_us}) {
    wg.Add();
    sim.Spawn(Worker(sim, wg, d));
  }
  sim.Spawn(Joiner(sim, wg, &at));
  sim.RunUntil(1_ms);
  EXPECT_EQ(at, 7_us);
}

Task Forever(Simulator& sim) {
  for (;;) co_await sim.Delay(1_us);
}

TEST(SimulatorTest, FramesAreReusedInSteadyState) {
  // Each round spawns short-lived processes; after the first round every
  // frame must come from the pool's free lists.
  Simulator sim;
  std::vector<std::string> log;
  sim.Spawn(Record(sim, 1_us, "warm", &log));
  sim.RunUntil(2_us);
  const uint64_t allocs = FramePool::allocations();
  const uint64_t reuses = FramePool::reuses();
  for (int round = 0; round < 100; ++round) {
    sim.Spawn(Record(sim, 1_us, "r", &log));
    sim.RunUntil(sim.Now() + 2_us);
  }
  EXPECT_EQ(FramePool::allocations() - allocs, 100u);
  EXPECT_EQ(FramePool::reuses() - reuses, 100u);
}

TEST(SimulatorTest, DestroyingTheSimulatorReleasesSuspendedProcesses) {
  const uint64_t reuses = FramePool::reuses();
  {
    Simulator sim;
    for (int i = 0; i < 10; ++i) sim.Spawn(Forever(sim));
    sim.RunUntil(10_us);
  }
  {
    Simulator sim;
    for (int i = 0; i < 10; ++i) sim.Spawn(Forever(sim));
    sim.RunUntil(10_us);
  }
  // The second simulator's ten frames are the first one's, returned to the pool.
  EXPECT_GE(FramePool::reuses() - reuses, 10u);
}

TEST(SimulatorTest, ZeroDelayYieldsToEventsAlreadyDue) {
  Simulator sim;
  std::vector<std::string> log;
  sim.Spawn(Record(sim, 0_ns, "zero", &log));
  sim.Spawn(Record(sim, 0_ns, "zero2", &log));
  sim.RunUntil(0_ns);
  EXPECT_EQ(log, (std::vector<std::string>{"zero@0ps", "zero2@0ps"}));
}

// A process that only ever waits zero time: simulated time never moves.
Task ZeroDelayForever(Simulator& sim, Time start) {
  co_await sim.Delay(start);
  for (;;) co_await sim.Delay(Time::Zero());
}

// Two processes that wake each other at one instant, for ever.
Task PingPong(Signal& mine, Signal& theirs) {
  for (;;) {
    theirs.NotifyOne();
    co_await mine.Wait();
  }
}

// A process that takes `steps` zero-time steps, then time moves on.
Task BurstThenTick(Simulator& sim, int steps, int* ticks) {
  for (int i = 0; i < steps; ++i) co_await sim.Delay(Time::Zero());
  for (;;) {
    co_await sim.Delay(1_us);
    ++*ticks;
  }
}

TEST(SimulatorTest, ZeroDelayCycleStallsAtItsInstantInsteadOfRunningForEver) {
  for (const Time start : {Time::Zero(), 3_us, Time::Seconds(1000000)}) {
    Simulator sim;
    sim.set_max_events_at_one_instant(10000);
    sim.Spawn(ZeroDelayForever(sim, start));
    sim.RunUntil(start + 1_ms);
    EXPECT_TRUE(sim.stalled()) << FormatTime(start);
    EXPECT_EQ(sim.stalled_at(), start);
    EXPECT_LE(sim.events(), 3u * 10000 + 2);
    EXPECT_TRUE(sim.empty());
    sim.RunUntil(start + 2_ms);  // nothing left to run: returns at once
    EXPECT_TRUE(sim.stalled());
  }
}

TEST(SimulatorTest, WakeupCycleStallsWithoutGrowingTheWakeupQueue) {
  Simulator sim;
  sim.set_max_events_at_one_instant(10000);
  Signal a(sim), b(sim);
  sim.Spawn(PingPong(a, b));
  sim.Spawn(PingPong(b, a));
  sim.RunUntil(1_ms);
  EXPECT_TRUE(sim.stalled());
  EXPECT_EQ(sim.stalled_at(), Time::Zero());
  EXPECT_LE(sim.events(), 10000u + 2);
}

TEST(SimulatorTest, BurstsBelowTheBoundAtOneInstantAreNotAStall) {
  for (const int steps : {0, 100, 9000}) {
    Simulator sim;
    sim.set_max_events_at_one_instant(10000);
    int ticks = 0;
    sim.Spawn(BurstThenTick(sim, steps, &ticks));
    sim.RunUntil(100_ms);
    EXPECT_FALSE(sim.stalled()) << steps;
    EXPECT_EQ(ticks, 100000) << steps;
  }
}

}  // namespace
}  // namespace sim
