#include "analysis/published.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analysis/mva.h"
#include "scenarios/units.h"

namespace analysis {
namespace {

absl::StatusOr<double> RepairmanValue(const viosim::Published& p, const viosim::Scenario& s) {
  const std::string where = absl::StrCat("published (variant '", p.variant(), "', metric '", p.metric(),
                                         "'): MACHINE_REPAIRMAN_MVA ");
  if (!s.workload().has_lockbench()) {
    return absl::InvalidArgumentError(absl::StrCat(where, "needs a lockbench workload"));
  }
  const viosim::Workload::LockBench& w = s.workload().lockbench();
  if (!w.think().has_exponential() || !w.hold().has_exponential()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, "needs exponential think and hold (field 'workload.lockbench.think'/'hold')"));
  }
  if (s.platform().has_lock_handoff()) {
    absl::StatusOr<sim::Time> h = viosim::ParseDuration(s.platform().lock_handoff().value());
    if (!h.ok() || *h != sim::Time::Zero()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "needs a zero hand-off (field 'platform.lock_handoff.value')"));
    }
  }
  absl::StatusOr<sim::Time> z = viosim::ParseDuration(w.think().exponential().mean());
  absl::StatusOr<sim::Time> sv = viosim::ParseDuration(w.hold().exponential().mean());
  if (!z.ok()) return z.status();
  if (!sv.ok()) return sv.status();
  // In microseconds, so the throughput comes out per microsecond.
  const RepairmanResult r = MachineRepairman(w.threads(), z->ToMicros(), sv->ToMicros());
  const std::string& m = p.metric();
  if (m == "lock_acquisitions_per_s") return r.throughput * 1e6;
  if (m == "lock_wait_mean_us") return r.wait;
  if (m == "lock_hold_mean_us") return sv->ToMicros();
  if (m == "lock_contention_pct") {
    // Arrival theorem: an arriving thread sees the queue of N-1 threads.
    const RepairmanResult others = MachineRepairman(w.threads() > 1 ? w.threads() - 1 : 1, z->ToMicros(),
                                                    sv->ToMicros());
    return w.threads() > 1 ? 100.0 * others.utilization : 0.0;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      where, "gives lock_acquisitions_per_s, lock_wait_mean_us, lock_hold_mean_us and lock_contention_pct"));
}

}  // namespace

absl::StatusOr<double> ReferenceValue(const viosim::Published& published, const viosim::Scenario& resolved) {
  switch (published.reference_case()) {
    case viosim::Published::kValue:
      return published.value();
    case viosim::Published::kAnalytic:
      switch (published.analytic()) {
        case viosim::Published::MACHINE_REPAIRMAN_MVA:
          return RepairmanValue(published, resolved);
        case viosim::Published::ANALYTIC_UNSPECIFIED:
          break;
      }
      break;
    case viosim::Published::REFERENCE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("published (variant '", published.variant(), "', metric '",
                                                 published.metric(), "'): no value or analytic model"));
}

}  // namespace analysis
