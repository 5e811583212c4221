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
#include "scenarios/stacks/md_stack.h"
#include "scenarios/stacks/parts.h"

namespace viosim::stacks {
namespace {

// Per-I/O transfers of each line group, in this order.
const char* const kLineNames[] = {"nr_pending", "barrier",          "conf_wait_barrier", "conf_array_frozen",
                                  "mirrors",    "rdev0_nr_pending", "rdev1_nr_pending"};

class Raid1Stack final : public MdStack {
 public:
  Raid1Stack(Machine& m, const models::Raid1Costs& costs, const models::BrdCosts& brd,
             const models::Raid1Params& params, const models::LineCosts& lines,
             const models::LockHandoffCosts& wait_lock, double lock_word_transfers)
      : MdStack(m, lock_word_transfers), raid_(m.sim(), costs, brd, params, lines, wait_lock) {}

  models::BlockStack& block() override { return raid_; }
  const models::MdArray& md() const override { return raid_; }

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

  std::vector<sim::RatioMetric> Metrics() override { return BindMetrics(Declared(), *this); }

  // Its metrics beyond fio's, declared once (scenarios/stack.h): md's
  // shared ones around each line group's transfers per I/O.
  static MetricDecls<Raid1Stack> Declared() {
    auto ios = [](Raid1Stack& s) { return MdIos(s.raid_); };
    MetricDecls<Raid1Stack> d;
    AppendMetrics(d, WaitBarrierMetrics());
    for (size_t i = 0; i < std::size(kLineNames); ++i) {
      d.push_back({absl::StrCat("xfer_per_io_", kLineNames[i]), [i](Raid1Stack& s) { return s.Transfers(i); }, ios, 1});
    }
    d.push_back({"barrier_slow_paths_per_io",
                 [](Raid1Stack& s) { return static_cast<double>(s.raid_.stats().barrier_slow_paths); }, ios, 1});
    AppendMetrics(d, CpuSplitMetrics());
    return d;
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
  models::Raid1 raid_;
};

std::vector<std::string> Names() { return DeclaredNames<Raid1Stack>(); }

absl::StatusOr<std::unique_ptr<BuiltStack>> Build(const Params& s, Machine& m, const models::HostCosts& host) {
  (void)host;
  const Params r = s["stack"]["raid1"];
  models::Raid1Params params;
  absl::StatusOr<bool> if_sleeper = PatchedPlacement(r, "wake_up", {UNDER_LOCK, IF_SLEEPER});
  if (!if_sleeper.ok()) return if_sleeper.status();
  params.wake_up_barrier = *if_sleeper;
  models::Raid1Costs c;
  const CostSlot own[] = {{"write_disks", &c.write_disks}};
  // wq_has_sleeper() is called on the fix's fast paths only.
  absl::StatusOr<MdStackInputs> in = ReadMdStack(s, "raid1", &c, own, /*has_sleeper=*/*if_sleeper);
  if (!in.ok()) return in.status();
  return std::make_unique<Raid1Stack>(m, c, in->brd, params, in->lines.lines, in->lines.wait_lock,
                                      in->lock_word_transfers);
}

}  // namespace

StackPart Raid1Part() {
  StackPart p = {"raid1", "md raid1 over two brd ramdisks (Linux 6.4), bare metal", false, &Names, &Build,
          /*host_block=*/false, /*cpu_places=*/true};
  p.linux_version = 604;
  return p;
}

}  // namespace viosim::stacks
