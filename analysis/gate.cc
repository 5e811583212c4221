#include "analysis/gate.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace analysis {
namespace {

std::string Key(const std::string& s, const std::string& v, const std::string& m) {
  return absl::StrCat(s, "\x1f", v, "\x1f", m);
}

}  // namespace

GateReport CheckGate(const std::vector<Cell>& cells, const viosim::Baseline& baseline) {
  absl::flat_hash_map<std::string, double> base;
  for (const auto& c : baseline.cell()) base[Key(c.scenario(), c.variant(), c.metric())] = c.modeled();
  const double tol = baseline.has_tolerance_pct() ? baseline.tolerance_pct() : kDefaultBaselineTolerancePct;
  GateReport report;
  for (const Cell& c : cells) {
    GateFinding f{c.scenario, c.variant, c.metric, ""};
    if (!c.within && c.known_gap.empty()) {
      f.problem = absl::StrFormat("modeled %s is %+.2f%% from published %s, outside the %g%% tolerance",
                                  absl::StrFormat("%.6g", c.modeled), c.error_pct,
                                  absl::StrFormat("%.6g", c.published), c.tolerance_pct);
    } else if (auto it = base.find(Key(c.scenario, c.variant, c.metric)); it == base.end()) {
      f.problem = "not in the baseline (run `viosim gate --update-baseline` and commit it)";
    } else {
      const double b = it->second;
      const double move = b != 0 ? 100.0 * (c.modeled - b) / std::fabs(b) : (c.modeled == 0 ? 0 : INFINITY);
      if (std::fabs(move) > tol) {
        f.problem = absl::StrFormat("modeled %.6g moved %+.3f%% from the baseline %.6g (allowed %g%%)", c.modeled,
                                    move, b, tol);
      }
    }
    if (!f.problem.empty()) ++report.failures;
    report.findings.push_back(std::move(f));
  }
  return report;
}

viosim::Baseline UpdateBaseline(const viosim::Baseline& old, const std::vector<Cell>& cells) {
  viosim::Baseline out;
  out.set_tolerance_pct(old.has_tolerance_pct() ? old.tolerance_pct() : kDefaultBaselineTolerancePct);
  absl::flat_hash_set<std::string> rerun;
  for (const Cell& c : cells) rerun.insert(c.scenario);
  std::vector<viosim::Baseline::Cell> all;
  for (const auto& c : old.cell()) {
    if (!rerun.contains(c.scenario())) all.push_back(c);
  }
  for (const Cell& c : cells) {
    viosim::Baseline::Cell b;
    b.set_scenario(c.scenario);
    b.set_variant(c.variant);
    b.set_metric(c.metric);
    b.set_modeled(c.modeled);
    all.push_back(std::move(b));
  }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return std::tie(a.scenario(), a.variant(), a.metric()) < std::tie(b.scenario(), b.variant(), b.metric());
  });
  for (auto& c : all) *out.add_cell() = std::move(c);
  return out;
}

}  // namespace analysis
