// md raid10 with two devices in the near-2 layout (every block on both)
// over two brd ramdisks, as of Linux 6.4 (drivers/md/raid10.c, raid1-10.c,
// md.c), under the direct-I/O path of the array's block device file
// (block/fops.c) as fio's libaio engine drives it.
//
// Each kernel function on the path is one function, in its C source's
// order (a coroutine, or an awaiter when its only wait is one charge of CPU
// time), run by the submitting task on its CPU: brd completes every bio
// inside its own submit_bio, so an I/O is submitted, copied and completed
// within the task's io_submit -- no interrupt, no md thread, no sleep.
//
//   read   blkdev_read_iter -> __blkdev_direct_IO_async -> submit_bio ->
//          md_submit_bio -> raid10_make_request -> __make_request ->
//          raid10_read_request: wait_barrier (conf->nr_pending +1),
//          read_balance (each mirror's head_position and rdev->nr_pending
//          read, the chosen rdev's +1), the member bio cloned and queued
//          on current->bio_list; wake_up_barrier at the end of
//          raid10_make_request; then the queued bio goes to brd, whose
//          bio_endio runs raid10_end_read_request: update_head_pos (a
//          write of conf->mirrors), raid_end_bio_io (the aio completion,
//          allow_barrier: conf->nr_pending -1, free_r10bio),
//          rdev_dec_pending.
//   write  blkdev_write_iter opens a plug; raid10_write_request:
//          wait_barrier, each rdev's nr_pending +1, and per mirror
//          raid10_write_one_disk: a clone, blk_check_plugged (the first
//          call kzallocs the raid10_plug_cb: once per write here), the
//          clone on the plug's list. blk_finish_plug runs raid10_unplug:
//          wake_up(&conf->wait_barrier) -- spin_lock_irqsave on the wait
//          queue's lock with nobody waiting -- or, after commit
//          a8d5fdd4d270, wake_up_barrier(conf) (wq_has_sleeper, no lock);
//          then both clones go to brd, each ending in
//          raid10_end_write_request (update_head_pos, one_write_done,
//          rdev_dec_pending); the second one_write_done ends the master
//          (raid_end_bio_io); kfree of the plug callback.
//
// Shared lines: every field the path touches sits on the line its struct
// puts it on (raid10_layout.h), and an access names the field (StructLines,
// CacheLine: a line is a server of its transactions, with the platform's
// arbitration). The hot lines: conf+192 (resync_lock's seqcount and lock,
// nr_pending, barrier, array_freeze_pending, next_resync), conf+256
// (wait_barrier's lock word and list head), mirrors+0 (both raid10_info
// entries: rdev pointers and head_position), and each rdev's +192 (its
// nr_pending). The wait queue's spinlock is a qspinlock whose contended
// hand-offs cost the lock word's transfers (LockHandoffCosts given by the
// caller); taking it writes conf+256. Read-only fields (conf->mirrors, the
// rdevs' flags and bdev) are never written on this path: after their first
// read every CPU hits its copy, so they are not modeled.
//
// Kept as in the source but not reached by this workload: wait_barrier's
// slow path under conf->resync_lock (only with a barrier raised by resync,
// recovery or freeze_array), and md's thread path for writes:
//
//   raid10_unplug(cb, from_schedule = true) -- from sched_submit_work()
//          when a task goes to sleep holding its plug -- moves the plug's
//          bios onto conf->pending_bio_list under conf->device_lock, wakes
//          conf->wait_barrier and md_wakeup_thread()s raid10d, which
//          (md_thread.h) runs flush_pending_writes(): the list taken under
//          conf->device_lock, the wake-up of conf->wait_barrier
//          (wake_up() in 6.4; wake_up_barrier() with the earlier patch of
//          a8d5fdd4d270's thread, Raid10Params::flush_wake_up_barrier),
//          each bio submitted; then conf->retry_list checked under
//          conf->device_lock.
//
// fio never sleeps inside io_submit on brd (no barrier, no allocation that
// waits, brd completes inline), so no plug is ever flushed from schedule()
// and raid10d is never woken. With no barrier ever raised, nobody sleeps
// on conf->wait_barrier.
//
// The kernel's code here runs with preemption off (PREEMPT_VOLUNTARY; the
// cond_resched in raid10_unplug's loop is not a switch point here).
#ifndef VIOSIM_MODELS_MD_RAID10_H_
#define VIOSIM_MODELS_MD_RAID10_H_

