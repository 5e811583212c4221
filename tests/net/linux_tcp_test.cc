// Linux 3.0's TCP sender per stream (models/net/linux_tcp.h), its receiver
// (models/net/tcp.h) and the link's queue in skbs (models/net/link.h): the
// rules of 3.0's code, one by one, with exact counts.
#include "models/net/linux_tcp.h"

#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "models/net/link.h"
#include "models/net/tcp.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace models {
namespace {

constexpr int kMss = 1448;
constexpr int64_t kGoal = 45 * kMss;  // 65,160: tcp_xmit_size_goal() for 64 KiB

LinuxTcpParams OneStream() {
  LinuxTcpParams p;
  p.streams = 1;
  p.mss = kMss;
  p.size_goal = kGoal;
  return p;
}

NetPacket Ack(int64_t cum, int64_t sack_lo = 0, int64_t sack_hi = 0) {
  NetPacket a;
  a.ack = true;
  a.seq = cum;
  a.sack_lo = sack_lo;
  a.sack_hi = sack_hi;
  return a;
}

// Everything stream 0 sends now.
std::vector<NetPacket> Drain(LinuxTcp& tcp) {
  std::vector<NetPacket> out;
  while (std::optional<NetPacket> f = tcp.NextFrame(0)) out.push_back(*f);
  return out;
}

// With cwnd 10 the head skb (45 segments) is cut to the quota: room for 10
// segments is at least a third of the window, so it is not deferred.
TEST(LinuxTcpTest, TheInitialWindowSendsTenSegmentsCutFromTheHeadSkb) {
  sim::Simulator sim;
  LinuxTcp tcp(sim, OneStream(), nullptr);
  const std::vector<NetPacket> f = Drain(tcp);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].seq, 0);
  EXPECT_EQ(f[0].bytes, 10 * kMss);
  EXPECT_EQ(tcp.in_flight(0), 10);
  EXPECT_EQ(tcp.stats().deferrals, 0u);
}

// tcp_slow_start() with tcp_abc = 0: one segment more per ACK, whatever the
// ACK covers (a GRO'd ACK for ten segments adds one, not ten).
TEST(LinuxTcpTest, SlowStartAddsOneSegmentPerAck) {
  sim::Simulator sim;
  LinuxTcp tcp(sim, OneStream(), nullptr);
  Drain(tcp);
  sim.RunUntil(sim::Time::Micros(100));
  tcp.OnAck(Ack(10 * kMss));
  EXPECT_EQ(tcp.cwnd(0), 11);
  const std::vector<NetPacket> f = Drain(tcp);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].seq, 10 * kMss);
  EXPECT_EQ(f[0].bytes, 11 * kMss);
  EXPECT_EQ(tcp.srtt(0), sim::Time::Micros(100));
}

// tcp_tso_should_defer(): with room for fewer segments than a third of the
// window (and less than a whole skb) the stream waits. Each deferral
// stamps the jiffy; the room is used once the last deferral is two jiffies
// old (HZ = 250: 4 ms jiffies), so a check every jiffy keeps deferring.
TEST(LinuxTcpTest, ASmallRoomIsDeferredUntilTheLastDeferralIsTwoJiffiesOld) {
  sim::Simulator sim;
  LinuxTcpParams p = OneStream();
  p.initial_cwnd = 30;
  LinuxTcp tcp(sim, p, nullptr);
  // 30 segments out, then an ACK for 5: room for 6 (cwnd 31) < 31/3.
  ASSERT_EQ(Drain(tcp).size(), 1u);
  tcp.OnAck(Ack(5 * kMss));
  EXPECT_EQ(tcp.cwnd(0), 31);
  EXPECT_EQ(tcp.in_flight(0), 25);
  EXPECT_TRUE(Drain(tcp).empty());
  EXPECT_EQ(tcp.stats().deferrals, 1u);
  sim.RunUntil(sim::Time::Millis(4));  // one jiffy: deferred, stamped again
  EXPECT_TRUE(Drain(tcp).empty());
  sim.RunUntil(sim::Time::Millis(8));  // one jiffy after that stamp
  EXPECT_TRUE(Drain(tcp).empty());
  EXPECT_EQ(tcp.stats().deferrals, 3u);
  sim.RunUntil(sim::Time::Millis(16));  // two jiffies after the last
  const std::vector<NetPacket> f = Drain(tcp);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].bytes, 6 * kMss);
}

