#include "models/net/link.h"

#include <algorithm>
#include <utility>

namespace models {

Link::Link(sim::Simulator& sim, const LinkParams& p, std::function<void(const NetPacket&)> on_ack)
    : sim_(&sim), p_(p), on_ack_(std::move(on_ack)), ack_cb_(Callback::Bind<&Link::OnAck>(this)) {}

sim::Time Link::WireTime(int64_t payload) const {
  const int64_t mss = p_.mss();
  const int64_t segs = std::max<int64_t>(1, (payload + mss - 1) / mss);
  const int64_t wire = payload + segs * (p_.tcpip_header.value + p_.framing.value);
  return sim::Time::Picos(static_cast<int64_t>(static_cast<double>(wire) * 8.0 * 1e12 / p_.rate_bps.value));
}

double Link::MaxGoodputBps(const LinkParams& p) {
  const double mss = p.mss();
  return p.rate_bps.value * mss / (mss + p.tcpip_header.value + p.framing.value);
}

void Link::Transmit(const NetPacket& frame) {
  const int64_t mss = p_.mss();
  const sim::Time now = sim_->Now();
  const sim::Time start = std::max(now, free_at_);
  const sim::Time wire = WireTime(frame.bytes);
  free_at_ = start + wire;
  wire_.push_back(OnWire{start, free_at_, frame.bytes});
  ++stats_.frames;
  stats_.segments += static_cast<uint64_t>(std::max<int64_t>(1, (frame.bytes + mss - 1) / mss));
  stats_.payload += frame.bytes;
  stats_.busy += wire;
  const sim::Time ack_wire =
      sim::Time::Picos(static_cast<int64_t>(p_.ack_bytes.value * 8.0 * 1e12 / p_.rate_bps.value));
  const sim::Time at = free_at_ + p_.propagation.value + p_.turnaround.value + ack_wire + p_.propagation.value;
  NetPacket ack{frame.stream, frame.bytes, true};
  acks_.push_back(Due{at, ack});
  if (acks_.size() == 1) sim_->ScheduleAt(at, ack_cb_.handle());
}

double Link::DeliveredBits() {
  const sim::Time now = sim_->Now();
  while (!wire_.empty() && wire_.front().end <= now) {
    delivered_bits_ += 8.0 * static_cast<double>(wire_.front().payload);
    wire_.pop_front();
  }
  if (wire_.empty() || wire_.front().start >= now) return delivered_bits_;
  const OnWire& f = wire_.front();
  const double part = static_cast<double>((now - f.start).ps()) / static_cast<double>((f.end - f.start).ps());
  return delivered_bits_ + 8.0 * static_cast<double>(f.payload) * part;
}

void Link::OnAck() {
  const Due d = acks_.front();
  acks_.pop_front();
  ++stats_.acks;
  if (!acks_.empty()) sim_->ScheduleAt(acks_.front().at, ack_cb_.handle());
  on_ack_(d.ack);
}

}  // namespace models