#include <array>
#include <coroutine>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/block/block_stack.h"
#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "models/md/brd.h"
#include "models/md/md_thread.h"
#include "models/sync/cache_line.h"
#include "models/sync/handoff_costs.h"
#include "models/sync/struct_layout.h"
#include "models/sync/spinlock.h"
#include "models/sync/wait_queue.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

// CPU costs of the path, per call, without the shared lines' transfers
// (charged by the lines themselves).
struct Raid10Costs {
  // Above md (block/fops.c, fs/aio.c).
  // blkdev_{read,write}_iter and __blkdev_direct_IO_async: the bio's
  // allocation, the user page pinned, submit_bio's entry.
  Param<sim::Time> dio_submit;
  // blkdev_bio_end_io_async: the aio completion (the event into the ring),
  // the page released, bio_put.
  Param<sim::Time> dio_complete;
  // blk_start_plug and blk_finish_plug (flush_plug_callbacks' list walk),
  // around every write.
  Param<sim::Time> plug;
  // md: md_submit_bio, md_handle_request, raid10_make_request,
  // __make_request (an r10bio from its mempool, its fields set).
  Param<sim::Time> make_request;
  // wait_barrier_nolock's seqcount reads and READ_ONCE(conf->barrier),
  // beside the line accesses.
  Param<sim::Time> barrier_check;
  // read_balance's own work: both copies' checks and distances.
  Param<sim::Time> read_balance;
  // raid10_find_phys, wait_blocked_dev and the copies loop of
  // raid10_write_request.
  Param<sim::Time> find_phys;
  // bio_alloc_clone from the array's bio_set, per clone (md_account_bio's
  // clone and each member bio).
  Param<sim::Time> bio_clone;
  // blk_check_plugged's kzalloc of a raid10_plug_cb and its list add.
  Param<sim::Time> plug_cb_alloc;
  // kfree of it at the end of raid10_unplug.
  Param<sim::Time> plug_cb_free;
  // raid10_end_{read,write}_request's own work (find_bio_disk, status).
  Param<sim::Time> end_request;
  // raid_end_bio_io: bio_endio of the master (md_end_io_acct), close_write,
  // free_r10bio (mempool_free).
  Param<sim::Time> end_bio_io;
  // wq_has_sleeper: smp_mb() and the list check.
  Param<sim::Time> has_sleeper;
  // __wake_up_common's walk of the list under the queue's lock.
  Param<sim::Time> wake_up_walk;
  // md_thread()'s round and raid10d's own work around
  // flush_pending_writes: the wait's checks, md_check_recovery with
  // nothing to do, blk_start_plug / blk_finish_plug.
  Param<sim::Time> md_thread_run;
};

struct Raid10Params {
  // Commit a8d5fdd4d270 (Linux 6.5): raid10_unplug calls
  // wake_up_barrier(conf) instead of wake_up(&conf->wait_barrier).
  bool unplug_wake_up_barrier = false;
  // The earlier patch in its thread: flush_pending_writes (raid10d's path)
  // calls wake_up_barrier(conf) instead of wake_up(&conf->wait_barrier).
  bool flush_wake_up_barrier = false;
};

class Raid10 final : public BlockStack {
 public:
  static constexpr int kCopies = 2;

  // `lines`: the shared lines (their hand-off table also gives the locks'
  // MCS nodes' transfers); `wait_lock`: the lock word's hand-off in
  // conf->wait_barrier's qspinlock.
  Raid10(sim::Simulator& sim, const Raid10Costs& costs, const BrdCosts& brd, const Raid10Params& params,
         const LineCosts& lines, const LockHandoffCosts& wait_lock);
  Raid10(const Raid10&) = delete;
  Raid10& operator=(const Raid10&) = delete;
  ~Raid10() override;

  // The scheduler raid10d runs under. REQUIRES: set before a run that may
  // wake it.
  void set_scheduler(Scheduler& sched) { thread_.set_scheduler(sched); }

  // The direct I/O of one request on /dev/md0 by the task running on
  // `cpu`; it has completed (its sink was called) when this returns.
  sim::Task Submit(Cpu& cpu, BlockRequest& rq, bool last) override;
  // Nothing is ever left to poll: brd completes inside Submit.
  sim::Task Poll(Cpu& cpu, BlockRequest& rq) override;
  void ResetStats() override;

