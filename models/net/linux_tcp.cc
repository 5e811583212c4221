#include "models/net/linux_tcp.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace models {
namespace {

// tcp_cubic.c's constants (3.0).
constexpr uint32_t kBeta = 717;          // / 1024
constexpr uint32_t kBetaScale = 1024;
constexpr uint32_t kBicScale = 41;       // C = 41 / 1024 ~ 0.4
constexpr int kAckRatioShift = 4;
constexpr uint32_t kAckRatioLimit = 32u << kAckRatioShift;
constexpr int kHystartLowWindow = 16;
constexpr int kHystartMinSamples = 8;
constexpr int64_t kHystartAckDeltaMs = 2;
constexpr uint32_t kHystartDelayMin = 4u << 3;  // ms << 3
constexpr uint32_t kHystartDelayMax = 16u << 3;
constexpr int kHystartAckTrain = 1;
constexpr int kHystartDelay = 2;
constexpr int kReordering = 3;           // sysctl_tcp_reordering
constexpr int kMaxBurst = 3;             // tcp_max_burst(): reordering
// The jiffies and milliseconds counters start well past zero, as a booted
// machine's do, so that a zero epoch_start means "no epoch".
constexpr int64_t kClockOffset = 1 << 20;

}  // namespace

LinuxTcp::LinuxTcp(sim::Simulator& sim, const LinuxTcpParams& p, std::function<void(int)> push)
    : sim_(&sim),
      p_(p),
      push_(std::move(push)),
      flows_(static_cast<size_t>(p.streams)),
      jiffy_(sim::Time::Picos(1000000000000 / p.hz)),
      tick_(Callback::Bind<&LinuxTcp::Tick>(this)) {
  for (Flow& f : flows_) {
    f.cwnd = p_.initial_cwnd;
    f.head_len = p_.size_goal;
    if (p_.hystart) HystartReset(f);
  }
}

void LinuxTcp::Start() { sim_->ScheduleAt(sim_->Now() + jiffy_, tick_.handle()); }

int64_t LinuxTcp::Jiffies() const { return sim_->Now().ps() / jiffy_.ps() + kClockOffset; }
int64_t LinuxTcp::ClockMs() const { return sim_->Now().ps() / 1000000000 + kClockOffset; }

sim::Time LinuxTcp::Rto(const Flow& f) const {
  const sim::Time base = f.srtt + std::max(f.rttvar * 4, p_.rto_min);
  return base * (int64_t{1} << std::min(f.backoff, 6));
}

double LinuxTcp::MeanCwndSegments() const {
  double sum = 0;
  for (const Flow& f : flows_) sum += f.cwnd;
  return sum / static_cast<double>(flows_.size());
}

sim::Time LinuxTcp::MeanSrtt() const {
  int64_t sum = 0, n = 0;
  for (const Flow& f : flows_) {
    if (f.srtt > sim::Time::Zero()) {
      sum += f.srtt.ps();
      ++n;
    }
  }
  return n == 0 ? sim::Time::Zero() : sim::Time::Picos(sum / n);
}

// tcp_xmit_retransmit_queue() / tcp_retransmit_skb(): the first lost skb
// not yet sent again, cut to one MSS.
std::optional<NetPacket> LinuxTcp::Retransmit(int i, Flow& f) {
  for (auto it = f.rtx.begin(); it != f.rtx.end(); ++it) {
    if (!it->lost || it->retrans || it->sacked) continue;
    if (InFlight(f) >= f.cwnd) return std::nullopt;
    if (it->len > p_.mss) {
      // tcp_fragment(): the rest stays lost, behind the MSS sent now.
      Skb rest = *it;
      rest.seq += p_.mss;
      rest.len -= p_.mss;
      rest.segs = Segs(rest.len);
      it->len = p_.mss;
      it->segs = 1;
      it = f.rtx.insert(std::next(it), rest);
      --it;
    }
    it->retrans = true;
    it->ever_retrans = true;
    it->ack_seq = f.snd_nxt;
    it->sent = sim_->Now();
    f.retrans_out += it->segs;
    ++stats_.frames;
    ++stats_.retransmits;
    stats_.bytes_sent += it->len;
    if (f.rto_at == sim::Time::Zero()) f.rto_at = sim_->Now() + Rto(f);
    NetPacket out;
    out.stream = i;
    out.seq = it->seq;
    out.bytes = it->len;
    out.retransmit = true;
    return out;
  }
  return std::nullopt;
}

