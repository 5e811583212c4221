#include "models/md/raid10.h"

#include <limits>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"

namespace models {

// A member bio (r10_bio->devs[slot].bio): a clone of the master for one
// mirror.
struct Raid10::Bio {
  R10Bio* r10 = nullptr;
  int dev = 0;  // the mirror (and brd) it goes to; near-2: slot == dev
  bool write = false;
  uint32_t bytes = 0;
};

// struct r10bio.
struct Raid10::R10Bio {
  BlockRequest* master = nullptr;
  uint64_t sector = 0;
  uint32_t bytes = 0;
  int remaining = 0;  // atomic_t remaining (writes)
  int read_slot = -1;
  std::array<Bio, kCopies> devs;
};

// struct raid10_plug_cb: a blk_plug_cb and the member bios held back until
// the unplug.
struct Raid10::PlugCb {
  std::array<Bio*, kCopies> pending{};
  int n = 0;
};

// struct blk_plug as this path uses it: its cb_list holds at most md's one
// callback.
struct Raid10::Plug {
  PlugCb* cb = nullptr;
};

// current->bio_list while md_submit_bio runs: bios submitted from inside it
// wait there until it returns (__submit_bio_noacct).
struct Raid10::BioList {
  std::array<Bio*, kCopies> bios{};
  int n = 0;
};

Raid10::Raid10(sim::Simulator& sim, const Raid10Costs& costs, const BrdCosts& brd, const Raid10Params& params,
               const LockHandoffCosts& lines, const LockHandoffCosts& wait_lock)
    : sim_(&sim),
      costs_(costs),
      params_(params),
      wait_barrier_(sim, "&conf->wait_barrier", wait_lock, lines, costs.has_sleeper.value),
      wait_barrier_head_("wait_barrier.head", lines),
      resync_lock_(sim, "&conf->resync_lock", SpinlockKind::kQueued, lines),
      resync_seq_("resync_lock.seqcount", lines),
      device_lock_(sim, "&conf->device_lock", SpinlockKind::kQueued, lines),
      device_lock_line_("device_lock", lines),
      nr_pending_("conf->nr_pending", lines),
      mirrors_("mirrors.head_position", lines) {
  wait_barrier_.set_head(&wait_barrier_head_, costs.wake_up_walk.value);
  wait_barrier_.set_home_socket(params.home_socket);
  resync_lock_.set_home_socket(params.home_socket);
  device_lock_.set_home_socket(params.home_socket);
  for (int i = 0; i < kCopies; ++i) {
    brds_[static_cast<size_t>(i)] = std::make_unique<Brd>(absl::StrCat("ram", i), brd);
    rdev_pending_[static_cast<size_t>(i)] = std::make_unique<CacheLine>(absl::StrCat("rdev", i, "->nr_pending"), lines);
  }
  for (CacheLine* l : {&wait_barrier_head_, &resync_seq_, &device_lock_line_, &nr_pending_, &mirrors_}) {
    l->set_home_socket(params.home_socket);
    l->set_serialized(params.serialize_lines, params.serialized_transfer_scale);
  }
  for (auto& l : rdev_pending_) {
    l->set_home_socket(params.home_socket);
    l->set_serialized(params.serialize_lines, params.serialized_transfer_scale);
  }
}

Raid10::~Raid10() = default;

std::vector<const CacheLine*> Raid10::lines() const {
  std::vector<const CacheLine*> out = {&nr_pending_, &mirrors_};
  for (const auto& l : rdev_pending_) out.push_back(l.get());
  out.push_back(&wait_barrier_head_);
  out.push_back(&resync_seq_);
  out.push_back(&device_lock_line_);
  return out;
}

void Raid10::ResetStats() {
  stats_ = Stats();
  ++epoch_;
  wait_barrier_.ResetStats();
  resync_lock_.ResetStats();
  device_lock_.ResetStats();
  for (CacheLine* l : {&wait_barrier_head_, &resync_seq_, &device_lock_line_, &nr_pending_, &mirrors_}) l->ResetStats();
  for (auto& l : rdev_pending_) l->ResetStats();
  for (auto& b : brds_) b->ResetStats();
}

Raid10::R10Bio* Raid10::AllocR10Bio() {
  if (r10_free_.empty()) {
    r10_all_.push_back(std::make_unique<R10Bio>());
    r10_free_.push_back(r10_all_.back().get());
  }
  R10Bio* r = r10_free_.back();
  r10_free_.pop_back();
  return r;
}

void Raid10::FreeR10Bio(R10Bio* r10) { r10_free_.push_back(r10); }

void Raid10::AddMd(sim::Time since, sim::Time spin_since, const Cpu& cpu, uint64_t epoch) {
  if (epoch != epoch_) return;  // the counters were reset meanwhile
  stats_.md += (sim_->Now() - since) - (cpu.TimeIn(CpuTime::kSpin) - spin_since);
}

// The syscall's kernel path, run without preemption: blkdev_write_iter
// (blk_start_plug ... blk_finish_plug around the write) or
// blkdev_read_iter, into __blkdev_direct_IO_async and submit_bio().
sim::Task Raid10::Submit(Cpu& cpu, BlockRequest& rq, bool last) {
  (void)last;  // every bio is completed before the next one is submitted
  cpu.PreemptDisable();
  Plug plug;
  const sim::Time t = costs_.dio_submit.value + (rq.write ? costs_.plug.value : sim::Time::Zero());
  stats_.dio += t;
  co_await cpu.Run(t);
  // submit_bio -> __submit_bio_noacct: md_submit_bio runs with
  // current->bio_list set; what it submits runs after it returns.
  BioList bio_list;
  co_await MdSubmitBio(cpu, rq, rq.write ? &plug : nullptr, bio_list);
  for (int i = 0; i < bio_list.n; ++i) co_await SubmitBioNoacct(cpu, *bio_list.bios[static_cast<size_t>(i)]);
  if (rq.write) co_await BlkFinishPlug(cpu, plug);
  cpu.PreemptEnable();
}

sim::Task Raid10::Poll(Cpu& cpu, BlockRequest& rq) {
  (void)cpu, (void)rq;
  co_return;
}

// blk_finish_plug -> flush_plug_callbacks: each callback is taken off the
// plug and called with from_schedule = false.
sim::Task Raid10::BlkFinishPlug(Cpu& cpu, Plug& plug) {
  if (plug.cb == nullptr) return sim::Task();
  PlugCb* cb = plug.cb;
  plug.cb = nullptr;
  return Unplug(cpu, *cb, /*from_schedule=*/false);
}

// submit_bio_noacct() of a member bio outside md_submit_bio: brd's
// submit_bio, whose bio_endio runs the bio's end_io before returning.
sim::Task Raid10::SubmitBioNoacct(Cpu& cpu, Bio& bio) {
  Brd& brd = *brds_[static_cast<size_t>(bio.dev)];
  stats_.brd += brd.Cost(bio.bytes);
  co_await brd.SubmitBio(cpu, bio.bytes);
  if (bio.write) {
    co_await EndWriteRequest(cpu, bio);
  } else {
    co_await EndReadRequest(cpu, bio);
  }
}

// md_submit_bio -> md_handle_request -> raid10_make_request (md_write_start
// for writes) -> __make_request: an r10bio from conf->r10bio_pool, then the
// read or write path; raid10_make_request ends with wake_up_barrier(conf)
// ("in case raid10d snuck in to freeze_array", since 0c0be98bbe67).
sim::Task Raid10::MdSubmitBio(Cpu& cpu, BlockRequest& rq, Plug* plug, BioList& bio_list) {
  R10Bio& r10 = *AllocR10Bio();
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
  if (!co_await WaitBarrierNolock(cpu)) co_await WaitBarrier(cpu);
  co_await ReadBalance(cpu, r10);
  co_await Md(cpu, costs_.bio_clone.value * 2);
  Bio& b = r10.devs[static_cast<size_t>(r10.read_slot)];
  b = Bio{&r10, r10.read_slot, /*write=*/false, r10.bytes};
  bio_list.bios[static_cast<size_t>(bio_list.n++)] = &b;
}

// wait_barrier(conf, false) begins with wait_barrier_nolock()'s lock-free
// path: read_seqbegin(&conf->resync_lock), READ_ONCE(conf->barrier) and,
// with no barrier raised, atomic_inc(&conf->nr_pending) and
// read_seqretry. Resumes with whether it got through (true: no barrier).
Raid10::NolockAwaiter Raid10::WaitBarrierNolock(Cpu& cpu) {
  sim::Time t = costs_.barrier_check.value + resync_seq_.ReadCost(cpu);
  const bool through = barrier_ == 0;
  if (through) {
    ++nr_pending_count_;
    t += nr_pending_.WriteCost(cpu);
  }
  return NolockAwaiter{Md(cpu, t), through};
}

// The rest of wait_barrier(), when wait_barrier_nolock() did not get
// through: the slow path under conf->resync_lock.
sim::Task Raid10::WaitBarrier(Cpu& cpu) {
  // write_seqlock_irq(&conf->resync_lock): with a barrier raised the task
  // would sleep on conf->wait_barrier here until it drops; nothing in this
  // model raises one (no resync, recovery or freeze_array).
  cpu.LocalIrqSave();
  co_await resync_lock_.Lock(cpu);
  ++nr_pending_count_;
  co_await Md(cpu, resync_seq_.WriteCost(cpu) + nr_pending_.WriteCost(cpu));
  resync_lock_.UnlockIrqRestore(cpu);
}

// allow_barrier()'s atomic_dec_and_test(&conf->nr_pending): resumes with
// whether the count reached zero, when allow_barrier calls
// wake_up_barrier(conf) (or a freeze is pending).
Raid10::DecAndTestAwaiter Raid10::AllowBarrierDec(Cpu& cpu) {
  return DecAndTestAwaiter{Md(cpu, nr_pending_.WriteCost(cpu)), &nr_pending_count_};
}

// wake_up_barrier(conf) is `if (wq_has_sleeper(&conf->wait_barrier))
// wake_up(&conf->wait_barrier);`, written so at each caller. This is its
// wq_has_sleeper -- smp_mb() and the list check, no lock -- resuming with
// whether someone waits; its time is md's.
Raid10::HasSleeperAwaiter Raid10::WqHasSleeper(Cpu& cpu) {
  ++stats_.has_sleeper_checks;
  return HasSleeperAwaiter{this, &cpu, sim_->Now(), cpu.TimeIn(CpuTime::kSpin), epoch_,
                           wait_barrier_.HasSleeper(cpu)};
}

// wake_up(&conf->wait_barrier): __wake_up -> __wake_up_common_lock, which
// takes the queue's spinlock (irqsave) whether or not anyone waits.
sim::Task Raid10::WakeUp(Cpu& cpu) {
  ++stats_.wake_up_locked;
  const sim::Time t0 = sim_->Now(), spin0 = cpu.TimeIn(CpuTime::kSpin);
  const uint64_t epoch = epoch_;
  co_await wait_barrier_.WakeUp(cpu, 1);
  AddMd(t0, spin0, cpu, epoch);
}

// read_balance(), near copies on non-rotational members: for each copy,
// the rdev's nr_pending and (when it has I/O pending) the distance from
// its head_position; the copy with the fewest pending wins (the first on a
// tie), and its rdev->nr_pending is raised.
Cpu::WorkAwaiter Raid10::ReadBalance(Cpu& cpu, R10Bio& r10) {
  sim::Time t = costs_.read_balance.value;
  int best = 0;
  int64_t min_pending = std::numeric_limits<int64_t>::max();
  for (int slot = 0; slot < kCopies; ++slot) {
    const auto s = static_cast<size_t>(slot);
    t += rdev_pending_[s]->ReadCost(cpu);
    const int64_t pending = rdev_pending_count_[s];
    if (min_pending > pending) {
      min_pending = pending;
      best = slot;
    }
    if (pending != 0) t += mirrors_.ReadCost(cpu);  // abs(addr - head_position)
  }
  ++rdev_pending_count_[static_cast<size_t>(best)];
  t += rdev_pending_[static_cast<size_t>(best)]->WriteCost(cpu);
  r10.read_slot = best;
  return Md(cpu, t);
}

// raid10_write_request(): regular_request_wait (wait_barrier),
// raid10_find_phys and wait_blocked_dev, each copy's rdev->nr_pending
// raised, md_account_bio's clone, remaining = 1, raid10_write_one_disk per
// copy, one_write_done.
sim::Task Raid10::WriteRequest(Cpu& cpu, R10Bio& r10, Plug* plug) {
  if (!co_await WaitBarrierNolock(cpu)) co_await WaitBarrier(cpu);
  sim::Time t = costs_.find_phys.value + costs_.bio_clone.value;
  for (int d = 0; d < kCopies; ++d) {
    ++rdev_pending_count_[static_cast<size_t>(d)];
    t += rdev_pending_[static_cast<size_t>(d)]->WriteCost(cpu);
  }
  co_await Md(cpu, t);
  r10.remaining = 1;
  for (int i = 0; i < kCopies; ++i) co_await WriteOneDisk(cpu, r10, i, plug);
  co_await OneWriteDone(cpu, r10);
}

// raid10_write_one_disk(): the member bio cloned, remaining raised, and
// the clone put on the plug callback's list (blk_check_plugged). Every
// write here runs under blkdev_write_iter's plug, so the branch without a
// plug (conf->pending_bio_list under conf->device_lock, for raid10d) is
// not taken. REQUIRES: plug.
Cpu::WorkAwaiter Raid10::WriteOneDisk(Cpu& cpu, R10Bio& r10, int slot, Plug* plug) {
  Bio& b = r10.devs[static_cast<size_t>(slot)];
  b = Bio{&r10, slot, /*write=*/true, r10.bytes};
  ++r10.remaining;
  sim::Time t = costs_.bio_clone.value;
  PlugCb& cb = *BlkCheckPlugged(*plug, &t);
  // The clone joins the callback's list now: the plug is this task's own,
  // no other CPU sees the list.
  cb.pending[static_cast<size_t>(cb.n++)] = &b;
  return Md(cpu, t);
}

// blk_check_plugged(raid10_unplug, mddev, size): md's callback on the
// plug, kzalloc'd by the first call under this plug. Its cost is added to
// `*cost`.
Raid10::PlugCb* Raid10::BlkCheckPlugged(Plug& plug, sim::Time* cost) {
  if (plug.cb != nullptr) return plug.cb;
  if (cb_free_.empty()) {
    cb_all_.push_back(std::make_unique<PlugCb>());
    cb_free_.push_back(cb_all_.back().get());
  }
  plug.cb = cb_free_.back();
  cb_free_.pop_back();
  plug.cb->n = 0;
  ++stats_.plug_cbs;
  *cost += costs_.plug_cb_alloc.value;
  return plug.cb;
}

// raid10_unplug(cb, from_schedule), not from schedule: bio_list_get,
// md_bitmap_unplug (no bitmap), the wake-up of conf->wait_barrier, each
// held-back bio submitted, kfree(plug).
sim::Task Raid10::Unplug(Cpu& cpu, PlugCb& cb, bool from_schedule) {
  (void)from_schedule;  // never true here (see the file comment)
  ++stats_.unplugs;
  const PlugCb pending = cb;
  if (params_.unplug_wake_up_barrier) {
    if (co_await WqHasSleeper(cpu)) co_await WakeUp(cpu);  // wake_up_barrier(conf), a8d5fdd4d270
  } else {
    co_await WakeUp(cpu);
  }
  for (int i = 0; i < pending.n; ++i) co_await SubmitBioNoacct(cpu, *pending.pending[static_cast<size_t>(i)]);
  co_await Md(cpu, costs_.plug_cb_free.value);
  cb_free_.push_back(&cb);
}

// update_head_pos(): conf->mirrors[dev].head_position = addr + sectors.
sim::Time Raid10::UpdateHeadPos(Cpu& cpu, const Bio& bio) {
  head_position_[static_cast<size_t>(bio.dev)] = bio.r10->sector + bio.bytes / 512;
  return mirrors_.WriteCost(cpu);
}

// rdev_dec_pending(): atomic_dec_and_test(&rdev->nr_pending).
sim::Time Raid10::RdevDecPending(Cpu& cpu, int dev) {
  --rdev_pending_count_[static_cast<size_t>(dev)];
  return rdev_pending_[static_cast<size_t>(dev)]->WriteCost(cpu);
}

// raid10_end_read_request(): update_head_pos, raid_end_bio_io,
// rdev_dec_pending.
sim::Task Raid10::EndReadRequest(Cpu& cpu, Bio& bio) {
  const int dev = bio.dev;
  co_await Md(cpu, costs_.end_request.value + UpdateHeadPos(cpu, bio));
  co_await RaidEndBioIo(cpu, *bio.r10);
  co_await Md(cpu, RdevDecPending(cpu, dev));
}

// raid10_end_write_request(): find_bio_disk (update_head_pos),
// one_write_done, rdev_dec_pending.
sim::Task Raid10::EndWriteRequest(Cpu& cpu, Bio& bio) {
  const int dev = bio.dev;
  co_await Md(cpu, costs_.end_request.value + UpdateHeadPos(cpu, bio));
  co_await OneWriteDone(cpu, *bio.r10);
  co_await Md(cpu, RdevDecPending(cpu, dev));
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
  stats_.md += costs_.end_bio_io.value;
  stats_.dio += costs_.dio_complete.value;
  co_await cpu.Run(costs_.end_bio_io.value + costs_.dio_complete.value);
  co_await rq.sink->Complete(rq, cpu);
  // allow_barrier(conf)
  if (co_await AllowBarrierDec(cpu)) {
    if (co_await WqHasSleeper(cpu)) co_await WakeUp(cpu);  // wake_up_barrier(conf)
  }
  FreeR10Bio(&r10);
}

}  // namespace models
