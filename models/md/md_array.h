// What md's personalities share, for a two-member array over brd ramdisks
// under the direct-I/O path of its block device file, as Linux 6.4 shares
// it between raid1 and raid10 (drivers/md/md.c, md.h, raid1-10.c; block/
// fops.c and blk-core.c above them):
//
//   - the direct I/O: blkdev_{read,write}_iter with a plug around every
//     write, __blkdev_direct_IO_async, and submit_bio with
//     current->bio_list set while md_submit_bio runs (__submit_bio_noacct:
//     what md submits inside it runs after it returns);
//   - blk_finish_plug -> flush_plug_callbacks, and blk_check_plugged's md
//     callback (raid1_plug_cb, raid10_plug_cb: a blk_plug_cb and the
//     member bios held back until the unplug);
//   - submit_bio_noacct of a member bio to brd, whose bio_endio runs the
//     personality's end_io before returning;
//   - the r1bio/r10bio and member bios, from pools that allocate nothing in
//     steady state (mempool_alloc, kzalloc);
//   - struct r1conf's and r10conf's shared parts: conf->wait_barrier (a
//     wait queue whose lock word and list head sit where the personality's
//     layout puts them), conf->resync_lock, conf->device_lock, and each
//     member's md_rdev (md_layout.h): its nr_pending line;
//   - wake_up_barrier's pieces: wq_has_sleeper() (smp_mb and the list
//     check, no lock) and wake_up() (__wake_up_common_lock: the queue's
//     spinlock whether or not anyone waits);
//   - md's time accounting, one rule for both: md_cpu_pct is the CPU time
//     the md path charges (its own work, its line transactions and its
//     wake-ups, spinning excluded), each charge counted in the window it
//     ends in, and in none when the counters were reset while it ran
//     (raid_end_bio_io's, one charge with the aio completion, as it
//     starts).
//
// A personality (raid1.h, raid10.h) is the rest: make_request with its
// barrier and read_balance, its unplug, and its end_io.
#ifndef VIOSIM_MODELS_MD_MD_ARRAY_H_
#define VIOSIM_MODELS_MD_MD_ARRAY_H_

#include <array>
#include <coroutine>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/block/block_stack.h"
#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "models/md/brd.h"
#include "models/sync/cache_line.h"
#include "models/sync/handoff_costs.h"
#include "models/sync/spinlock.h"
#include "models/sync/struct_layout.h"
#include "models/sync/wait_queue.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

// CPU costs of the shared path, per call, without the shared lines'
// transfers (charged by the lines themselves). A personality's costs add
// its own.
struct MdCosts {
  // block/fops.c and fs/aio.c: blkdev_{read,write}_iter and
  // __blkdev_direct_IO_async (the bio's allocation, the user page pinned,
  // submit_bio's entry).
  Param<sim::Time> dio_submit;
  // blkdev_bio_end_io_async: the aio completion (the event into the ring),
  // the page released, bio_put.
  Param<sim::Time> dio_complete;
  // blk_start_plug and blk_finish_plug (flush_plug_callbacks' list walk),
  // around every write.
  Param<sim::Time> plug;
  // md_submit_bio, md_handle_request, the personality's make_request (an
  // r1bio/r10bio from its mempool, its fields set; md_write_start's percpu
  // work for writes).
  Param<sim::Time> make_request;
  // The barrier's own instructions beside its line accesses (seqcount
  // reads, smp_mb, the tests).
  Param<sim::Time> barrier_check;
  // read_balance's own work over the mirror slots.
  Param<sim::Time> read_balance;
  // bio_alloc_clone from the array's bio_set, per clone.
  Param<sim::Time> bio_clone;
  // blk_check_plugged's kzalloc of the plug callback and its list add; its
  // kfree at the end of the unplug.
  Param<sim::Time> plug_cb_alloc;
  Param<sim::Time> plug_cb_free;
  // The personality's end_{read,write}_request's own work.
  Param<sim::Time> end_request;
  // raid_end_bio_io: bio_endio of the master (md_end_io_acct), close_write
  // for writes, the r1bio/r10bio freed.
  Param<sim::Time> end_bio_io;
  // wq_has_sleeper: smp_mb() and the list check.
  Param<sim::Time> has_sleeper;
  // __wake_up_common's walk of the list under the queue's lock.
  Param<sim::Time> wake_up_walk;
};

// A free list of T, allocating only while it grows (a mempool or a slab
// cache in steady state).
template <class T>
class MdPool {
 public:
  T* Alloc() {
    if (free_.empty()) {
      all_.push_back(std::make_unique<T>());
      free_.push_back(all_.back().get());
    }
    T* t = free_.back();
    free_.pop_back();
    return t;
  }
  void Free(T* t) { free_.push_back(t); }

 private:
  std::vector<std::unique_ptr<T>> all_;
  std::vector<T*> free_;
};

class MdArray : public BlockStack {
 public:
  static constexpr int kMembers = 2;

  MdArray(const MdArray&) = delete;
  MdArray& operator=(const MdArray&) = delete;
  ~MdArray() override;