// A SACK block beyond more than `reordering` segments: Recovery, ssthresh
// from CUBIC (cwnd x 717/1024), the hole marked lost and sent again one
// MSS at a time. 3.0's rate halving caps cwnd at what is in flight plus
// one (tcp_cwnd_down()), so a lost 64 KiB skb with nothing else in flight
// leaves one segment. Out of Recovery when the cumulative ACK passes
// high_seq, cwnd at most ssthresh.
TEST(LinuxTcpTest, ASackedHoleEntersRecoveryAndIsSentAgainOneMssAtATime) {
  sim::Simulator sim;
  LinuxTcpParams p = OneStream();
  p.initial_cwnd = 100;
  LinuxTcp tcp(sim, p, nullptr);
  // Two whole skbs; the 10 segments left are less than a third of the
  // window: deferred.
  const std::vector<NetPacket> f = Drain(tcp);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].bytes, kGoal);
  EXPECT_EQ(f[1].bytes, kGoal);
  // The first skb was dropped; the second arrives out of order.
  tcp.OnAck(Ack(0, f[1].seq, f[1].seq + f[1].bytes));
  EXPECT_EQ(tcp.ca_state(0), LinuxTcp::CaState::kRecovery);
  EXPECT_EQ(tcp.ssthresh(0), 100 * 717 / 1024);
  EXPECT_EQ(tcp.stats().recoveries, 1u);
  // Lost: 45 segments; SACKed: 45; in flight: none.
  EXPECT_EQ(tcp.in_flight(0), 0);
  EXPECT_EQ(tcp.cwnd(0), 1);
  std::vector<NetPacket> r = Drain(tcp);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].retransmit);
  EXPECT_EQ(r[0].seq, 0);
  EXPECT_EQ(r[0].bytes, kMss);
  // Its ACK frees room for the next MSS of the hole.
  tcp.OnAck(Ack(kMss, f[1].seq, f[1].seq + f[1].bytes));
  r = Drain(tcp);
  ASSERT_FALSE(r.empty());
  EXPECT_TRUE(r[0].retransmit);
  EXPECT_EQ(r[0].seq, kMss);
  EXPECT_EQ(r[0].bytes, kMss);
  EXPECT_EQ(tcp.stats().retransmits, 1 + r.size());
  // Everything up to high_seq acknowledged: Open, cwnd at most ssthresh.
  tcp.OnAck(Ack(f[1].seq + f[1].bytes));
  EXPECT_EQ(tcp.ca_state(0), LinuxTcp::CaState::kOpen);
  EXPECT_LE(tcp.cwnd(0), tcp.ssthresh(0));
}

// NET_XMIT_DROP from the local qdisc: the skb is not sent (the next frame
// starts at its sequence number again) and the stream enters CWR.
TEST(LinuxTcpTest, ALocalDropKeepsTheSkbAndEntersCwr) {
  sim::Simulator sim;
  LinuxTcp tcp(sim, OneStream(), nullptr);
  const std::optional<NetPacket> f = tcp.NextFrame(0);
  ASSERT_TRUE(f.has_value());
  tcp.OnLocalDrop(*f);
  EXPECT_EQ(tcp.ca_state(0), LinuxTcp::CaState::kCwr);
  EXPECT_EQ(tcp.stats().cwr, 1u);
  EXPECT_EQ(tcp.stats().frames, 0u);
  EXPECT_EQ(tcp.in_flight(0), 0);
  EXPECT_EQ(tcp.cwnd(0), 1);  // min(cwnd, in flight + 1)
  const std::optional<NetPacket> again = tcp.NextFrame(0);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->seq, 0);
  EXPECT_EQ(again->bytes, kMss);
}

