// The guest's virtio-net driver (drivers/net/virtio_net.c as of Linux 3.0,
// the kernel of a SUSE 11 SP2 guest) and the guest's TCP senders, run by the
// guest's one vCPU thread on a host CPU (models/net).
//
// The vCPU thread is a host task: guest code is its user time (guest mode)
// on the host CPU it runs on; its exits are its kernel time. So the vCPU
// thread competes with the vhost worker and the host's softirqs for host
// CPUs under the host's scheduler, and its exits -- the kick's PIO
// ioeventfd write -- run the host's eventfd and vhost code in its own
// context (`notify`, wired by the stack).
//
//   start_xmit(): free_old_xmit_skbs() (virtqueue_get_buf on the TX vq),
//     xmit_skb() (one indirect descriptor per skb), virtqueue_kick(): the
//     3.0 driver kicks after every skb (no xmit_more yet), and
//     virtqueue_kick_prepare()'s EVENT_IDX test suppresses the kick while
//     vhost has not published a new avail_event. A full ring stops the
//     queue with virtqueue_enable_cb_delayed(); the TX interrupt wakes it.
//   skb_recv_done(): the RX interrupt: virtqueue_disable_cb(), NAPI.
//   virtnet_poll(): receive up to the budget (a packet's mergeable buffers
//     together; an ACK goes to the stream's TCP, which may send again: ACK
//     clocking; a data packet, when the guest receives, is copied to iperf
//     and acknowledged at once, one ACK per GRO'd packet), refill the ring
//     and kick when it was below half, napi_complete() and
//     virtqueue_enable_cb(), polling again if buffers slipped in.
//   Idle: HLT; the vCPU thread sleeps in kvm_vcpu_block() until an
//     interrupt is injected (InjectMsi, irqfd's kvm_set_msi and
//     kvm_vcpu_kick: a wake-up of the halted vCPU thread, or an IPI that
//     makes the running vCPU exit to take it).
#ifndef VIOSIM_MODELS_NET_VIRTIO_NET_H_
#define VIOSIM_MODELS_NET_VIRTIO_NET_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "models/net/link.h"
#include "models/net/tcp.h"
#include "models/virtio/virtqueue.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

// The two virtqueues and what their buffers hold (guest memory, indexed by
// the descriptor head the buffer went out under).
struct VirtioNetRings {
  VirtioNetRings(int num, VirtqueueFeatures f)
      : tx(num, f), rx(num, f), tx_buf(static_cast<size_t>(num)), rx_buf(static_cast<size_t>(num)) {}
  Virtqueue tx;
  Virtqueue rx;
  std::vector<NetPacket> tx_buf;
  std::vector<NetPacket> rx_buf;
};
inline constexpr int kTxVq = 1;  // virtqueue index 0 is RX, 1 is TX
inline constexpr int kRxVq = 0;

struct VirtioNetGuestCosts {
  Param<sim::Time> tx_per_frame;    // tcp_write_xmit() to start_xmit() for one skb
  Param<sim::Time> rx_per_packet;   // receive_buf(), netif_receive_skb(), tcp_ack()
  Param<sim::Time> copy_per_kib;    // a receiving iperf's recv() copy, per KiB
  Param<sim::Time> add_buf;         // virtqueue_add_buf() and kick_prepare
  Param<sim::Time> pio_exit;        // the kick's PIO exit to KVM and back (ioeventfd)
  Param<sim::Time> irq_exit_inject; // a running vCPU's exit for the IPI, injection, re-entry
  Param<sim::Time> irq_inject;      // injection on entry after a halt
  Param<sim::Time> irq_handler;     // the guest's vring_interrupt() and EOI
  Param<sim::Time> hlt_exit;        // HLT exit and kvm_vcpu_block() up to schedule()
  int napi_budget = 64;
};

struct VirtioNetStats {
  uint64_t kicks = 0;          // PIO notify exits
  uint64_t interrupts = 0;     // interrupts the guest took
  uint64_t tx_frames = 0;      // skbs given to the TX vq
  uint64_t rx_packets = 0;     // buffers received
  uint64_t halts = 0;
  uint64_t qdisc_drops = 0;    // skbs the full guest qdisc refused
  void Reset() { *this = VirtioNetStats(); }
};

class VirtioNetGuest {
 public:
  // `sender`: the guest's iperf streams when the guest sends; null when it
  // receives (then it acknowledges each packet, as the server does).
  VirtioNetGuest(Scheduler& host_sched, const VirtioNetGuestCosts& costs, VirtioNetRings& rings,
                 TcpSenders* sender, int streams);
  VirtioNetGuest(const VirtioNetGuest&) = delete;
  VirtioNetGuest& operator=(const VirtioNetGuest&) = delete;

  // vp_notify()'s PIO write as the host handles it, on the vCPU thread's
  // CPU after the exit (ioeventfd -> eventfd_signal), for virtqueue `vq`.
  void set_notify(std::function<sim::Task(Cpu&, int vq)> fn) { notify_ = std::move(fn); }

  // Starts the vCPU thread.
  void Start();

  // The guest qdisc's limit (dev->tx_queue_len, pfifo_fast), skbs; an skb
  // beyond it is dropped (NET_XMIT_DROP) and its TCP enters CWR. 0 (the
  // default): no limit.
  void set_qdisc_limit(int skbs) { qdisc_limit_ = skbs; }

  // Stream `i` may send again (its retransmission or probe timer fired):
  // done at the guest's next pass through its loop. A halted vCPU is woken
  // for it as KVM's LAPIC timer does (its hrtimer's interrupt on the host
  // CPU the vCPU thread last ran on, then kvm_vcpu_kick()); the timer
  // interrupt's own entry and exit are not charged.
  void TimerPush(int i);

  // irqfd's kvm_set_msi() for virtqueue `vq`'s vector, by code on `cpu`.
  sim::Task InjectMsi(Cpu& cpu, int vq);

  Task& vcpu() { return vcpu_; }
  const VirtioNetStats& stats() const { return stats_; }
  void ResetStats() { stats_.Reset(); }

 private:
  sim::Task VcpuThread();
  sim::Task VirtnetPoll();
  sim::Task StartXmit(const NetPacket& frame);
  sim::Task TcpPush(int stream);  // tcp_write_xmit() for one stream
  sim::Task TryFillRecv();
  sim::Task TimerIrq();
  sim::Task Kick(int vq);
  void FreeOldXmitSkbs();

  Scheduler* sched_;
  VirtioNetGuestCosts costs_;
  VirtioNetRings* rings_;
  TcpSenders* streams_;
  TcpReceiver receiver_;  // when the guest receives
  Task vcpu_;
  std::function<sim::Task(Cpu&, int)> notify_;
  bool halted_ = false;
  bool irq_rx_ = false;     // pending RX vector
  bool irq_tx_ = false;     // pending TX vector
  bool napi_ = false;       // NAPI scheduled
  bool tx_stopped_ = false; // netif_stop_queue()
  std::deque<NetPacket> qdisc_;  // skbs waiting for the stopped queue
  int qdisc_limit_ = 0;
  std::deque<int> timer_pushes_;
  bool timer_irq_ = false;  // a timer interrupt is raised to wake the halted vCPU
  VirtioNetStats stats_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_NET_VIRTIO_NET_H_