  const Raid10Params& params() const { return params_; }
  const WaitQueue& wait_barrier() const { return wait_barrier_; }
  const Spinlock& device_lock() const { return device_lock_; }
  const MdThread& thread() const { return thread_; }
  // The hot lines, in a fixed order for reports: conf+192 (nr_pending),
  // conf+256 (wait_barrier), mirrors+0, rdev0+192, rdev1+192.
  static constexpr int kHotLines = 5;
  std::array<CacheLine*, kHotLines> lines() const { return hot_; }
  const Brd& brd(int i) const { return *brds_[static_cast<size_t>(i)]; }

  // Counters since the last ResetStats. Time is what the path charged on
  // CPUs, by part (spinning on locks is the CPUs' own kSpin time).
  struct Stats {
    uint64_t reads = 0, writes = 0;
    uint64_t plug_cbs = 0;          // raid10_plug_cb allocations
    uint64_t unplugs = 0;           // raid10_unplug calls
    uint64_t wake_up_locked = 0;    // wake_up(&conf->wait_barrier) calls (take the lock)
    uint64_t has_sleeper_checks = 0;  // wake_up_barrier's wq_has_sleeper checks
    uint64_t unplugs_from_schedule = 0;  // raid10_unplug's bios handed to raid10d
    uint64_t flushes = 0;  // flush_pending_writes calls that found bios
    sim::Time dio;  // direct I/O and aio above md
    sim::Time md;   // md and raid10, shared lines included
    sim::Time brd;  // brd_submit_bio: lookup and copy
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Bio;
  struct R10Bio;
  struct PlugCb;
  struct Plug;
  struct BioList;
  friend class Raid10Peer;  // tests reach the from_schedule branch through it

  // wq_has_sleeper() on conf->wait_barrier, its time md's.
  struct HasSleeperAwaiter;
  // A line access by md, its time md's.
  struct MdAccess;

  // block/fops.c and block/blk-core.c (Submit is blkdev_{read,write}_iter).
  sim::Task BlkFinishPlug(Cpu& cpu, Plug& plug);
  sim::Task SubmitBioNoacct(Cpu& cpu, Bio& bio);
  // drivers/md.
  sim::Task MdSubmitBio(Cpu& cpu, BlockRequest& rq, Plug* plug, BioList& bio_list);
  sim::Task ReadRequest(Cpu& cpu, R10Bio& r10, BioList& bio_list);
  // wait_barrier(): wait_barrier_nolock() (its result in *through), then
  // WaitBarrierSlow when it did not get through.
  sim::Task WaitBarrier(Cpu& cpu);
  sim::Task WaitBarrierNolock(Cpu& cpu, bool* through);
  sim::Task WaitBarrierSlow(Cpu& cpu);
  sim::Task AllowBarrier(Cpu& cpu);
  // wake_up_barrier(): `if (co_await WqHasSleeper(cpu)) co_await
  // WakeUp(cpu);`.
  HasSleeperAwaiter WqHasSleeper(Cpu& cpu);
  sim::Task WakeUp(Cpu& cpu);
  sim::Task ReadBalance(Cpu& cpu, R10Bio& r10);
  sim::Task WriteRequest(Cpu& cpu, R10Bio& r10, Plug* plug);
  sim::Task WaitBlockedDev(Cpu& cpu);
  Cpu::WorkAwaiter WriteOneDisk(Cpu& cpu, R10Bio& r10, int slot, Plug* plug);
  PlugCb* BlkCheckPlugged(Plug& plug, sim::Time* cost);
  sim::Task Unplug(Cpu& cpu, PlugCb& cb, bool from_schedule);
  // raid10_unplug()'s wake-up of conf->wait_barrier, by its placement.
  sim::Task UnplugWakeUp(Cpu& cpu);
  // Submit's path; a write's plug flushed as sched_submit_work() flushes
  // it when `from_schedule` (the sleep itself not modeled: the tests'
  // entry to md's thread path).
  sim::Task DirectIo(Cpu& cpu, BlockRequest& rq, bool from_schedule);
  // raid10d() and flush_pending_writes(), on md's thread.
  sim::Task Raid10d(Task& t);
  sim::Task FlushPendingWrites(Task& t);
  MdAccess UpdateHeadPos(Cpu& cpu, const Bio& bio, sim::Time then);
  MdAccess RdevDecPending(Cpu& cpu, int dev);
  sim::Task EndReadRequest(Cpu& cpu, Bio& bio);
  sim::Task EndWriteRequest(Cpu& cpu, Bio& bio);
  sim::Task OneWriteDone(Cpu& cpu, R10Bio& r10);
  sim::Task RaidEndBioIo(Cpu& cpu, R10Bio& r10);

