#include "models/virtio/mq/virtio_blk_mq.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "sim/check.h"

namespace models {
namespace {

int64_t ExtraPages(uint32_t bytes) { return bytes > 4096 ? (static_cast<int64_t>(bytes) - 1) / 4096 : 0; }

}  // namespace

VirtioBlkMq::VirtioBlkMq(sim::Simulator& sim, std::vector<Cpu*> vcpus, Kvm& kvm, const VirtioBlkMqCosts& costs,
                         int ring_size, bool event_idx, uint64_t seed)
    : sim_(&sim),
      vcpus_(std::move(vcpus)),
      kvm_(&kvm),
      costs_(costs),
      device_spread_(sim::Distribution::Exponential(costs.latency_exp_mean.value)),
      iothread_work_(sim) {
  VIOSIM_CHECK(!vcpus_.empty(), "a guest has vCPUs");
  VirtqueueFeatures f;
  f.event_idx = event_idx;
  f.indirect_desc = true;
  for (size_t i = 0; i < vcpus_.size(); ++i) {
    vqs_.push_back(std::make_unique<Vq>(sim, ring_size, f, costs_.lock_handoff.value,
                                        sim::Rng::ForStream(seed, "virtio_blk_mq.device.vq" + std::to_string(i))));
    vqs_.back()->by_head.assign(static_cast<size_t>(ring_size), nullptr);
  }
  sim_->Spawn(IoThread());
}

// The in-kernel half of the notify exit: eventfd_signal on the IOThread's
// ioeventfd. Does not suspend.
sim::Task VirtioBlkMq::Ioeventfd() {
  iothread_kicked_ = true;
  iothread_work_.NotifyAll();
  co_return;
}

// blk_mq_submit_bio() -> virtio_queue_rq() (the patch's version), on the
// submitting vCPU with its own vq.
sim::Task VirtioBlkMq::Submit(Cpu& cpu, BlockRequest& rq, bool last) {
  (void)last;
  rq.done = false;
  Req* r = NewReq();
  *r = Req{&rq, sim_->Now(), {}, {}, {}, {}, {}};
  ++stats_.submitted;
  co_await cpu.Run(costs_.submit.value + costs_.per_page.value * ExtraPages(rq.bytes));
  Vq& v = VqOf(cpu);
  cpu.LocalIrqSave();  // spin_lock_irqsave(&vblk->vqs[qid].lock, flags)
  co_await v.lock.Lock(cpu);
  co_await cpu.Run(costs_.add_sgs.value);
  if (!rq.polled && v.num_hipri == 0 && v.num_lopri == 0 && !v.cb_enabled) {
    v.cb_enabled = true;  // an idle vq with callbacks off: a low-priority request turns them on
    v.vq.EnableCb();
    ++stats_.cb_enables;
  }
  const Virtqueue::AddResult a =
      v.vq.AddSgs(reinterpret_cast<uint64_t>(r), rq.write ? 2 : 1, rq.write ? 1 : 2);
  VIOSIM_CHECK(a.ok(), "the request fits the ring (one request per vCPU at a time, sync engine, 256 entries)");
  v.avail.push_back(r);
  if (rq.polled) {
    if (v.num_hipri++ == 0 && v.cb_enabled) {
      v.vq.DisableCb();
      v.cb_enabled = false;
      ++stats_.cb_disables;
    }
  } else {
    ++v.num_lopri;
  }
  co_await cpu.Run(costs_.kick_prepare.value);
  const bool notify = v.vq.KickPrepare() || a.notify;
  v.lock.UnlockIrqRestore(cpu);
  r->t_kick = sim_->Now();
  if (notify) {
    ++stats_.kicks;
    co_await kvm_->MmioExitKernel(cpu, ExitKind::kMmioNotify, Ioeventfd());
  } else {
    iothread_work_.NotifyAll();  // the IOThread finds it while polling
  }
  r->t_kicked = sim_->Now();
}

// adjust_polling_time() (QEMU util/aio-posix.c) with poll-grow and
// poll-shrink at their defaults (0: double, and reset to 0).
void VirtioBlkMq::AdjustPollingTime(sim::Time block) {
  const sim::Time max = costs_.poll_window.value;
  if (block <= iothread_poll_ns_) return;  // the sweet spot
  if (block > max) {
    iothread_poll_ns_ = sim::Time::Zero();  // would poll too long: stop polling
  } else if (iothread_poll_ns_ < max) {
    iothread_poll_ns_ =
        iothread_poll_ns_ > sim::Time::Zero() ? iothread_poll_ns_ * 2 : sim::Time::Micros(4);  // start at 4us
    iothread_poll_ns_ = std::min(iothread_poll_ns_, max);
    ++stats_.iothread_poll_grows;
  }
}

// The IOThread's event loop: completions, then every vq's avail ring, then
// one irqfd per vq that completed something and wants an interrupt.
sim::Task VirtioBlkMq::IoThread() {
  for (;;) {
    bool any_avail = false;
    for (auto& v : vqs_) any_avail = any_avail || !v->avail.empty();
    if (done_.empty() && !any_avail) {
      iothread_kicked_ = false;
      const sim::Time wait_start = sim_->Now();
      co_await iothread_work_.Wait();
      const sim::Time block = sim_->Now() - wait_start;
      // Polled for poll_ns, then blocked in ppoll: the eventfd wakes it.
      if (block > iothread_poll_ns_) {
        ++stats_.iothread_wakeups;
        iothread_busy_.Book(sim_->Now(), sim_->Now() + costs_.iothread_wakeup.value);
        co_await sim_->Delay(costs_.iothread_wakeup.value);
      }
      AdjustPollingTime(block);
      continue;
    }
    while (!done_.empty()) {
      Done d = done_.front();
      done_.pop_front();
      iothread_busy_.Book(sim_->Now(), sim_->Now() + costs_.iothread_complete.value);
      co_await sim_->Delay(costs_.iothread_complete.value);
      Vq& v = *vqs_[static_cast<size_t>(d.q)];
      v.vq.Push(d.elem, d.req->rq->write ? 1 : d.req->rq->bytes + 1);
      d.req->t_pushed = sim_->Now();
      v.needs_notify = true;
      v.used.NotifyAll();
    }
    for (size_t q = 0; q < vqs_.size(); ++q) {
      Vq& v = *vqs_[q];
      while (std::optional<VirtQueueElement> e = v.vq.Pop()) {
        Req* r = v.avail.front();
        v.avail.pop_front();
        const sim::Time c = costs_.iothread_submit.value;
        iothread_busy_.Book(sim_->Now(), sim_->Now() + c);
        co_await sim_->Delay(c);
        sim_->Spawn(DeviceIo(static_cast<int>(q), *e, r));
      }
    }
    // notify_guest_bh: virtio_notify_irqfd per marked vq, honouring the
    // guest's suppression (virtqueue_disable_cb / used_event).
    for (size_t q = 0; q < vqs_.size(); ++q) {
      Vq& v = *vqs_[q];
      if (!v.needs_notify) continue;
      v.needs_notify = false;
      // With EVENT_IDX virtqueue_disable_cb() has no device-visible flag;
      // since 8d622d21d248 (v5.13) it stores used_event = 0, which keeps
      // vring_need_event() false: modeled as no interrupt while off.
      const bool should = v.vq.ShouldNotify();
      if (should && v.cb_enabled && !v.irq_pending) {
        v.irq_pending = true;
        sim_->Spawn(Interrupt(static_cast<int>(q)));
      }
    }
  }
}

sim::Time VirtioBlkMq::DeviceAccess(int q, bool write) {
  const sim::Time mean = write ? costs_.write_latency.value : costs_.read_latency.value;
  return sim::MeanKeptExponential(mean, costs_.latency_exp_mean.value, device_spread_,
                                  vqs_[static_cast<size_t>(q)]->device_rng);
}

sim::Task VirtioBlkMq::DeviceIo(int q, VirtQueueElement e, Req* r) {
  const BlockRequest& rq = *r->rq;
  r->t_dev_start = sim_->Now();
  co_await sim_->Delay(DeviceAccess(q, rq.write));
  const double bw = rq.write ? costs_.write_bandwidth.value : costs_.read_bandwidth.value;
  const sim::Time xfer = sim::Time::FromSecondsDouble(static_cast<double>(rq.bytes) / bw);
  const sim::Time start = std::max(sim_->Now(), link_free_);
  link_free_ = start + xfer;
  link_busy_.Book(start, link_free_);
  co_await sim_->Delay(link_free_ - sim_->Now());
  r->t_dev_end = sim_->Now();
  co_await sim_->Delay(costs_.host_irq.value);
  done_.push_back({q, e, r});
  iothread_work_.NotifyAll();
}

// irqfd -> kvm_set_msi -> posted interrupt on the vq's vCPU.
sim::Task VirtioBlkMq::Interrupt(int q) {
  Cpu& cpu = *vcpus_[static_cast<size_t>(q)];
  co_await sim_->Delay(kvm_->costs().irq_inject.value);
  vqs_[static_cast<size_t>(q)]->irq_pending = false;
  cpu.RaiseIrq(VringInterrupt(cpu, q));
}

// The guest's interrupt: the halted vCPU leaves halt polling and enters the
// guest, which takes the vector: vring_interrupt() -> virtblk_done().
sim::Task VirtioBlkMq::VringInterrupt(Cpu& cpu, int q) {
  co_await kvm_->IrqKick(cpu);
  ++stats_.interrupts;
  co_await cpu.Run(costs_.irq_entry.value);
  Vq& v = *vqs_[static_cast<size_t>(q)];
  if (!v.vq.MoreUsed()) {
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
  bool again = false;
  do {
    if (v.cb_enabled) v.vq.DisableCb();
    while (std::optional<Virtqueue::UsedBuf> b = v.vq.GetBuf()) {
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
      const sim::Time now = sim_->Now();
      stats_.last_completion = now;
      stats_.guest_submit_ns += (r->t_kick - r->t_submit).ToSeconds() * 1e9;
      stats_.kick_ns += (r->t_kicked - r->t_kick).ToSeconds() * 1e9;
      stats_.host_ns += (r->t_dev_start - r->t_kicked).ToSeconds() * 1e9;
      stats_.device_ns += (r->t_dev_end - r->t_dev_start).ToSeconds() * 1e9;
      stats_.host_complete_ns += (r->t_pushed - r->t_dev_end).ToSeconds() * 1e9;
      stats_.guest_complete_ns += (now - r->t_pushed).ToSeconds() * 1e9;
      rq.device_start = r->t_dev_start;
      rq.device_end = r->t_dev_end;
      free_reqs_.push_back(r);
      rq.done = true;
      co_await rq.sink->Complete(rq, cpu);
    }
    if (!v.cb_enabled && v.num_hipri == 0) {
      v.cb_enabled = true;  // the last HIPRI request is done: interrupts back on
      ++stats_.cb_enables;
    }
    again = v.cb_enabled && !v.vq.EnableCb();
  } while (again);
}

// blk_poll() -> virtblk_poll(): spin until the used index moves (a
// lock-free peek), then reap under the vq lock.
sim::Task VirtioBlkMq::Poll(Cpu& cpu, BlockRequest& rq) {
  Vq& v = VqOf(cpu);
  while (!rq.done) {
    if (!v.vq.MoreUsed()) {
      co_await cpu.SpinUntil(v.used.Wait(), CpuTime::kPoll);
      continue;
    }
    co_await cpu.Run(costs_.poll_detect.value);
    cpu.LocalIrqSave();
    co_await v.lock.Lock(cpu);
    co_await Reap(cpu, v, /*polled=*/true);
    v.lock.UnlockIrqRestore(cpu);
  }
}

// The per-request bookkeeping, recycled; the stack owns every one, so
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
  iothread_busy_.Reset(sim_->Now());
  link_busy_.Reset(sim_->Now());
  kvm_->ResetStats();
  for (auto& v : vqs_) {
    v->vq.ResetStats();
    v->lock.ResetStats();
  }
  for (Cpu* c : vcpus_) c->ResetStats();
}

}  // namespace models