// tcp_tso_should_defer(), for a head skb that is not the queue's tail.
bool LinuxTcp::ShouldDefer(Flow& f, int64_t skb_len, int64_t send_win) {
  const int64_t now = Jiffies();
  bool send = f.state != CaState::kOpen || (f.tso_deferred >= 0 && now - f.tso_deferred > 1);
  if (!send) {
    const int64_t cong_win = static_cast<int64_t>(f.cwnd - InFlight(f)) * p_.mss;
    const int64_t limit = std::min(send_win, cong_win);
    const int64_t chunk = std::min(p_.peer_window, static_cast<int64_t>(f.cwnd) * p_.mss) / p_.tso_win_divisor;
    send = limit >= p_.gso_max || limit >= skb_len || limit >= chunk;
  }
  if (send) {
    f.tso_deferred = -1;
    return false;
  }
  f.tso_deferred = now;
  ++stats_.deferrals;
  return true;
}

// tcp_write_xmit() for one skb.
std::optional<NetPacket> LinuxTcp::NextFrame(int i) {
  Flow& f = flows_[static_cast<size_t>(i)];
  if (f.state == CaState::kRecovery || f.state == CaState::kLoss) {
    if (std::optional<NetPacket> r = Retransmit(i, f)) return r;
    if (f.lost_out > f.retrans_out) return std::nullopt;  // lost skbs wait for room first
  }
  const int quota = f.cwnd - InFlight(f);  // tcp_cwnd_test()
  if (quota <= 0) return std::nullopt;
  const int64_t wnd_end = f.snd_una + p_.peer_window;
  const int64_t skb_len = f.returned.empty() ? f.head_len : f.returned.front();
  if (f.snd_nxt + std::min<int64_t>(p_.mss, skb_len) > wnd_end) return std::nullopt;  // tcp_snd_wnd_test()
  const int64_t send_win = wnd_end - f.snd_nxt;
  if (Segs(skb_len) > 1 && ShouldDefer(f, skb_len, send_win)) return std::nullopt;
  // tcp_mss_split_point(): the head skb is never the tail here.
  const int64_t cwnd_len = static_cast<int64_t>(quota) * p_.mss;
  int64_t limit = cwnd_len;
  if (cwnd_len > send_win) {
    const int64_t needed = std::min(skb_len, send_win);
    limit = needed - needed % p_.mss;
  }
  const int64_t bytes = std::min(skb_len, limit);
  if (f.returned.empty()) {
    f.head_len -= bytes;
    if (f.head_len == 0) f.head_len = p_.size_goal;
  } else if (bytes == f.returned.front()) {
    f.returned.pop_front();
  } else {
    f.returned.front() -= bytes;
  }
  Skb s{f.snd_nxt, bytes, Segs(bytes), sim_->Now()};
  f.rtx.push_back(s);
  f.packets_out += s.segs;
  f.snd_nxt += bytes;
  if (f.rto_at == sim::Time::Zero() || f.probe) f.rto_at = sim_->Now() + Rto(f);
  f.probe = false;
  ++stats_.frames;
  stats_.bytes_sent += bytes;
  NetPacket out;
  out.stream = i;
  out.seq = s.seq;
  out.bytes = bytes;
  return out;
}

void LinuxTcp::OnLocalDrop(const NetPacket& frame) {
  Flow& f = flows_[static_cast<size_t>(frame.stream)];
  --stats_.frames;
  stats_.bytes_sent -= frame.bytes;
  if (frame.retransmit) {
    --stats_.retransmits;
    for (Skb& s : f.rtx) {
      if (s.seq == frame.seq && s.retrans) {
        s.retrans = false;
        f.retrans_out -= s.segs;
        break;
      }
    }
  } else {
    // The newest skb: back to the head of the write queue.
    const Skb s = f.rtx.back();
    f.rtx.pop_back();
    f.packets_out -= s.segs;
    f.snd_nxt -= s.len;
    f.returned.push_front(s.len);
  }
  if (f.state == CaState::kOpen || f.state == CaState::kDisorder) EnterRecoveryOrCwr(f, CaState::kCwr);
  // tcp_check_probe_timer(): nothing in flight to clock the next try.
  if (f.packets_out == 0) {
    f.rto_at = sim_->Now() + Rto(f);
    f.probe = true;
  }
}

