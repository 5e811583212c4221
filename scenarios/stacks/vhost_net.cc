// stack.vhost_net with workload.iperf: a 2013 KVM host (Linux 3.0) whose
// vhost-net worker serves a one-vCPU guest's virtio-net, a tap bridged to
// a 10 GbE NIC, and the iperf streams the guest sends to a server across
// the link (models/vhost, models/net).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/cpu/sched.h"
#include "models/net/link.h"
#include "models/net/linux_tcp.h"
#include "models/net/tap.h"
#include "models/net/tcp.h"
#include "models/net/virtio_net.h"
#include "models/sync/handoff_costs.h"
#include "models/vhost/vhost.h"
#include "models/vhost/vhost_net.h"
#include "scenarios/stacks/parts.h"
#include "scenarios/units.h"
#include "sim/check.h"

namespace viosim::stacks {
namespace {

struct Built {
  models::LinkParams link;
  models::TcpParams tcp;
  bool linux_tcp = false;           // workload.iperf.tcp = LINUX_3_0
  models::LinuxTcpParams linux;
  int host_tx_queue_skbs = 0;
  int guest_qdisc_skbs = 0;
  models::HostNicCosts nic;
  models::VhostCosts vhost;
  models::VhostParams params;
  models::VhostNetCosts net;
  models::VirtioNetGuestCosts guest;
  sim::Time eventfd_signal;
  models::Param<sim::Time> ttwu_queue_ipi;  // set: TTWU_QUEUE on
  models::Param<sim::Time> ttwu_queue_waker;
  bool ttwu_queue = false;
  models::LockHandoffCosts handoff;
  int ring = 256;
  bool event_idx = true;
  int nic_rx_queues = 1;
  bool guest_receives = false;
};

class Rig final : public BuiltRun {
 public:
  Rig(sim::Simulator& sim, std::unique_ptr<Machine> m, const Built& b)
      : sim_(&sim),
        m_(std::move(m)),
        rings_(b.ring, Features(b.event_idx)),
        streams_(MakeSenders(sim, b)),
        tap_(sim, models::SpinlockKind::kTicket, b.handoff),
        to_server_(sim, b.link, [this](const models::NetPacket& p) { server_.Arrive(p); }),
        to_host_(sim, b.link, [this](const models::NetPacket& p) { nic_.Receive(p); }),
        server_(sim, b.link, to_host_, b.guest_receives ? streams_.get() : nullptr, b.tcp.streams.value),
        data_link_(b.guest_receives ? &to_host_ : &to_server_),
        nic_(sim, IrqCpus(*m_, b.nic_rx_queues), b.nic, tap_),
        dev_(sim, m_->sched(), b.vhost, b.params, models::SpinlockKind::kTicket, b.handoff),
        kick_tx_(sim, "eventfd_wqh_lock(kick_tx)", models::SpinlockKind::kTicket, b.handoff, b.eventfd_signal),
        kick_rx_(sim, "eventfd_wqh_lock(kick_rx)", models::SpinlockKind::kTicket, b.handoff, b.eventfd_signal),
        call_rx_(sim, "eventfd_wqh_lock(call_rx)", models::SpinlockKind::kTicket, b.handoff, b.eventfd_signal),
        call_tx_(sim, "eventfd_wqh_lock(call_tx)", models::SpinlockKind::kTicket, b.handoff, b.eventfd_signal),
        net_(sim, dev_, b.net, rings_, tap_, [this](const models::NetPacket& f) { to_server_.Transmit(f); },
             &call_rx_, &call_tx_),
        guest_(m_->sched(), b.guest, rings_, b.guest_receives ? nullptr : streams_.get(), b.tcp.streams.value),
        pi_lock_(b.params.ttwu_pi_lock) {
    if (b.linux_tcp) {
      linux_tcp_ = static_cast<models::LinuxTcp*>(streams_.get());
      if (b.guest_receives) {
        // The server sends: its NIC's queue is taken to be the host's.
        to_host_.set_queue_limit(b.host_tx_queue_skbs);
        linux_tcp_->set_push([this](int i) { server_.Push(i); });
      } else {
        to_server_.set_queue_limit(b.host_tx_queue_skbs);
        guest_.set_qdisc_limit(b.guest_qdisc_skbs);
        linux_tcp_->set_push([this](int i) { guest_.TimerPush(i); });
      }
    }
    // Linux 3.0's try_to_wake_up() spins while the task is still on its CPU.
    m_->sched().set_ttwu_spins_on_cpu(true);
    // And, with stack.vhost_net.ttwu_queue_ipi, queues remote wake-ups.
    if (b.ttwu_queue) m_->sched().set_ttwu_queue(true, b.ttwu_queue_waker.value, b.ttwu_queue_ipi.value);
    // A 3.0 ticket spin_lock's xadd needs the lock word in this CPU's cache:
    // a free lock last held on another CPU costs the word's move from there.
    for (models::Spinlock* l : {&dev_.work_lock(), &dev_.pi_lock(), &kick_tx_.lock(), &kick_rx_.lock(),
                                &call_rx_.lock(), &call_tx_.lock(), &tap_.wq_lock()}) {
      l->set_uncontended_moves(true);
    }
    tap_.set_poll_wakeup([this](models::Cpu& c) { return net_.RxNetWakeup(c); });
    kick_tx_.set_wakeup([this](models::Cpu& c) { return net_.TxKickWakeup(c); });
    kick_rx_.set_wakeup([this](models::Cpu& c) { return net_.RxKickWakeup(c); });
    // irqfd_wakeup() -> kvm_set_msi(), under the call eventfd's lock.
    call_rx_.set_wakeup([this](models::Cpu& c) { return guest_.InjectMsi(c, models::kRxVq); });
    call_tx_.set_wakeup([this](models::Cpu& c) { return guest_.InjectMsi(c, models::kTxVq); });
    guest_.set_notify([this](models::Cpu& c, int vq) {
      return (vq == models::kTxVq ? kick_tx_ : kick_rx_).Signal(c);
    });
  }

