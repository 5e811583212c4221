#include "models/net/tap.h"

#include <algorithm>
#include <utility>

namespace models {

Tap::Tap(sim::Simulator& sim, SpinlockKind lock_kind, const LockHandoffCosts& handoff)
    : wq_lock_(sim, "tap_sk_wq_lock", lock_kind, handoff) {}

// tun_net_xmit(): skb_queue_tail(&sk->sk_receive_queue), then
// sk->sk_data_ready() -> wake_up_interruptible_poll(sk_sleep(sk), POLLIN),
// whose __wake_up() takes the wait queue's lock around the callbacks.
sim::Task Tap::NetXmit(Cpu& cpu, const NetPacket& pkt) {
  rx_.push_back(pkt);
  co_await wq_lock_.LockIrqSave(cpu);
  if (poll_wakeup_) co_await poll_wakeup_(cpu);
  wq_lock_.UnlockIrqRestore(cpu);
}

HostNic::HostNic(sim::Simulator& sim, const std::vector<Cpu*>& irq_cpus, const HostNicCosts& costs, Tap& tap)
    : costs_(costs) {
  for (Cpu* c : irq_cpus) queues_.push_back(std::make_unique<RxQueue>(sim, *c, costs_, tap));
}

void HostNic::Receive(const NetPacket& p) {
  queues_[static_cast<size_t>(p.stream) % queues_.size()]->Receive(p);
}

uint64_t HostNic::interrupts() const {
  uint64_t n = 0;
  for (const auto& q : queues_) n += q->interrupts;
  return n;
}

uint64_t HostNic::packets() const {
  uint64_t n = 0;
  for (const auto& q : queues_) n += q->packets;
  return n;
}

void HostNic::ResetStats() {
  for (auto& q : queues_) q->interrupts = q->packets = 0;
}

HostNic::RxQueue::RxQueue(sim::Simulator& sim, Cpu& cpu, const HostNicCosts& costs, Tap& tap)
    : sim_(&sim), cpu_(&cpu), costs_(&costs), tap_(&tap), irq_cb_(Callback::Bind<&RxQueue::OnInterrupt>(this)) {}

void HostNic::RxQueue::Receive(const NetPacket& p) {
  ring_.push_back(p);
  Arm();
}

void HostNic::RxQueue::Arm() {
  if (armed_ || in_poll_ || ring_.empty()) return;
  armed_ = true;
  sim_->ScheduleAt(std::max(sim_->Now(), last_irq_ + costs_->itr.value), irq_cb_.handle());
}

void HostNic::RxQueue::OnInterrupt() {
  armed_ = false;
  in_poll_ = true;
  last_irq_ = sim_->Now();
  ++interrupts;
  cpu_->RaiseIrq(IrqHandler());
}

// ixgbe_msix_clean_rings() and, at its irq exit, the NET_RX softirq's
// ixgbe_poll(): each packet up the stack to the tap; napi_complete() and
// the interrupt enabled again once the ring is empty.
sim::Task HostNic::RxQueue::IrqHandler() {
  Cpu& cpu = *cpu_;
  co_await cpu.Run(costs_->irq_entry.value);
  while (!ring_.empty()) {
    for (int n = 0; n < costs_->napi_budget && !ring_.empty(); ++n) {
      const NetPacket p = ring_.front();
      ring_.pop_front();
      ++packets;
      co_await cpu.Run(costs_->rx_per_packet.value);
      co_await tap_->NetXmit(cpu, p);
    }
  }
  in_poll_ = false;
  Arm();
}

}  // namespace models
