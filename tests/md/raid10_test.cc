// raid10's wake-ups of conf->wait_barrier: wake_up() takes the wait queue's
// lock on every write whoever waits; wake_up_barrier() takes it only when
// someone sleeps on the queue.
#include "models/md/raid10.h"

#include <vector>

#include "gtest/gtest.h"
#include "models/block/block_stack.h"
#include "models/cpu/sched.h"
#include "models/sync/handoff_costs.h"
#include "models/sync/wait_queue.h"
#include "sim/task.h"
#include "sim/time.h"
#include "tests/md/md_test_util.h"
#include "tests/sync/machine.h"

namespace models {

// The tests' way to the from_schedule branch: no job of the modeled
// workload sleeps holding its plug.
class Raid10Peer {
 public:
  static sim::Task WriteFlushedFromSchedule(Raid10& r, Cpu& cpu, BlockRequest& rq) {
    return r.DirectIo(cpu, rq, /*from_schedule=*/true);
  }
};

namespace {

using sim::Time;

Raid10Costs Costs() {
  Raid10Costs c;
  for (Param<Time>* p : {&c.dio_submit, &c.dio_complete, &c.plug, &c.make_request, &c.barrier_check,
                         &c.read_balance, &c.find_phys, &c.bio_clone, &c.plug_cb_alloc, &c.plug_cb_free,
                         &c.end_request, &c.end_bio_io, &c.has_sleeper, &c.wake_up_walk}) {
    p->value = Time::Nanos(100);
  }
  return c;
}

// One task on CPU 0 submits `writes` writes then `reads` reads, one at a
// time; returns the array after the run.
struct Array {
  Machine machine{2};
  CountingSink sink;
  Raid10 raid;
  std::vector<BlockRequest> rqs;

  explicit Array(bool wake_up_barrier, bool flush_wake_up_barrier = false)
      : raid(machine.sim, Costs(), TestBrds(), Raid10Params{wake_up_barrier, flush_wake_up_barrier},
             LineCosts{EpycRomeHandoffCosts(), 1.0, LineArbitration::kNearestFirst}, EpycRomeHandoffCosts()) {
    raid.set_scheduler(machine.sched);
  }

