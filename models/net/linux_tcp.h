// Linux 3.0's TCP sender, one per iperf stream (net/ipv4/tcp_output.c,
// tcp_input.c, tcp_cong.c and tcp_cubic.c of 3.0), as far as it sets how
// many skbs of what size a bulk stream hands to its device, and when.
//
// Per stream:
//   - The socket always has data (iperf writes 128 KiB in a loop into an
//     autotuned send buffer): a write queue of skbs of size_goal bytes
//     (tcp_xmit_size_goal(): (gso_max - 1 - headers) rounded down to whole
//     MSS), the head split where tcp_write_xmit() cuts it.
//   - tcp_write_xmit(): a congestion-window quota (cwnd - packets in flight,
//     in segments), the peer's window (its first segment must fit), then
//     tcp_tso_should_defer() for a multi-segment skb in the Open state: send
//     now when a full gso_max skb fits, when the whole head skb fits (it is
//     not the queue's tail), when the room is at least min(snd_wnd, cwnd x
//     mss) / tso_win_divisor, or when the last deferral is two jiffies old;
//     else wait for the next ACK. tcp_mss_split_point() cuts the skb to the
//     quota. No deferral outside Open.
//   - tcp_ack(): SACK tagging (the ACK's first block), the cumulative ACK
//     freeing skbs, CUBIC's pkts_acked (its ACK-ratio average and HyStart's
//     ACK-train and delay tests, with the 3.0 constants), then congestion
//     avoidance when cwnd-limited (tcp_is_cwnd_limited() with its TSO
//     headroom rule): slow start grows cwnd by one per ACK (tcp_abc = 0),
//     above ssthresh bictcp_update()'s cubic and TCP-friendly targets.
//   - tcp_fastretrans_alert(), FACK on: Disorder while anything is SACKed
//     (no TSO deferral there), cwnd moderated to in flight + 3; Recovery
//     when SACKed data lies more than `reordering` (3) segments beyond
//     snd_una, from Open, Disorder or CWR; tcp_mark_head_lost() marks the
//     first fackets_out - reordering segments (at least one, up to
//     high_seq, the straddling skb split) lost; ssthresh from CUBIC (cwnd x
//     717/1024, with fast convergence); rate halving (tcp_cwnd_down(): one
//     segment per two ACKs down to ssthresh, never above in flight + 1);
//     lost skbs sent again one MSS each (tcp_retransmit_skb() fragments to
//     the MSS), a retransmission itself lost once SACKs pass the snd_nxt it
//     went out under (tcp_mark_lost_retrans()); out of Recovery when
//     snd_una reaches high_seq, cwnd at most ssthresh.
//   - A local qdisc drop (NET_XMIT_DROP): the skb stays unsent and the
//     stream enters CWR (tcp_enter_cwr()), reduced the same way, left when
//     snd_una passes high_seq; with nothing in flight the probe timer
//     (tcp_check_probe_timer(), one RTO) tries again.
//   - The retransmission timer (srtt + max(4 rttvar, 200 ms), doubled per
//     back-off), checked each jiffy: Loss, cwnd 1, every un-SACKed skb
//     lost, CUBIC reset, slow start again, cwnd moderated on each ACK.
//
// Not modeled: delayed ACKs at the receiver (it acknowledges every skb),
// Nagle and push_one (the head skb is never the tail), undo (DSACK, F-RTO,
// Eifel), the route's cached ssthresh from an earlier connection, receive
// window autotuning (the peer's window is its cap from the start), TCP's
// memory pressure.
#ifndef VIOSIM_MODELS_NET_LINUX_TCP_H_
#define VIOSIM_MODELS_NET_LINUX_TCP_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "models/cpu/callback.h"
#include "models/net/packet.h"
#include "models/net/tcp.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace models {

struct LinuxTcpParams {
  int streams = 1;
  int mss = 1448;
  int64_t gso_max = 65536;       // sk_gso_max_size
  int64_t size_goal = 65160;     // a write-queue skb's payload
  int tso_win_divisor = 3;
  int64_t peer_window = 3 << 20;  // the receiver's advertised window, bytes
  int hz = 250;                   // CONFIG_HZ: jiffies
  int initial_cwnd = 10;          // TCP_INIT_CWND
  bool hystart = true;
  sim::Time rto_min = sim::Time::Millis(200);
};

class LinuxTcp final : public TcpSenders {
 public:
  // `push(i)`: stream i may send (after its retransmission timer fired).
  LinuxTcp(sim::Simulator& sim, const LinuxTcpParams& p, std::function<void(int)> push);
  LinuxTcp(const LinuxTcp&) = delete;
  LinuxTcp& operator=(const LinuxTcp&) = delete;

