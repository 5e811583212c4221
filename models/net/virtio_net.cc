#include "models/net/virtio_net.h"

#include <utility>

namespace models {
namespace {
// 2 + MAX_SKB_FRAGS: the free descriptors start_xmit() wants left for the
// next skb, below which it stops the queue.
constexpr int kTxStopBelow = 2 + 18;
}  // namespace

VirtioNetGuest::VirtioNetGuest(Scheduler& host_sched, const VirtioNetGuestCosts& costs, VirtioNetRings& rings,
                               TcpSenders* sender, int streams)
    : sched_(&host_sched), costs_(costs), rings_(&rings), streams_(sender), receiver_(streams), vcpu_("vcpu0") {}

void VirtioNetGuest::Start() { sched_->Start(vcpu_, VcpuThread()); }

// The vCPU thread: KVM_RUN's loop with the guest's work inside it.
sim::Task VirtioNetGuest::VcpuThread() {
  Task& t = vcpu_;
  // virtnet_probe(): fill the receive ring; the streams start sending.
  co_await TryFillRecv();
  if (streams_ != nullptr) {
    for (int i = 0; i < streams_->streams(); ++i) co_await TcpPush(i);
  }
  bool from_halt = false;
  for (;;) {
    if (irq_rx_ || irq_tx_) {
      // The interrupt is injected: on entry after a halt, or by the IPI's
      // exit while the vCPU ran guest code.
      co_await t.Run(from_halt ? costs_.irq_inject.value : costs_.irq_exit_inject.value);
      from_halt = false;
      co_await t.RunUser(costs_.irq_handler.value);
      ++stats_.interrupts;
      if (irq_rx_) {
        irq_rx_ = false;
        // skb_recv_done(): napi_schedule_prep(), virtqueue_disable_cb().
        if (!napi_) {
          rings_->rx.DisableCb();
          napi_ = true;
        }
      }
      if (irq_tx_) {
        irq_tx_ = false;
        // skb_xmit_done(): virtqueue_disable_cb(), netif_wake_queue().
        rings_->tx.DisableCb();
        tx_stopped_ = false;
        while (!tx_stopped_ && !qdisc_.empty()) {
          const NetPacket f = qdisc_.front();
          qdisc_.pop_front();
          co_await StartXmit(f);
        }
      }
      continue;
    }
    if (napi_) {
      co_await VirtnetPoll();
      continue;
    }
    if (!timer_pushes_.empty()) {
      const int i = timer_pushes_.front();
      timer_pushes_.pop_front();
      co_await TcpPush(i);
      continue;
    }
    // Nothing to do: HLT, and the vCPU thread sleeps in kvm_vcpu_block().
    ++stats_.halts;
    co_await t.Run(costs_.hlt_exit.value);
    t.SetState(Task::State::kInterruptible);
    halted_ = true;
    if (!irq_rx_ && !irq_tx_ && timer_pushes_.empty()) co_await t.Schedule();
    t.SetState(Task::State::kRunning);
    halted_ = false;
    from_halt = true;
  }
}

void VirtioNetGuest::TimerPush(int i) {
  timer_pushes_.push_back(i);
  if (halted_ && !timer_irq_ && vcpu_.cpu() != nullptr) {
    timer_irq_ = true;
    vcpu_.cpu()->RaiseIrq(TimerIrq());
  }
}

// apic_timer_fn() -> kvm_vcpu_kick(): the halted vCPU thread woken.
sim::Task VirtioNetGuest::TimerIrq() {
  Cpu& cpu = *vcpu_.cpu();
  timer_irq_ = false;
  if (halted_) co_await sched_->TryToWakeUp(vcpu_, cpu);
}

sim::Task VirtioNetGuest::InjectMsi(Cpu& cpu, int vq) {
  (vq == kRxVq ? irq_rx_ : irq_tx_) = true;
  // kvm_vcpu_kick(): a halted vCPU's thread is woken (its wait queue); a
  // running one gets the reschedule IPI, whose exit it pays itself.
  if (halted_) co_await sched_->TryToWakeUp(vcpu_, cpu);
}

// virtnet_poll(), Linux 3.0.
sim::Task VirtioNetGuest::VirtnetPoll() {
  Virtqueue& rx = rings_->rx;
  int received = 0;
  while (received < costs_.napi_budget) {
    std::optional<Virtqueue::UsedBuf> b = rx.GetBuf();
    if (!b) break;
    const NetPacket p = rings_->rx_buf[b->token];
    // receive_mergeable(): the packet's other buffers.
    for (int i = 1; i < p.bufs; ++i) rx.GetBuf();
    ++stats_.rx_packets;
    ++received;
    if (p.ack) {
      co_await vcpu_.RunUser(costs_.rx_per_packet.value);
      if (streams_ == nullptr) continue;
      streams_->OnAck(p);                  // tcp_ack()
      co_await TcpPush(p.stream);          // tcp_data_snd_check()
    } else {
      // tcp_rcv_established(), iperf's recv() copy, and the ACK.
      co_await vcpu_.RunUser(costs_.rx_per_packet.value + costs_.copy_per_kib.value * p.bytes / 1024);
      const NetPacket ack = receiver_.OnData(p);
      if (tx_stopped_ || !qdisc_.empty()) {
        qdisc_.push_back(ack);
      } else {
        co_await StartXmit(ack);
      }
    }
  }
  // if (vi->num < vi->max / 2) try_fill_recv()
  if (rx.num_free() > rx.num() / 2) co_await TryFillRecv();
  if (received < costs_.napi_budget) {
    napi_ = false;  // napi_complete()
    if (!rx.EnableCb()) {
      rx.DisableCb();
      napi_ = true;
    }
  }
}

sim::Task VirtioNetGuest::TcpPush(int stream) {
  for (;;) {
    const std::optional<NetPacket> f = streams_->NextFrame(stream);
    if (!f) break;
    // dev_queue_xmit(): the qdisc holds the skb while the queue is stopped,
    // up to its limit.
    if (tx_stopped_ || !qdisc_.empty()) {
      if (qdisc_limit_ > 0 && static_cast<int>(qdisc_.size()) >= qdisc_limit_) {
        ++stats_.qdisc_drops;
        streams_->OnLocalDrop(*f);
        break;
      }
      qdisc_.push_back(*f);
      continue;
    }
    co_await StartXmit(*f);
  }
}

void VirtioNetGuest::FreeOldXmitSkbs() {
  while (rings_->tx.GetBuf()) {
  }
}

// start_xmit(), Linux 3.0.
sim::Task VirtioNetGuest::StartXmit(const NetPacket& frame) {
  Virtqueue& tx = rings_->tx;
  FreeOldXmitSkbs();
  // xmit_skb(): the header and the data, one indirect descriptor.
  const uint16_t head = tx.free_head();
  const Virtqueue::AddResult r = tx.AddSgs(head, 2, 0);
  if (!r.ok()) {
    qdisc_.push_front(frame);
    tx_stopped_ = true;
    co_return;
  }
  rings_->tx_buf[r.head] = frame;
  ++stats_.tx_frames;
  // An ACK's own work is in the receive path that sends it.
  co_await vcpu_.RunUser((frame.ack ? sim::Time::Zero() : costs_.tx_per_frame.value) + costs_.add_buf.value);
  co_await Kick(kTxVq);
  if (tx.num_free() < kTxStopBelow) {
    tx_stopped_ = true;  // netif_stop_queue()
    if (!tx.EnableCbDelayed()) {
      FreeOldXmitSkbs();
      if (tx.num_free() >= kTxStopBelow) {
        tx_stopped_ = false;  // netif_start_queue()
        tx.DisableCb();
      }
    }
  }
}

// try_fill_recv(): one mergeable receive buffer per free descriptor, then
// virtqueue_kick().
sim::Task VirtioNetGuest::TryFillRecv() {
  Virtqueue& rx = rings_->rx;
  int added = 0;
  while (rx.num_free() > 0) {
    const uint16_t head = rx.free_head();
    if (!rx.AddSgs(head, 0, 1).ok()) break;
    ++added;
  }
  if (added > 0) co_await vcpu_.RunUser(costs_.add_buf.value * added);
  co_await Kick(kRxVq);
}

sim::Task VirtioNetGuest::Kick(int vq) {
  Virtqueue& q = vq == kTxVq ? rings_->tx : rings_->rx;
  if (!q.KickPrepare()) co_return;
  ++stats_.kicks;
  // vp_notify(): iowrite16 to VIRTIO_PCI_QUEUE_NOTIFY, a PIO exit that
  // KVM's ioeventfd handles in the kernel, on the vCPU thread.
  co_await vcpu_.Run(costs_.pio_exit.value);
  if (notify_) co_await notify_(*vcpu_.cpu(), vq);
}

}  // namespace models
