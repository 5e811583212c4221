#include "models/virtio/guest/virtio_blk.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <utility>

#include "sim/check.h"

namespace models {

VirtioBlk::VirtioBlk(sim::Simulator& sim, std::vector<Cpu*> vcpus, Virtqueue& vq, VirtioTransport& transport,
                     const VirtioBlkGuestCosts& costs, const VirtioBlkParams& params)
    : sim_(&sim),
      vcpus_(std::move(vcpus)),
      vq_(&vq),
      transport_(&transport),
      costs_(costs),
      params_(params),
      vq_lock_(sim, "vq_lock", costs.lock_handoff.value),
      spin_generation_(vcpus_.size(), 0),
      rqs_(static_cast<size_t>(params.queue_depth), nullptr) {
  VIOSIM_CHECK(!vcpus_.empty() && params_.irq_cpu >= 0 && params_.irq_cpu < static_cast<int>(vcpus_.size()),
               "the interrupt's vCPU is one of the guest's (the scenario checks keep it so)");
  for (int t = params_.queue_depth; t-- > 0;) free_tags_.push_back(t);
  transport_->SetInterrupt(*vcpus_[static_cast<size_t>(params_.irq_cpu)],
                           [this](Cpu& cpu) { return VmInterrupt(cpu); });
}

// virtqueue_notify(): the write to the queue's notify register, an exit.
sim::Task VirtioBlk::Notify(Cpu& cpu) {
  ++stats_.kicks;
  co_await transport_->Notify(cpu);
}

// virtio_queue_rq() from out_hdr on (Linux 3.15, with or without e8edca6f).
sim::Task VirtioBlk::QueueRq(Cpu& cpu, BlockRequest& rq, int tag, bool last) {
  co_await cpu.Run(costs_.map_sg.value);  // out_hdr, blk_rq_map_sg
  cpu.LocalIrqSave();                     // spin_lock_irqsave(&vblk->vq_lock, flags)
  co_await LockVq(cpu);
  co_await cpu.Run(costs_.add_sgs.value);
  // A read: out_hdr (device-readable), then data and status (writable).
  const Virtqueue::AddResult r = vq_->AddSgs(static_cast<uint64_t>(tag), rq.write ? 2 : 1, rq.write ? 1 : 2);
  VIOSIM_CHECK(r.ok(), "the request fits the ring (the scenario check keeps queue_depth within it)");
  bool notify = r.notify;
  if (last) {
    ++stats_.kick_checks;
    co_await cpu.Run(costs_.kick_prepare.value);
    notify = vq_->KickPrepare() || notify;
  }
  if (notify && !params_.kick_outside_lock) {
    ++stats_.kicks_under_lock;
    co_await Notify(cpu);  // virtqueue_kick(): the exit with vq_lock held, interrupts off
    notify = false;
  }
  vq_lock_.UnlockIrqRestore(cpu);
  // After e8edca6f: virtqueue_notify() with the lock released.
  if (notify) co_await Notify(cpu);
}

sim::Task VirtioBlk::LockVq(Cpu& cpu) {
  if (spin_traps_ == nullptr || !vq_lock_.locked()) {
    co_await vq_lock_.Lock(cpu);
    co_return;
  }
  const auto it = std::find(vcpus_.begin(), vcpus_.end(), &cpu);
  VIOSIM_CHECK(it != vcpus_.end(), "vq_lock is taken by one of the guest's vCPUs");
  uint64_t& generation = spin_generation_[static_cast<size_t>(it - vcpus_.begin())];
  sim_->Spawn(spin_traps_->WhileSpinning(&generation, ++generation));
  co_await vq_lock_.Lock(cpu);
  ++generation;
}

// Before sleeping for a tag: the plug flush ends the batch, so requests
// added without a kick are kicked.
sim::Task VirtioBlk::FlushKick(Cpu& cpu) {
  cpu.LocalIrqSave();
  co_await LockVq(cpu);
  ++stats_.kick_checks;
  co_await cpu.Run(costs_.kick_prepare.value);
  const bool need = vq_->KickPrepare();
  if (need && !params_.kick_outside_lock) co_await Notify(cpu);
  vq_lock_.UnlockIrqRestore(cpu);
  if (need && params_.kick_outside_lock) co_await Notify(cpu);
}

// blk_mq_make_request() -> blk_mq_get_request() (a tag, sleeping for one
// when none is free) -> virtio_queue_rq().
sim::Task VirtioBlk::Submit(Cpu& cpu, BlockRequest& rq, bool last) {
  rq.done = false;
  Task& current = *cpu.current();
  co_await cpu.Run(costs_.submit.value);
  while (free_tags_.empty()) {
    ++stats_.tag_waits;
    if (vq_->num_added() > 0) co_await FlushKick(*current.cpu());
    // percpu_ida_alloc(): prepare_to_wait, recheck, schedule().
    current.SetState(Task::State::kUninterruptible);
    if (!free_tags_.empty()) break;
    tag_waiters_.push_back(&current);
    co_await current.Schedule();
  }
  current.SetState(Task::State::kRunning);
  Cpu& on = *current.cpu();
  const int tag = free_tags_.back();
  free_tags_.pop_back();
  rqs_[static_cast<size_t>(tag)] = &rq;
  ++stats_.submitted;
  rq.device_start = sim_->Now();
  co_await QueueRq(on, rq, tag, last);
}

sim::Task VirtioBlk::Poll(Cpu& cpu, BlockRequest& rq) {
  // virtio_blk of 3.15 has no poll queues: wait for the interrupt path.
  (void)cpu;
  while (!rq.done) co_await sim_->Delay(sim::Time::Micros(1));
}

// The guest's interrupt, once the transport brought it in: vm_interrupt()
// (drivers/virtio/virtio_mmio.c, 3.15) or the MSI-X vector's handler, its
// acknowledgement the transport's, then vring_interrupt().
sim::Task VirtioBlk::VmInterrupt(Cpu& cpu) {
  ++stats_.interrupts;
  co_await cpu.Run(costs_.irq_entry.value);
  bool vring = false;
  co_await transport_->Acknowledge(cpu, &vring);
  if (!vring || !vq_->MoreUsed()) co_return;
  co_await VirtblkDone(cpu);
}

// virtblk_done() (drivers/block/virtio_blk.c, 3.15): under vq_lock,
// get_buf and blk_mq_end_io for every used entry, again while enable_cb
// finds more. Ending a request completes the caller's I/O (its wake-up
// runs here, under the lock) and frees its tag (waking a submitter that
// sleeps for one, also under the lock).
sim::Task VirtioBlk::VirtblkDone(Cpu& cpu) {
  cpu.LocalIrqSave();
  co_await LockVq(cpu);
  do {
    vq_->DisableCb();
    while (std::optional<Virtqueue::UsedBuf> b = vq_->GetBuf()) {
      co_await cpu.Run(costs_.complete.value);
      const int tag = static_cast<int>(b->token);
      BlockRequest* rq = rqs_[static_cast<size_t>(tag)];
      rqs_[static_cast<size_t>(tag)] = nullptr;
      rq->device_end = sim_->Now();
      rq->done = true;
      ++stats_.completed;
      co_await rq->sink->Complete(*rq, cpu);
      free_tags_.push_back(tag);
      if (!tag_waiters_.empty()) {
        Task* waiter = tag_waiters_.front();
        tag_waiters_.pop_front();
        co_await cpu.scheduler()->TryToWakeUp(*waiter, cpu);
      }
    }
  } while (!vq_->EnableCb());
  vq_lock_.UnlockIrqRestore(cpu);
}

void VirtioBlk::ResetStats() {
  stats_.Reset();
  vq_lock_.ResetStats();
  vq_->ResetStats();
  for (Cpu* c : vcpus_) c->ResetStats();
}

}  // namespace models