  void set_push(std::function<void(int)> push) { push_ = std::move(push); }
  // Starts the retransmission timers' jiffy tick.
  void Start();

  int streams() const override { return static_cast<int>(flows_.size()); }
  std::optional<NetPacket> NextFrame(int i) override;
  void OnAck(const NetPacket& ack) override;
  void OnLocalDrop(const NetPacket& frame) override;
  double MeanCwndSegments() const override;

  // For tests and reports: stream i's state.
  enum class CaState { kOpen, kDisorder, kCwr, kRecovery, kLoss };
  int cwnd(int i) const { return flow(i).cwnd; }
  int ssthresh(int i) const { return flow(i).ssthresh; }
  CaState ca_state(int i) const { return flow(i).state; }
  int in_flight(int i) const { return InFlight(flow(i)); }
  sim::Time srtt(int i) const { return flow(i).srtt; }
  // Mean smoothed RTT over the streams that have one.
  sim::Time MeanSrtt() const;

 private:
  struct Skb {
    int64_t seq;
    int64_t len;
    int segs;
    sim::Time sent;
    bool sacked = false;
    bool lost = false;
    bool retrans = false;  // sent again and not yet acknowledged or SACKed
    bool ever_retrans = false;
    int64_t ack_seq = 0;  // snd_nxt when last sent again (tcp_mark_lost_retrans())
    int64_t end() const { return seq + len; }
  };
  // struct bictcp, 3.0.
  struct Cubic {
    uint32_t cnt = 0, last_max_cwnd = 0, loss_cwnd = 0, last_cwnd = 0;
    int64_t last_time = 0;
    uint32_t origin = 0, k = 0;
    uint32_t delay_min = 0;  // ms << 3
    int64_t epoch_start = 0;
    uint32_t ack_cnt = 0, tcp_cwnd = 0;
    uint32_t delayed_ack = 2 << 4;
    int sample_cnt = 0;
    int found = 0;
    int64_t round_start = 0, last_ack = 0;  // ms
    int64_t end_seq = 0;
    uint32_t curr_rtt = 0;
  };
  struct Flow {
    int64_t snd_una = 0, snd_nxt = 0;
    int64_t head_len = 0;             // the send head's bytes (a write-queue skb's rest)
    std::deque<int64_t> returned;     // skbs a local drop put back, in order
    std::deque<Skb> rtx;              // sent, not cumulatively acknowledged
    int cwnd = 10, ssthresh = 0x7fffffff, cwnd_cnt = 0;
    int packets_out = 0, sacked_out = 0, lost_out = 0, retrans_out = 0;
    int fackets_out = 0;              // segments up to the highest SACKed
    int64_t high_sacked = 0;          // end of the highest SACKed skb
    CaState state = CaState::kOpen;
    int64_t high_seq = 0;
    int64_t tso_deferred = -1;        // jiffy of the last deferral
    sim::Time srtt, rttvar;
    int backoff = 0;
    sim::Time rto_at;                 // zero: not armed
    bool probe = false;               // rto_at is the zero-window/probe timer (nothing in flight)
    Cubic ca;
  };

  const Flow& flow(int i) const { return flows_[static_cast<size_t>(i)]; }
  static int InFlight(const Flow& f) { return f.packets_out - (f.sacked_out + f.lost_out) + f.retrans_out; }
  int Segs(int64_t bytes) const { return static_cast<int>((bytes + p_.mss - 1) / p_.mss); }
  int64_t Jiffies() const;
  int64_t ClockMs() const;
  sim::Time Rto(const Flow& f) const;
  std::optional<NetPacket> Retransmit(int i, Flow& f);
  bool ShouldDefer(Flow& f, int64_t skb_len, int64_t send_win);
  void MarkLostFack(Flow& f);
  void MarkLostRetrans(Flow& f);
  // tcp_try_to_open(): Open or Disorder, cwnd moderated.
  void TryToOpen(Flow& f, bool progress);
  void Moderate(Flow& f) { f.cwnd = std::min(f.cwnd, InFlight(f) + 3); }  // tcp_moderate_cwnd()
  void CwndDown(Flow& f);
  void EnterRecoveryOrCwr(Flow& f, CaState to);
  void CongAvoid(Flow& f, int prior_in_flight);
  bool CwndLimited(const Flow& f, int in_flight) const;
  // tcp_cubic.c
  void CubicAcked(Flow& f, int pkts, int64_t rtt_us);
  void CubicUpdate(Flow& f);
  uint32_t CubicSsthresh(Flow& f);
  void HystartReset(Flow& f);
  void Tick();

  sim::Simulator* sim_;
  LinuxTcpParams p_;
  std::function<void(int)> push_;
  std::vector<Flow> flows_;
  sim::Time jiffy_;
  Callback tick_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_NET_LINUX_TCP_H_