  // The direct I/O of one request on /dev/md0 by the task running on
  // `cpu`; it has completed (its sink was called) when this returns.
  sim::Task Submit(Cpu& cpu, BlockRequest& rq, bool last) final;
  // Nothing is ever left to poll: brd completes inside Submit.
  sim::Task Poll(Cpu& cpu, BlockRequest& rq) final;
  // The shared counters, the locks, the lines and the brds; a personality
  // adds its own.
  void ResetStats() override;

  const WaitQueue& wait_barrier() const { return wait_barrier_; }
  const Spinlock& resync_lock() const { return resync_lock_; }
  const Spinlock& device_lock() const { return device_lock_; }
  const Brd& brd(int i) const { return *brds_[static_cast<size_t>(i)]; }
  // rdev[i]->nr_pending's line.
  const CacheLine& rdev_pending(int i) const { return *rdev_pending_[static_cast<size_t>(i)]; }

  // Counters since the last ResetStats. Time is what the path charged on
  // CPUs, by part (spinning on locks is the CPUs' own kSpin time).
  struct Stats {
    uint64_t reads = 0, writes = 0;
    uint64_t plug_cbs = 0;            // plug callback allocations
    uint64_t unplugs = 0;             // the personality's unplug calls
    uint64_t wake_up_locked = 0;      // wake_up(&conf->wait_barrier) calls (take the lock)
    uint64_t allow_barrier_wake_ups = 0;  // of those, from allow_barrier
    uint64_t has_sleeper_checks = 0;  // wq_has_sleeper checks on it
    uint64_t barrier_slow_paths = 0;  // wait_barrier past its lock-free path
    uint64_t unplugs_from_schedule = 0;  // unplugs that handed their bios to the md thread
    uint64_t flushes = 0;  // the md thread's flush_pending_writes calls that found bios
    sim::Time dio;  // direct I/O and aio above md
    sim::Time md;   // md and the personality, shared lines included
    sim::Time brd;  // brd_submit_bio: lookup and copy
  };
  const Stats& stats() const { return stats_; }

 protected:
  struct RBio;
  // A member bio (r1_bio->bios[disk], r10_bio->devs[slot].bio): a clone of
  // the master for one member.
  struct Bio {
    RBio* r = nullptr;
    int dev = 0;  // the member (and brd) it goes to
    bool write = false;
    uint32_t bytes = 0;
  };
  // What struct r1bio and struct r10bio share.
  struct RBio {
    BlockRequest* master = nullptr;
    uint64_t sector = 0;
    int remaining = 0;  // atomic_t remaining (writes)
    std::array<Bio, kMembers> bios;
  };
  // The plug callback and the member bios it holds back.
  struct PlugCb {
    std::array<Bio*, kMembers> pending{};
    int n = 0;
  };
  // struct blk_plug as this path uses it: its cb_list holds at most md's
  // one callback.
  struct Plug {
    PlugCb* cb = nullptr;
  };
  // current->bio_list while md_submit_bio runs.
  struct BioList {
    std::array<Bio*, kMembers> bios{};
    int n = 0;
  };

  // `conf`: the personality's conf struct (its wait_barrier.lock and
  // wait_barrier.head fields make the wait queue's lines); `instance`s
  // name the lines ("conf", "rdev0", ...). `lines`: the shared lines'
  // costs (their hand-off table also gives the locks' MCS nodes'
  // transfers); `wait_lock`: the lock word's hand-off in
  // conf->wait_barrier's qspinlock.
  MdArray(sim::Simulator& sim, const MdCosts& costs, const BrdCosts& brd, const StructLayout& conf,
          const LineCosts& lines, const LockHandoffCosts& wait_lock);

  // ---- The personality ----
  // md_submit_bio -> md_handle_request -> the personality's make_request.
  virtual sim::Task MdSubmitBio(Cpu& cpu, BlockRequest& rq, Plug* plug, BioList& bio_list) = 0;
  // The plug callback (raid1_unplug, raid10_unplug); it returns `cb` to
  // the pool (FreePlugCb).
  virtual sim::Task Unplug(Cpu& cpu, PlugCb& cb, bool from_schedule) = 0;
  // The member bio's end_io, run by brd's bio_endio.
  virtual sim::Task EndReadRequest(Cpu& cpu, Bio& bio) = 0;
  virtual sim::Task EndWriteRequest(Cpu& cpu, Bio& bio) = 0;

