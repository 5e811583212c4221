// vhost-net's handlers (drivers/vhost/net.c, Linux 3.0) on a VhostDev, and
// the eventfds around them (fs/eventfd.c).
//
//   handle_tx(): vhost_disable_notify(); for each descriptor chain
//     (vhost_get_vq_desc, avail_event left stale): sendmsg() to the tap --
//     tun_get_user() copies the frame out of guest memory into an skb and
//     netif_rx_ni() runs the bridge and the NIC's xmit in the worker's
//     context -- then vhost_add_used_and_signal(); after VHOST_NET_WEIGHT
//     bytes it requeues itself (vhost_poll_queue) and returns. An empty
//     ring: vhost_enable_notify() (avail_event = avail->idx, a barrier,
//     and a re-check that loops on a race).
//   handle_rx(): the same shape over the tap's receive queue
//     (peek_head_len; get_rx_bufs: as many mergeable buffers as the packet
//     needs, given back with vhost_discard_vq_desc() when the ring has too
//     few; tun_recvmsg() into them; vhost_add_used_and_signal_n()).
//   vhost_add_used_and_signal(): the used ring entry, then vhost_signal():
//     with EVENT_IDX notify only when used_event was crossed
//     (Virtqueue::ShouldNotify), then eventfd_signal() on the call eventfd,
//     whose wait queue runs irqfd_wakeup() -> kvm_set_msi() under its lock.
//
// Three work items: the TX kick, the RX kick (each from its kick eventfd's
// vhost_poll_wakeup) and the tap socket's data-ready (vhost_poll_wakeup on
// the socket's wait queue).
#ifndef VIOSIM_MODELS_VHOST_VHOST_NET_H_
#define VIOSIM_MODELS_VHOST_VHOST_NET_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "models/net/link.h"
#include "models/net/tap.h"
#include "models/net/virtio_net.h"
#include "models/sync/spinlock.h"
#include "models/vhost/vhost.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

// struct eventfd_ctx: eventfd_signal() takes the wait queue's lock
// (irqsave), adds to the count and runs the poll callbacks under it.
class EventFd {
 public:
  EventFd(sim::Simulator& sim, std::string name, SpinlockKind kind, const LockHandoffCosts& handoff,
          sim::Time signal_cost)
      : wqh_lock_(sim, std::move(name), kind, handoff), signal_cost_(signal_cost) {}
  void set_wakeup(std::function<sim::Task(Cpu&)> fn) { wakeup_ = std::move(fn); }
  // eventfd_signal(ctx, 1) by code running on `cpu`.
  sim::Task Signal(Cpu& cpu) {
    co_await wqh_lock_.LockIrqSave(cpu);
    co_await cpu.Run(signal_cost_);
    ++count_;
    if (wakeup_) co_await wakeup_(cpu);
    wqh_lock_.UnlockIrqRestore(cpu);
  }
  const Spinlock& lock() const { return wqh_lock_; }
  Spinlock& lock() { return wqh_lock_; }
  void ResetStats() { wqh_lock_.ResetStats(); }

 private:
  Spinlock wqh_lock_;
  sim::Time signal_cost_;
  uint64_t count_ = 0;
  std::function<sim::Task(Cpu&)> wakeup_;
};

struct VhostNetCosts {
  Param<sim::Time> get_vq_desc;    // vhost_get_vq_desc(): head, chain, translation
  Param<sim::Time> tx_per_frame;   // sendmsg: skb, netif_rx_ni, bridge, NIC xmit
  Param<sim::Time> tx_copy_per_kib;  // tun_get_user()'s copy from guest memory, per KiB
  Param<sim::Time> rx_per_packet;  // peek_head_len, get_rx_bufs, tun_recvmsg
  Param<sim::Time> rx_copy_per_kib;  // tun_recvmsg()'s copy of a data frame into guest buffers
  int rx_buf_len = 4096;             // one mergeable receive buffer (a page in 3.0)
  Param<sim::Time> add_used;       // vhost_add_used(): used ring write, barrier
  Param<sim::Time> enable_notify;  // vhost_enable_notify(): write, smp_mb, re-read
  Param<sim::Time> irq_inject;     // irqfd_wakeup -> kvm_set_msi -> kvm_vcpu_kick
  int64_t weight = 0x80000;        // VHOST_NET_WEIGHT
};

struct VhostNetStats {
  uint64_t tx_frames = 0;
  uint64_t rx_packets = 0;
  uint64_t signals = 0;  // eventfd_signal() on a call eventfd
  // The worker's time in each handler (charged work plus its spinning
  // inside), in picoseconds of simulated time.
  sim::Time in_handle_tx;
  sim::Time in_handle_rx;
  void Reset() { *this = VhostNetStats(); }
};

class VhostNet {
 public:
  // `xmit`: the frame leaves through the NIC (Link::Transmit).
  // `call`: the call eventfd of each virtqueue (index kRxVq / kTxVq).
  VhostNet(sim::Simulator& sim, VhostDev& dev, const VhostNetCosts& costs, VirtioNetRings& rings, Tap& tap,
           std::function<void(const NetPacket&)> xmit, EventFd* call_rx, EventFd* call_tx);
  VhostNet(const VhostNet&) = delete;
  VhostNet& operator=(const VhostNet&) = delete;

  // vhost_poll_wakeup() of each poll entry: queues its work.
  sim::Task TxKickWakeup(Cpu& cpu) { return dev_->WorkQueue(cpu, tx_kick_); }
  sim::Task RxKickWakeup(Cpu& cpu) { return dev_->WorkQueue(cpu, rx_kick_); }
  sim::Task RxNetWakeup(Cpu& cpu) { return dev_->WorkQueue(cpu, rx_net_); }

  const VhostNetStats& stats() const { return stats_; }
  void ResetStats() { stats_.Reset(); }

 private:
  sim::Task HandleTx(Task& worker);
  sim::Task HandleRx(Task& worker);
  // vhost_add_used_and_signal_n(): the used entries of one packet, then
  // the signal test once.
  sim::Task AddUsedAndSignal(Task& worker, Virtqueue& vq, const VirtQueueElement* heads, int n, int vq_index);

  sim::Simulator* sim_;
  VhostDev* dev_;
  VhostNetCosts costs_;
  VirtioNetRings* rings_;
  Tap* tap_;
  std::function<void(const NetPacket&)> xmit_;
  EventFd* call_[2];
  VhostWork tx_kick_;
  VhostWork rx_kick_;
  VhostWork rx_net_;
  std::vector<VirtQueueElement> heads_;  // get_rx_bufs()'s vq->heads
  VhostNetStats stats_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_VHOST_VHOST_NET_H_
