// qspinlock: the hand-off costs exactly the table's line transfer for the
// distance from the releasing CPU to the next owner; the order is the
// pending waiter first, then the MCS queue; the queue head passes its role
// on only once it has the lock.
#include "models/sync/qspinlock.h"

#include <ostream>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "models/sync/handoff_costs.h"
#include "models/sync/spinlock.h"
#include "tests/sync/holder.h"
#include "tests/sync/machine.h"

namespace models {
namespace {

using sim::Time;
using namespace sim::literals;  // NOLINT

struct Platform {
  std::string name;
  LockHandoffCosts costs;
};
void PrintTo(const Platform& p, std::ostream* os) { *os << p.name; }

// The CPUs of TwoSocketPlaces() at each distance from cpu0.
constexpr std::pair<int, CpuDistance> kFromCpu0[] = {
    {1, CpuDistance::kCore}, {2, CpuDistance::kLlc}, {4, CpuDistance::kSocket}, {6, CpuDistance::kRemote}};

// The time from cpu0's unlock to the lock's next owner, a waiter on CPU `k`
// arriving at 2us. cpu0 holds for 10us. With `queue_head`, cpu3 holds the
// lock first and cpu0 waits on the pending bit, so `k` waits in the MCS
// queue and gets the lock as its head; otherwise cpu0 holds from the start
// and `k` takes the pending bit.
Time HandOffFromCpu0(const LockHandoffCosts& costs, int k, bool queue_head) {
  Machine m(TwoSocketPlaces());
  QSpinlock lock(m.sim, "l", costs);
  Got got;
  if (queue_head) StartHolder(m, &lock, 3, 0_ns, 10_us, &got);
  StartHolder(m, &lock, 0, queue_head ? 1_us : 0_ns, 10_us, &got);
  StartHolder(m, &lock, k, 2_us, 1_us, &got);
  m.sim.RunUntil(5_us);
  EXPECT_TRUE(lock.pending());
  EXPECT_EQ(lock.queued(), queue_head ? 1 : 0);
  m.sim.RunUntil(1_ms);
  const size_t n = got.size();
  EXPECT_EQ(n, queue_head ? 3u : 2u);
  if (n < 2) return Time::Max();
  EXPECT_EQ(got[n - 2].first, 0);
  EXPECT_EQ(got[n - 1].first, k);
  // The waiter spun from its arrival until the line reached it.
  const Time waited = got[n - 1].second - 2_us;
  EXPECT_EQ(m.cpu(k).TimeIn(CpuTime::kSpin), waited);
  EXPECT_EQ(Time::Picos(lock.stat().wait.max()), waited);
  EXPECT_GE(lock.stat().contentions_by[static_cast<int>(DistanceOf(m.cpu(0).place(), m.cpu(k).place()))], 1u);
  return got[n - 1].second - (got[n - 2].second + 10_us);
}

class QSpinlockHandoffTest : public testing::TestWithParam<Platform> {};

TEST_P(QSpinlockHandoffTest, HandOffCostsTheTableEntryForTheNextOwnersDistance) {
  const LockHandoffCosts& costs = GetParam().costs;
  for (bool queue_head : {false, true}) {
    for (const auto& [k, distance] : kFromCpu0) {
      SCOPED_TRACE(testing::Message() << (queue_head ? "queue head on " : "pending waiter on ")
                                      << CpuDistanceName(distance));
      EXPECT_EQ(HandOffFromCpu0(costs, k, queue_head), costs.Of(distance));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tables, QSpinlockHandoffTest,
                         testing::Values(Platform{"EpycRome", EpycRomeHandoffCosts()},
                                         Platform{"CascadeLake", CascadeLakeHandoffCosts()},
                                         Platform{"OddPicoseconds", OddPicosecondCosts()}),
                         [](const testing::TestParamInfo<Platform>& i) { return i.param.name; });

TEST(QSpinlockTest, OrderIsThePendingWaiterThenTheMcsQueue) {
  Machine m(TwoSocketPlaces());
  QSpinlock lock(m.sim, "l", LockHandoffCosts::Uniform(Time::Zero()));
  Got got;
  StartHolder(m, &lock, 0, 0_ns, 10_us, &got);
  StartHolder(m, &lock, 6, 1_us, 1_us, &got);  // pending bit
  StartHolder(m, &lock, 2, 2_us, 1_us, &got);  // MCS head
  StartHolder(m, &lock, 4, 3_us, 1_us, &got);  // behind it
  // Arrives once cpu6 holds the lock: the pending bit is free, but the
  // queue is not empty, so it queues (xchg_tail) instead.
  StartHolder(m, &lock, 1, 10500_ns, 1_us, &got);
  // Arrives while cpu1, the last queued, holds: the queue is empty again,
  // so it takes the pending bit.
  StartHolder(m, &lock, 3, 13500_ns, 1_us, &got);
  m.sim.RunUntil(5_us);
  EXPECT_TRUE(lock.pending());
  EXPECT_EQ(lock.queued(), 2);
  m.sim.RunUntil(10600_ns);
  EXPECT_FALSE(lock.pending());
  EXPECT_EQ(lock.queued(), 3);
  m.sim.RunUntil(13600_ns);
  EXPECT_TRUE(lock.pending());
  EXPECT_EQ(lock.queued(), 0);
  m.sim.RunUntil(1_ms);
  const Got want = {{0, 0_ns}, {6, 10_us}, {2, 11_us}, {4, 12_us}, {1, 13_us}, {3, 14_us}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(lock.stat().contentions, 5u);
}

// The queue head takes the lock and only then writes its successor's MCS
// node; when it releases at once, the successor needs that node transfer
// and then the lock word's: two transfers after its predecessor got the
// lock, where the ticket lock hands over in one.
Time SuccessorGotLockAfterHead(SpinlockKind kind) {
  const LockHandoffCosts costs = EpycRomeHandoffCosts();
  Machine m(TwoSocketPlaces());
  Spinlock lock(m.sim, "l", kind, costs);
  Got got;
  StartHolder(m, &lock, 0, 0_ns, 10_us, &got);
  StartHolder(m, &lock, 2, 1_us, 1_us, &got);  // pending (qspinlock)
  StartHolder(m, &lock, 4, 2_us, 0_ns, &got);  // head: releases at once
  StartHolder(m, &lock, 6, 3_us, 1_us, &got);  // successor, other socket
  m.sim.RunUntil(1_ms);
  EXPECT_EQ(got.size(), 4u);
  if (got.size() != 4u) return Time::Max();
  EXPECT_EQ(got[2].first, 4);
  EXPECT_EQ(got[3].first, 6);
  return got[3].second - got[2].second;
}

TEST(QSpinlockTest, SuccessorOfAQueueHeadWaitsForTheNodeAndTheLockWordTransfers) {
  const Time remote = EpycRomeHandoffCosts().other_socket.value;
  EXPECT_EQ(SuccessorGotLockAfterHead(SpinlockKind::kQueued), remote + remote);
  EXPECT_EQ(SuccessorGotLockAfterHead(SpinlockKind::kTicket), remote);
}

}  // namespace
}  // namespace models

namespace models {
namespace {

// With uncontended moves on, a free lock last held on another CPU is taken
// only once its word has come from there: the acquisition costs the table's
// transfer for the two CPUs' distance, as system time; taken again on the
// same CPU it costs the same-CPU figure. Off (the default), the fast path is
// free whatever CPU held the lock last.
TEST(SpinlockUncontendedMovesTest, AFreeLockCostsTheWordsMoveFromItsLastHolder) {
  const LockHandoffCosts costs = OddPicosecondCosts();
  for (const auto& [k, d] : kFromCpu0) {
    for (bool on : {false, true}) {
      SCOPED_TRACE(testing::Message() << "cpu" << k << (on ? " moves" : " free"));
      Machine m(TwoSocketPlaces());
      QSpinlock lock(m.sim, "l", costs);
      lock.set_uncontended_moves(on);
      Got got;
      StartHolder(m, &lock, 0, 0_ns, 1_us, &got);
      StartHolder(m, &lock, k, 2_us, 1_us, &got);
      StartHolder(m, &lock, k, 4_us, 1_us, &got);
      m.sim.RunUntil(1_ms);
      ASSERT_EQ(got.size(), 3u);
      EXPECT_EQ(got[0].second, 0_ns);  // the first holder: the word comes from nowhere
      EXPECT_EQ(got[1].second - 2_us, on ? costs.Of(d) : 0_ns);
      // The second task on CPU k starts once the first has ended.
      EXPECT_EQ(got[2].second - (got[1].second + 1_us + 4_us), on ? costs.same_cpu.value : 0_ns);
      EXPECT_EQ(lock.stat().contentions, 0u);
      EXPECT_EQ(lock.stat().uncontended_moves, on ? 1u : 0u);
      EXPECT_EQ(m.cpu(k).TimeIn(CpuTime::kSpin), 0_ns);
      EXPECT_EQ(m.cpu(k).TimeIn(CpuTime::kSystem), 2_us + (on ? costs.Of(d) + costs.same_cpu.value : 0_ns));
      EXPECT_EQ(m.cpu(k).TimeIn(CpuTime::kUser), 6_us);
    }
  }
}

}  // namespace
}  // namespace models