  // ---- Shared path ----
  // Submit's path (reads too: they open no plug), with a write's plug
  // flushed by blk_finish_plug or, when `from_schedule`, as
  // sched_submit_work flushes the plug of a task going to sleep
  // (blk_flush_plug(plug, true); the sleep itself is not modeled).
  sim::Task DirectIo(Cpu& cpu, BlockRequest& rq, bool from_schedule);
  // blk_finish_plug -> flush_plug_callbacks: each callback taken off the
  // plug and called with from_schedule = false.
  sim::Task BlkFinishPlug(Cpu& cpu, Plug& plug);
  // submit_bio_noacct() of a member bio outside md_submit_bio: brd's
  // submit_bio, whose bio_endio runs the bio's end_io before returning.
  sim::Task SubmitBioNoacct(Cpu& cpu, Bio& bio);
  // blk_check_plugged(unplug, mddev, size): md's callback on the plug,
  // kzalloc'd by the first call under this plug; its cost added to
  // `*cost`.
  PlugCb* BlkCheckPlugged(Plug& plug, sim::Time* cost);
  // kfree of the callback at the end of the unplug: md's work, then the
  // callback back in the pool.
  void FreePlugCb(PlugCb& cb) { cbs_.Free(&cb); }
  // raid_end_bio_io's own work and the direct I/O's completion below the
  // master's bio_endio (the aio event): one charge, booked to md and to
  // the direct I/O as it starts. The caller then completes the master.
  Cpu::WorkAwaiter EndBioIo(Cpu& cpu) {
    stats_.md += costs_.end_bio_io.value;
    stats_.dio += costs_.dio_complete.value;
    return cpu.Run(costs_.end_bio_io.value + costs_.dio_complete.value);
  }

  // wake_up_barrier(conf) is `if (wq_has_sleeper(&conf->wait_barrier))
  // wake_up(&conf->wait_barrier);`. This is its wq_has_sleeper, resuming
  // with whether someone waits; its time is md's.
  struct HasSleeperAwaiter;
  HasSleeperAwaiter WqHasSleeper(Cpu& cpu);
  // wake_up(&conf->wait_barrier): the queue's spinlock (irqsave) whether
  // or not anyone waits; its time, spinning excluded, is md's.
  sim::Task WakeUp(Cpu& cpu);

  // ---- md's time ----
  // An awaiter (a line's access, or a charge of CPU time) whose time is
  // md's: counted from its suspension to its resumption, unless the
  // counters were reset meanwhile.
  template <class W>
  struct MdAwaiterOf {
    W work;
    MdArray* md;
    sim::Time start;
    uint64_t epoch = 0;
    bool suspended = false;
    bool await_ready() { return work.await_ready(); }
    void await_suspend(std::coroutine_handle<> h) {
      start = md->sim_->Now();
      epoch = md->epoch_;
      suspended = true;
      work.await_suspend(h);
    }
    void await_resume() {
      work.await_resume();
      if (suspended && epoch == md->epoch_) md->stats_.md += md->sim_->Now() - start;
    }
  };
  using MdAccess = MdAwaiterOf<CacheLine::Access>;
  MdAwaiterOf<Cpu::WorkAwaiter> Md(Cpu::WorkAwaiter w) { return {w, this, sim::Time::Zero()}; }
  MdAccess Md(CacheLine::Access a) { return {a, this, sim::Time::Zero()}; }
  // `t` of md's work on `cpu`.
  MdAwaiterOf<Cpu::WorkAwaiter> Md(Cpu& cpu, sim::Time t) { return Md(cpu.Run(t)); }
  // An access of `line` followed by `then` of md's work.
  MdAccess Read(CacheLine& line, Cpu& cpu, sim::Time then = sim::Time::Zero()) { return Md(line.Read(cpu, then)); }
  MdAccess Write(CacheLine& line, Cpu& cpu, sim::Time then = sim::Time::Zero()) { return Md(line.Write(cpu, then)); }
  MdAccess Rmw(CacheLine& line, Cpu& cpu, sim::Time then = sim::Time::Zero()) {
    return Md(line.AtomicRmw(cpu, then));
  }
  // Adds to md's time what `cpu` spent since `since` not spinning (a
  // wake-up's lock and list), unless the counters were reset meanwhile.
  void AddMd(sim::Time since, sim::Time spin_since, const Cpu& cpu, uint64_t epoch);

  struct HasSleeperAwaiter {
    MdArray* md;
    Cpu* cpu;
    sim::Time since, spin_since;
    uint64_t epoch;
    WaitQueue::HasSleeperAwaiter check;
    bool await_ready() { return check.await_ready(); }
    void await_suspend(std::coroutine_handle<> h) { check.await_suspend(h); }
    bool await_resume() const {
      md->AddMd(since, spin_since, *cpu, epoch);
      return check.await_resume();
    }
  };

  sim::Simulator* sim_;
  MdCosts costs_;
  std::array<std::unique_ptr<Brd>, kMembers> brds_;
  // The conf struct and each member's struct md_rdev, as laid out.
  StructLines conf_lines_;
  std::array<std::unique_ptr<StructLines>, kMembers> rdev_lines_;
  std::array<CacheLine*, kMembers> rdev_pending_;  // rdev[i]->nr_pending
  std::array<int64_t, kMembers> rdev_pending_count_{};
  WaitQueue wait_barrier_;
  Spinlock resync_lock_;
  Spinlock device_lock_;
  Stats stats_;
  uint64_t epoch_ = 0;  // ResetStats calls

 private:
  MdPool<PlugCb> cbs_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_MD_MD_ARRAY_H_