  void Start() override {
    if (linux_tcp_ != nullptr) linux_tcp_->Start();
    dev_.Start();
    guest_.Start();
    server_.Start();
  }
  std::vector<models::Cpu*> Cpus() override { return m_->cpus(); }

  std::vector<sim::RatioMetric> Metrics() override { return BindMetrics(Declared(), *this); }

  // Its metrics, declared once (scenarios/stack.h).
  static MetricDecls<Rig> Declared() {
    auto n = [](uint64_t v) { return static_cast<double>(v); };
    auto ps = [](sim::Time t) { return static_cast<double>(t.ps()); };
    auto window = [](Rig& r) { return r.m_->ElapsedS(); };
    auto window_ps = [](Rig& r) { return r.m_->ElapsedS() * 1e12; };
    auto wl = [](Rig& r) -> const models::LockStat& { return r.dev_.work_lock().stat(); };
    auto wake = [n](models::WakeCase c) {
      return [n, c](Rig& r) { return n(r.dev_.stats().wakes[static_cast<int>(c)]); };
    };
    auto delivered = [](Rig& r) { return r.data_link_->DeliveredBits() - r.delivered_at_reset_; };
    auto packets = [n](Rig& r) { return n(r.net_.stats().tx_frames + r.net_.stats().rx_packets); };
    auto vcpu_ps = [ps](Rig& r) { return ps(r.VcpuRuntime() - r.vcpu_runtime_at_reset_); };
    auto host_busy_s = [](Rig& r) {
      double busy = 0;
      for (const models::Cpu* c : r.m_->cpus()) busy += c->BusyTime().ToSeconds();
      return busy;
    };
    return {
        // What iperf's server receives: payload off the wire since the reset.
        {"throughput_gbps", delivered, window, 1e-9},
        {"vhost_cpu_pct", [ps](Rig& r) { return ps(r.dev_.WorkerCpuTime()); }, window_ps, 100},
        {"work_lock_wait_mean_us", [wl](Rig& r) { return wl(r).wait.sum(); },
         [wl](Rig& r) { return static_cast<double>(wl(r).acquisitions); }, 1e-6},
        // Every context's spinning for work_lock (wakers and the worker),
        // in percent of one CPU: the most the lock can cost anyone.
        {"work_lock_wait_pct", [wl](Rig& r) { return wl(r).wait.sum(); }, window_ps, 100},
        {"work_lock_hold_mean_us", [wl](Rig& r) { return wl(r).hold.sum(); },
         [wl](Rig& r) { return static_cast<double>(wl(r).hold.count()); }, 1e-6},
        {"wakeups_running_per_s", wake(models::WakeCase::kRunning), window, 1},
        {"wakeups_runnable_per_s", wake(models::WakeCase::kRunnable), window, 1},
        {"wakeups_switching_per_s", wake(models::WakeCase::kSwitching), window, 1},
        {"wakeups_asleep_per_s", wake(models::WakeCase::kAsleep), window, 1},
        {"packets_per_s", packets, window, 1},
        {"kicks_per_s", [n](Rig& r) { return n(r.guest_.stats().kicks); }, window, 1},
        {"interrupts_per_s", [n](Rig& r) { return n(r.guest_.stats().interrupts); }, window, 1},
        {"tx_frame_kib", [](Rig& r) { return static_cast<double>(r.data_link_->stats().payload); },
         [n](Rig& r) { return n(r.data_link_->stats().frames); }, 1.0 / 1024},
        // The guest's TCP senders: frames (skbs, retransmissions included),
        // retransmissions, entries into Recovery and retransmission
        // timeouts per second, each stream's congestion window
        // after an ACK (segments; WINDOW_SHARE: its fixed window), the
        // RTT samples' mean (LINUX_3_0), and the host NIC's queue: skbs
        // waiting as a frame arrives, frames dropped per second.
        {"tcp_frames_per_s", [n](Rig& r) { return n(r.streams_->stats().frames); }, window, 1},
        {"tcp_retransmits_per_s", [n](Rig& r) { return n(r.streams_->stats().retransmits); }, window, 1},
        {"tcp_recoveries_per_s", [n](Rig& r) { return n(r.streams_->stats().recoveries); }, window, 1},
        {"tcp_timeouts_per_s", [n](Rig& r) { return n(r.streams_->stats().timeouts); }, window, 1},
        {"tcp_cwnd_segments", [](Rig& r) { return r.streams_->stats().cwnd_sum; },
         [n](Rig& r) { return n(r.streams_->stats().acks); }, 1},
        {"tcp_rtt_ms", [](Rig& r) { return r.streams_->stats().rtt_sum_s; },
         [n](Rig& r) { return n(r.streams_->stats().rtt_samples); }, 1e3},
        {"host_queue_skbs", [](Rig& r) { return r.data_link_->stats().queued_sum; },
         [n](Rig& r) { return n(r.data_link_->stats().frames + r.data_link_->stats().drops); }, 1},
        {"host_queue_drops_per_s", [n](Rig& r) { return n(r.data_link_->stats().drops); }, window, 1},
        {"vhost_handle_tx_pct", [ps](Rig& r) { return ps(r.net_.stats().in_handle_tx); }, window_ps, 100},
        {"vhost_handle_rx_pct", [ps](Rig& r) { return ps(r.net_.stats().in_handle_rx); }, window_ps, 100},
        {"vhost_work_lock_spin_pct", [ps](Rig& r) { return ps(r.dev_.stats().work_lock_spin); }, window_ps, 100},
        {"vhost_schedule_pct", [ps](Rig& r) { return ps(r.dev_.WorkerScheduleTime()); }, window_ps, 100},
        {"vcpu_thread_cpu_pct", vcpu_ps, window_ps, 100},
        // Efficiency: payload per CPU-second busy on the host (every state
        // but idle, on every host CPU: the vCPU thread, vhost's worker, the
        // NIC's interrupts) and on the guest (its vCPU thread's run time),
        // and the host's CPU time per packet.
        {"gbit_per_host_cpu_s", delivered, host_busy_s, 1e-9},
        {"gbit_per_guest_cpu_s", delivered, vcpu_ps, 1e3},
        {"host_cpu_us_per_packet", host_busy_s, packets, 1e6},
    };
  }

