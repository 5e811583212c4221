#include "models/vhost/vhost_net.h"

#include <utility>

namespace models {
namespace {
// What handle_rx adds to total_len per ACK: the tap's virtio-net header
// (12 bytes with mergeable buffers) and the 66-byte frame.
constexpr int64_t kAckSockLen = 12 + 66;
}  // namespace

VhostNet::VhostNet(sim::Simulator& sim, VhostDev& dev, const VhostNetCosts& costs, VirtioNetRings& rings, Tap& tap,
                   std::function<void(const NetPacket&)> xmit, EventFd* call_rx, EventFd* call_tx)
    : sim_(&sim), dev_(&dev), costs_(costs), rings_(&rings), tap_(&tap), xmit_(std::move(xmit)), call_{call_rx, call_tx} {
  tx_kick_.name = "handle_tx_kick";
  tx_kick_.fn = [this](Task& w) { return HandleTx(w); };
  rx_kick_.name = "handle_rx_kick";
  rx_kick_.fn = [this](Task& w) { return HandleRx(w); };
  rx_net_.name = "handle_rx_net";
  rx_net_.fn = [this](Task& w) { return HandleRx(w); };
}

// vhost_add_used_and_signal_n(), Linux 3.0.
sim::Task VhostNet::AddUsedAndSignal(Task& worker, Virtqueue& vq, const VirtQueueElement* heads, int n,
                                     int vq_index) {
  for (int i = 0; i < n; ++i) vq.Fill(heads[i], 0, static_cast<uint16_t>(i));
  vq.Flush(static_cast<uint16_t>(n));
  co_await worker.Run(costs_.add_used.value * n);
  if (vq.ShouldNotify()) {  // vhost_notify()
    ++stats_.signals;
    co_await worker.Run(costs_.irq_inject.value);
    co_await call_[vq_index]->Signal(*worker.cpu());
  }
}

// handle_tx(), Linux 3.0.
sim::Task VhostNet::HandleTx(Task& worker) {
  const sim::Time from = sim_->Now();
  Virtqueue& vq = rings_->tx;
  vq.SetNotification(false);  // vhost_disable_notify()
  int64_t total_len = 0;
  for (;;) {
    std::optional<VirtQueueElement> e = vq.GetVqDesc();
    co_await worker.Run(costs_.get_vq_desc.value);
    if (!e) {
      vq.SetNotification(true);  // vhost_enable_notify()
      co_await worker.Run(costs_.enable_notify.value);
      if (!vq.Empty()) {
        vq.SetNotification(false);
        continue;
      }
      break;
    }
    const NetPacket frame = rings_->tx_buf[e->index];
    // sock->ops->sendmsg(): tun_get_user() and netif_rx_ni() onwards.
    // An ACK's 66 bytes are in tx_per_frame; a data frame is copied.
    const int64_t copied = frame.ack ? 0 : frame.bytes;
    co_await worker.Run(costs_.tx_per_frame.value + costs_.tx_copy_per_kib.value * copied / 1024);
    xmit_(frame);
    ++stats_.tx_frames;
    co_await AddUsedAndSignal(worker, vq, &*e, 1, kTxVq);
    total_len += frame.ack ? kAckSockLen : frame.bytes;
    if (total_len >= costs_.weight) {
      co_await dev_->WorkQueue(*worker.cpu(), tx_kick_);  // vhost_poll_queue(&vq->poll)
      break;
    }
  }
  stats_.in_handle_tx += sim_->Now() - from;
}

// handle_rx(), Linux 3.0, with mergeable receive buffers.
sim::Task VhostNet::HandleRx(Task& worker) {
  const sim::Time from = sim_->Now();
  Virtqueue& vq = rings_->rx;
  vq.SetNotification(false);
  int64_t total_len = 0;
  while (!tap_->Empty()) {
    // peek_head_len(): the packet's length with the virtio-net header.
    NetPacket p = tap_->Peek();
    const int64_t sock_len = p.ack ? kAckSockLen : kAckSockLen + p.bytes;
    // get_rx_bufs(): descriptors until the packet fits.
    const int need = static_cast<int>((sock_len + costs_.rx_buf_len - 1) / costs_.rx_buf_len);
    heads_.clear();
    while (static_cast<int>(heads_.size()) < need) {
      std::optional<VirtQueueElement> e = vq.GetVqDesc();
      co_await worker.Run(costs_.get_vq_desc.value);
      if (!e) break;
      heads_.push_back(*e);
    }
    if (static_cast<int>(heads_.size()) < need) {
      vq.DiscardVqDesc(static_cast<int>(heads_.size()));
      // "OK, now we need to know about added descriptors."
      vq.SetNotification(true);
      co_await worker.Run(costs_.enable_notify.value);
      if (vq.num_heads_available() >= need) {
        vq.SetNotification(false);
        continue;
      }
      break;
    }
    tap_->Recv();  // tun_recvmsg()
    const int64_t copied = p.ack ? 0 : p.bytes;  // an ACK's copy is in rx_per_packet
    co_await worker.Run(costs_.rx_per_packet.value + costs_.rx_copy_per_kib.value * copied / 1024);
    p.bufs = need;
    for (const VirtQueueElement& h : heads_) rings_->rx_buf[h.index] = p;
    ++stats_.rx_packets;
    co_await AddUsedAndSignal(worker, vq, heads_.data(), need, kRxVq);
    total_len += sock_len;
    if (total_len >= costs_.weight) {
      co_await dev_->WorkQueue(*worker.cpu(), rx_kick_);
      break;
    }
  }
  stats_.in_handle_rx += sim_->Now() - from;
}

}  // namespace models
