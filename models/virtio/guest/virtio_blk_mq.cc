// drivers/block/virtio_blk.c of Linux 5.13 with the May 2021 io_poll patch,
// over a virtio transport: the multiqueue guest driver (virtio_blk_mq.h).
#include "models/virtio/guest/virtio_blk_mq.h"

#include <optional>
#include <utility>

#include "sim/check.h"

namespace models {
namespace {

int64_t ExtraPages(uint32_t bytes) { return bytes > 4096 ? (static_cast<int64_t>(bytes) - 1) / 4096 : 0; }

}  // namespace

VirtioBlkMq::VirtioBlkMq(sim::Simulator& sim, std::vector<Cpu*> vcpus, std::vector<SharedVq*> vqs,
                         VirtioTransport& transport, const VirtioBlkMqCosts& costs)
    : sim_(&sim), vcpus_(std::move(vcpus)), transport_(&transport), costs_(costs) {
  VIOSIM_CHECK(!vcpus_.empty(), "a guest has vCPUs");
  VIOSIM_CHECK(vqs.size() == vcpus_.size(), "one virtqueue per vCPU");
  for (size_t i = 0; i < vqs.size(); ++i) {
    vqs_.push_back(std::make_unique<Vq>(sim, *vqs[i], costs_.lock_handoff.value));
    const int q = static_cast<int>(i);
    transport_->SetInterrupt(q, *vcpus_[i], [this, q](Cpu& cpu) { return VringInterrupt(cpu, q); });
  }
}

// blk_mq_submit_bio() -> virtio_queue_rq() (the patch's version), on the
// submitting vCPU with its own vq.
sim::Task VirtioBlkMq::Submit(Cpu& cpu, BlockRequest& rq, bool last) {
  (void)last;
  rq.done = false;
  Req* r = NewReq();
  *r = Req{&rq, VirtioBlkMqReq{}};
  r->d.write = rq.write;
  r->d.bytes = rq.bytes;
  r->d.t_submit = sim_->Now();
  ++stats_.submitted;
  co_await cpu.Run(costs_.submit.value + costs_.per_page.value * ExtraPages(rq.bytes));
  const int q = QueueOf(cpu);
  Vq& v = *vqs_[static_cast<size_t>(q)];
  Virtqueue& vq = v.ring->vq;
  cpu.LocalIrqSave();  // spin_lock_irqsave(&vblk->vqs[qid].lock, flags)
  co_await v.lock.Lock(cpu);
  co_await cpu.Run(costs_.add_sgs.value);
  if (!rq.polled && v.num_hipri == 0 && v.num_lopri == 0 && !v.cb_enabled) {
    SetCallbacks(v, true);  // an idle vq with callbacks off: a low-priority request turns them on
    vq.EnableCb();
    ++stats_.cb_enables;
  }
  const Virtqueue::AddResult a = vq.AddSgs(reinterpret_cast<uint64_t>(r), rq.write ? 2 : 1, rq.write ? 1 : 2);
  VIOSIM_CHECK(a.ok(), "the request fits the ring (one request per vCPU at a time, sync engine, 256 entries)");
  v.ring->by_head[a.head] = &r->d;
  if (rq.polled) {
    if (v.num_hipri++ == 0 && v.cb_enabled) {
      vq.DisableCb();
      SetCallbacks(v, false);
      ++stats_.cb_disables;
    }
  } else {
    ++v.num_lopri;
  }
  co_await cpu.Run(costs_.kick_prepare.value);
  const bool notify = vq.KickPrepare() || a.notify;
  v.lock.UnlockIrqRestore(cpu);
  r->d.t_kick = sim_->Now();
  if (notify) {
    ++stats_.kicks;
    co_await transport_->Notify(cpu, q);
  } else {
    v.ring->AvailWithoutNotify();  // the IOThread finds it while polling
  }
  r->d.t_kicked = sim_->Now();
}

// The vq's interrupt, once the transport brought it in: vp_vring_interrupt
// (the vector names the vq; the transport acknowledges nothing) ->
// vring_interrupt() -> virtblk_done().
sim::Task VirtioBlkMq::VringInterrupt(Cpu& cpu, int q) {
  ++stats_.interrupts;
  co_await cpu.Run(costs_.irq_entry.value);
  bool vring = false;
  co_await transport_->Acknowledge(cpu, &vring);
  if (!vring) co_return;
  Vq& v = *vqs_[static_cast<size_t>(q)];
  if (!v.ring->vq.MoreUsed()) {
    ++stats_.spurious_interrupts;  // a poller reaped it first
    co_return;
  }
  cpu.LocalIrqSave();
  co_await v.lock.Lock(cpu);
  co_await Reap(cpu, v, /*polled=*/false);
  v.lock.UnlockIrqRestore(cpu);
}

// virtblk_complete_requests(), shared by the interrupt and the poll path.
// REQUIRES: v.lock held by `cpu`.
sim::Task VirtioBlkMq::Reap(Cpu& cpu, Vq& v, bool polled) {
  Virtqueue& vq = v.ring->vq;
  bool again = false;
  do {
    if (v.cb_enabled) vq.DisableCb();
    while (std::optional<Virtqueue::UsedBuf> b = vq.GetBuf()) {
      co_await cpu.Run(costs_.complete.value);
      Req* r = reinterpret_cast<Req*>(b->token);
      BlockRequest& rq = *r->rq;
      if (rq.polled) {
        --v.num_hipri;
      } else {
        --v.num_lopri;
      }
      if (polled) {
        ++stats_.polled_completions;
      } else {
        ++stats_.irq_completions;
      }
      const VirtioBlkMqReq& d = r->d;
      const sim::Time now = sim_->Now();
      stats_.last_completion = now;
      stats_.guest_submit_ns += (d.t_kick - d.t_submit).ToSeconds() * 1e9;
      stats_.kick_ns += (d.t_kicked - d.t_kick).ToSeconds() * 1e9;
      stats_.host_ns += (d.t_dev_start - d.t_kicked).ToSeconds() * 1e9;
      stats_.device_ns += (d.t_dev_end - d.t_dev_start).ToSeconds() * 1e9;
      stats_.host_complete_ns += (d.t_pushed - d.t_dev_end).ToSeconds() * 1e9;
      stats_.guest_complete_ns += (now - d.t_pushed).ToSeconds() * 1e9;
      rq.device_start = d.t_dev_start;
      rq.device_end = d.t_dev_end;
      free_reqs_.push_back(r);
      rq.done = true;
      co_await rq.sink->Complete(rq, cpu);
    }
    if (!v.cb_enabled && v.num_hipri == 0) {
      SetCallbacks(v, true);  // the last HIPRI request is done: interrupts back on
      ++stats_.cb_enables;
    }
    again = v.cb_enabled && !vq.EnableCb();
  } while (again);
}

// blk_poll() -> virtblk_poll(): spin until the used index moves (a
// lock-free peek), then reap under the vq lock.
sim::Task VirtioBlkMq::Poll(Cpu& cpu, BlockRequest& rq) {
  Vq& v = *vqs_[static_cast<size_t>(QueueOf(cpu))];
  while (!rq.done) {
    if (!v.ring->vq.MoreUsed()) {
      co_await cpu.SpinUntil(v.ring->used.Wait(), CpuTime::kPoll);
      continue;
    }
    co_await cpu.Run(costs_.poll_detect.value);
    cpu.LocalIrqSave();
    co_await v.lock.Lock(cpu);
    co_await Reap(cpu, v, /*polled=*/true);
    v.lock.UnlockIrqRestore(cpu);
  }
}

// The per-request bookkeeping, recycled; the driver owns every one, so
// requests still in flight when a run ends are freed with it.
VirtioBlkMq::Req* VirtioBlkMq::NewReq() {
  if (free_reqs_.empty()) {
    reqs_.push_back(std::make_unique<Req>());
    return reqs_.back().get();
  }
  Req* r = free_reqs_.back();
  free_reqs_.pop_back();
  return r;
}

void VirtioBlkMq::ResetStats() {
  stats_.Reset();
  stats_.since = stats_.last_completion = sim_->Now();
  for (auto& v : vqs_) {
    v->ring->vq.ResetStats();
    v->lock.ResetStats();
  }
  for (Cpu* c : vcpus_) c->ResetStats();
}

}  // namespace models
