// md raid10 with two devices in the near-2 layout (every block on both)
// over two brd ramdisks, as of Linux 6.4 (drivers/md/raid10.c, raid1-10.c,
// md.c), under the direct-I/O path of the array's block device file
// (block/fops.c) as fio's libaio engine drives it.
//
// What raid1 and raid10 share -- the direct I/O, the plug and its
// callback, submit_bio_noacct to brd, the pools, conf->wait_barrier and its
// wake-ups, md's time -- is md's (md_array.h); this is raid10's own part.
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
#include <cstdint>
#include <memory>
#include <vector>

#include "models/block/block_stack.h"
#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "models/md/brd.h"
#include "models/md/md_array.h"
#include "models/md/md_thread.h"
#include "models/sync/cache_line.h"
#include "models/sync/handoff_costs.h"
#include "models/sync/struct_layout.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

// md's shared costs (MdCosts) and raid10's own.
struct Raid10Costs : MdCosts {
  // raid10_find_phys, wait_blocked_dev and the copies loop of
  // raid10_write_request.
  Param<sim::Time> find_phys;
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

class Raid10 final : public MdArray {
 public:
  static constexpr int kCopies = kMembers;

  // `lines`: the shared lines (their hand-off table also gives the locks'
  // MCS nodes' transfers); `wait_lock`: the lock word's hand-off in
  // conf->wait_barrier's qspinlock.
  Raid10(sim::Simulator& sim, const Raid10Costs& costs, const BrdCosts& brd, const Raid10Params& params,
         const LineCosts& lines, const LockHandoffCosts& wait_lock);
  ~Raid10() override;

  // The scheduler raid10d runs under. REQUIRES: set before a run that may
  // wake it.
  void set_scheduler(Scheduler& sched) { thread_.set_scheduler(sched); }

  void ResetStats() override;

  const Raid10Params& params() const { return params_; }
  const MdThread& thread() const { return thread_; }
  // The hot lines, in a fixed order for reports: conf+192 (nr_pending),
  // conf+256 (wait_barrier), mirrors+0, rdev0+192, rdev1+192.
  static constexpr int kHotLines = 5;
  std::array<CacheLine*, kHotLines> lines() const { return hot_; }

 private:
  struct R10Bio;
  friend class Raid10Peer;  // tests reach the from_schedule branch through it

  // drivers/md.
  sim::Task MdSubmitBio(Cpu& cpu, BlockRequest& rq, Plug* plug, BioList& bio_list) override;
  sim::Task ReadRequest(Cpu& cpu, R10Bio& r10, BioList& bio_list);
  // wait_barrier(): wait_barrier_nolock() (its result in *through), then
  // WaitBarrierSlow when it did not get through.
  sim::Task WaitBarrier(Cpu& cpu);
  sim::Task WaitBarrierNolock(Cpu& cpu, bool* through);
  sim::Task WaitBarrierSlow(Cpu& cpu);
  sim::Task AllowBarrier(Cpu& cpu);
  sim::Task ReadBalance(Cpu& cpu, R10Bio& r10);
  sim::Task WriteRequest(Cpu& cpu, R10Bio& r10, Plug* plug);
  sim::Task WaitBlockedDev(Cpu& cpu);
  MdAwaiterOf<Cpu::WorkAwaiter> WriteOneDisk(Cpu& cpu, R10Bio& r10, int slot, Plug* plug);
  sim::Task Unplug(Cpu& cpu, PlugCb& cb, bool from_schedule) override;
  // raid10_unplug()'s wake-up of conf->wait_barrier, by its placement.
  sim::Task UnplugWakeUp(Cpu& cpu);
  // raid10d() and flush_pending_writes(), on md's thread.
  sim::Task Raid10d(Task& t);
  sim::Task FlushPendingWrites(Task& t);
  MdAccess UpdateHeadPos(Cpu& cpu, const Bio& bio, sim::Time then);
  MdAccess RdevDecPending(Cpu& cpu, int dev);
  sim::Task EndReadRequest(Cpu& cpu, Bio& bio) override;
  sim::Task EndWriteRequest(Cpu& cpu, Bio& bio) override;
  sim::Task OneWriteDone(Cpu& cpu, R10Bio& r10);
  sim::Task RaidEndBioIo(Cpu& cpu, R10Bio& r10);

  sim::Time find_phys_;  // Raid10Costs::find_phys
  Raid10Params params_;
  // conf->mirrors, as laid out (raid10_layout.h), and the conf lines and
  // values of the fields the path decides on.
  StructLines mirrors_lines_;
  CacheLine& resync_seq_;  // conf->resync_lock.seqcount
  CacheLine& nr_pending_;  // conf->nr_pending
  CacheLine& barrier_line_;  // conf->barrier
  CacheLine& freeze_line_;  // conf->array_freeze_pending
  CacheLine& wait_head_;   // conf->wait_barrier: lock word and list head
  std::array<CacheLine*, kCopies> mirror_;  // conf->mirrors[i] (rdev, head_position)
  std::array<CacheLine*, kHotLines> hot_;
  CacheLine& pending_line_;  // conf->pending_bio_list
  // conf->pending_bio_list: bios for raid10d, in order.
  std::vector<Bio*> pending_bios_;
  MdThread thread_;  // mddev->thread: raid10d
  int barrier_ = 0;                // no resync, recovery or freeze_array raises it
  int array_freeze_pending_ = 0;
  int64_t nr_pending_count_ = 0;
  std::array<uint64_t, kCopies> head_position_{};
  MdPool<R10Bio> r10s_;  // conf->r10bio_pool
};

}  // namespace models

#endif  // VIOSIM_MODELS_MD_RAID10_H_