  std::vector<std::pair<std::string, models::LockStat>> Locks() override {
    std::vector<std::pair<std::string, models::LockStat>> rows = {{"work_lock", dev_.work_lock().stat()},
            {kick_tx_.lock().name(), kick_tx_.lock().stat()},
            {kick_rx_.lock().name(), kick_rx_.lock().stat()},
            {call_rx_.lock().name(), call_rx_.lock().stat()},
            {call_tx_.lock().name(), call_tx_.lock().stat()},
            {tap_.wq_lock().name(), tap_.wq_lock().stat()}};
    if (pi_lock_) rows.insert(rows.begin() + 1, {dev_.pi_lock().name(), dev_.pi_lock().stat()});
    return rows;
  }

  void ResetStats() override {
    dev_.ResetStats();
    net_.ResetStats();
    guest_.ResetStats();
    streams_->ResetStats();
    to_server_.ResetStats();
    to_host_.ResetStats();
    delivered_at_reset_ = data_link_->DeliveredBits();
    nic_.ResetStats();
    tap_.ResetStats();
    kick_tx_.ResetStats();
    kick_rx_.ResetStats();
    call_rx_.ResetStats();
    call_tx_.ResetStats();
    vcpu_runtime_at_reset_ = VcpuRuntime();
    m_->ResetStats();
  }

