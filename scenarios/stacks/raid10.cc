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
#include "scenarios/stacks/md_stack.h"
#include "scenarios/stacks/parts.h"

namespace viosim::stacks {
namespace {

// The hot lines' short names in metric names, in Raid10::lines() order:
// conf+192, conf+256, mirrors+0, rdev0+192, rdev1+192, each by the field
// that makes it hot.
const char* const kLineNames[] = {"nr_pending", "wait_barrier", "mirrors", "rdev0_nr_pending", "rdev1_nr_pending"};
static_assert(std::size(kLineNames) == models::Raid10::kHotLines);

class Raid10Stack final : public MdStack {
 public:
  Raid10Stack(Machine& m, const models::Raid10Costs& costs, const models::BrdCosts& brd,
              const models::Raid10Params& params, const models::LineCosts& lines,
              const models::LockHandoffCosts& wait_lock, double lock_word_transfers)
      : MdStack(m, lock_word_transfers), raid_(m.sim(), costs, brd, params, lines, wait_lock) {
    raid_.set_scheduler(m.sched());
  }

  models::BlockStack& block() override { return raid_; }
  const models::MdArray& md() const override { return raid_; }

  std::vector<sim::RatioMetric> Metrics() override { return BindMetrics(Declared(), *this); }

  // Its metrics beyond fio's, declared once (scenarios/stack.h): md's
  // shared ones around the hot lines' and the plug path's.
  static MetricDecls<Raid10Stack> Declared() {
    using S = Raid10Stack;
    auto ios = [](S& s) { return MdIos(s.raid_); };
    auto writes = [](S& s) { return static_cast<double>(s.raid_.stats().writes); };
    MetricDecls<S> d;
    AppendMetrics(d, WaitBarrierMetrics());
    // Per hot line: transactions per I/O, their mean wait for the line
    // (ns), the line's utilisation (% of the window serving one).
    for (size_t i = 0; i < std::size(kLineNames); ++i) {
      auto tx = [i](S& s) { return static_cast<double>(s.raid_.lines()[i]->transfers()); };
      d.push_back({absl::StrCat("xfer_per_io_", kLineNames[i]), tx, ios, 1});
      d.push_back({absl::StrCat("line_wait_ns_", kLineNames[i]),
                   [i](S& s) { return s.raid_.lines()[i]->wait_sum().ToSeconds(); }, tx, 1e9});
      d.push_back({absl::StrCat("line_util_pct_", kLineNames[i]),
                   [i](S& s) { return s.raid_.lines()[i]->BusyTime().ToSeconds(); },
                   [](S& s) { return s.machine_->ElapsedS(); }, 100});
    }
    d.push_back({"plug_cbs_per_write", [](S& s) { return static_cast<double>(s.raid_.stats().plug_cbs); }, writes, 1});
    // md's thread path: plugs flushed from schedule() onto
    // conf->pending_bio_list, and raid10d's flush_pending_writes that found
    // bios (zero unless a task sleeps holding its plug).
    d.push_back({"unplugs_from_schedule_per_write",
                 [](S& s) { return static_cast<double>(s.raid_.stats().unplugs_from_schedule); }, writes, 1});
    d.push_back({"raid10d_flushes_per_write", [](S& s) { return static_cast<double>(s.raid_.stats().flushes); },
                 writes, 1});
    AppendMetrics(d, CpuSplitMetrics());
    return d;
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
  models::Raid10 raid_;
};

std::vector<std::string> Names() { return DeclaredNames<Raid10Stack>(); }

absl::StatusOr<std::unique_ptr<BuiltStack>> Build(const Params& s, Machine& m, const models::HostCosts& host) {
  (void)host;
  const Params r = s["stack"]["raid10"];
  models::Raid10Costs c;
  const CostSlot own[] = {{"find_phys", &c.find_phys}, {"md_thread_run", &c.md_thread_run}};
  absl::StatusOr<MdStackInputs> in = ReadMdStack(s, "raid10", &c, own, /*has_sleeper=*/true);
  if (!in.ok()) return in.status();
  models::Raid10Params params;
  absl::StatusOr<bool> if_sleeper = PatchedPlacement(r, "unplug_wake_up", {UNDER_LOCK, IF_SLEEPER});
  if (!if_sleeper.ok()) return if_sleeper.status();
  params.unplug_wake_up_barrier = *if_sleeper;
  absl::StatusOr<bool> flush_if_sleeper = PatchedPlacement(r, "flush_wake_up", {UNDER_LOCK, IF_SLEEPER});
  if (!flush_if_sleeper.ok()) return flush_if_sleeper.status();
  params.flush_wake_up_barrier = *flush_if_sleeper;
  return std::make_unique<Raid10Stack>(m, c, in->brd, params, in->lines.lines, in->lines.wait_lock,
                                       in->lock_word_transfers);
}

}  // namespace

StackPart Raid10Part() {
  StackPart p = {"raid10", "md raid10 near-2 over two brd ramdisks (Linux 6.4), bare metal", false, &Names, &Build,
          /*host_block=*/false, /*cpu_places=*/true};
  p.linux_version = 604;
  return p;
}

}  // namespace viosim::stacks
