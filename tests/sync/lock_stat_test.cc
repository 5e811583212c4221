// lock_stat rows: every figure of a row comes from the same critical
// sections (those released in the window), so a window that starts with
// waiters spinning still has contentions <= acquisitions and exactly one
// wait sample per contention.
#include "models/sync/lock_stat.h"

#include <cstdint>
#include <numeric>
#include <string>

#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "models/sync/handoff_costs.h"
#include "models/sync/spinlock.h"
#include "sim/task.h"
#include "tests/sync/machine.h"

namespace models {
namespace {

using sim::Time;
using namespace sim::literals;  // NOLINT

// think(); spin_lock(); hold(); spin_unlock(); forever.
sim::Task Loop(Task& t, Spinlock& lock, Time think, Time hold) {
  Cpu& cpu = *t.cpu();
  for (;;) {
    co_await cpu.RunUser(think);
    co_await lock.Lock(cpu);
    co_await cpu.Run(hold);
    lock.Unlock(cpu);
  }
}

class LockStatTest : public testing::TestWithParam<SpinlockKind> {};

TEST_P(LockStatTest, EveryFigureOfAWindowComesFromTheSameCriticalSections) {
  Machine m(TwoSocketPlaces());
  Spinlock lock(m.sim, "l", GetParam(), EpycRomeHandoffCosts());
  for (int i = 0; i < 8; ++i) {
    Task& t = m.NewTask(i);
    m.sched.Start(t, Loop(t, lock, Time::Nanos(1000 * (i + 1)), 500_ns));
  }
  // Start the window while a waiter spins: its wait began before it.
  Time start = 50_us;
  m.sim.RunUntil(start);
  while (lock.waiters() < 1) m.sim.RunUntil(start += 10_ns);
  lock.ResetStats();
  m.sim.RunUntil(start + 500_us);
  const LockStat& s = lock.stat();
  EXPECT_GT(s.contentions, 0u);
  EXPECT_LT(s.contentions, s.acquisitions);  // some found it free
  EXPECT_EQ(static_cast<uint64_t>(s.wait.count()), s.contentions);
  EXPECT_EQ(static_cast<uint64_t>(s.hold.count()), s.acquisitions);
  EXPECT_LE(s.con_bounces, s.contentions);
  EXPECT_LE(s.acq_bounces, s.acquisitions);
  EXPECT_EQ(std::accumulate(s.contentions_by.begin(), s.contentions_by.end(), uint64_t{0}), s.contentions);
  // Every waiter is on another CPU than the holder's, some across sockets.
  EXPECT_EQ(s.contentions_by[static_cast<int>(CpuDistance::kSame)], 0u);
  EXPECT_GT(s.contentions_by[static_cast<int>(CpuDistance::kRemote)], 0u);
  // Every hold is the 500ns critical section.
  EXPECT_EQ(s.hold.min(), (500_ns).ps());
  EXPECT_EQ(s.hold.max(), (500_ns).ps());
}

INSTANTIATE_TEST_SUITE_P(Kinds, LockStatTest, testing::Values(SpinlockKind::kTicket, SpinlockKind::kQueued),
                         [](const testing::TestParamInfo<SpinlockKind>& i) {
                           return std::string(SpinlockKindName(i.param));
                         });

}  // namespace
}  // namespace models