// tcp_enter_cwr() or the entry into Recovery in tcp_fastretrans_alert().
void LinuxTcp::EnterRecoveryOrCwr(Flow& f, CaState to) {
  if (f.state == CaState::kOpen || f.state == CaState::kDisorder) f.ssthresh = static_cast<int>(CubicSsthresh(f));
  f.cwnd_cnt = 0;
  f.high_seq = f.snd_nxt;
  if (to == CaState::kCwr) {
    f.cwnd = std::min(f.cwnd, InFlight(f) + 1);
    ++stats_.cwr;
  } else {
    ++stats_.recoveries;
  }
  f.state = to;
}

// tcp_update_scoreboard() with FACK: tcp_mark_head_lost() of the first
// max(1, fackets_out - reordering) segments up to high_seq, counting every
// skb, the straddling one split so that exactly that many are marked.
void LinuxTcp::MarkLostFack(Flow& f) {
  const int packets = std::max(1, f.fackets_out - kReordering);
  int cnt = 0;
  for (auto it = f.rtx.begin(); it != f.rtx.end(); ++it) {
    if (it->end() > f.high_seq) break;
    const int old = cnt;
    cnt += it->segs;
    if (cnt > packets) {
      if (old >= packets || it->sacked || it->lost) break;
      // tcp_fragment(): the first (packets - old) segments are marked.
      Skb rest = *it;
      const int64_t head = static_cast<int64_t>(packets - old) * p_.mss;
      rest.seq += head;
      rest.len -= head;
      rest.segs = Segs(rest.len);
      it->len = head;
      it->segs = packets - old;
      it = f.rtx.insert(std::next(it), rest);
      --it;
    }
    if (!it->sacked && !it->lost) {
      it->lost = true;
      f.lost_out += it->segs;
    }
    if (cnt >= packets) break;
  }
}

// tcp_mark_lost_retrans(): a retransmission the receiver has SACKed past
// the snd_nxt it went out under was lost too; it is to be sent again.
void LinuxTcp::MarkLostRetrans(Flow& f) {
  const int64_t received_upto = std::max(f.snd_una, f.high_sacked);
  for (Skb& s : f.rtx) {
    if (!s.retrans || received_upto <= s.ack_seq) continue;
    s.retrans = false;
    f.retrans_out -= s.segs;
  }
}

void LinuxTcp::TryToOpen(Flow& f, bool progress) {
  if (f.state == CaState::kCwr) {
    if (progress) CwndDown(f);
    return;
  }
  const CaState to = f.sacked_out + f.lost_out > 0 || f.retrans_out > 0 ? CaState::kDisorder : CaState::kOpen;
  if (f.state != to) {
    f.state = to;
    f.high_seq = f.snd_nxt;
  }
  Moderate(f);
}

// tcp_cwnd_down(), on an ACK that made progress.
void LinuxTcp::CwndDown(Flow& f) {
  int decr = f.cwnd_cnt + 1;
  f.cwnd_cnt = decr & 1;
  decr >>= 1;
  if (decr > 0 && f.cwnd > f.ssthresh) f.cwnd -= decr;
  f.cwnd = std::min(f.cwnd, InFlight(f) + 1);
}

bool LinuxTcp::CwndLimited(const Flow& f, int in_flight) const {
  if (in_flight >= f.cwnd) return true;
  const int left = f.cwnd - in_flight;
  if (left * p_.tso_win_divisor < f.cwnd && left * p_.mss < p_.gso_max) return true;
  return left <= kMaxBurst;
}

// bictcp_cong_avoid(): tcp_slow_start() or tcp_cong_avoid_ai().
void LinuxTcp::CongAvoid(Flow& f, int prior_in_flight) {
  if (!CwndLimited(f, prior_in_flight)) return;
  if (f.cwnd <= f.ssthresh) {
    if (p_.hystart && f.snd_una > f.ca.end_seq) HystartReset(f);
    f.cwnd_cnt += f.cwnd;
    while (f.cwnd_cnt >= f.cwnd) {
      f.cwnd_cnt -= f.cwnd;
      ++f.cwnd;
    }
    return;
  }
  CubicUpdate(f);
  if (f.cwnd_cnt >= static_cast<int>(f.ca.cnt)) {
    ++f.cwnd;
    f.cwnd_cnt = 0;
  } else {
    ++f.cwnd_cnt;
  }
}

