// stack.raid10: md raid10 (near-2) over two brd ramdisks on a bare-metal
// host, Linux 6.4 (models/md): the raid10-unplug case.
#include <array>
#include <cmath>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/md/raid10.h"
#include "models/sync/handoff_costs.h"
#include "scenarios/stacks/md_lines.h"
#include "scenarios/stacks/parts.h"

namespace viosim::stacks {
namespace {

// The hot lines' short names in metric names, in Raid10::lines() order:
// conf+192, conf+256, mirrors+0, rdev0+192, rdev1+192, each by the field
// that makes it hot.
const char* const kLineNames[] = {"nr_pending", "wait_barrier", "mirrors", "rdev0_nr_pending", "rdev1_nr_pending"};
static_assert(std::size(kLineNames) == models::Raid10::kHotLines);

class Raid10Stack final : public BuiltStack {
 public:
  Raid10Stack(Machine& m, const models::Raid10Costs& costs, const models::BrdCosts& brd,
              const models::Raid10Params& params, const models::LineCosts& lines,
              const models::LockHandoffCosts& wait_lock, double lock_word_transfers)
      : machine_(&m),
        raid_(m.sim(), costs, brd, params, lines, wait_lock),
        lock_word_transfers_(lock_word_transfers) {
    raid_.set_scheduler(m.sched());
  }

  models::BlockStack& block() override { return raid_; }

  std::vector<sim::RatioMetric> Metrics() override {
    auto ios = [this] { return static_cast<double>(raid_.stats().reads + raid_.stats().writes); };
    auto writes = [this] { return static_cast<double>(raid_.stats().writes); };
    auto cpu_s = [this] { return machine_->ElapsedS() * machine_->ncpus(); };
    const models::LockStat& wq = raid_.wait_barrier().lock().stat();
    std::vector<sim::RatioMetric> m = {
        {"wait_barrier_lock_per_io", [&wq] { return static_cast<double>(wq.acquisitions); }, ios, 1},
        {"wait_barrier_contention_pct", [&wq] { return static_cast<double>(wq.contentions); },
         [&wq] { return static_cast<double>(wq.acquisitions); }, 100},
        {"wait_barrier_wait_us_per_io", [&wq] { return wq.wait.sum(); }, ios, 1e-6},
        // The lock word moves lock_word_transfers times per contended
        // hand-off.
        {"xfer_per_io_wait_barrier_lock",
         [this, &wq] { return lock_word_transfers_ * static_cast<double>(wq.contentions); }, ios, 1},
    };
    // Per hot line: transactions per I/O, their mean wait for the line
    // (ns), the line's utilisation (% of the window serving one).
    const std::array<models::CacheLine*, models::Raid10::kHotLines> lines = raid_.lines();
    for (size_t i = 0; i < lines.size(); ++i) {
      const models::CacheLine* l = lines[i];
      auto tx = [l] { return static_cast<double>(l->transfers()); };
      m.push_back({absl::StrCat("xfer_per_io_", kLineNames[i]), tx, ios, 1});
      m.push_back({absl::StrCat("line_wait_ns_", kLineNames[i]), [l] { return l->wait_sum().ToSeconds(); }, tx, 1e9});
      m.push_back({absl::StrCat("line_util_pct_", kLineNames[i]), [l] { return l->BusyTime().ToSeconds(); },
                   [this] { return machine_->ElapsedS(); }, 100});
    }
    m.push_back({"plug_cbs_per_write", [this] { return static_cast<double>(raid_.stats().plug_cbs); }, writes, 1});
    // md's thread path: plugs flushed from schedule() onto
    // conf->pending_bio_list, and raid10d's flush_pending_writes that found
    // bios (zero unless a task sleeps holding its plug).
    m.push_back({"unplugs_from_schedule_per_write",
                 [this] { return static_cast<double>(raid_.stats().unplugs_from_schedule); }, writes, 1});
    m.push_back({"raid10d_flushes_per_write", [this] { return static_cast<double>(raid_.stats().flushes); }, writes,
                 1});
    // Where the CPUs' time goes: counted by the path as it charges it
    // (md, brd, direct I/O), and from the CPUs' own accounting (spinning,
    // fio's user time, the rest of system time: syscall entry and exit,
    // aio's per-iocb and per-event work, context switches; idle).
    auto s = [](sim::Time t) { return t.ToSeconds(); };
    m.push_back({"md_cpu_pct", [this, s] { return s(raid_.stats().md); }, cpu_s, 100});
    m.push_back({"brd_cpu_pct", [this, s] { return s(raid_.stats().brd); }, cpu_s, 100});
    m.push_back({"dio_cpu_pct", [this, s] { return s(raid_.stats().dio); }, cpu_s, 100});
    m.push_back({"spin_cpu_pct", [this] { return machine_->TimeInS(models::CpuTime::kSpin); }, cpu_s, 100});
    m.push_back({"fio_user_cpu_pct", [this] { return machine_->TimeInS(models::CpuTime::kUser); }, cpu_s, 100});
    m.push_back({"other_sys_cpu_pct",
                 [this, s] {
                   const models::Raid10::Stats& st = raid_.stats();
                   return machine_->TimeInS(models::CpuTime::kSystem) - s(st.md) - s(st.dio) - s(st.brd);
                 },
                 cpu_s, 100});
    m.push_back({"idle_cpu_pct", [this] { return machine_->TimeInS(models::CpuTime::kIdle); }, cpu_s, 100});
    return m;
  }