  bool from_schedule = false;  // each write's plug flushed as its task goes to sleep
  sim::Task Body(Task& t) {
    for (BlockRequest& rq : rqs) {
      if (from_schedule) {
        co_await Raid10Peer::WriteFlushedFromSchedule(raid, *t.cpu(), rq);
      } else {
        co_await raid.Submit(*t.cpu(), rq, true);
      }
    }
  }
  void Go(int writes, int reads) {
    for (int i = 0; i < writes + reads; ++i) {
      BlockRequest rq;
      rq.write = i < writes;
      rq.offset = static_cast<uint64_t>(i) * 4096;
      rq.bytes = 4096;
      rq.sink = &sink;
      rqs.push_back(rq);
    }
    Task& t = machine.NewTask(0);
    machine.sched.Start(t, Body(t));
    machine.sim.RunUntil(Time::Millis(10));
  }
};

TEST(Raid10Test, UnplugWakeUpTakesTheWaitQueueLockOnEveryWrite) {
  Array r(/*wake_up_barrier=*/false);
  r.Go(5, 3);
  EXPECT_EQ(r.sink.completed, 8);
  EXPECT_EQ(r.raid.stats().unplugs, 5u);
  EXPECT_EQ(r.raid.stats().plug_cbs, 5u);  // a blk_plug_cb per write
  EXPECT_EQ(r.raid.stats().wake_up_locked, 5u);
  EXPECT_EQ(r.raid.wait_barrier().lock().stat().acquisitions, 5u);
}

TEST(Raid10Test, UnplugWakeUpBarrierOnAnEmptyQueueTouchesNoLock) {
  Array r(/*wake_up_barrier=*/true);
  r.Go(5, 3);
  EXPECT_EQ(r.sink.completed, 8);
  EXPECT_EQ(r.raid.stats().unplugs, 5u);
  EXPECT_EQ(r.raid.stats().wake_up_locked, 0u);
  EXPECT_GT(r.raid.stats().has_sleeper_checks, 0u);
  EXPECT_EQ(r.raid.wait_barrier().lock().stat().acquisitions, 0u);
}

TEST(Raid10Test, ReadsGoToOneMirrorAndWritesToBoth) {
  Array r(/*wake_up_barrier=*/true);
  r.Go(4, 6);
  EXPECT_EQ(r.raid.brd(0).bios() + r.raid.brd(1).bios(), 4u * 2 + 6u);
  EXPECT_EQ(r.raid.brd(0).pages() + r.raid.brd(1).pages(), 4u * 2 + 6u);
}

// A plug flushed from schedule() hands its bios to raid10d: merged onto
// conf->pending_bio_list under conf->device_lock, md's thread woken, and
// flush_pending_writes submits them. Its wake-up of conf->wait_barrier
// takes the queue's lock in 6.4 (wake_up) and not with the earlier patch
// (wake_up_barrier), the only difference between the two.
TEST(Raid10Test, APlugFlushedFromScheduleGoesThroughRaid10d) {
  for (const bool flush_if_sleeper : {false, true}) {
    SCOPED_TRACE(flush_if_sleeper ? "flush_pending_writes: wake_up_barrier" : "flush_pending_writes: wake_up");
    Array r(/*wake_up_barrier=*/false, flush_if_sleeper);
    r.from_schedule = true;
    r.Go(3, 0);
    const Raid10::Stats& st = r.raid.stats();
    EXPECT_EQ(r.sink.completed, 3);
    EXPECT_EQ(st.unplugs_from_schedule, 3u);
    EXPECT_EQ(r.raid.thread().wakeups(), 3u);
    EXPECT_GE(st.flushes, 1u);
    EXPECT_EQ(r.raid.thread().runs(), st.flushes);  // each run found bios
    EXPECT_EQ(r.raid.brd(0).bios() + r.raid.brd(1).bios(), 3u * 2);
    // Each merge, and per raid10d run its flush and its retry-list check.
    EXPECT_EQ(r.raid.device_lock().stat().acquisitions, 3u + 2 * st.flushes);
    // raid10_unplug's wake_up() per write, and flush_pending_writes' per
    // flush unless it checks for a sleeper first.
    EXPECT_EQ(st.wake_up_locked, 3u + (flush_if_sleeper ? 0 : st.flushes));
  }
}

// Without a task sleeping on its plug, md's thread is never woken: the
// earlier patch's line never runs.
TEST(Raid10Test, WritesUnderTheirOwnPlugNeverWakeRaid10d) {
  Array r(/*wake_up_barrier=*/false, /*flush_wake_up_barrier=*/true);
  r.Go(5, 3);
  EXPECT_EQ(r.raid.stats().unplugs_from_schedule, 0u);
  EXPECT_EQ(r.raid.stats().flushes, 0u);
  EXPECT_EQ(r.raid.thread().wakeups(), 0u);
  EXPECT_EQ(r.raid.device_lock().stat().acquisitions, 0u);
}

// The same on the wait queue itself: wq_has_sleeper reads the list head
// and charges its barrier, no lock; __wake_up takes the lock even with
// nobody queued.
TEST(Raid10Test, HasSleeperReadsTheHeadWithoutTheLockAndWakeUpTakesIt) {
  Machine m(TwoSocketPlaces());
  const LockHandoffCosts costs = EpycRomeHandoffCosts();
  WaitQueue wq(m.sim, "wq", costs, costs, Time::Nanos(30));
  CacheLine head(m.sim, "head", costs);
  wq.set_head(&head, Time::Nanos(10));
  bool sleeper = true;
  Time after_check;
  auto body = [&](Task& t) -> sim::Task {
    sleeper = co_await wq.HasSleeper(*t.cpu());
    after_check = m.sim.Now();
    co_await wq.WakeUp(*t.cpu(), 1);
  };
  Task& t = m.NewTask(0);
  m.sched.Start(t, body(t));
  m.sim.RunUntil(Time::Millis(1));
  EXPECT_FALSE(sleeper);
  EXPECT_EQ(after_check, Time::Nanos(30));  // the barrier; the head was never written
  EXPECT_EQ(head.accesses(), 2u);           // the check and the walk
  EXPECT_EQ(head.last_writer(), &m.cpu(0));  // taking the lock wrote the head's line
  EXPECT_EQ(wq.lock().stat().acquisitions, 1u);
}

}  // namespace
}  // namespace models
