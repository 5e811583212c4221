#include "models/md/md_array.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "models/md/md_layout.h"

namespace models {

MdArray::MdArray(sim::Simulator& sim, const MdCosts& costs, const BrdCosts& brd, const StructLayout& conf,
                 const LineCosts& lines, const LockHandoffCosts& wait_lock)
    : sim_(&sim),
      costs_(costs),
      conf_lines_(sim, "conf", conf, lines),
      wait_barrier_(sim, "&conf->wait_barrier", wait_lock, lines.handoff, costs.has_sleeper.value),
      resync_lock_(sim, "&conf->resync_lock", SpinlockKind::kQueued, lines.handoff),
      device_lock_(sim, "&conf->device_lock", SpinlockKind::kQueued, lines.handoff) {
  wait_barrier_.set_head(&conf_lines_.Line("wait_barrier.head"), costs.wake_up_walk.value);
  conf_lines_.Line("wait_barrier.lock");
  wait_barrier_.set_home_socket(lines.home_socket);
  resync_lock_.set_home_socket(lines.home_socket);
  device_lock_.set_home_socket(lines.home_socket);
  for (int i = 0; i < kMembers; ++i) {
    const auto u = static_cast<size_t>(i);
    brds_[u] = std::make_unique<Brd>(absl::StrCat("ram", i), brd);
    rdev_lines_[u] = std::make_unique<StructLines>(sim, absl::StrCat("rdev", i), md_layout::kMdRdev, lines);
    rdev_pending_[u] = &rdev_lines_[u]->Line("nr_pending");
  }
}

MdArray::~MdArray() = default;

void MdArray::ResetStats() {
  stats_ = Stats();
  ++epoch_;
  wait_barrier_.ResetStats();
  resync_lock_.ResetStats();
  device_lock_.ResetStats();
  for (CacheLine* l : conf_lines_.lines()) l->ResetStats();
  for (auto& r : rdev_lines_) {
    for (CacheLine* l : r->lines()) l->ResetStats();
  }
  for (auto& b : brds_) b->ResetStats();
}

void MdArray::AddMd(sim::Time since, sim::Time spin_since, const Cpu& cpu, uint64_t epoch) {
  if (epoch != epoch_) return;  // the counters were reset meanwhile
  stats_.md += (sim_->Now() - since) - (cpu.TimeIn(CpuTime::kSpin) - spin_since);
}

// The syscall's kernel path, run without preemption: blkdev_write_iter
// (blk_start_plug ... blk_finish_plug around the write) or
// blkdev_read_iter, into __blkdev_direct_IO_async and submit_bio().
sim::Task MdArray::Submit(Cpu& cpu, BlockRequest& rq, bool last) {
  (void)last;  // every bio is completed before the next one is submitted
  return DirectIo(cpu, rq, /*from_schedule=*/false);
}

sim::Task MdArray::DirectIo(Cpu& cpu, BlockRequest& rq, bool from_schedule) {
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
  if (rq.write && from_schedule && plug.cb != nullptr) {
    PlugCb* cb = plug.cb;
    plug.cb = nullptr;
    co_await Unplug(cpu, *cb, /*from_schedule=*/true);
  }
  if (rq.write) co_await BlkFinishPlug(cpu, plug);
  cpu.PreemptEnable();
}

sim::Task MdArray::Poll(Cpu& cpu, BlockRequest& rq) {
  (void)cpu, (void)rq;
  co_return;
}

sim::Task MdArray::BlkFinishPlug(Cpu& cpu, Plug& plug) {
  if (plug.cb == nullptr) return sim::Task();
  PlugCb* cb = plug.cb;
  plug.cb = nullptr;
  return Unplug(cpu, *cb, /*from_schedule=*/false);
}

sim::Task MdArray::SubmitBioNoacct(Cpu& cpu, Bio& bio) {
  Brd& brd = *brds_[static_cast<size_t>(bio.dev)];
  stats_.brd += brd.Cost(bio.bytes);
  co_await brd.SubmitBio(cpu, bio.bytes);
  if (bio.write) {
    co_await EndWriteRequest(cpu, bio);
  } else {
    co_await EndReadRequest(cpu, bio);
  }
}

MdArray::PlugCb* MdArray::BlkCheckPlugged(Plug& plug, sim::Time* cost) {
  if (plug.cb != nullptr) return plug.cb;
  plug.cb = cbs_.Alloc();
  plug.cb->n = 0;
  ++stats_.plug_cbs;
  *cost += costs_.plug_cb_alloc.value;
  return plug.cb;
}

MdArray::HasSleeperAwaiter MdArray::WqHasSleeper(Cpu& cpu) {
  ++stats_.has_sleeper_checks;
  return HasSleeperAwaiter{this, &cpu, sim_->Now(), cpu.TimeIn(CpuTime::kSpin), epoch_,
                           wait_barrier_.HasSleeper(cpu)};
}

sim::Task MdArray::WakeUp(Cpu& cpu) {
  ++stats_.wake_up_locked;
  const sim::Time t0 = sim_->Now(), spin0 = cpu.TimeIn(CpuTime::kSpin);
  const uint64_t epoch = epoch_;
  co_await wait_barrier_.WakeUp(cpu, 1);
  AddMd(t0, spin0, cpu, epoch);
}

}  // namespace models
