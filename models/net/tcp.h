// iperf's TCP streams as the guest's TCP sends them (models/net): only what
// sets the rates of frames, ACKs, kicks and wake-ups, not a TCP stack.
//
//   - Data is always waiting in each socket (iperf writes in a loop).
//   - Window: each stream may have `window` bytes unacknowledged. With N
//     loss-based streams sharing one bottleneck, each congestion window
//     settles around its share of what the path holds before it drops
//     (the bandwidth-delay product plus the queues), so the window is
//     min(receive window, path_bytes / N), at least two segments.
//   - Frame size: tcp_write_xmit() with TSO sends one skb of up to
//     gso_max bytes, whole MSS segments, as soon as the free window allows
//     one of min(gso_max, window / tso_win_divisor) bytes; below that it
//     defers (tcp_tso_should_defer(), sysctl_tcp_tso_win_divisor).
//   - ACK clocking: an ACK frees its bytes of window; the stream then sends
//     again (OnAck, then NextFrame until it returns 0).
#ifndef VIOSIM_MODELS_NET_TCP_H_
#define VIOSIM_MODELS_NET_TCP_H_

#include <cstdint>
#include <vector>

#include "models/cpu/param.h"

namespace models {

struct TcpParams {
  Param<int> streams;              // iperf -P
  Param<int> mss;                  // bytes of payload per segment
  Param<int64_t> gso_max;          // largest TSO/GSO skb (GSO_MAX_SIZE)
  Param<int> tso_win_divisor;      // sysctl_tcp_tso_win_divisor
  Param<int64_t> receive_window;   // per stream (the server's rwnd)
  Param<int64_t> path_bytes;       // what the path holds, shared by the streams
};

struct TcpStats {
  uint64_t frames = 0;
  int64_t bytes_sent = 0;
  uint64_t acks = 0;
  int64_t bytes_acked = 0;
  void Reset() { *this = TcpStats(); }
};

class IperfStreams {
 public:
  explicit IperfStreams(const TcpParams& p);

  int streams() const { return static_cast<int>(in_flight_.size()); }
  // Each stream's window limit, bytes.
  int64_t window() const { return window_; }
  // The next skb stream `i` sends now, bytes (0: it must wait for an ACK);
  // the bytes count as in flight from here.
  int64_t NextFrame(int i);
  // An ACK of `bytes` for stream `i` (tcp_ack()).
  void OnAck(int i, int64_t bytes);

  const TcpStats& stats() const { return stats_; }
  void ResetStats() { stats_.Reset(); }

 private:
  TcpParams p_;
  int64_t window_;
  int64_t min_send_;  // min(gso_max, window / divisor), whole segments
  std::vector<int64_t> in_flight_;
  TcpStats stats_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_NET_TCP_H_
