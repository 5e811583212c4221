#include "models/md/raid1.h"

#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "models/md/raid1_layout.h"

namespace models {

// struct r1bio: md's common part and raid1's.
struct Raid1::R1Bio : RBio {
  int sectors = 0;
  int read_disk = -1;
  int idx = 0;  // sector_to_idx(sector), as allow_barrier recomputes it
};

int Raid1::SectorToIdx(uint64_t sector) {
  // include/linux/hash.h: hash_64_generic(val, bits) = val *
  // GOLDEN_RATIO_64 >> (64 - bits); x86_64 has no arch hash.
  constexpr uint64_t kGoldenRatio64 = 0x61C8864680B583EBull;
  return static_cast<int>(((sector >> kBarrierUnitSectorBits) * kGoldenRatio64) >> (64 - kBucketBits));
}

Raid1::Raid1(sim::Simulator& sim, const Raid1Costs& costs, const BrdCosts& brd, const Raid1Params& params,
             const LineCosts& lines, const LockHandoffCosts& wait_lock)
    : MdArray(sim, costs, brd, raid1_layout::kR1conf, lines, wait_lock),
      write_disks_(costs.write_disks.value),
      params_(params),
      line_costs_(lines),
      mirrors_lines_(sim, "mirrors", raid1_layout::kMirrors, lines),
      conf_wait_line_(conf_lines_.Line("nr_pending")),
      conf_frozen_line_(conf_lines_.Line("array_frozen")),
      mirrors_(mirrors_lines_.Line("mirrors[0].rdev")),
      replacements_(mirrors_lines_.Line("mirrors[2].rdev")) {
  conf_lines_.Line("barrier");
  for (int i = 0; i < kMirrors * 2; ++i) {
    for (const char* f : {"rdev", "head_position", "next_seq_sect", "seq_start"}) {
      if (i < kMirrors || f == std::string_view("rdev")) mirrors_lines_.Line(absl::StrCat("mirrors[", i, "].", f));
    }
  }
}

Raid1::~Raid1() = default;

CacheLine& Raid1::BucketLine(LineArray& a, const char* array, int idx) {
  std::unique_ptr<CacheLine>& l = a[static_cast<size_t>(idx / kBucketsPerLine)];
  if (l == nullptr) {
    const int first = idx / kBucketsPerLine * kBucketsPerLine;
    l = std::make_unique<CacheLine>(*sim_, absl::StrCat(array, "[", first, "..", first + kBucketsPerLine - 1, "]"),
                                    line_costs_);
  }
  return *l;
}

std::vector<const CacheLine*> Raid1::Touched(const LineArray& a) {
  std::vector<const CacheLine*> out;
  for (const auto& l : a) {
    if (l != nullptr) out.push_back(l.get());
  }
  return out;
}

void Raid1::ResetStats() {
  MdArray::ResetStats();
  for (CacheLine* l : mirrors_lines_.lines()) l->ResetStats();
  for (LineArray* a : {&nr_pending_, &barrier_}) {
    for (auto& l : *a) {
      if (l != nullptr) l->ResetStats();
    }
  }
}

// md_submit_bio -> md_handle_request -> raid1_make_request, with the
// r1bio's allocation (alloc_r1bio, mempool_alloc) charged here.
sim::Task Raid1::MdSubmitBio(Cpu& cpu, BlockRequest& rq, Plug* plug, BioList& bio_list) {
  R1Bio& r1 = *r1s_.Alloc();
  r1.master = &rq;
  r1.sector = rq.offset / 512;
  r1.sectors = static_cast<int>(rq.bytes / 512);
  r1.remaining = 0;
  r1.read_disk = -1;
  r1.idx = SectorToIdx(r1.sector);
  co_await Md(cpu, costs_.make_request.value);
  co_await MakeRequest(cpu, r1, plug, bio_list);
}

// call_bio_endio + raid_end_bio_io(): bio_end_io_acct and bio_endio of the
// master (the aio completion), free_r1bio, then allow_barrier(conf,
// sector) -- after the free, as 6.4 orders it.
sim::Task Raid1::RaidEndBioIo(Cpu& cpu, R1Bio& r1) {
  BlockRequest& rq = *r1.master;
  const int idx = r1.idx;
  co_await EndBioIo(cpu);
  co_await rq.sink->Complete(rq, cpu);
  r1s_.Free(&r1);
  co_await AllowBarrier(cpu, idx);
}

// update_head_pos(): conf->mirrors[disk].head_position = sector + sectors.
Raid1::MdAccess Raid1::UpdateHeadPos(Cpu& cpu, int disk, R1Bio& r1) {
  mirror_info_[static_cast<size_t>(disk)].head_position = r1.sector + static_cast<uint64_t>(r1.sectors);
  return Md(mirrors_.Write(cpu));
}

// raid1_end_read_request(): update_head_pos(r1_bio->read_disk), then (the
// read succeeded) raid_end_bio_io, then rdev_dec_pending.
sim::Task Raid1::EndReadRequest(Cpu& cpu, Bio& bio) {
  R1Bio& r1 = static_cast<R1Bio&>(*bio.r);
  const int disk = bio.dev;
  co_await Md(cpu, costs_.end_request.value);
  co_await UpdateHeadPos(cpu, disk, r1);
  co_await RaidEndBioIo(cpu, r1);
  co_await RdevDecPending(cpu, disk);
}

// r1_bio_write_done(): the last reference ends the master: close_write
// (md_write_end; no bitmap) and raid_end_bio_io.
sim::Task Raid1::R1BioWriteDone(Cpu& cpu, R1Bio& r1) {
  if (--r1.remaining != 0) return sim::Task();
  return RaidEndBioIo(cpu, r1);
}

// raid1_end_write_request(): find_bio_disk (its loop and
// update_head_pos), the bio's slot cleared, rdev_dec_pending, then
// r1_bio_write_done.
sim::Task Raid1::EndWriteRequest(Cpu& cpu, Bio& bio) {
  R1Bio& r1 = static_cast<R1Bio&>(*bio.r);
  const int disk = bio.dev;
  co_await Md(cpu, costs_.end_request.value);
  co_await UpdateHeadPos(cpu, disk, r1);
  co_await RdevDecPending(cpu, disk);
  co_await R1BioWriteDone(cpu, r1);
}

// read_balance() with no resync (choose_first = 0), every member In_sync,
// non-rotational (brd sets QUEUE_FLAG_NONROT) and without bad blocks: for
// each of the raid_disks * 2 slots, rcu_dereference(mirrors[disk].rdev)
// (the replacement slots are empty: continue); for a member,
// atomic_read(&rdev->nr_pending) and head_position; next_seq_sect ==
// sector or dist == 0 picks that disk at once (sequential); otherwise the
// member with the fewest pending wins (the first on a tie; has_nonrot_disk
// makes best_pending_disk the choice). The chosen rdev's nr_pending +1;
// seq_start (when next_seq_sect != sector) and next_seq_sect written.
sim::Task Raid1::ReadBalance(Cpu& cpu, R1Bio& r1) {
  co_await Md(cpu, costs_.read_balance.value);
  const uint64_t sector = r1.sector;
  int best_disk = -1;
  int best_pending_disk = -1;
  int64_t min_pending = std::numeric_limits<int64_t>::max();
  for (int disk = 0; disk < kMirrors * 2; ++disk) {
    if (disk >= kMirrors) {
      co_await Md(replacements_.Read(cpu));  // mirrors[disk].rdev == NULL
      continue;
    }
    const auto d = static_cast<size_t>(disk);
    co_await Md(mirrors_.Read(cpu));  // mirrors[disk].rdev
    co_await Md(rdev_pending_[d]->Read(cpu));  // atomic_read(&rdev->nr_pending)
    const int64_t pending = rdev_pending_count_[d];
    co_await Md(mirrors_.Read(cpu));  // mirrors[disk].head_position
    const MirrorInfo& m = mirror_info_[d];
    const uint64_t dist = sector > m.head_position ? sector - m.head_position : m.head_position - sector;
    co_await Md(mirrors_.Read(cpu));  // mirrors[disk].next_seq_sect
    if (m.next_seq_sect == sector || dist == 0) {
      best_disk = disk;
      break;  // opt_iosize is 0 on brd: no choose_next_idle
    }
    if (min_pending > pending) {
      min_pending = pending;
      best_pending_disk = disk;
    }
  }
  if (best_disk == -1) best_disk = best_pending_disk;
  const auto b = static_cast<size_t>(best_disk);
  co_await Md(mirrors_.Read(cpu));  // rcu_dereference(mirrors[best_disk].rdev)
  ++rdev_pending_count_[b];
  co_await Md(rdev_pending_[b]->AtomicRmw(cpu));  // atomic_inc(&rdev->nr_pending)
  MirrorInfo& m = mirror_info_[b];
  if (m.next_seq_sect != sector) {
    m.seq_start = sector;
    co_await Md(mirrors_.Write(cpu));
  }
  m.next_seq_sect = sector + static_cast<uint64_t>(r1.sectors);
  co_await Md(mirrors_.Write(cpu));
  r1.read_disk = best_disk;
}

// flush_bio_list(): md_bitmap_unplug (no bitmap: returns),
// wake_up(&conf->wait_barrier), then each pending bio submitted
// (submit_bio_noacct; cond_resched is no switch point here).
sim::Task Raid1::FlushBioList(Cpu& cpu, PlugCb& cb) {
  const PlugCb pending = cb;
  co_await WakeUpBarrier(cpu);
  for (int i = 0; i < pending.n; ++i) co_await SubmitBioNoacct(cpu, *pending.pending[static_cast<size_t>(i)]);
}

// The part of _wait_barrier / wait_read_barrier under conf->resync_lock,
// when the fast path found a barrier raised or the array frozen: the I/O
// is counted in nr_waiting[idx] instead of nr_pending[idx], the queue
// woken (for freeze_array), and -- once the barrier drops, which nothing
// here raises -- counted in nr_pending[idx] again.
sim::Task Raid1::WaitBarrierSlow(Cpu& cpu, int idx, bool read) {
  (void)read;
  ++stats_.barrier_slow_paths;
  cpu.LocalIrqSave();
  co_await resync_lock_.Lock(cpu);
  --nr_pending_count_[static_cast<size_t>(idx)];
  co_await Md(BucketLine(nr_pending_, "nr_pending", idx).AtomicRmw(cpu));
  co_await WakeUpBarrier(cpu);
  ++nr_pending_count_[static_cast<size_t>(idx)];
  co_await Md(BucketLine(nr_pending_, "nr_pending", idx).AtomicRmw(cpu));
  resync_lock_.UnlockIrqRestore(cpu);
}

// _wait_barrier(conf, idx, nowait=false), its lock-free fast path: the
// conf->nr_pending pointer, atomic_inc(&conf->nr_pending[idx]),
// smp_mb__after_atomic, READ_ONCE(conf->array_frozen) and
// atomic_read(&conf->barrier[idx]) (the barrier pointer is on
// array_frozen's line); with neither set it returns.
sim::Task Raid1::WaitBarrier(Cpu& cpu, int idx) {
  co_await Md(conf_wait_line_.Read(cpu));  // conf->nr_pending
  ++nr_pending_count_[static_cast<size_t>(idx)];
  co_await Md(BucketLine(nr_pending_, "nr_pending", idx).AtomicRmw(cpu));
  co_await Md(cpu, costs_.barrier_check.value);  // smp_mb__after_atomic and the tests
  co_await Md(conf_frozen_line_.Read(cpu));      // conf->array_frozen
  co_await Md(conf_frozen_line_.Read(cpu));      // conf->barrier
  co_await Md(BucketLine(barrier_, "barrier", idx).Read(cpu));
  if (array_frozen_ == 0 && barrier_count_[static_cast<size_t>(idx)] == 0) co_return;
  co_await WaitBarrierSlow(cpu, idx, /*read=*/false);
}

// wait_read_barrier(): atomic_inc(&conf->nr_pending[idx]) and
// READ_ONCE(conf->array_frozen) -- no memory barrier, no barrier[idx].
sim::Task Raid1::WaitReadBarrier(Cpu& cpu, int idx) {
  co_await Md(conf_wait_line_.Read(cpu));  // conf->nr_pending
  ++nr_pending_count_[static_cast<size_t>(idx)];
  co_await Md(BucketLine(nr_pending_, "nr_pending", idx).AtomicRmw(cpu));
  co_await Md(conf_frozen_line_.Read(cpu));  // conf->array_frozen
  if (array_frozen_ == 0) co_return;
  co_await WaitBarrierSlow(cpu, idx, /*read=*/true);
}

// _allow_barrier(): atomic_dec(&conf->nr_pending[idx]) and
// wake_up(&conf->wait_barrier), unconditionally at v6.4.
sim::Task Raid1::AllowBarrier(Cpu& cpu, int idx) {
  co_await Md(conf_wait_line_.Read(cpu));  // conf->nr_pending
  --nr_pending_count_[static_cast<size_t>(idx)];
  co_await Md(BucketLine(nr_pending_, "nr_pending", idx).AtomicRmw(cpu));
  if (!params_.wake_up_barrier) ++stats_.allow_barrier_wake_ups;
  co_await WakeUpBarrier(cpu);
}

// raid1_unplug(cb, from_schedule): not from schedule (and current->bio_list
// unset: blk_finish_plug runs after submit_bio returned), so the write-out
// is direct: bio_list_get, flush_bio_list, kfree(plug).
sim::Task Raid1::Unplug(Cpu& cpu, PlugCb& cb, bool from_schedule) {
  (void)from_schedule;  // never true here (see the file comment)
  ++stats_.unplugs;
  co_await FlushBioList(cpu, cb);
  co_await Md(cpu, costs_.plug_cb_free.value);
  FreePlugCb(cb);
}

// raid1_read_request(): wait_read_barrier, read_balance, the member bio
// cloned (md's accounting and bio_alloc_clone) and submit_bio_noacct'd --
// queued on current->bio_list until md_submit_bio returns.
sim::Task Raid1::ReadRequest(Cpu& cpu, R1Bio& r1, BioList& bio_list) {
  co_await WaitReadBarrier(cpu, r1.idx);
  co_await ReadBalance(cpu, r1);
  co_await Md(mirrors_.Read(cpu));  // mirror = conf->mirrors + rdisk; mirror->rdev
  co_await Md(cpu, costs_.bio_clone.value);
  Bio& b = r1.bios[static_cast<size_t>(r1.read_disk)];
  b = Bio{&r1, r1.read_disk, /*write=*/false, r1.master->bytes};
  bio_list.bios[static_cast<size_t>(bio_list.n++)] = &b;
}

// raid1_write_request(): wait_barrier; the first loop over the slots
// (each mirrors[i].rdev; for a member, atomic_inc(&rdev->nr_pending));
// remaining = 1; the second loop (mirrors[i].rdev again; a clone,
// remaining +1, blk_check_plugged and the clone on the plug's list);
// r1_bio_write_done; wake_up(&conf->wait_barrier). Every write here runs
// under blkdev_write_iter's plug: the branch onto conf->pending_bio_list
// under conf->device_lock is not taken. REQUIRES: plug.
sim::Task Raid1::WriteRequest(Cpu& cpu, R1Bio& r1, Plug* plug) {
  co_await WaitBarrier(cpu, r1.idx);
  co_await Md(cpu, write_disks_);
  for (int i = 0; i < kMirrors * 2; ++i) {
    if (i >= kMirrors) {
      co_await Md(replacements_.Read(cpu));
      continue;
    }
    co_await Md(mirrors_.Read(cpu));
    ++rdev_pending_count_[static_cast<size_t>(i)];
    co_await Md(rdev_pending_[static_cast<size_t>(i)]->AtomicRmw(cpu));
  }
  r1.remaining = 1;
  for (int i = 0; i < kMirrors * 2; ++i) {
    if (i >= kMirrors) {
      co_await Md(replacements_.Read(cpu));
      continue;
    }
    co_await Md(mirrors_.Read(cpu));
    Bio& b = r1.bios[static_cast<size_t>(i)];
    b = Bio{&r1, i, /*write=*/true, r1.master->bytes};
    ++r1.remaining;
    sim::Time t = costs_.bio_clone.value;
    PlugCb& cb = *BlkCheckPlugged(*plug, &t);
    cb.pending[static_cast<size_t>(cb.n++)] = &b;
    co_await Md(cpu, t);
  }
  co_await R1BioWriteDone(cpu, r1);
  co_await WakeUpBarrier(cpu);  // "In case raid1d snuck in to freeze_array"
}

// raid1_make_request(): the read or the write path (md_write_start's
// percpu work is in make_request's cost).
sim::Task Raid1::MakeRequest(Cpu& cpu, R1Bio& r1, Plug* plug, BioList& bio_list) {
  if (r1.master->write) {
    ++stats_.writes;
    co_await WriteRequest(cpu, r1, plug);
  } else {
    ++stats_.reads;
    co_await ReadRequest(cpu, r1, bio_list);
  }
}

// wake_up(&conf->wait_barrier): __wake_up_common_lock takes the queue's
// spinlock (irqsave) whether or not anyone waits. With wake_up_barrier,
// wq_has_sleeper first (smp_mb and the list head, no lock).
sim::Task Raid1::WakeUpBarrier(Cpu& cpu) {
  bool wake = true;
  if (params_.wake_up_barrier) wake = co_await WqHasSleeper(cpu);
  if (wake) co_await WakeUp(cpu);
}

// rdev_dec_pending(): atomic_dec_and_test(&rdev->nr_pending).
Raid1::MdAccess Raid1::RdevDecPending(Cpu& cpu, int disk) {
  --rdev_pending_count_[static_cast<size_t>(disk)];
  return Md(rdev_pending_[static_cast<size_t>(disk)]->AtomicRmw(cpu));
}

}  // namespace models
