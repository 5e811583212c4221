#include "models/net/tcp.h"

#include <algorithm>
#include <iterator>

namespace models {

IperfStreams::IperfStreams(const TcpParams& p)
    : p_(p), in_flight_(static_cast<size_t>(p.streams.value), 0), snd_nxt_(static_cast<size_t>(p.streams.value), 0) {
  const int64_t mss = p.mss.value;
  window_ = std::max<int64_t>(2 * mss, std::min(p.receive_window.value, p.path_bytes.value / p.streams.value));
  const int64_t chunk = std::min(p.gso_max.value, window_ / p.tso_win_divisor.value);
  min_send_ = std::max<int64_t>(mss, chunk / mss * mss);
}

std::optional<NetPacket> IperfStreams::NextFrame(int i) {
  const auto s = static_cast<size_t>(i);
  int64_t& flight = in_flight_[s];
  const int64_t mss = p_.mss.value;
  const int64_t free = window_ - flight;
  if (free < min_send_) return std::nullopt;  // tcp_tso_should_defer()
  const int64_t bytes = std::min(free, p_.gso_max.value / mss * mss) / mss * mss;
  flight += bytes;
  ++stats_.frames;
  stats_.bytes_sent += bytes;
  NetPacket f;
  f.stream = i;
  f.bytes = bytes;
  f.seq = snd_nxt_[s];
  snd_nxt_[s] += bytes;
  return f;
}

void IperfStreams::OnAck(const NetPacket& ack) {
  in_flight_[static_cast<size_t>(ack.stream)] -= ack.bytes;
  ++stats_.acks;
  stats_.cwnd_sum += MeanCwndSegments();
  stats_.bytes_acked += ack.bytes;
}

void IperfStreams::OnLocalDrop(const NetPacket& frame) {
  const auto s = static_cast<size_t>(frame.stream);
  in_flight_[s] -= frame.bytes;
  snd_nxt_[s] -= frame.bytes;
  --stats_.frames;
  stats_.bytes_sent -= frame.bytes;
}

NetPacket TcpReceiver::OnData(const NetPacket& frame) {
  Flow& f = flows_[static_cast<size_t>(frame.stream)];
  NetPacket ack;
  ack.stream = frame.stream;
  ack.ack = true;
  const int64_t end = frame.seq + frame.bytes;
  const int64_t before = f.rcv_nxt;
  if (frame.seq <= f.rcv_nxt) {
    f.rcv_nxt = std::max(f.rcv_nxt, end);
    // tcp_ofo_queue(): what the hole held back.
    while (!f.ooo.empty() && f.ooo.begin()->first <= f.rcv_nxt) {
      f.rcv_nxt = std::max(f.rcv_nxt, f.ooo.begin()->second);
      f.ooo.erase(f.ooo.begin());
    }
  } else {
    // tcp_data_queue()'s out-of-order branch: merged with its neighbours;
    // the SACK's first block is the range it is now part of.
    int64_t lo = frame.seq, hi = end;
    auto it = f.ooo.upper_bound(lo);
    if (it != f.ooo.begin() && std::prev(it)->second >= lo) --it;
    while (it != f.ooo.end() && it->first <= hi) {
      lo = std::min(lo, it->first);
      hi = std::max(hi, it->second);
      it = f.ooo.erase(it);
    }
    f.ooo.emplace(lo, hi);
    ack.sack_lo = lo;
    ack.sack_hi = hi;
  }
  ack.seq = f.rcv_nxt;
  ack.bytes = f.rcv_nxt - before;
  return ack;
}

}  // namespace models
