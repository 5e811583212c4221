// A packet as the network models pass it (models/net): one TSO/GSO skb of a
// TCP stream, or an ACK for one.
#ifndef VIOSIM_MODELS_NET_PACKET_H_
#define VIOSIM_MODELS_NET_PACKET_H_

#include <cstdint>

namespace models {

struct NetPacket {
  int stream = 0;
  int64_t bytes = 0;  // TCP payload (a frame) or bytes newly acknowledged (an ACK)
  bool ack = false;
  int bufs = 1;       // receive buffers it took in the guest (mergeable)
  // A frame: the sequence number of its first byte. An ACK: the cumulative
  // acknowledgment (the receiver's rcv_nxt).
  int64_t seq = 0;
  // An ACK's first SACK block [sack_lo, sack_hi): the out-of-order range
  // the segment that triggered it landed in (RFC 2018), empty when none.
  int64_t sack_lo = 0;
  int64_t sack_hi = 0;
  bool retransmit = false;  // a frame sent again after a loss
};

}  // namespace models

#endif  // VIOSIM_MODELS_NET_PACKET_H_