// The retransmission timer (200 ms at least): Loss, cwnd 1, the stream told
// it may send, and it sends the head again.
TEST(LinuxTcpTest, TheTimerFiresLossWithOneSegmentAndAsksTheStreamToSend) {
  sim::Simulator sim;
  int pushed = -1;
  LinuxTcp tcp(sim, OneStream(), [&](int i) { pushed = i; });
  tcp.Start();
  Drain(tcp);
  sim.RunUntil(sim::Time::Millis(199));
  EXPECT_EQ(pushed, -1);
  sim.RunUntil(sim::Time::Millis(205));
  EXPECT_EQ(pushed, 0);
  EXPECT_EQ(tcp.ca_state(0), LinuxTcp::CaState::kLoss);
  EXPECT_EQ(tcp.cwnd(0), 1);
  EXPECT_EQ(tcp.stats().timeouts, 1u);
  const std::vector<NetPacket> r = Drain(tcp);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].retransmit);
  EXPECT_EQ(r[0].seq, 0);
  EXPECT_EQ(r[0].bytes, kMss);
}

// HyStart's ACK train (3.0's units): a round longer than delay_min / 16 --
// here a low-RTT path whose round crosses a millisecond -- ends slow start
// at the current cwnd once cwnd has reached hystart_low_window (16).
TEST(LinuxTcpTest, HystartsAckTrainEndsSlowStartOnALowRttPath) {
  sim::Simulator sim;
  LinuxTcpParams p = OneStream();
  p.initial_cwnd = 16;
  LinuxTcp tcp(sim, p, nullptr);
  int64_t acked = 0;
  sim::Time t = sim::Time::Zero();
  for (int i = 0; i < 20 && tcp.ssthresh(0) > 1000000; ++i) {
    for (const NetPacket& f : Drain(tcp)) {
      t = t + sim::Time::Micros(300);
      sim.RunUntil(t);
      acked = f.seq + f.bytes;
      tcp.OnAck(Ack(acked));
    }
  }
  EXPECT_LT(tcp.ssthresh(0), 1000000) << "slow start never ended";
  EXPECT_GE(tcp.ssthresh(0), 16);
}

// tcp_mark_head_lost(): fackets_out - reordering segments are lost, the
// straddling skb split. A 45-segment skb, then a 2-segment one SACKed:
// 47 - 3 = 44 segments of the first are lost, its last one is not.
TEST(LinuxTcpTest, FackMarksExactlyFacketsLessReorderingSegmentsLost) {
  sim::Simulator sim;
  LinuxTcpParams p = OneStream();
  p.initial_cwnd = 47;
  LinuxTcp tcp(sim, p, nullptr);
  std::vector<NetPacket> f = Drain(tcp);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].bytes, kGoal);
  sim.RunUntil(sim::Time::Millis(8));  // the 2 left, deferred, go out two jiffies on
  const std::vector<NetPacket> g = Drain(tcp);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].bytes, 2 * kMss);
  tcp.OnAck(Ack(0, g[0].seq, g[0].seq + g[0].bytes));
  EXPECT_EQ(tcp.ca_state(0), LinuxTcp::CaState::kRecovery);
  // 47 out: 2 SACKed, 44 lost, 1 still in flight.
  EXPECT_EQ(tcp.in_flight(0), 1);
  const std::vector<NetPacket> r = Drain(tcp);
  ASSERT_EQ(r.size(), 1u);  // cwnd: in flight + 1
  EXPECT_EQ(r[0].seq, 0);
  EXPECT_TRUE(r[0].retransmit);
}

// A SACK within `reordering` segments: Disorder, where TSO is not
// deferred.
TEST(LinuxTcpTest, AFewSackedSegmentsMeanDisorderWithoutDeferral) {
  sim::Simulator sim;
  LinuxTcpParams p = OneStream();
  p.initial_cwnd = 47;
  LinuxTcp tcp(sim, p, nullptr);
  Drain(tcp);
  sim.RunUntil(sim::Time::Millis(8));
  const std::vector<NetPacket> g = Drain(tcp);
  ASSERT_EQ(g.size(), 1u);
  // The first 44 segments acknowledged, the last of the first skb missing,
  // the 2-segment skb SACKed: 3 segments up to the SACK.
  tcp.OnAck(Ack(44 * kMss));
  tcp.OnAck(Ack(44 * kMss, g[0].seq, g[0].seq + g[0].bytes));
  EXPECT_EQ(tcp.ca_state(0), LinuxTcp::CaState::kDisorder);
  const uint64_t deferrals = tcp.stats().deferrals;
  EXPECT_FALSE(Drain(tcp).empty());
  EXPECT_EQ(tcp.stats().deferrals, deferrals);
}