void LinuxTcp::OnAck(const NetPacket& ack) {
  Flow& f = flows_[static_cast<size_t>(ack.stream)];
  const sim::Time now = sim_->Now();
  ++stats_.acks;
  const int prior_in_flight = InFlight(f);
  const int prior_packets = f.packets_out;
  bool sacked_new = false;
  // tcp_sacktag_write_queue(), the ACK's first block.
  if (ack.sack_hi > ack.sack_lo) {
    int segs = 0;
    for (Skb& s : f.rtx) {
      segs += s.segs;
      if (s.seq < ack.sack_lo || s.end() > ack.sack_hi || s.sacked) continue;
      s.sacked = true;
      sacked_new = true;
      f.sacked_out += s.segs;
      if (s.lost) {
        s.lost = false;
        f.lost_out -= s.segs;
      }
      if (s.retrans) {
        s.retrans = false;
        f.retrans_out -= s.segs;
      }
      f.fackets_out = std::max(f.fackets_out, segs);
      f.high_sacked = std::max(f.high_sacked, s.end());
    }
  }
  // tcp_clean_rtx_queue().
  bool retrans_acked = false;
  std::optional<sim::Time> last_sent;
  while (!f.rtx.empty() && f.rtx.front().end() <= ack.seq) {
    const Skb& s = f.rtx.front();
    f.packets_out -= s.segs;
    if (s.sacked) f.sacked_out -= s.segs;
    if (s.lost) f.lost_out -= s.segs;
    if (s.retrans) f.retrans_out -= s.segs;
    f.fackets_out = std::max(0, f.fackets_out - s.segs);
    if (s.ever_retrans) {
      retrans_acked = true;
    } else {
      last_sent = s.sent;
    }
    f.rtx.pop_front();
  }
  // tcp_tso_acked(): whole segments acknowledged off the head of a TSO skb.
  if (!f.rtx.empty() && f.rtx.front().seq < ack.seq) {
    Skb& s = f.rtx.front();
    const int64_t trim = (ack.seq - s.seq) / p_.mss * p_.mss;
    if (trim > 0 && !s.sacked && !s.lost && !s.retrans) {
      const int segs = Segs(s.len - trim);
      f.packets_out -= s.segs - segs;
      f.fackets_out = std::max(0, f.fackets_out - (s.segs - segs));
      s.seq += trim;
      s.len -= trim;
      s.segs = segs;
      if (!s.ever_retrans) last_sent = s.sent;
    }
  }
  const bool data_acked = ack.seq > f.snd_una;
  if (data_acked) {
    stats_.bytes_acked += ack.seq - f.snd_una;
    f.snd_una = ack.seq;
  }
  const int pkts_acked = prior_packets - f.packets_out;
  if (pkts_acked > 0) {
    int64_t rtt_us = -1;
    if (!retrans_acked && last_sent.has_value()) {
      const sim::Time m = now - *last_sent;
      // With HZ >= 1000, 3.0's CUBIC takes no microsecond stamp: the
      // sample is jiffies_to_usecs() of a jiffy count.
      rtt_us = p_.hz < 1000 ? m.ps() / 1000000 : (Jiffies() - (last_sent->ps() / jiffy_.ps() + kClockOffset)) * 1000000 / p_.hz;
      stats_.rtt_sum_s += m.ToSeconds();
      ++stats_.rtt_samples;
      // tcp_rtt_estimator().
      if (f.srtt == sim::Time::Zero()) {
        f.srtt = m;
        f.rttvar = m / 2;
      } else {
        const sim::Time err = m > f.srtt ? m - f.srtt : f.srtt - m;
        f.rttvar = f.rttvar * 3 / 4 + err / 4;
        f.srtt = f.srtt * 7 / 8 + m / 8;
      }
    }
    CubicAcked(f, pkts_acked, rtt_us);
    f.backoff = 0;
    f.rto_at = f.packets_out > 0 ? now + Rto(f) : sim::Time::Zero();
  }
  stats_.cwnd_sum += f.cwnd;
  const bool progress = data_acked || sacked_new;
  if (f.state == CaState::kRecovery && f.retrans_out > 0 && sacked_new) MarkLostRetrans(f);
  // tcp_ack_is_dubious(): no new data acknowledged, new SACKs, or not Open.
  const bool dubious = !data_acked || sacked_new || f.state != CaState::kOpen;
  // tcp_may_raise_cwnd(): not in CWR or Recovery.
  const bool may_raise = f.state != CaState::kCwr && f.state != CaState::kRecovery;
  if (data_acked && may_raise) CongAvoid(f, prior_in_flight);
  if (!dubious) return;
  // tcp_fastretrans_alert(). E: the state's exit once high_seq is acked.
  if (f.state != CaState::kOpen && f.snd_una >= f.high_seq) {
    switch (f.state) {
      case CaState::kCwr:
        // Held until something above high_seq is acked; no undo marker, so
        // tcp_complete_cwr() leaves cwnd as it is.
        if (f.snd_una != f.high_seq) f.state = CaState::kOpen;
        break;
      case CaState::kRecovery:
        // tcp_complete_cwr() with the undo marker of the recovery.
        f.cwnd = std::min(f.cwnd, f.ssthresh);
        f.state = CaState::kOpen;
        break;
      case CaState::kDisorder:
      case CaState::kLoss:
        f.state = CaState::kOpen;
        break;
      case CaState::kOpen:
        break;
    }
  }
  // F: the state's own processing.
  switch (f.state) {
    case CaState::kRecovery:
      // Lost marks on duplicate or SACKing ACKs, not on a partial ACK.
      if (!data_acked || (sacked_new && f.fackets_out > kReordering)) MarkLostFack(f);
      if (progress) CwndDown(f);
      return;
    case CaState::kLoss:
      Moderate(f);
      return;
    case CaState::kOpen:
    case CaState::kDisorder:
    case CaState::kCwr:
      // tcp_time_to_recover().
      if (f.lost_out > 0 || f.fackets_out > kReordering) {
        EnterRecoveryOrCwr(f, CaState::kRecovery);
        MarkLostFack(f);
        if (progress) CwndDown(f);
      } else {
        TryToOpen(f, progress);
      }
      return;
  }
}

