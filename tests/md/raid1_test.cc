// md raid1 at Linux 6.4, one request at a time: what each read and each
// write touches (every field access counted on its line), the barrier's
// lock-free fast path with no resync, and allow_barrier's unconditional
// wake_up taking the wait queue's lock on every I/O.
#include "models/md/raid1.h"

#include <cstdint>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "models/block/block_stack.h"
#include "models/cpu/sched.h"
#include "models/sync/handoff_costs.h"
#include "sim/task.h"
#include "sim/time.h"
#include "tests/md/md_test_util.h"
#include "tests/sync/machine.h"

namespace models {
namespace {

using sim::Time;

Raid1Costs Costs() {
  Raid1Costs c;
  for (Param<Time>* p : {&c.dio_submit, &c.dio_complete, &c.plug, &c.make_request, &c.barrier_check,
                         &c.read_balance, &c.write_disks, &c.bio_clone, &c.plug_cb_alloc, &c.plug_cb_free,
                         &c.end_request, &c.end_bio_io, &c.has_sleeper, &c.wake_up_walk}) {
    p->value = Time::Nanos(100);
  }
  return c;
}

// The accesses of every line of the array, summed by group.
struct Accesses {
  uint64_t nr_pending = 0, barrier = 0, conf_wait = 0, conf_frozen = 0, mirrors = 0, replacements = 0, rdevs = 0;
};

Accesses Count(const Raid1& r) {
  Accesses a;
  for (const CacheLine* l : r.nr_pending_lines()) a.nr_pending += l->accesses();
  for (const CacheLine* l : r.barrier_lines()) a.barrier += l->accesses();
  a.conf_wait = r.conf_wait_line().accesses();
  a.conf_frozen = r.conf_frozen_line().accesses();
  a.mirrors = r.mirrors_line().accesses();
  a.replacements = r.replacements_line().accesses();
  a.rdevs = r.rdev_pending(0).accesses() + r.rdev_pending(1).accesses();
  return a;
}

// One task on CPU 0 submits `writes` writes then `reads` reads, one at a
// time, 1 MiB apart (never sequential: read_balance always balances).
struct Array {
  Machine machine{2};
  CountingSink sink;
  Raid1 raid;
  std::vector<BlockRequest> rqs;

  explicit Array(bool wake_up_barrier)
      : raid(machine.sim, Costs(), TestBrds(), Raid1Params{wake_up_barrier}, LineCosts{EpycRomeHandoffCosts()},
             EpycRomeHandoffCosts()) {}