  std::vector<std::pair<std::string, models::LockStat>> Locks() override {
    return {{"&conf->wait_barrier", raid_.wait_barrier().lock().stat()}};
  }
  void ResetStats() override { raid_.ResetStats(); }

  // conf->wait_barrier's lock bounds the run when nearly every acquisition
  // finds it taken (a queue always waits); else the busiest hot line when
  // it serves nearly all the time; otherwise the CPUs do, when they are
  // busy.
  std::optional<Bound> BoundNow() override {
    const models::LockStat& wq = raid_.wait_barrier().lock().stat();
    const double window = machine_->ElapsedS();
    const double cpu_s = window * machine_->ncpus();
    if (cpu_s <= 0) return std::nullopt;
    const double spin = 100 * machine_->TimeInS(models::CpuTime::kSpin) / cpu_s;
    const double busy = 100 - 100 * machine_->TimeInS(models::CpuTime::kIdle) / cpu_s;
    const double contended = wq.acquisitions > 0 ? 100.0 * wq.contentions / wq.acquisitions : 0;
    if (contended >= kSaturatedPct) {
      return Bound{"wait_barrier_lock",
                   absl::StrFormat("conf->wait_barrier's lock (%.2f%% of acquisitions contended, CPUs spinning "
                                   "%.1f%% of their time)",
                                   contended, spin)};
    }
    const std::array<models::CacheLine*, models::Raid10::kHotLines> lines = raid_.lines();
    size_t top = 0;
    for (size_t i = 1; i < lines.size(); ++i) {
      if (lines[i]->BusyTime() > lines[top]->BusyTime()) top = i;
    }
    const double util = 100 * lines[top]->BusyTime().ToSeconds() / window;
    if (util >= kSaturatedPct) {
      const models::CacheLine& l = *lines[top];
      const double wait_ns = l.transfers() > 0 ? 1e9 * l.wait_sum().ToSeconds() / l.transfers() : 0;
      return Bound{absl::StrCat("line_", kLineNames[top]),
                   absl::StrFormat("the cache line %s (%s): busy %.1f%% of the time, %.0f ns mean wait per "
                                   "transaction",
                                   l.name(), l.fields(), util, wait_ns)};
    }
    if (busy >= kSaturatedPct) {
      return Bound{"cpu", absl::StrFormat("the CPUs (busy %.2f%%, spinning %.1f%%; wait_barrier lock contended "
                                          "on %.1f%% of acquisitions; busiest line %s %.1f%%)",
                                          busy, spin, contended, lines[top]->name(), util)};
    }
    return Bound{"per_io_latency", absl::StrFormat("per-I/O latency (CPUs busy %.1f%%)", busy)};
  }