// The retransmission timer, each jiffy: tcp_retransmit_timer() and
// tcp_enter_loss().
void LinuxTcp::Tick() {
  const sim::Time now = sim_->Now();
  for (size_t i = 0; i < flows_.size(); ++i) {
    Flow& f = flows_[i];
    if (f.rto_at == sim::Time::Zero() || f.rto_at > now) continue;
    if (f.probe || f.rtx.empty()) {
      // The probe timer: nothing in flight; the stream tries again.
      f.rto_at = sim::Time::Zero();
      f.probe = false;
      if (push_) push_(static_cast<int>(i));
      continue;
    }
    ++stats_.timeouts;
    // tcp_enter_loss(): a new ssthresh unless this loss continues one.
    if (f.state == CaState::kOpen || f.state == CaState::kDisorder || f.snd_una == f.high_seq ||
        (f.state == CaState::kLoss && f.backoff == 0)) {
      f.ssthresh = static_cast<int>(CubicSsthresh(f));
    }
    f.cwnd = 1;
    f.cwnd_cnt = 0;
    f.lost_out = 0;
    f.retrans_out = 0;
    for (Skb& s : f.rtx) {
      s.retrans = false;
      s.lost = !s.sacked;
      if (s.lost) f.lost_out += s.segs;
    }
    f.high_seq = f.snd_nxt;
    f.state = CaState::kLoss;
    f.tso_deferred = -1;
    // bictcp_state(TCP_CA_Loss).
    f.ca = Cubic();
    if (p_.hystart) HystartReset(f);
    ++f.backoff;
    f.rto_at = now + Rto(f);
    if (push_) push_(static_cast<int>(i));
  }
  sim_->ScheduleAt(now + jiffy_, tick_.handle());
}

void LinuxTcp::HystartReset(Flow& f) {
  f.ca.round_start = f.ca.last_ack = ClockMs();
  f.ca.end_seq = f.snd_nxt;
  f.ca.curr_rtt = 0;
  f.ca.sample_cnt = 0;
}

