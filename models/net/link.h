// A full-duplex Ethernet link between the host's NIC and the iperf server,
// and that server's acknowledgements (models/net).
//
// Data direction: the host NIC sends each TSO frame (one skb of up to 64 KiB
// from the guest) as MSS-sized segments back to back at the wire rate; each
// segment carries the TCP/IP headers and the Ethernet framing (header, FCS,
// preamble and inter-frame gap), so the goodput at a saturated link is
// rate * mss / (mss + headers + framing). Frames leave in FIFO order (the
// NIC's transmit queue).
//
// Acknowledgements: the server's GRO merges a frame's segments, which
// arrive back to back, into one skb, and its TCP acknowledges that skb with
// one ACK (Linux acknowledges at least every second full segment). The ACK
// reaches the host NIC `turnaround` after the frame's last bit has left
// plus the propagation both ways and the ACK's own wire time. ACKs come
// back in the order the frames left, so one callback serves them.
#ifndef VIOSIM_MODELS_NET_LINK_H_
#define VIOSIM_MODELS_NET_LINK_H_

#include <cstdint>
#include <deque>
#include <functional>

#include "models/cpu/callback.h"
#include "models/cpu/param.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace models {

// A packet as the models pass it: a TSO frame of one stream, or its ACK.
struct NetPacket {
  int stream = 0;
  int64_t bytes = 0;  // TCP payload (a frame) or bytes acknowledged (an ACK)
  bool ack = false;
};

struct LinkParams {
  Param<double> rate_bps;       // line rate, bits per second
  Param<int> mtu;               // IP MTU, bytes
  Param<int> tcpip_header;      // IP + TCP headers with options, bytes
  Param<int> framing;           // Ethernet header, FCS, preamble, gap, bytes
  Param<int> ack_bytes;         // an ACK on the wire (with framing), bytes
  Param<sim::Time> propagation; // one way, cable and PHYs
  Param<sim::Time> turnaround;  // server: last segment in to its ACK out
  int mss() const { return mtu.value - tcpip_header.value; }
};

struct LinkStats {
  uint64_t frames = 0;
  uint64_t segments = 0;
  int64_t payload = 0;     // TCP payload bytes sent
  sim::Time busy;          // wire time of the data direction
  uint64_t acks = 0;
  void Reset() { *this = LinkStats(); }
};

class Link {
 public:
  // `on_ack` is called for each ACK as it reaches the host NIC.
  Link(sim::Simulator& sim, const LinkParams& p, std::function<void(const NetPacket&)> on_ack);
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // The NIC's transmit of one TSO frame (ixgbe's xmit with TSO): queued
  // behind the frames still on the wire.
  void Transmit(const NetPacket& frame);

  // Wire time of `payload` bytes cut into MSS segments.
  sim::Time WireTime(int64_t payload) const;
  // The goodput of a saturated link with full segments, bits per second.
  double MaxGoodputBps() const { return MaxGoodputBps(p_); }
  static double MaxGoodputBps(const LinkParams& p);

  // TCP payload bits the server has received by now, its last frame
  // counted in proportion to the part of its wire time already over: what
  // iperf's server counts, and never more than the goodput allows.
  double DeliveredBits();

  const LinkStats& stats() const { return stats_; }
  void ResetStats() { stats_.Reset(); }

 private:
  void OnAck();

  sim::Simulator* sim_;
  LinkParams p_;
  std::function<void(const NetPacket&)> on_ack_;
  sim::Time free_at_;  // when the wire is free again
  struct Due {
    sim::Time at;
    NetPacket ack;
  };
  std::deque<Due> acks_;
  struct OnWire {
    sim::Time start, end;
    int64_t payload;
  };
  std::deque<OnWire> wire_;  // frames not yet wholly on the wire, in order
  double delivered_bits_ = 0;  // of the frames no longer in wire_
  Callback ack_cb_;
  LinkStats stats_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_NET_LINK_H_
