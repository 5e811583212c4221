// iperf's TCP streams (models/net): what sets the rates of frames, ACKs,
// kicks and wake-ups. Two senders share one interface:
//
//   IperfStreams (workload.iperf.tcp = WINDOW_SHARE): no congestion
//     control. Each stream may have `window` bytes unacknowledged. With N
//     loss-based streams sharing one bottleneck, each congestion window
//     settles around its share of what the path holds before it drops
//     (the bandwidth-delay product plus the queues), so the window is
//     min(receive window, path_bytes / N), at least two segments. Frame
//     size: one skb of up to gso_max bytes, whole MSS segments, as soon as
//     the free window allows one of min(gso_max, window / tso_win_divisor)
//     bytes; below that it defers.
//   LinuxTcp (models/net/linux_tcp.h, LINUX_3_0): Linux 3.0's sender per
//     stream, CUBIC, its states and losses.
//
// TcpReceiver: the receiving end's rcv_nxt and out-of-order queue per
// stream, one ACK per arriving skb (its GRO'd packet).
#ifndef VIOSIM_MODELS_NET_TCP_H_
#define VIOSIM_MODELS_NET_TCP_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "models/cpu/param.h"
#include "models/net/packet.h"

namespace models {

struct TcpStats {
  uint64_t frames = 0;        // skbs sent, retransmissions included
  int64_t bytes_sent = 0;
  uint64_t acks = 0;
  int64_t bytes_acked = 0;
  uint64_t retransmits = 0;   // retransmitted skbs (one MSS each)
  uint64_t recoveries = 0;    // entries into Recovery (SACK fast retransmit)
  uint64_t cwr = 0;           // entries into CWR (a local qdisc drop)
  uint64_t timeouts = 0;      // retransmission timeouts (Loss)
  uint64_t deferrals = 0;     // tcp_tso_should_defer() said wait
  double cwnd_sum = 0;        // the stream's cwnd after each ACK, segments
  double rtt_sum_s = 0;       // RTT samples, seconds
  uint64_t rtt_samples = 0;
  void Reset() { *this = TcpStats(); }
};

// N senders, one per iperf stream; data always waits in each socket.
class TcpSenders {
 public:
  virtual ~TcpSenders() = default;
  virtual int streams() const = 0;
  // The next skb stream `i` sends now (its bytes count as in flight from
  // here), or none: it must wait for an ACK (or a timer).
  virtual std::optional<NetPacket> NextFrame(int i) = 0;
  // An ACK for stream `ack.stream` (tcp_ack()).
  virtual void OnAck(const NetPacket& ack) = 0;
  // The local qdisc refused `frame`, the skb NextFrame last gave for its
  // stream (NET_XMIT_DROP): it is not sent.
  virtual void OnLocalDrop(const NetPacket& frame) = 0;
  // Each stream's congestion window, segments (its limit, for WINDOW_SHARE).
  virtual double MeanCwndSegments() const = 0;
  const TcpStats& stats() const { return stats_; }
  void ResetStats() { stats_.Reset(); }

 protected:
  TcpStats stats_;
};

struct TcpParams {
  Param<int> streams;              // iperf -P
  Param<int> mss;                  // bytes of payload per segment
  Param<int64_t> gso_max;          // largest TSO/GSO skb (GSO_MAX_SIZE)
  Param<int> tso_win_divisor;      // sysctl_tcp_tso_win_divisor
  Param<int64_t> receive_window;   // per stream (the server's rwnd)
  Param<int64_t> path_bytes;       // what the path holds, shared by the streams
};

class IperfStreams final : public TcpSenders {
 public:
  explicit IperfStreams(const TcpParams& p);

  int streams() const override { return static_cast<int>(in_flight_.size()); }
  // Each stream's window limit, bytes.
  int64_t window() const { return window_; }
  std::optional<NetPacket> NextFrame(int i) override;
  void OnAck(const NetPacket& ack) override;
  void OnLocalDrop(const NetPacket& frame) override;
  double MeanCwndSegments() const override {
    return static_cast<double>(window_) / static_cast<double>(p_.mss.value);
  }

 private:
  TcpParams p_;
  int64_t window_;
  int64_t min_send_;  // min(gso_max, window / divisor), whole segments
  std::vector<int64_t> in_flight_;
  std::vector<int64_t> snd_nxt_;
};

class TcpReceiver {
 public:
  explicit TcpReceiver(int streams) : flows_(static_cast<size_t>(streams)) {}
  // A data skb in; the ACK it triggers out (tcp_rcv_established(), one ACK
  // per received skb: __tcp_ack_snd_check() with more than one full
  // segment unacknowledged, or out-of-order data queued).
  NetPacket OnData(const NetPacket& frame);

 private:
  struct Flow {
    int64_t rcv_nxt = 0;
    std::map<int64_t, int64_t> ooo;  // out-of-order ranges, start -> end
  };
  std::vector<Flow> flows_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_NET_TCP_H_
