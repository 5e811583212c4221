// stack.raid1: md raid1 over two brd ramdisks on a bare-metal host, Linux
// 6.4 (models/md/raid1.h): the raid1 case on raid10-unplug's host.
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/md/raid1.h"
#include "models/sync/handoff_costs.h"
#include "scenarios/stacks/md_lines.h"
#include "scenarios/stacks/parts.h"

namespace viosim::stacks {
namespace {

// Per-I/O transfers of each line group, in this order.
const char* const kLineNames[] = {"nr_pending", "barrier",          "conf_wait_barrier", "conf_array_frozen",
                                  "mirrors",    "rdev0_nr_pending", "rdev1_nr_pending"};

class Raid1Stack final : public BuiltStack {
 public:
  Raid1Stack(Machine& m, const models::Raid1Costs& costs, const models::BrdCosts& brd,
             const models::Raid1Params& params, const models::LineCosts& lines,
             const models::LockHandoffCosts& wait_lock, double lock_word_transfers)
      : machine_(&m), raid_(m.sim(), costs, brd, params, lines, wait_lock), lock_word_transfers_(lock_word_transfers) {}

  models::BlockStack& block() override { return raid_; }

  // The transfers of line group `i` (kLineNames) since the last reset.
  double Transfers(size_t i) const {
    auto sum = [](const std::vector<const models::CacheLine*>& ls) {
      uint64_t n = 0;
      for (const models::CacheLine* l : ls) n += l->transfers();
      return static_cast<double>(n);
    };
    switch (i) {
      case 0: return sum(raid_.nr_pending_lines());
      case 1: return sum(raid_.barrier_lines());
      case 2: return static_cast<double>(raid_.conf_wait_line().transfers());
      case 3: return static_cast<double>(raid_.conf_frozen_line().transfers());
      case 4: return static_cast<double>(raid_.mirrors_line().transfers() + raid_.replacements_line().transfers());
      default: return static_cast<double>(raid_.rdev_pending(static_cast<int>(i) - 5).transfers());
    }
  }

  std::vector<sim::RatioMetric> Metrics() override {
    auto ios = [this] { return static_cast<double>(raid_.stats().reads + raid_.stats().writes); };
    auto cpu_s = [this] { return machine_->ElapsedS() * machine_->ncpus(); };
    const models::LockStat& wq = raid_.wait_barrier().lock().stat();
    std::vector<sim::RatioMetric> m = {
        {"wait_barrier_lock_per_io", [&wq] { return static_cast<double>(wq.acquisitions); }, ios, 1},
        {"wait_barrier_contention_pct", [&wq] { return static_cast<double>(wq.contentions); },
         [&wq] { return static_cast<double>(wq.acquisitions); }, 100},
        {"wait_barrier_wait_us_per_io", [&wq] { return wq.wait.sum(); }, ios, 1e-6},
        {"xfer_per_io_wait_barrier_lock",
         [this, &wq] { return lock_word_transfers_ * static_cast<double>(wq.contentions); }, ios, 1},
    };
    for (size_t i = 0; i < std::size(kLineNames); ++i) {
      m.push_back({absl::StrCat("xfer_per_io_", kLineNames[i]), [this, i] { return Transfers(i); }, ios, 1});
    }
    m.push_back({"barrier_slow_paths_per_io",
                 [this] { return static_cast<double>(raid_.stats().barrier_slow_paths); }, ios, 1});
    auto s = [](sim::Time t) { return t.ToSeconds(); };
    m.push_back({"md_cpu_pct", [this, s] { return s(raid_.stats().md); }, cpu_s, 100});
    m.push_back({"brd_cpu_pct", [this, s] { return s(raid_.stats().brd); }, cpu_s, 100});
    m.push_back({"dio_cpu_pct", [this, s] { return s(raid_.stats().dio); }, cpu_s, 100});
    m.push_back({"spin_cpu_pct", [this] { return machine_->TimeInS(models::CpuTime::kSpin); }, cpu_s, 100});
    m.push_back({"fio_user_cpu_pct", [this] { return machine_->TimeInS(models::CpuTime::kUser); }, cpu_s, 100});
    m.push_back({"other_sys_cpu_pct",
                 [this, s] {
                   const models::Raid1::Stats& st = raid_.stats();
                   return machine_->TimeInS(models::CpuTime::kSystem) - s(st.md) - s(st.dio) - s(st.brd);
                 },
                 cpu_s, 100});
    m.push_back({"idle_cpu_pct", [this] { return machine_->TimeInS(models::CpuTime::kIdle); }, cpu_s, 100});
    return m;
  }

  std::vector<std::pair<std::string, models::LockStat>> Locks() override {
    return {{"&conf->wait_barrier", raid_.wait_barrier().lock().stat()},
            {"&conf->resync_lock", raid_.resync_lock().stat()},
            {"&conf->device_lock", raid_.device_lock().stat()}};
  }
  void ResetStats() override { raid_.ResetStats(); }

