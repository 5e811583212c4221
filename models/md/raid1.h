// md raid1 with two mirrors over two brd ramdisks, as of Linux 6.4
// (drivers/md/raid1.c, raid1.h, raid1-10.c, md.c), under the direct-I/O
// path of the array's block device file (block/fops.c) as fio's libaio
// engine drives it: the same parts as models/md/raid10.h. What the two
// share -- the direct I/O, the plug and its callback, submit_bio_noacct to
// brd, the pools, conf->wait_barrier and its wake-ups, md's time -- is
// md's (md_array.h); this is raid1's own part.
//
// Each kernel function on the path is one function, in raid1.c's order,
// named after it, run by the submitting task on its CPU: brd completes
// every bio inside its own submit_bio, so an I/O is submitted, copied and
// completed within the task's io_submit.
//
//   read   blkdev_read_iter -> __blkdev_direct_IO_async -> submit_bio ->
//          md_submit_bio -> raid1_make_request -> raid1_read_request:
//          wait_read_barrier (atomic_inc of conf->nr_pending[idx], then
//          READ_ONCE(conf->array_frozen)), read_balance (each mirror's
//          rdev, nr_pending, head_position and next_seq_sect read; the
//          chosen rdev's nr_pending +1, its seq_start and next_seq_sect
//          written), the member bio cloned and queued on current->bio_list.
//          brd's bio_endio runs raid1_end_read_request: update_head_pos,
//          raid_end_bio_io (the aio completion, free_r1bio,
//          allow_barrier), rdev_dec_pending.
//   write  blkdev_write_iter opens a plug; raid1_make_request ->
//          md_write_start -> raid1_write_request: wait_barrier
//          (_wait_barrier: atomic_inc of conf->nr_pending[idx], smp_mb,
//          READ_ONCE(conf->array_frozen), atomic_read(&conf->barrier[idx])),
//          each mirror's rdev->nr_pending +1, per mirror a clone put on
//          the plug callback's list (blk_check_plugged kzallocs the
//          raid1_plug_cb on the first: once per write here),
//          r1_bio_write_done, and wake_up(&conf->wait_barrier) ("in case
//          raid1d snuck in to freeze_array"). blk_finish_plug runs
//          raid1_unplug -> flush_bio_list: wake_up(&conf->wait_barrier),
//          then each clone to brd, ending in raid1_end_write_request
//          (find_bio_disk's update_head_pos, rdev_dec_pending,
//          r1_bio_write_done; the last ends the master: close_write,
//          raid_end_bio_io); kfree of the callback.
//
// allow_barrier is _allow_barrier(conf, idx): atomic_dec of
// conf->nr_pending[idx] and an unconditional wake_up(&conf->wait_barrier).
// So at v6.4 every read takes the wait queue's spinlock once and every
// write three times (raid1_write_request's end, flush_bio_list,
// allow_barrier), with nobody ever queued on it. Raid1Params::
// wake_up_barrier is the later fix (Jack Wang, "raid1: prevent unnecessary
// call to wake_up() in fast path", linux-raid, 3 July 2023): every one of
// those becomes `if (wq_has_sleeper()) wake_up()`.
//
// Shared lines (CacheLine: an access pays the move of the line from the
// CPU that wrote it last, by distance), from struct r1conf's layout
// (raid1_layout.h; docs/raid1.md gives the offsets and their sources); an
// access names the field (StructLines):
//   - the bucket arrays: conf->nr_pending and conf->barrier each point to a
//     page of 1024 atomic_t (kcalloc(BARRIER_BUCKETS_NR), page-aligned);
//     bucket idx = sector_to_idx(sector) = hash_long(sector >> 17, 10) is
//     on that page's line idx / 16. The 16 barrier units of a 1 GiB array
//     hash to 16 distinct lines of each page.
//   - r1conf bytes 64-127: wait_barrier's lock word (the Spinlock) and list
//     head (the CacheLine the wait queue walks), resync_lock, and the
//     nr_pending / nr_waiting / nr_queued pointers that every barrier call
//     reads: the pointer's line is the lock's line.
//   - r1conf bytes 128-191: the barrier pointer and array_frozen (read
//     only here).
//   - conf->mirrors: four 32-byte raid1_info (raid_disks * 2, the second
//     half for replacements) in a 128-byte allocation: mirrors 0-1 on one
//     line, written by read_balance (seq_start, next_seq_sect) and
//     update_head_pos; 2-3 (empty) on the next, read only.
//   - each rdev's nr_pending line.
// Fields only ever read by this workload cost nothing after a CPU's first
// copy; they are accessed anyway, so each access the source makes is one.
//
// Kept as in the source but not reached by this workload: the barrier
// slow paths under conf->resync_lock (a barrier raised by resync or
// recovery, or freeze_array) and raid1_unplug's from_schedule branch with
// conf->device_lock. The kernel's code here runs with preemption off.
#ifndef VIOSIM_MODELS_MD_RAID1_H_
#define VIOSIM_MODELS_MD_RAID1_H_

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/block/block_stack.h"
#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "models/md/brd.h"
#include "models/md/md_array.h"
#include "models/sync/cache_line.h"
#include "models/sync/handoff_costs.h"
#include "models/sync/struct_layout.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

// md's shared costs (MdCosts) and raid1's own.
struct Raid1Costs : MdCosts {
  // raid1_write_request's two loops over the four mirror slots (flag
  // tests, bad-block checks, the clone's fields), beside the clones.
  Param<sim::Time> write_disks;
};