 private:
  static std::vector<models::Cpu*> IrqCpus(Machine& m, int queues) {
    return std::vector<models::Cpu*>(m.cpus().begin(), m.cpus().begin() + queues);
  }
  static std::unique_ptr<models::TcpSenders> MakeSenders(sim::Simulator& sim, const Built& b) {
    if (b.linux_tcp) return std::make_unique<models::LinuxTcp>(sim, b.linux, nullptr);
    return std::make_unique<models::IperfStreams>(b.tcp);
  }
  static models::VirtqueueFeatures Features(bool event_idx) {
    models::VirtqueueFeatures f;
    f.event_idx = event_idx;
    f.indirect_desc = true;
    return f;
  }

  sim::Simulator* sim_;
  std::unique_ptr<Machine> m_;
  models::VirtioNetRings rings_;
  std::unique_ptr<models::TcpSenders> streams_;
  models::Tap tap_;
  models::Link to_server_;
  models::Link to_host_;
  models::IperfServer server_;
  models::Link* data_link_;
  models::HostNic nic_;
  models::VhostDev dev_;
  models::EventFd kick_tx_, kick_rx_, call_rx_, call_tx_;
  models::VhostNet net_;
  models::VirtioNetGuest guest_;
  // The vCPU thread's time on a CPU so far, the run in progress included.
  sim::Time VcpuRuntime() {
    const models::Task& t = guest_.vcpu();
    return t.runtime() + (t.running() ? sim_->Now() - t.exec_start_ : sim::Time::Zero());
  }