 private:
  Machine* machine_;
  models::Raid10 raid_;
  double lock_word_transfers_;
};

std::vector<std::string> Names() {
  std::vector<std::string> n = {"wait_barrier_lock_per_io", "wait_barrier_contention_pct",
                                "wait_barrier_wait_us_per_io", "xfer_per_io_wait_barrier_lock"};
  for (const char* l : kLineNames) {
    for (const char* k : {"xfer_per_io_", "line_wait_ns_", "line_util_pct_"}) n.push_back(absl::StrCat(k, l));
  }
  for (const char* c : {"plug_cbs_per_write", "unplugs_from_schedule_per_write", "raid10d_flushes_per_write", "md_cpu_pct", "brd_cpu_pct", "dio_cpu_pct", "spin_cpu_pct",
                        "fio_user_cpu_pct", "other_sys_cpu_pct", "idle_cpu_pct"}) {
    n.push_back(c);
  }
  return n;
}


absl::StatusOr<std::unique_ptr<BuiltStack>> Build(const Params& s, Machine& m, const models::HostCosts& host) {
  (void)host;
  const Params r = s["stack"]["raid10"];
  models::Raid10Costs c;
  models::BrdCosts b;
  const CostSlot fields[] = {
      {"dio_submit", &c.dio_submit},
      {"dio_complete", &c.dio_complete},
      {"plug", &c.plug},
      {"make_request", &c.make_request},
      {"barrier_check", &c.barrier_check},
      {"read_balance", &c.read_balance},
      {"find_phys", &c.find_phys},
      {"bio_clone", &c.bio_clone},
      {"plug_cb_alloc", &c.plug_cb_alloc},
      {"plug_cb_free", &c.plug_cb_free},
      {"end_request", &c.end_request},
      {"end_bio_io", &c.end_bio_io},
      {"has_sleeper", &c.has_sleeper},
      {"wake_up_walk", &c.wake_up_walk},
      {"md_thread_run", &c.md_thread_run},
      {"brd_submit_bio", &b.submit_bio},
      {"brd_lookup_page", &b.lookup_page},
      {"brd_copy_page", &b.copy_page},
  };
  if (absl::Status st = RequiredCosts(r, fields); !st.ok()) return st;
  if (!r.Has("lock_word_transfers")) {
    return absl::InvalidArgumentError("field 'stack.raid10.lock_word_transfers' is required");
  }
  const double transfers = r.Real("lock_word_transfers");
  absl::StatusOr<MdLineCosts> lines = MdLines(s, static_cast<int>(r.Int("home_socket")), transfers);
  if (!lines.ok()) return lines.status();
  models::Raid10Params params;
  absl::StatusOr<bool> if_sleeper = PatchedPlacement(r, "unplug_wake_up", {UNDER_LOCK, IF_SLEEPER});
  if (!if_sleeper.ok()) return if_sleeper.status();
  params.unplug_wake_up_barrier = *if_sleeper;
  absl::StatusOr<bool> flush_if_sleeper = PatchedPlacement(r, "flush_wake_up", {UNDER_LOCK, IF_SLEEPER});
  if (!flush_if_sleeper.ok()) return flush_if_sleeper.status();
  params.flush_wake_up_barrier = *flush_if_sleeper;
  return std::make_unique<Raid10Stack>(m, c, b, params, lines->lines, lines->wait_lock, transfers);
}

}  // namespace

StackPart Raid10Part() {
  StackPart p = {"raid10", "md raid10 near-2 over two brd ramdisks (Linux 6.4), bare metal", false, &Names, &Build,
          /*host_block=*/false, /*cpu_places=*/true};
  p.linux_version = 604;
  return p;
}

}  // namespace viosim::stacks