  // Charges `t` of md's work on `cpu`.
  Cpu::WorkAwaiter Md(Cpu& cpu, sim::Time t) {
    stats_.md += t;
    return cpu.Run(t);
  }
  // Adds to md's time what `cpu` spent since `since` not spinning (a
  // wake-up's lock and list), unless the counters were reset meanwhile.
  void AddMd(sim::Time since, sim::Time spin_since, const Cpu& cpu, uint64_t epoch);

  R10Bio* AllocR10Bio();
  void FreeR10Bio(R10Bio* r10);

  // An access of `field`'s line followed by `then` of md's work, counted
  // as md's time when it resumes (unless the counters were reset
  // meanwhile).
  struct MdAccess {
    Raid10* raid;
    CacheLine::Access access;
    sim::Time since;
    uint64_t epoch;
    bool await_ready() { return access.await_ready(); }
    void await_suspend(std::coroutine_handle<> h) { access.await_suspend(h); }
    void await_resume() const {
      access.await_resume();
      if (epoch == raid->epoch_) raid->stats_.md += raid->sim_->Now() - since;
    }
  };
  MdAccess Read(CacheLine& line, Cpu& cpu, sim::Time then = sim::Time::Zero()) {
    return MdAccess{this, line.Read(cpu, then), sim_->Now(), epoch_};
  }
  MdAccess Rmw(CacheLine& line, Cpu& cpu, sim::Time then = sim::Time::Zero()) {
    return MdAccess{this, line.AtomicRmw(cpu, then), sim_->Now(), epoch_};
  }
  // wq_has_sleeper() on conf->wait_barrier, its time added to md's when it
  // returns (AddMd).
  struct HasSleeperAwaiter {
    Raid10* raid;
    Cpu* cpu;
    sim::Time since, spin_since;
    uint64_t epoch;
    WaitQueue::HasSleeperAwaiter check;
    bool await_ready() { return check.await_ready(); }
    void await_suspend(std::coroutine_handle<> h) { check.await_suspend(h); }
    bool await_resume() const {
      raid->AddMd(since, spin_since, *cpu, epoch);
      return check.await_resume();
    }
  };

  sim::Simulator* sim_;
  Raid10Costs costs_;
  Raid10Params params_;
  std::array<std::unique_ptr<Brd>, kCopies> brds_;
  // struct r10conf, conf->mirrors and the members' md_rdevs, as laid out
  // (raid10_layout.h), and the values of the fields the path decides on.
  StructLines conf_lines_;
  StructLines mirrors_lines_;
  std::array<std::unique_ptr<StructLines>, kCopies> rdev_lines_;
  CacheLine& resync_seq_;  // conf->resync_lock.seqcount
  CacheLine& nr_pending_;  // conf->nr_pending
  CacheLine& barrier_line_;  // conf->barrier
  CacheLine& freeze_line_;  // conf->array_freeze_pending
  CacheLine& wait_head_;   // conf->wait_barrier: lock word and list head
  std::array<CacheLine*, kCopies> mirror_;      // conf->mirrors[i] (rdev, head_position)
  std::array<CacheLine*, kCopies> rdev_pending_;  // rdev[i]->nr_pending
  std::array<CacheLine*, kHotLines> hot_;
  CacheLine& pending_line_;  // conf->pending_bio_list
  WaitQueue wait_barrier_;
  Spinlock resync_lock_;
  Spinlock device_lock_;
  // conf->pending_bio_list: bios for raid10d, in order.
  std::vector<Bio*> pending_bios_;
  MdThread thread_;  // mddev->thread: raid10d
  int barrier_ = 0;                // no resync, recovery or freeze_array raises it
  int array_freeze_pending_ = 0;
  int64_t nr_pending_count_ = 0;
  std::array<uint64_t, kCopies> head_position_{};
  std::array<int64_t, kCopies> rdev_pending_count_{};
  // Pools (mempool_alloc / kzalloc without allocation in steady state).
  std::vector<std::unique_ptr<R10Bio>> r10_all_;
  std::vector<R10Bio*> r10_free_;
  std::vector<std::unique_ptr<PlugCb>> cb_all_;
  std::vector<PlugCb*> cb_free_;
  Stats stats_;
  uint64_t epoch_ = 0;  // ResetStats calls
};

}  // namespace models

#endif  // VIOSIM_MODELS_MD_RAID10_H_
