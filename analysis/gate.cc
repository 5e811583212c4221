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

// 100 * (value - from) / |from|; infinite when `from` is 0 and `value` is not.
double MovePct(double value, double from) {
  if (from != 0) return 100.0 * (value - from) / std::fabs(from);
  return value == 0 ? 0 : INFINITY;
}

std::string G(double x) { return absl::StrFormat("%.6g", x); }

// The cell's own problem, or "".
std::string CellProblem(const Cell& c, const absl::flat_hash_map<std::string, double>& base) {
  const double drift = DriftTolerancePct(c);
  if (!c.measured) return "nothing was measured (the metric's denominator stayed zero over the window)";
  if (c.known_gap.empty() && !c.within) {
    return absl::StrFormat("modeled %s is %+.2f%% from published %s, outside the %g%% tolerance", G(c.modeled),
                           c.error_pct, G(c.published), c.tolerance_pct);
  }
  if (!c.known_gap.empty()) {
    if (c.within) {
      return absl::StrFormat(
          "modeled %s is %+.2f%% from published %s, back inside the %g%% tolerance: remove its known_gap note",
          G(c.modeled), c.error_pct, G(c.published), c.tolerance_pct);
    }
    if (!c.expected.has_value()) return "known gap without an expected value (published.expected)";
    const double move = MovePct(c.modeled, *c.expected);
    if (std::fabs(move) > drift) {
      return absl::StrFormat("modeled %s is %+.3f%% from the known gap's expected %s (allowed %.3g%%)",
                             G(c.modeled), move, G(*c.expected), drift);
    }
  }
  if (c.effect && !c.effect->within) {
    const Effect& e = *c.effect;
    return absl::StrFormat("modeled effect over %s %.4gx is %+.2f%% from published %.4gx, outside the %g%% effect "
                           "tolerance",
                           e.partner, e.modeled, e.error_pct, e.published, *e.tolerance_pct);
  }
  auto it = base.find(Key(c.scenario, c.variant, c.metric));
  if (it == base.end()) return "not in the baseline (run `viosim gate --update-baseline` and commit it)";
  const double move = MovePct(c.modeled, it->second);
  if (std::fabs(move) > drift) {
    return absl::StrFormat("modeled %s moved %+.3f%% from the baseline %s (allowed %.3g%%)", G(c.modeled), move,
                           G(it->second), drift);
  }
  return "";
}

}  // namespace

double DriftTolerancePct(const Cell& c) {
  double interval_pct = 0;
  if (c.ci95.has_value() && c.ci_informative && c.modeled != 0) {
    interval_pct = 100.0 * *c.ci95 / std::fabs(c.modeled);
  }
  return std::min(kMaxDriftPct, std::max(kMinDriftPct, 2 * interval_pct));
}

GateReport CheckGate(const std::vector<Reproduction>& reps, const viosim::Baseline& baseline) {
  absl::flat_hash_map<std::string, double> base;
  for (const auto& c : baseline.cell()) base[Key(c.scenario(), c.variant(), c.metric())] = c.modeled();
  GateReport report;
  absl::flat_hash_set<std::string> gated, present;
  for (const Reproduction& r : reps) {
    gated.insert(r.scenario);
    if (r.cells.empty()) {
      report.findings.push_back({r.scenario, "", "", absl::StrCat(r.path, ": no published cells to gate")});
    }
    for (const Cell& c : r.cells) {
      present.insert(Key(c.scenario, c.variant, c.metric));
      GateFinding f{c.scenario, c.variant, c.metric, CellProblem(c, base)};
      f.modeled = c.modeled;
      f.allowed_pct = DriftTolerancePct(c);
      if (auto it = base.find(Key(c.scenario, c.variant, c.metric)); it != base.end()) {
        f.baseline = it->second;
        f.moved_pct = MovePct(c.modeled, it->second);
      }
      report.findings.push_back(std::move(f));
    }
  }
  for (const auto& b : baseline.cell()) {
    if (gated.contains(b.scenario()) && !present.contains(Key(b.scenario(), b.variant(), b.metric()))) {
      report.findings.push_back({b.scenario(), b.variant(), b.metric(),
                                 "in the baseline but no longer a cell of the scenario"});
    }
  }
  for (const GateFinding& f : report.findings) report.failures += !f.problem.empty();
  return report;
}

viosim::Baseline UpdateBaseline(const viosim::Baseline& old, const std::vector<Cell>& cells) {
  viosim::Baseline out;
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