struct Raid1Params {
  // Every wake_up(&conf->wait_barrier) of the fast path guarded by
  // wq_has_sleeper (the July 2023 patch; see the file comment).
  bool wake_up_barrier = false;
};

class Raid1 final : public MdArray {
 public:
  static constexpr int kMirrors = kMembers;
  // BARRIER_BUCKETS_NR_BITS with 4 KiB pages (raid1.h), and
  // BARRIER_UNIT_SECTOR_BITS.
  static constexpr int kBucketBits = 10;
  static constexpr int kBarrierUnitSectorBits = 17;
  // atomic_t per 64-byte line of a bucket array.
  static constexpr int kBucketsPerLine = 16;
  static constexpr int kLinesPerArray = (1 << kBucketBits) / kBucketsPerLine;

  // sector_to_idx(): hash_long(sector >> BARRIER_UNIT_SECTOR_BITS,
  // BARRIER_BUCKETS_NR_BITS), hash_64's multiplicative hash on x86_64.
  static int SectorToIdx(uint64_t sector);

  // `lines`: the shared lines' transfer costs (and the locks' MCS nodes');
  // `wait_lock`: the lock word's hand-off in conf->wait_barrier's
  // qspinlock.
  Raid1(sim::Simulator& sim, const Raid1Costs& costs, const BrdCosts& brd, const Raid1Params& params,
        const LineCosts& lines, const LockHandoffCosts& wait_lock);
  ~Raid1() override;

  void ResetStats() override;

  const Raid1Params& params() const { return params_; }

  // The shared lines by field group, for reports and tests.
  // conf->nr_pending[]'s lines (of the 64 in its page) that were touched.
  std::vector<const CacheLine*> nr_pending_lines() const { return Touched(nr_pending_); }
  std::vector<const CacheLine*> barrier_lines() const { return Touched(barrier_); }
  const CacheLine& conf_wait_line() const { return conf_wait_line_; }      // conf+64
  const CacheLine& conf_frozen_line() const { return conf_frozen_line_; }  // conf+128
  const CacheLine& mirrors_line() const { return mirrors_; }               // mirrors[0..1]
  const CacheLine& replacements_line() const { return replacements_; }     // mirrors[2..3]

 private:
  struct R1Bio;
  using LineArray = std::array<std::unique_ptr<CacheLine>, kLinesPerArray>;
  static std::vector<const CacheLine*> Touched(const LineArray& a);

  sim::Task MdSubmitBio(Cpu& cpu, BlockRequest& rq, Plug* plug, BioList& bio_list) override;

  // drivers/md/raid1.c, in its order.
  sim::Task RaidEndBioIo(Cpu& cpu, R1Bio& r1);
  MdAccess UpdateHeadPos(Cpu& cpu, int disk, R1Bio& r1);
  sim::Task EndReadRequest(Cpu& cpu, Bio& bio) override;
  sim::Task R1BioWriteDone(Cpu& cpu, R1Bio& r1);
  sim::Task EndWriteRequest(Cpu& cpu, Bio& bio) override;
  sim::Task ReadBalance(Cpu& cpu, R1Bio& r1);
  sim::Task FlushBioList(Cpu& cpu, PlugCb& cb);
  sim::Task WaitBarrierSlow(Cpu& cpu, int idx, bool read);  // the part under resync_lock
  sim::Task WaitBarrier(Cpu& cpu, int idx);                 // _wait_barrier
  sim::Task WaitReadBarrier(Cpu& cpu, int idx);
  sim::Task AllowBarrier(Cpu& cpu, int idx);                // _allow_barrier
  sim::Task Unplug(Cpu& cpu, PlugCb& cb, bool from_schedule) override;
  sim::Task ReadRequest(Cpu& cpu, R1Bio& r1, BioList& bio_list);
  sim::Task WriteRequest(Cpu& cpu, R1Bio& r1, Plug* plug);
  sim::Task MakeRequest(Cpu& cpu, R1Bio& r1, Plug* plug, BioList& bio_list);
  // wake_up(&conf->wait_barrier), or with wake_up_barrier its guarded form.
  sim::Task WakeUpBarrier(Cpu& cpu);
  // md.h: rdev_dec_pending's atomic_dec_and_test.
  MdAccess RdevDecPending(Cpu& cpu, int disk);

  CacheLine& BucketLine(LineArray& a, const char* array, int idx);

  sim::Time write_disks_;  // Raid1Costs::write_disks
  Raid1Params params_;
  LineCosts line_costs_;
  // struct r1conf's lines (md's conf_lines_), conf->mirrors, and what the
  // path decides on.
  StructLines mirrors_lines_;
  CacheLine& conf_wait_line_;    // the nr_pending / nr_waiting / nr_queued pointers, wait_barrier, resync_lock
  CacheLine& conf_frozen_line_;  // the barrier pointer, array_frozen
  CacheLine& mirrors_;           // mirrors[0..1]
  CacheLine& replacements_;      // mirrors[2..3]
  int array_frozen_ = 0;
  LineArray nr_pending_;
  LineArray barrier_;
  std::array<int64_t, 1 << kBucketBits> nr_pending_count_{};
  std::array<int64_t, 1 << kBucketBits> barrier_count_{};
  struct MirrorInfo {
    uint64_t head_position = 0;
    uint64_t next_seq_sect = 0;
    uint64_t seq_start = 0;
  };
  std::array<MirrorInfo, kMirrors> mirror_info_{};
  MdPool<R1Bio> r1s_;  // conf->r1bio_pool
};

}  // namespace models

#endif  // VIOSIM_MODELS_MD_RAID1_H_