// A local drop with nothing else in flight: CWR, and the probe timer (one
// RTO, 200 ms) asks the stream to send again.
TEST(LinuxTcpTest, ALocalDropWithNothingInFlightIsRetriedByTheProbeTimer) {
  sim::Simulator sim;
  int pushed = -1;
  LinuxTcp tcp(sim, OneStream(), [&](int i) { pushed = i; });
  tcp.Start();
  const std::optional<NetPacket> f = tcp.NextFrame(0);
  ASSERT_TRUE(f.has_value());
  tcp.OnLocalDrop(*f);
  sim.RunUntil(sim::Time::Millis(199));
  EXPECT_EQ(pushed, -1);
  sim.RunUntil(sim::Time::Millis(205));
  EXPECT_EQ(pushed, 0);
  EXPECT_EQ(tcp.stats().timeouts, 0u);
  const std::optional<NetPacket> again = tcp.NextFrame(0);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->seq, 0);
}

// The receiver: a cumulative ACK in order; beyond a hole, a SACK block of
// the out-of-order range it joined; the hole's fill acknowledges all.
TEST(TcpReceiverTest, AcksInOrderSacksBeyondAHoleAndCatchesUp) {
  TcpReceiver rx(1);
  auto data = [](int64_t seq, int64_t bytes) {
    NetPacket p;
    p.seq = seq;
    p.bytes = bytes;
    return p;
  };
  NetPacket a = rx.OnData(data(0, 100));
  EXPECT_EQ(a.seq, 100);
  EXPECT_EQ(a.bytes, 100);
  EXPECT_EQ(a.sack_hi, a.sack_lo);
  a = rx.OnData(data(200, 100));
  EXPECT_EQ(a.seq, 100);
  EXPECT_EQ(a.bytes, 0);
  EXPECT_EQ(a.sack_lo, 200);
  EXPECT_EQ(a.sack_hi, 300);
  a = rx.OnData(data(300, 50));
  EXPECT_EQ(a.sack_lo, 200);
  EXPECT_EQ(a.sack_hi, 350);
  a = rx.OnData(data(100, 100));
  EXPECT_EQ(a.seq, 350);
  EXPECT_EQ(a.bytes, 250);
}

// The link's queue in skbs: the frame beyond the limit of skbs waiting to
// start is dropped, whatever its size; ACKs are never dropped.
TEST(LinkTest, TheQueueLimitCountsSkbsWaitingToStart) {
  sim::Simulator sim;
  LinkParams p;
  p.rate_bps.value = 10e9;
  p.mtu.value = 1500;
  p.tcpip_header.value = 52;
  p.framing.value = 38;
  p.ack_bytes.value = 84;
  int arrived = 0;
  Link link(sim, p, [&](const NetPacket&) { ++arrived; });
  link.set_queue_limit(2);
  NetPacket big;
  big.bytes = kGoal;
  EXPECT_TRUE(link.Transmit(big));   // on the wire at once
  EXPECT_TRUE(link.Transmit(big));   // waiting: 1
  EXPECT_TRUE(link.Transmit(big));   // waiting: 2
  EXPECT_FALSE(link.Transmit(big));  // dropped
  NetPacket ack;
  ack.ack = true;
  EXPECT_TRUE(link.Transmit(ack));
  EXPECT_EQ(link.stats().drops, 1u);
  EXPECT_EQ(link.Queued(), 2);
  sim.RunUntil(sim::Time::Millis(1));
  EXPECT_EQ(link.Queued(), 0);
  EXPECT_EQ(arrived, 4);
}

}  // namespace
}  // namespace models
