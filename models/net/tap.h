// The host side of the guest's network: the tap device vhost-net reads
// and writes (drivers/net/tun.c, Linux 3.0), and the host NIC's receive
// path that feeds it (ixgbe's interrupt, NAPI poll, the bridge).
//
// Tap: tun_net_xmit() queues a packet on the tap socket's receive queue and
// calls sk_data_ready(), which wakes the socket's wait queue: under the
// queue's spinlock (irqsave), each poll entry's callback runs -- for
// vhost-net, vhost_poll_wakeup() (models/vhost). vhost's handle_rx takes
// the packets off with tun_recvmsg().
//
// HostNic: the NIC spreads received packets (the server's ACKs) over its
// receive queues by flow (RSS; here stream i goes to queue i mod queues),
// each queue with its own MSI-X interrupt bound to one host CPU. A queue
// raises its interrupt no sooner than `itr` after its previous one
// (interrupt moderation, ixgbe's EITR). The handler runs the NAPI poll:
// each packet through netif_receive_skb and the bridge to tun_net_xmit
// (rx_per_packet), up to the budget, and polls again while packets remain;
// then the interrupt is enabled again. So with more streams, more CPUs run
// the tap's wake-ups at the same time.
#ifndef VIOSIM_MODELS_NET_TAP_H_
#define VIOSIM_MODELS_NET_TAP_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "models/cpu/callback.h"
#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "models/net/link.h"
#include "models/sync/spinlock.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

class Tap {
 public:
  Tap(sim::Simulator& sim, SpinlockKind lock_kind, const LockHandoffCosts& handoff);
  Tap(const Tap&) = delete;
  Tap& operator=(const Tap&) = delete;

  // vhost_poll_start() on the tap socket: the wait-queue callback, run
  // under the socket wait queue's lock on the waker's CPU.
  void set_poll_wakeup(std::function<sim::Task(Cpu&)> fn) { poll_wakeup_ = std::move(fn); }

  // tun_net_xmit() and sk_data_ready(), by code running on `cpu`.
  sim::Task NetXmit(Cpu& cpu, const NetPacket& pkt);

  // tun_recvmsg() / peek_head_len(): the socket's receive queue.
  bool Empty() const { return rx_.empty(); }
  const NetPacket& Peek() const { return rx_.front(); }
  NetPacket Recv() {
    NetPacket p = rx_.front();
    rx_.pop_front();
    return p;
  }

  const Spinlock& wq_lock() const { return wq_lock_; }
  Spinlock& wq_lock() { return wq_lock_; }
  void ResetStats() { wq_lock_.ResetStats(); }

 private:
  Spinlock wq_lock_;
  std::deque<NetPacket> rx_;
  std::function<sim::Task(Cpu&)> poll_wakeup_;
};

struct HostNicCosts {
  Param<sim::Time> itr;            // least time between two interrupts
  Param<sim::Time> irq_entry;      // hard interrupt entry, handler and exit
  Param<sim::Time> rx_per_packet;  // ring clean, netif_receive_skb, bridge, tun_net_xmit
  int napi_budget = 64;
};

class HostNic {
 public:
  // One receive queue per CPU of `irq_cpus`, in order.
  HostNic(sim::Simulator& sim, const std::vector<Cpu*>& irq_cpus, const HostNicCosts& costs, Tap& tap);
  HostNic(const HostNic&) = delete;
  HostNic& operator=(const HostNic&) = delete;

  // A packet off the wire into its flow's receive ring.
  void Receive(const NetPacket& p);

  uint64_t interrupts() const;
  uint64_t packets() const;
  void ResetStats();

 private:
  class RxQueue {
   public:
    RxQueue(sim::Simulator& sim, Cpu& cpu, const HostNicCosts& costs, Tap& tap);
    void Receive(const NetPacket& p);
    uint64_t interrupts = 0;
    uint64_t packets = 0;

   private:
    void Arm();
    void OnInterrupt();
    sim::Task IrqHandler();
    sim::Simulator* sim_;
    Cpu* cpu_;
    const HostNicCosts* costs_;
    Tap* tap_;
    std::deque<NetPacket> ring_;
    bool armed_ = false;    // an interrupt is scheduled
    bool in_poll_ = false;  // the handler runs (the interrupt is masked)
    sim::Time last_irq_ = sim::Time::Zero();
    Callback irq_cb_;
  };
  HostNicCosts costs_;
  std::vector<std::unique_ptr<RxQueue>> queues_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_NET_TAP_H_