  bool pi_lock_;  // the worker's pi_lock row is shown (VhostParams::ttwu_pi_lock)
  models::LinuxTcp* linux_tcp_ = nullptr;
  double delivered_at_reset_ = 0;
  sim::Time vcpu_runtime_at_reset_;
};

std::vector<std::string> Names() { return DeclaredNames<Rig>(); }

// REQUIRES: `s` is resolved and validated, with an iperf workload, and
// passed the rules of its stack (checks.h). InvalidArgument naming the
// field for a missing or bad one.
absl::StatusOr<std::unique_ptr<BuiltRun>> Build(sim::Simulator& sim, const Params& s) {
  VIOSIM_CHECK(static_cast<const Scenario&>(s.message()).stack().has_vhost_net(),
               "an iperf workload has a vhost_net stack (the loader's checks refuse others)");
  const Params v = s["stack"]["vhost_net"];
  const Params w = s["workload"]["iperf"];
  Built b;
  models::Param<sim::Time> path{};
  const std::string k = "stack.vhost_net.";
  const CostSlot fields[] = {
      {"propagation", &b.link.propagation},
      {"server_turnaround", &b.link.turnaround},
      {"nic_itr", &b.nic.itr},
      {"nic_irq_entry", &b.nic.irq_entry},
      {"nic_rx_per_packet", &b.nic.rx_per_packet},
      {"work_list_op", &b.vhost.work_list_op},
      {"get_vq_desc", &b.net.get_vq_desc},
      {"tx_per_frame", &b.net.tx_per_frame},
      {"tx_copy_per_kib", &b.net.tx_copy_per_kib},
      {"rx_per_packet", &b.net.rx_per_packet},
      {"add_used", &b.net.add_used},
      {"enable_notify", &b.net.enable_notify},
      {"irq_inject", &b.net.irq_inject},
      {"guest_tx_per_frame", &b.guest.tx_per_frame},
      {"guest_rx_per_packet", &b.guest.rx_per_packet},
      {"guest_add_buf", &b.guest.add_buf},
      {"pio_exit", &b.guest.pio_exit},
      {"irq_exit_inject", &b.guest.irq_exit_inject},
      {"irq_entry_inject", &b.guest.irq_inject},
      {"guest_irq_handler", &b.guest.irq_handler},
      {"hlt_exit", &b.guest.hlt_exit},
  };
  if (absl::Status st = RequiredCosts(v, fields); !st.ok()) return st;
  // The copies into the guest's buffers and out of them happen only when
  // the guest receives.
  b.guest_receives = w.Bool("guest_receives");
  if (b.guest_receives) {
    const CostSlot receive[] = {{"rx_copy_per_kib", &b.net.rx_copy_per_kib},
                                {"guest_copy_per_kib", &b.guest.copy_per_kib}};
    if (absl::Status st = RequiredCosts(v, receive); !st.ok()) return st;
  }
  b.linux_tcp = w.Enum("tcp") == ::viosim::Workload_Iperf::LINUX_3_0;
  if (!b.linux_tcp) {
    const CostSlot rtt[] = {{"path_rtt", &path}};
    if (absl::Status st = RequiredCosts(w, rtt); !st.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(st.message(), " with workload.iperf.tcp = WINDOW_SHARE (the round trip whose bytes the "
                                     "streams' windows share)"));
    }
  }
  models::Param<sim::Time> signal{};
  const CostSlot more[] = {{"eventfd_signal", &signal}};
  if (absl::Status st = RequiredCosts(v, more); !st.ok()) return st;
  b.eventfd_signal = signal.value;
  if (!v.Has("link_rate_bps")) return absl::InvalidArgumentError(absl::StrCat("field '", k, "link_rate_bps' is required"));
  // A power of two: the loader's checks (scenarios/checks.cc) refuse
  // others, and the virtqueue model checks it.
  const int64_t ring_size = v.Int("ring_size");
  const int host_cpus = static_cast<int>(v.Int("host_cpus"));
  const int nic_rx_queues = static_cast<int>(v.Int("nic_rx_queues"));
  VIOSIM_CHECK(nic_rx_queues <= host_cpus,
               "each NIC receive queue has a host CPU of its own (the loader's checks refuse more queues)");
  const int mtu = static_cast<int>(v.Int("mtu"));
  const int tcpip_header = static_cast<int>(v.Int("tcpip_header"));
  VIOSIM_CHECK(mtu > tcpip_header, "a frame has room for payload after its headers (the loader's checks refuse less)");
  const Stack::VhostNet& typed = static_cast<const Scenario&>(s.message()).stack().vhost_net();
  b.link.rate_bps = {v.Real("link_rate_bps"), {KindOf(typed.link_rate_source()), "set by the scenario"}};
  b.link.mtu.value = mtu;
  b.link.tcpip_header.value = tcpip_header;
  b.link.framing.value = static_cast<int>(v.Int("framing"));
  b.link.ack_bytes.value = static_cast<int>(v.Int("ack_wire_bytes"));
  absl::StatusOr<bool> after = PatchedPlacement(v, "wake_up_process", {UNDER_LOCK, AFTER_UNLOCK});
  if (!after.ok()) return after.status();
  b.params.wake_outside_lock = *after;
  const int worker_cpu = static_cast<int>(v.Int("worker_cpu"));
  if (worker_cpu >= host_cpus) {
    return absl::InvalidArgumentError(absl::StrCat("field '", k, "worker_cpu': CPU ", worker_cpu,
                                                   " is not one of the ", host_cpus,
                                                   " host CPUs (stack.vhost_net.host_cpus)"));
  }
  b.params.worker_cpu = worker_cpu;
  b.params.ttwu_pi_lock = v.Bool("ttwu_pi_lock");
  b.ttwu_queue = v.HasCost("ttwu_queue_ipi");
  if (b.ttwu_queue) {
    const CostSlot queue[] = {{"ttwu_queue_ipi", &b.ttwu_queue_ipi}, {"ttwu_queue_waker", &b.ttwu_queue_waker}};
    if (absl::Status st = RequiredCosts(v, queue); !st.ok()) return st;
  }
  b.ring = static_cast<int>(ring_size);
  b.event_idx = v.Bool("event_idx");
  b.nic_rx_queues = nic_rx_queues;
  absl::StatusOr<sim::Time> handoff = LockHandoff(s["platform"]);
  if (!handoff.ok()) return handoff.status();
  b.handoff = models::LockHandoffCosts::Uniform(*handoff);
  // The last holder is this CPU: the word is in its own cache and does not move.
  b.handoff.same_cpu = {sim::Time::Zero(), {models::SourceKind::kDefined, "no transfer: the line is in this CPU's cache"}};

