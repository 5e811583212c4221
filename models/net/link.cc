#include "models/net/link.h"

#include <algorithm>
#include <utility>

namespace models {

FixedDelay::FixedDelay(sim::Simulator& sim, std::function<void(const NetPacket&)> out)
    : sim_(&sim), out_(std::move(out)), cb_(Callback::Bind<&FixedDelay::Fire>(this)) {}

void FixedDelay::Push(sim::Time at, const NetPacket& p) {
  q_.push_back(Due{at, p});
  if (q_.size() == 1) sim_->ScheduleAt(at, cb_.handle());
}

void FixedDelay::Fire() {
  const Due d = q_.front();
  q_.pop_front();
  if (!q_.empty()) sim_->ScheduleAt(q_.front().at, cb_.handle());
  out_(d.p);
}

Link::Link(sim::Simulator& sim, const LinkParams& p, std::function<void(const NetPacket&)> on_arrive)
    : sim_(&sim), p_(p), arrive_(sim, std::move(on_arrive)) {}

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

int Link::Queued() {
  while (!waiting_.empty() && waiting_.front() <= sim_->Now()) waiting_.pop_front();
  return static_cast<int>(waiting_.size());
}

bool Link::Transmit(const NetPacket& p) {
  if (!p.ack && queue_limit_ > 0) {
    const int queued = Queued();
    stats_.queued_sum += queued;
    if (queued >= queue_limit_) {
      ++stats_.drops;
      return false;
    }
  }
  const sim::Time start = std::max(sim_->Now(), free_at_);
  if (p.ack) {
    free_at_ = start + sim::Time::Picos(static_cast<int64_t>(p_.ack_bytes.value * 8.0 * 1e12 / p_.rate_bps.value));
    ++stats_.acks;
  } else {
    const int64_t mss = p_.mss();
    free_at_ = start + WireTime(p.bytes);
    wire_.push_back(OnWire{start, free_at_, p.bytes});
    if (queue_limit_ > 0 && start > sim_->Now()) waiting_.push_back(start);
    ++stats_.frames;
    stats_.segments += static_cast<uint64_t>(std::max<int64_t>(1, (p.bytes + mss - 1) / mss));
    stats_.payload += p.bytes;
  }
  arrive_.Push(free_at_ + p_.propagation.value, p);
  return true;
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

IperfServer::IperfServer(sim::Simulator& sim, const LinkParams& p, Link& to_host, TcpSenders* sender, int streams)
    : sim_(&sim),
      to_host_(&to_host),
      sender_(sender),
      receiver_(streams),
      turnaround_(p.turnaround.value),
      answer_(sim, [this](const NetPacket& q) { Answer(q); }) {}

void IperfServer::Start() {
  if (sender_ == nullptr) return;
  for (int i = 0; i < sender_->streams(); ++i) Push(i);
}

void IperfServer::Push(int stream) {
  while (std::optional<NetPacket> f = sender_->NextFrame(stream)) {
    // The server's own queue refusing it is a local drop (NET_XMIT_DROP).
    if (!to_host_->Transmit(*f)) {
      sender_->OnLocalDrop(*f);
      break;
    }
  }
}

void IperfServer::Answer(const NetPacket& p) {
  if (sender_ == nullptr) {
    // The receiver: one ACK for the GRO'd frame.
    if (!p.ack) to_host_->Transmit(receiver_.OnData(p));
    return;
  }
  if (p.ack) {
    sender_->OnAck(p);
    Push(p.stream);
  }
}

}  // namespace models