  // conf->wait_barrier's lock bounds the run when nearly every acquisition
  // finds it taken; otherwise the CPUs do, when they are busy. The detail
  // names the line group that moves most per I/O.
  std::optional<Bound> BoundNow() override {
    const models::LockStat& wq = raid_.wait_barrier().lock().stat();
    const double cpu_s = machine_->ElapsedS() * machine_->ncpus();
    const double ios = static_cast<double>(raid_.stats().reads + raid_.stats().writes);
    if (cpu_s <= 0 || ios <= 0) return std::nullopt;
    const double spin = 100 * machine_->TimeInS(models::CpuTime::kSpin) / cpu_s;
    const double busy = 100 - 100 * machine_->TimeInS(models::CpuTime::kIdle) / cpu_s;
    const double contended = wq.acquisitions > 0 ? 100.0 * wq.contentions / wq.acquisitions : 0;
    size_t top = 0;
    for (size_t i = 1; i < std::size(kLineNames); ++i) {
      if (Transfers(i) > Transfers(top)) top = i;
    }
    const std::string line = absl::StrFormat("busiest line %s, %.2f transfers per I/O", kLineNames[top],
                                             Transfers(top) / ios);
    if (contended >= kSaturatedPct) {
      return Bound{"wait_barrier_lock",
                   absl::StrFormat("conf->wait_barrier's lock (%.2f acquisitions per I/O, %.2f%% contended, "
                                   "CPUs spinning %.1f%% of their time; %s)",
                                   static_cast<double>(wq.acquisitions) / ios, contended, spin, line)};
    }
    if (busy >= kSaturatedPct) {
      return Bound{"cpu", absl::StrFormat("the CPUs (busy %.2f%%, spinning %.1f%%; wait_barrier lock contended "
                                          "on %.1f%% of acquisitions; %s)",
                                          busy, spin, contended, line)};
    }
    return Bound{"per_io_latency", absl::StrFormat("per-I/O latency (CPUs busy %.1f%%; %s)", busy, line)};
  }

 private:
  Machine* machine_;
  models::Raid1 raid_;
  double lock_word_transfers_;
};

std::vector<std::string> Names() {
  std::vector<std::string> n = {"wait_barrier_lock_per_io", "wait_barrier_contention_pct",
                                "wait_barrier_wait_us_per_io", "xfer_per_io_wait_barrier_lock"};
  for (const char* l : kLineNames) n.push_back(absl::StrCat("xfer_per_io_", l));
  for (const char* c : {"barrier_slow_paths_per_io", "md_cpu_pct", "brd_cpu_pct", "dio_cpu_pct", "spin_cpu_pct",
                        "fio_user_cpu_pct", "other_sys_cpu_pct", "idle_cpu_pct"}) {
    n.push_back(c);
  }
  return n;
}

absl::StatusOr<std::unique_ptr<BuiltStack>> Build(const Params& s, Machine& m, const models::HostCosts& host) {
  (void)host;
  const Params r = s["stack"]["raid1"];
  models::Raid1Costs c;
  models::BrdCosts b;
  const CostSlot fields[] = {
      {"dio_submit", &c.dio_submit},
      {"dio_complete", &c.dio_complete},
      {"plug", &c.plug},
      {"make_request", &c.make_request},
      {"barrier_check", &c.barrier_check},
      {"read_balance", &c.read_balance},
      {"write_disks", &c.write_disks},
      {"bio_clone", &c.bio_clone},
      {"plug_cb_alloc", &c.plug_cb_alloc},
      {"plug_cb_free", &c.plug_cb_free},
      {"end_request", &c.end_request},
      {"end_bio_io", &c.end_bio_io},
      {"wake_up_walk", &c.wake_up_walk},
      {"brd_submit_bio", &b.submit_bio},
      {"brd_lookup_page", &b.lookup_page},
      {"brd_copy_page", &b.copy_page},
  };
  if (absl::Status st = RequiredCosts(r, fields); !st.ok()) return st;
  if (!r.Has("lock_word_transfers")) {
    return absl::InvalidArgumentError("field 'stack.raid1.lock_word_transfers' is required");
  }
  const double transfers = r.Real("lock_word_transfers");
  const int home_socket = static_cast<int>(r.Int("home_socket"));
  absl::StatusOr<MdLineCosts> lines = MdLines(s, home_socket, transfers);
  if (!lines.ok()) return lines.status();
  models::Raid1Params params;
  absl::StatusOr<bool> if_sleeper = PatchedPlacement(r, "wake_up", {UNDER_LOCK, IF_SLEEPER});
  if (!if_sleeper.ok()) return if_sleeper.status();
  params.wake_up_barrier = *if_sleeper;
  if (*if_sleeper) {  // wq_has_sleeper() is called on the fix's fast paths only
    absl::StatusOr<models::Param<sim::Time>> t = r.RequiredCost("has_sleeper");
    if (!t.ok()) return t.status();
    c.has_sleeper = *t;
  }
  params.home_socket = home_socket;
  return std::make_unique<Raid1Stack>(m, c, b, params, lines->lines, lines->wait_lock, transfers);
}

}  // namespace

StackPart Raid1Part() {
  StackPart p = {"raid1", "md raid1 over two brd ramdisks (Linux 6.4), bare metal", false, &Names, &Build,
          /*host_block=*/false, /*cpu_places=*/true};
  p.linux_version = 604;
  return p;
}

}  // namespace viosim::stacks
