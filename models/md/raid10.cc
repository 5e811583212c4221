#include "models/md/raid10.h"

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/md/raid10_layout.h"

namespace models {

// struct r10bio: md's common part and raid10's.
struct Raid10::R10Bio : RBio {
  uint32_t bytes = 0;
  int read_slot = -1;
};

Raid10::Raid10(sim::Simulator& sim, const Raid10Costs& costs, const BrdCosts& brd, const Raid10Params& params,
               const LineCosts& lines, const LockHandoffCosts& wait_lock)
    : MdArray(sim, costs, brd, raid10_layout::kR10conf, lines, wait_lock),
      find_phys_(costs.find_phys.value),
      params_(params),
      mirrors_lines_(sim, "mirrors", raid10_layout::kMirrors, lines),
      resync_seq_(conf_lines_.Line("resync_lock.seqcount")),
      nr_pending_(conf_lines_.Line("nr_pending")),
      barrier_line_(conf_lines_.Line("barrier")),
      freeze_line_(conf_lines_.Line("array_freeze_pending")),
      wait_head_(conf_lines_.Line("wait_barrier.head")),
      pending_line_(conf_lines_.Line("pending_bio_list")),
      thread_(sim, "md0_raid10", lines.handoff, costs.md_thread_run.value, [this](Task& t) { return Raid10d(t); }) {
  for (int i = 0; i < kCopies; ++i) {
    const auto u = static_cast<size_t>(i);
    mirrors_lines_.Line(absl::StrCat("mirrors[", i, "].head_position"));
    mirror_[u] = &mirrors_lines_.Line(absl::StrCat("mirrors[", i, "].rdev"));
  }
  hot_ = {&nr_pending_, &wait_head_, mirror_[0], rdev_pending_[0], rdev_pending_[1]};
}

Raid10::~Raid10() = default;

void Raid10::ResetStats() {
  MdArray::ResetStats();
  thread_.ResetStats();
  for (CacheLine* l : mirrors_lines_.lines()) l->ResetStats();
}

// md_submit_bio -> md_handle_request -> raid10_make_request (md_write_start
// for writes) -> __make_request: an r10bio from conf->r10bio_pool, then the
// read or write path; raid10_make_request ends with wake_up_barrier(conf)
// ("in case raid10d snuck in to freeze_array", since 0c0be98bbe67).
sim::Task Raid10::MdSubmitBio(Cpu& cpu, BlockRequest& rq, Plug* plug, BioList& bio_list) {
  R10Bio& r10 = *r10s_.Alloc();
  r10.master = &rq;
  r10.sector = rq.offset / 512;
  r10.bytes = rq.bytes;
  r10.remaining = 0;
  r10.read_slot = -1;
  co_await Md(cpu, costs_.make_request.value);
  if (rq.write) {
    ++stats_.writes;
    co_await WriteRequest(cpu, r10, plug);
  } else {
    ++stats_.reads;
    co_await ReadRequest(cpu, r10, bio_list);
  }
  if (co_await WqHasSleeper(cpu)) co_await WakeUp(cpu);  // wake_up_barrier(conf)
}

// raid10_read_request(): regular_request_wait (wait_barrier), read_balance,
// md_account_bio's clone and the member bio's clone, submit_bio_noacct of
// the member bio (queued on current->bio_list).
sim::Task Raid10::ReadRequest(Cpu& cpu, R10Bio& r10, BioList& bio_list) {
  co_await WaitBarrier(cpu);
  co_await ReadBalance(cpu, r10);
  co_await Md(cpu, costs_.bio_clone.value * 2);
  Bio& b = r10.bios[static_cast<size_t>(r10.read_slot)];
  b = Bio{&r10, r10.read_slot, /*write=*/false, r10.bytes};
  bio_list.bios[static_cast<size_t>(bio_list.n++)] = &b;
}

// wait_barrier(conf, false): the lock-free path, else the slow one.
sim::Task Raid10::WaitBarrier(Cpu& cpu) {
  bool through = false;
  co_await WaitBarrierNolock(cpu, &through);
  if (!through) co_await WaitBarrierSlow(cpu);
}

// wait_barrier_nolock(): read_seqbegin(&conf->resync_lock),
// READ_ONCE(conf->barrier) and, with no barrier raised,
// atomic_inc(&conf->nr_pending) and read_seqretry -- all on conf+192: the
// seqcount's read brings a shared copy, the increment upgrades it.
sim::Task Raid10::WaitBarrierNolock(Cpu& cpu, bool* through) {
  co_await Read(resync_seq_, cpu);
  co_await Read(barrier_line_, cpu, costs_.barrier_check.value);
  *through = barrier_ == 0;
  if (!*through) co_return;
  ++nr_pending_count_;
  co_await Rmw(nr_pending_, cpu);
  co_await Read(resync_seq_, cpu);  // read_seqretry: no writer, so through
}

// The rest of wait_barrier(), when wait_barrier_nolock() did not get
// through: the slow path under conf->resync_lock.
sim::Task Raid10::WaitBarrierSlow(Cpu& cpu) {
  ++stats_.barrier_slow_paths;
  // write_seqlock_irq(&conf->resync_lock): with a barrier raised the task
  // would sleep on conf->wait_barrier here until it drops; nothing in this
  // model raises one (no resync, recovery or freeze_array).
  cpu.LocalIrqSave();
  co_await resync_lock_.Lock(cpu);
  co_await Rmw(resync_seq_, cpu);
  ++nr_pending_count_;
  co_await Rmw(nr_pending_, cpu);
  resync_lock_.UnlockIrqRestore(cpu);
}

// allow_barrier(): `if (atomic_dec_and_test(&conf->nr_pending) ||
// conf->array_freeze_pending) wake_up_barrier(conf);` -- the flag on the
// line the decrement just took.
sim::Task Raid10::AllowBarrier(Cpu& cpu) {
  co_await Rmw(nr_pending_, cpu);
  bool wake = --nr_pending_count_ == 0;
  if (!wake) {
    co_await Read(freeze_line_, cpu);
    wake = array_freeze_pending_ != 0;
  }
  if (wake && co_await WqHasSleeper(cpu)) {  // wake_up_barrier(conf)
    ++stats_.allow_barrier_wake_ups;
    co_await WakeUp(cpu);
  }
}

// read_balance(), near copies on non-rotational members: for each copy,
// conf->mirrors[disk].rdev (rcu_dereference), the rdev's flags and
// badblocks (read-only here), its nr_pending and the distance from
// mirrors[disk].head_position; the copy with the fewest pending wins (the
// first on a tie), and its rdev->nr_pending is raised. With no recovery
// (mddev->recovery_cp == MaxSector) conf->next_resync is not read.
sim::Task Raid10::ReadBalance(Cpu& cpu, R10Bio& r10) {
  int best = 0;
  int64_t min_pending = std::numeric_limits<int64_t>::max();
  for (int slot = 0; slot < kCopies; ++slot) {
    const auto s = static_cast<size_t>(slot);
    co_await Read(*mirror_[s], cpu);
    co_await Read(*rdev_pending_[s], cpu);
    const int64_t pending = rdev_pending_count_[s];
    if (min_pending > pending) {
      min_pending = pending;
      best = slot;
    }
    co_await Read(*mirror_[s], cpu);  // abs(addr - head_position)
  }
  ++rdev_pending_count_[static_cast<size_t>(best)];
  co_await Rmw(*rdev_pending_[static_cast<size_t>(best)], cpu, costs_.read_balance.value);
  r10.read_slot = best;
}

// wait_blocked_dev(): each copy's rdev and replacement from conf->mirrors,
// and the rdev's Blocked bit and bad blocks (read-only here).
sim::Task Raid10::WaitBlockedDev(Cpu& cpu) {
  for (int d = 0; d < kCopies; ++d) co_await Read(*mirror_[static_cast<size_t>(d)], cpu);
}

// raid10_write_request(): regular_request_wait (wait_barrier),
// raid10_find_phys and wait_blocked_dev, each copy's rdev (from
// conf->mirrors) and its nr_pending raised, md_account_bio's clone,
// remaining = 1, raid10_write_one_disk per copy, one_write_done.
sim::Task Raid10::WriteRequest(Cpu& cpu, R10Bio& r10, Plug* plug) {
  co_await WaitBarrier(cpu);
  co_await WaitBlockedDev(cpu);
  for (int d = 0; d < kCopies; ++d) {
    const auto u = static_cast<size_t>(d);
    co_await Read(*mirror_[u], cpu);
    ++rdev_pending_count_[u];
    co_await Rmw(*rdev_pending_[u], cpu);
  }
  co_await Md(cpu, find_phys_ + costs_.bio_clone.value);
  r10.remaining = 1;
  for (int i = 0; i < kCopies; ++i) co_await WriteOneDisk(cpu, r10, i, plug);
  co_await OneWriteDone(cpu, r10);
}

// raid10_write_one_disk(): the member bio cloned, remaining raised, and
// the clone put on the plug callback's list (blk_check_plugged). Every
// write here runs under blkdev_write_iter's plug, so the branch without a
// plug (conf->pending_bio_list under conf->device_lock, for raid10d) is
// not taken. REQUIRES: plug.
Raid10::MdAwaiterOf<Cpu::WorkAwaiter> Raid10::WriteOneDisk(Cpu& cpu, R10Bio& r10, int slot, Plug* plug) {
  Bio& b = r10.bios[static_cast<size_t>(slot)];
  b = Bio{&r10, slot, /*write=*/true, r10.bytes};
  ++r10.remaining;
  sim::Time t = costs_.bio_clone.value;
  PlugCb& cb = *BlkCheckPlugged(*plug, &t);
  // The clone joins the callback's list now: the plug is this task's own,
  // no other CPU sees the list.
  cb.pending[static_cast<size_t>(cb.n++)] = &b;
  return Md(cpu, t);
}

// raid10_unplug(cb, from_schedule). From schedule (or with
// current->bio_list set, never here): the held-back bios are merged onto
// conf->pending_bio_list under conf->device_lock, conf->wait_barrier is
// woken, raid10d is woken to submit them, kfree(plug). Otherwise:
// bio_list_get, md_bitmap_unplug (no bitmap), the wake-up, each held-back
// bio submitted, kfree(plug).
sim::Task Raid10::Unplug(Cpu& cpu, PlugCb& cb, bool from_schedule) {
  ++stats_.unplugs;
  const PlugCb pending = cb;
  if (from_schedule) {
    ++stats_.unplugs_from_schedule;
    cpu.LocalIrqSave();
    co_await device_lock_.Lock(cpu);  // spin_lock_irq(&conf->device_lock)
    co_await Rmw(pending_line_, cpu);  // bio_list_merge: the list's tail written
    for (int i = 0; i < pending.n; ++i) pending_bios_.push_back(pending.pending[static_cast<size_t>(i)]);
    device_lock_.UnlockIrqRestore(cpu);
    co_await UnplugWakeUp(cpu);
    co_await thread_.Wakeup(cpu);  // md_wakeup_thread(mddev->thread)
    co_await Md(cpu, costs_.plug_cb_free.value);
    FreePlugCb(cb);
    co_return;
  }
  co_await UnplugWakeUp(cpu);
  for (int i = 0; i < pending.n; ++i) co_await SubmitBioNoacct(cpu, *pending.pending[static_cast<size_t>(i)]);
  co_await Md(cpu, costs_.plug_cb_free.value);
  FreePlugCb(cb);
}

// Both of raid10_unplug's branches wake conf->wait_barrier the same way:
// wake_up() before a8d5fdd4d270, wake_up_barrier(conf) with it.
sim::Task Raid10::UnplugWakeUp(Cpu& cpu) {
  bool wake = true;
  if (params_.unplug_wake_up_barrier) wake = co_await WqHasSleeper(cpu);
  if (wake) co_await WakeUp(cpu);
}

// raid10d(), on md's thread (`t`): md_check_recovery (nothing to do: in
// md_thread_run), then under its own plug the loop of
// flush_pending_writes and conf->retry_list checked under
// conf->device_lock (empty: no read error or bad block is ever retried
// here).
sim::Task Raid10::Raid10d(Task& t) {
  co_await FlushPendingWrites(t);
  Cpu& cpu = *t.cpu();
  cpu.LocalIrqSave();
  co_await device_lock_.Lock(cpu);  // spin_lock_irqsave(&conf->device_lock)
  device_lock_.UnlockIrqRestore(cpu);  // list_empty(head): break
}

// flush_pending_writes(): conf->pending_bio_list taken under
// conf->device_lock; when it held bios, md_bitmap_unplug (no bitmap), the
// wake-up of conf->wait_barrier -- wake_up() in 6.4, wake_up_barrier(conf)
// with the earlier patch -- and each bio submitted (cond_resched between:
// the thread may move, so its CPU is read again).
sim::Task Raid10::FlushPendingWrites(Task& t) {
  Cpu* cpu = t.cpu();
  cpu->LocalIrqSave();
  co_await device_lock_.Lock(*cpu);  // spin_lock_irq(&conf->device_lock)
  if (pending_bios_.empty()) {
    co_await Read(pending_line_, *cpu);  // conf->pending_bio_list.head
    device_lock_.UnlockIrqRestore(*cpu);
    co_return;
  }
  co_await Rmw(pending_line_, *cpu);  // bio_list_get
  std::vector<Bio*> bios;
  bios.swap(pending_bios_);
  device_lock_.UnlockIrqRestore(*cpu);
  ++stats_.flushes;
  // wake_up_barrier(conf) with the earlier patch, else wake_up().
  bool wake = true;
  if (params_.flush_wake_up_barrier) wake = co_await WqHasSleeper(*cpu);
  if (wake) co_await WakeUp(*cpu);
  for (Bio* b : bios) co_await SubmitBioNoacct(*t.cpu(), *b);
}

// update_head_pos(): conf->mirrors[dev].head_position = addr + sectors;
// then `then` of the caller's work.
Raid10::MdAccess Raid10::UpdateHeadPos(Cpu& cpu, const Bio& bio, sim::Time then) {
  head_position_[static_cast<size_t>(bio.dev)] = bio.r->sector + bio.bytes / 512;
  return Write(*mirror_[static_cast<size_t>(bio.dev)], cpu, then);
}

// rdev_dec_pending(): atomic_dec_and_test(&rdev->nr_pending) (the Faulty
// test after it reads the flags' read-only line).
Raid10::MdAccess Raid10::RdevDecPending(Cpu& cpu, int dev) {
  --rdev_pending_count_[static_cast<size_t>(dev)];
  return Rmw(*rdev_pending_[static_cast<size_t>(dev)], cpu);
}

// raid10_end_read_request(): update_head_pos, raid_end_bio_io,
// rdev_dec_pending.
sim::Task Raid10::EndReadRequest(Cpu& cpu, Bio& bio) {
  const int dev = bio.dev;
  co_await UpdateHeadPos(cpu, bio, costs_.end_request.value);
  co_await RaidEndBioIo(cpu, static_cast<R10Bio&>(*bio.r));
  co_await RdevDecPending(cpu, dev);
}

// raid10_end_write_request(): find_bio_disk (update_head_pos),
// one_write_done, rdev_dec_pending.
sim::Task Raid10::EndWriteRequest(Cpu& cpu, Bio& bio) {
  const int dev = bio.dev;
  co_await UpdateHeadPos(cpu, bio, costs_.end_request.value);
  co_await OneWriteDone(cpu, static_cast<R10Bio&>(*bio.r));
  co_await RdevDecPending(cpu, dev);
}

// one_write_done(): the last reference ends the master (close_write,
// raid_end_bio_io).
sim::Task Raid10::OneWriteDone(Cpu& cpu, R10Bio& r10) {
  if (--r10.remaining != 0) return sim::Task();
  return RaidEndBioIo(cpu, r10);
}

// raid_end_bio_io(): bio_end_io_acct and bio_endio of the master -- md's
// accounting clone ends, then the direct I/O's bio: the aio completion --
// then allow_barrier and free_r10bio.
sim::Task Raid10::RaidEndBioIo(Cpu& cpu, R10Bio& r10) {
  BlockRequest& rq = *r10.master;
  co_await EndBioIo(cpu);
  co_await rq.sink->Complete(rq, cpu);
  co_await AllowBarrier(cpu);
  r10s_.Free(&r10);
}

}  // namespace models