  sim::Task Body(Task& t) {
    for (BlockRequest& rq : rqs) co_await raid.Submit(*t.cpu(), rq, true);
  }
  void Go(int writes, int reads) {
    for (int i = 0; i < writes + reads; ++i) {
      BlockRequest rq;
      rq.write = i < writes;
      rq.offset = static_cast<uint64_t>(i + 1) * (1 << 20);
      rq.bytes = 4096;
      rq.sink = &sink;
      rqs.push_back(rq);
    }
    Task& t = machine.NewTask(0);
    machine.sched.Start(t, Body(t));
    machine.sim.RunUntil(Time::Millis(10));
  }
};

TEST(Raid1Test, EachReadTouchesItsFieldsAsTheSourceDoes) {
  Array r(/*wake_up_barrier=*/false);
  constexpr int kReads = 7;
  r.Go(0, kReads);
  ASSERT_EQ(r.sink.completed, kReads);
  const Accesses a = Count(r.raid);
  EXPECT_EQ(a.nr_pending, 2u * kReads);   // wait_read_barrier's inc, _allow_barrier's dec
  EXPECT_EQ(a.barrier, 0u);               // reads never look at barrier[idx]
  EXPECT_EQ(a.conf_wait, 3u * kReads);    // the nr_pending pointer twice, wake_up's list walk
  EXPECT_EQ(a.conf_frozen, 1u * kReads);  // array_frozen
  // read_balance: rdev, head_position, next_seq_sect of both members, the
  // chosen rdev again, seq_start and next_seq_sect written;
  // raid1_read_request's mirror->rdev; update_head_pos.
  EXPECT_EQ(a.mirrors, 11u * kReads);
  EXPECT_EQ(a.replacements, 2u * kReads);  // the two empty replacement slots
  EXPECT_EQ(a.rdevs, 4u * kReads);         // both read, the chosen one +1 and -1
  EXPECT_EQ(r.raid.brd(0).bios() + r.raid.brd(1).bios(), static_cast<uint64_t>(kReads));
}

TEST(Raid1Test, EachWriteTouchesItsFieldsAsTheSourceDoes) {
  Array r(/*wake_up_barrier=*/false);
  constexpr int kWrites = 5;
  r.Go(kWrites, 0);
  ASSERT_EQ(r.sink.completed, kWrites);
  const Accesses a = Count(r.raid);
  EXPECT_EQ(a.nr_pending, 2u * kWrites);   // _wait_barrier's inc, _allow_barrier's dec
  EXPECT_EQ(a.barrier, 1u * kWrites);      // atomic_read(&conf->barrier[idx])
  EXPECT_EQ(a.conf_wait, 5u * kWrites);    // the pointer twice, three wake-ups' walks
  EXPECT_EQ(a.conf_frozen, 2u * kWrites);  // array_frozen and the barrier pointer
  EXPECT_EQ(a.mirrors, 6u * kWrites);      // rdev in both loops, update_head_pos per mirror
  EXPECT_EQ(a.replacements, 4u * kWrites);
  EXPECT_EQ(a.rdevs, 4u * kWrites);        // both +1 and -1
  EXPECT_EQ(r.raid.stats().plug_cbs, static_cast<uint64_t>(kWrites));
  EXPECT_EQ(r.raid.stats().unplugs, static_cast<uint64_t>(kWrites));
  EXPECT_EQ(r.raid.brd(0).bios() + r.raid.brd(1).bios(), 2u * kWrites);
}

TEST(Raid1Test, WithNoResyncTheBarrierTakesItsFastPath) {
  Array r(/*wake_up_barrier=*/false);
  r.Go(6, 9);
  ASSERT_EQ(r.sink.completed, 15);
  EXPECT_EQ(r.raid.stats().barrier_slow_paths, 0u);
  EXPECT_EQ(r.raid.resync_lock().stat().acquisitions, 0u);
  EXPECT_EQ(r.raid.device_lock().stat().acquisitions, 0u);
}

TEST(Raid1Test, AllowBarrierTakesTheWaitQueueLockOnEveryIo) {
  Array r(/*wake_up_barrier=*/false);
  r.Go(4, 6);
  ASSERT_EQ(r.sink.completed, 10);
  EXPECT_EQ(r.raid.stats().allow_barrier_wake_ups, 10u);
  // Writes add raid1_write_request's and flush_bio_list's.
  EXPECT_EQ(r.raid.stats().wake_up_locked, 6u + 3u * 4);
  EXPECT_EQ(r.raid.wait_barrier().lock().stat().acquisitions, 6u + 3u * 4);
}

TEST(Raid1Test, GuardedWakeUpsOnAnEmptyQueueTakeNoLock) {
  Array r(/*wake_up_barrier=*/true);
  r.Go(4, 6);
  ASSERT_EQ(r.sink.completed, 10);
  EXPECT_EQ(r.raid.stats().has_sleeper_checks, 6u + 3u * 4);
  EXPECT_EQ(r.raid.wait_barrier().lock().stat().acquisitions, 0u);
}

// sector_to_idx spreads a 1 GiB array's 16 barrier units over 16 buckets
// on 16 distinct lines of each bucket page.
TEST(Raid1Test, TheBarrierUnitsOfOneGibLandOnSixteenLines) {
  std::set<int> buckets, lines;
  for (uint64_t unit = 0; unit < 16; ++unit) {
    const int idx = Raid1::SectorToIdx(unit << Raid1::kBarrierUnitSectorBits);
    EXPECT_GE(idx, 0);
    EXPECT_LT(idx, 1 << Raid1::kBucketBits);
    EXPECT_EQ(Raid1::SectorToIdx((unit << Raid1::kBarrierUnitSectorBits) + 12345), idx);
    buckets.insert(idx);
    lines.insert(idx / Raid1::kBucketsPerLine);
  }
  EXPECT_EQ(buckets.size(), 16u);
  EXPECT_EQ(lines.size(), 16u);
  // hash_64(1, 10) = GOLDEN_RATIO_64 >> 54.
  EXPECT_EQ(Raid1::SectorToIdx(uint64_t{1} << Raid1::kBarrierUnitSectorBits), 391);
}

}  // namespace
}  // namespace models