  b.tcp.streams.value = static_cast<int>(w.Int("streams"));
  b.tcp.mss.value = b.link.mss();
  b.tcp.gso_max.value = static_cast<int>(w.Int("gso_max"));
  b.tcp.tso_win_divisor.value = static_cast<int>(w.Int("tso_win_divisor"));
  b.tcp.receive_window.value = w.Int("receive_window");
  if (b.linux_tcp) {
    models::LinuxTcpParams& l = b.linux;
    l.streams = b.tcp.streams.value;
    l.mss = b.tcp.mss.value;
    l.gso_max = b.tcp.gso_max.value;
    // tcp_xmit_size_goal(): gso_max - 1 less the IP and TCP headers, in
    // whole segments.
    l.size_goal = std::max<int64_t>(l.mss, (l.gso_max - 1 - tcpip_header) / l.mss * l.mss);
    l.tso_win_divisor = b.tcp.tso_win_divisor.value;
    l.peer_window = b.tcp.receive_window.value;
    l.hz = static_cast<int>(w.Int("hz"));
    l.initial_cwnd = static_cast<int>(w.Int("initial_cwnd"));
    l.hystart = w.Bool("hystart");
    b.host_tx_queue_skbs = static_cast<int>(v.Int("host_tx_queue_skbs"));
    if (!b.guest_receives) b.guest_qdisc_skbs = static_cast<int>(v.Int("guest_qdisc_skbs"));
  } else {
    // The bytes the path holds when its queues are full: goodput x RTT.
    b.tcp.path_bytes.value = static_cast<int64_t>(models::Link::MaxGoodputBps(b.link) / 8 * path.value.ToSeconds());
  }

  absl::StatusOr<models::HostCosts> host = HostCostsOf(s["platform"], kHostSched);
  if (!host.ok()) return host.status();
  absl::StatusOr<std::unique_ptr<Machine>> m = Machine::Make(sim, s["platform"], host_cpus, "host", host->sched());
  if (!m.ok()) return m.status();
  return std::unique_ptr<BuiltRun>(new Rig(sim, std::move(*m), b));
}

}  // namespace

StackPart VhostNetPart() {
  StackPart p = {"vhost_net",
                 "network, with workload.iperf: Linux 3.0 vhost-net, a 1-vCPU guest's virtio-net, tap, 10 GbE", false,
                 &Names, nullptr};
  p.workload = Workload::kIperf;
  p.build_run = &Build;
  p.stack_kind = "network";
  return p;
}

}  // namespace viosim::stacks
