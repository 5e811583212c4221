#include "models/net/tcp.h"

#include <algorithm>

namespace models {

IperfStreams::IperfStreams(const TcpParams& p) : p_(p), in_flight_(static_cast<size_t>(p.streams.value), 0) {
  const int64_t mss = p.mss.value;
  window_ = std::max<int64_t>(2 * mss, std::min(p.receive_window.value, p.path_bytes.value / p.streams.value));
  const int64_t chunk = std::min(p.gso_max.value, window_ / p.tso_win_divisor.value);
  min_send_ = std::max<int64_t>(mss, chunk / mss * mss);
}

int64_t IperfStreams::NextFrame(int i) {
  int64_t& flight = in_flight_[static_cast<size_t>(i)];
  const int64_t mss = p_.mss.value;
  const int64_t free = window_ - flight;
  if (free < min_send_) return 0;  // tcp_tso_should_defer()
  const int64_t bytes = std::min(free, p_.gso_max.value / mss * mss) / mss * mss;
  flight += bytes;
  ++stats_.frames;
  stats_.bytes_sent += bytes;
  return bytes;
}

void IperfStreams::OnAck(int i, int64_t bytes) {
  in_flight_[static_cast<size_t>(i)] -= bytes;
  ++stats_.acks;
  stats_.bytes_acked += bytes;
}

}  // namespace models
