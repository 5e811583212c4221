// A full-duplex Ethernet link between the host's NIC and the iperf server,
// one Link per direction, and the server at its far end (models/net).
//
// Link: each TSO frame (one skb of up to 64 KiB) goes out as MSS-sized
// segments back to back at the wire rate; each segment carries the TCP/IP
// headers and the Ethernet framing (header, FCS, preamble, inter-frame
// gap), so a saturated link's goodput is rate * mss / (mss + headers +
// framing). An ACK takes `ack_bytes` of wire. Packets leave in FIFO order
// (the NIC's transmit queue) and arrive `propagation` after their last bit
// left.
//
// IperfServer: the other host. When the guest sends, the server's GRO
// merges a frame's segments (they arrive back to back) into one skb and its
// TCP acknowledges it with one ACK (TcpReceiver: cumulative, with a SACK
// block when it lands beyond a hole), `turnaround` after the frame arrived.
// When the guest receives, the server is the sender (TcpSenders on its
// side), each ACK from the guest handled `turnaround` after it arrived. Its
// CPU is not modeled.
#ifndef VIOSIM_MODELS_NET_LINK_H_
#define VIOSIM_MODELS_NET_LINK_H_

#include <cstdint>
#include <deque>
#include <functional>

#include "models/cpu/callback.h"
#include "models/cpu/param.h"
#include "models/net/packet.h"
#include "models/net/tcp.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace models {

struct LinkParams {
  Param<double> rate_bps;       // line rate, bits per second
  Param<int> mtu;               // IP MTU, bytes
  Param<int> tcpip_header;      // IP + TCP headers with options, bytes
  Param<int> framing;           // Ethernet header, FCS, preamble, gap, bytes
  Param<int> ack_bytes;         // an ACK on the wire (with framing), bytes
  Param<sim::Time> propagation; // one way, cable and PHYs
  Param<sim::Time> turnaround;  // server: a packet in to its answer out
  int mss() const { return mtu.value - tcpip_header.value; }
};

struct LinkStats {
  uint64_t frames = 0;     // data frames (not ACKs)
  uint64_t segments = 0;
  int64_t payload = 0;     // TCP payload bytes sent
  uint64_t acks = 0;
  uint64_t drops = 0;      // data frames the full queue dropped
  double queued_sum = 0;   // data skbs waiting, as each data frame arrived
  void Reset() { *this = LinkStats(); }
};

// A packet delivered after a fixed delay, in the order handed over: one
// callback serves them all.
class FixedDelay {
 public:
  FixedDelay(sim::Simulator& sim, std::function<void(const NetPacket&)> out);
  void Push(sim::Time at, const NetPacket& p);

 private:
  void Fire();
  sim::Simulator* sim_;
  std::function<void(const NetPacket&)> out_;
  struct Due {
    sim::Time at;
    NetPacket p;
  };
  std::deque<Due> q_;
  Callback cb_;
};

class Link {
 public:
  // `on_arrive` is called for each packet as it reaches the far end.
  Link(sim::Simulator& sim, const LinkParams& p, std::function<void(const NetPacket&)> on_arrive);
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // The NIC's transmit of one packet (ixgbe's xmit, TSO for a frame):
  // queued behind the packets still on the wire. False: the queue held its
  // limit of data skbs waiting to start, and the frame was dropped.
  bool Transmit(const NetPacket& p);

  // A drop-tail limit on the data skbs waiting to go on the wire (the
  // qdisc's and the transmit ring's, counted in skbs: a 64 KiB TSO skb is
  // one); 0 (the default): no limit.
  void set_queue_limit(int skbs) { queue_limit_ = skbs; }
  // Data skbs waiting now.
  int Queued();

  // Wire time of `payload` bytes cut into MSS segments.
  sim::Time WireTime(int64_t payload) const;
  // The goodput of a saturated link with full segments, bits per second.
  double MaxGoodputBps() const { return MaxGoodputBps(p_); }
  static double MaxGoodputBps(const LinkParams& p);

  // TCP payload bits the far end has received by now, the frame on the
  // wire counted in proportion to the part of its wire time already over:
  // what iperf's server (or client) counts, never more than the goodput.
  double DeliveredBits();

  const LinkStats& stats() const { return stats_; }
  void ResetStats() { stats_.Reset(); }

 private:
  sim::Simulator* sim_;
  LinkParams p_;
  sim::Time free_at_;  // when the wire is free again
  FixedDelay arrive_;
  struct OnWire {
    sim::Time start, end;
    int64_t payload;
  };
  std::deque<OnWire> wire_;    // data frames not yet wholly on the wire
  double delivered_bits_ = 0;  // of the frames no longer in wire_
  int queue_limit_ = 0;
  std::deque<sim::Time> waiting_;  // start times of data frames not yet started
  LinkStats stats_;
};

class IperfServer {
 public:
  // `to_host`: the server-to-host direction. When `sender`, the server
  // sends `streams`' data; otherwise it acknowledges what arrives.
  IperfServer(sim::Simulator& sim, const LinkParams& p, Link& to_host, TcpSenders* sender, int streams);
  IperfServer(const IperfServer&) = delete;
  IperfServer& operator=(const IperfServer&) = delete;

  // Starts the streams (a sender: each sends its first window).
  void Start();
  // A packet off the host-to-server link.
  void Arrive(const NetPacket& p) { answer_.Push(sim_->Now() + turnaround_, p); }
  // A sender's stream sends what it may now.
  void Push(int stream);

 private:
  void Answer(const NetPacket& p);
  sim::Simulator* sim_;
  Link* to_host_;
  TcpSenders* sender_;
  TcpReceiver receiver_;
  sim::Time turnaround_;
  FixedDelay answer_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_NET_LINK_H_