// bictcp_acked() and hystart_update().
void LinuxTcp::CubicAcked(Flow& f, int pkts, int64_t rtt_us) {
  Cubic& ca = f.ca;
  if (f.state == CaState::kOpen) {
    uint32_t ratio = ca.delayed_ack;
    ratio -= ca.delayed_ack >> kAckRatioShift;
    ratio += static_cast<uint32_t>(pkts);
    ca.delayed_ack = std::min(ratio, kAckRatioLimit);
  }
  if (rtt_us < 0) return;
  // Delay samples right after a recovery (an epoch younger than a second)
  // are discarded.
  if (Jiffies() - ca.epoch_start < p_.hz) return;
  uint32_t delay = static_cast<uint32_t>((rtt_us << 3) / 1000);
  if (delay == 0) delay = 1;
  if (ca.delay_min == 0 || ca.delay_min > delay) ca.delay_min = delay;
  if (!p_.hystart || f.cwnd > f.ssthresh || f.cwnd < kHystartLowWindow || ca.found != 0) return;
  const int64_t now = ClockMs();
  if (now - ca.last_ack <= kHystartAckDeltaMs) {
    ca.last_ack = now;
    if (now - ca.round_start > static_cast<int64_t>(ca.delay_min >> 4)) ca.found |= kHystartAckTrain;
  }
  if (ca.sample_cnt < kHystartMinSamples) {
    if (ca.curr_rtt == 0 || ca.curr_rtt > delay) ca.curr_rtt = delay;
    ++ca.sample_cnt;
  } else if (ca.curr_rtt > ca.delay_min + std::clamp(ca.delay_min >> 4, kHystartDelayMin, kHystartDelayMax)) {
    ca.found |= kHystartDelay;
  }
  if (ca.found != 0) f.ssthresh = f.cwnd;
}

// bictcp_update().
void LinuxTcp::CubicUpdate(Flow& f) {
  Cubic& ca = f.ca;
  const auto cwnd = static_cast<uint32_t>(f.cwnd);
  const int64_t jiffies = Jiffies();
  ++ca.ack_cnt;
  if (ca.last_cwnd == cwnd && jiffies - ca.last_time <= p_.hz / 32) return;
  ca.last_cwnd = cwnd;
  ca.last_time = jiffies;
  // cube_factor = 2^40 / (bic_scale * 10): K in 1/1024 s for a 100 ms srtt.
  constexpr uint64_t kCubeFactor = (uint64_t{1} << 40) / (kBicScale * 10);
  if (ca.epoch_start == 0) {
    ca.epoch_start = jiffies;
    ca.ack_cnt = 1;
    ca.tcp_cwnd = cwnd;
    if (ca.last_max_cwnd <= cwnd) {
      ca.k = 0;
      ca.origin = cwnd;
    } else {
      ca.k = static_cast<uint32_t>(std::cbrt(static_cast<double>(kCubeFactor * (ca.last_max_cwnd - cwnd))));
      ca.origin = ca.last_max_cwnd;
    }
  }
  // t in 1/1024 s since the epoch began, plus the minimum delay.
  const int64_t delay_jiffies = (static_cast<int64_t>(ca.delay_min >> 3) * p_.hz + 999) / 1000;
  const auto t = static_cast<uint64_t>(((jiffies + delay_jiffies - ca.epoch_start) << 10) / p_.hz);
  const uint64_t offs = t < ca.k ? ca.k - t : t - ca.k;
  const auto delta = static_cast<uint32_t>((kBicScale * 10 * offs * offs * offs) >> 40);
  const uint32_t target = t < ca.k ? ca.origin - delta : ca.origin + delta;
  ca.cnt = target > cwnd ? cwnd / (target - cwnd) : 100 * cwnd;
  if (ca.loss_cwnd == 0 && ca.cnt > 20) ca.cnt = 20;
  // TCP friendliness: beta_scale = 8 (1024 + beta) / 3 / (1024 - beta).
  constexpr uint32_t kFriendScale = 8 * (kBetaScale + kBeta) / 3 / (kBetaScale - kBeta);
  const uint32_t step = (cwnd * kFriendScale) >> 3;
  while (step > 0 && ca.ack_cnt > step) {
    ca.ack_cnt -= step;
    ++ca.tcp_cwnd;
  }
  if (ca.tcp_cwnd > cwnd) {
    const uint32_t max_cnt = cwnd / (ca.tcp_cwnd - cwnd);
    ca.cnt = std::min(ca.cnt, max_cnt);
  }
  ca.cnt = (ca.cnt << kAckRatioShift) / ca.delayed_ack;
  if (ca.cnt == 0) ca.cnt = 1;
}

// bictcp_recalc_ssthresh().
uint32_t LinuxTcp::CubicSsthresh(Flow& f) {
  Cubic& ca = f.ca;
  const auto cwnd = static_cast<uint32_t>(f.cwnd);
  ca.epoch_start = 0;
  if (cwnd < ca.last_max_cwnd) {
    ca.last_max_cwnd = cwnd * (kBetaScale + kBeta) / (2 * kBetaScale);
  } else {
    ca.last_max_cwnd = cwnd;
  }
  ca.loss_cwnd = cwnd;
  return std::max(cwnd * kBeta / kBetaScale, 2u);
}

}  // namespace models
