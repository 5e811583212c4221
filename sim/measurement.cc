#include "sim/measurement.h"

#include <cmath>

#include "sim/stats.h"

namespace sim {

bool WithinPrecision(const MetricEstimate& e, double precision) {
  if (!e.measured || !e.ci95.has_value()) return true;
  return *e.ci95 <= precision * std::fabs(e.value);
}

namespace {

bool Asked(const MeasurementPlan& plan, const std::string& name) {
  if (plan.precision_metrics.empty()) return true;
  for (const std::string& m : plan.precision_metrics) {
    if (m == name) return true;
  }
  return false;
}

// The estimates from per-batch numerators and denominators.
std::vector<MetricEstimate> Estimates(const std::vector<RatioMetric>& metrics,
                                      const std::vector<std::vector<double>>& nums,
                                      const std::vector<std::vector<double>>& dens) {
  std::vector<MetricEstimate> out(metrics.size());
  for (size_t i = 0; i < metrics.size(); ++i) {
    RatioBatchMeans batch;
    double dn = 0, dd = 0;
    for (size_t b = 0; b < nums[i].size(); ++b) {
      batch.Add(nums[i][b], dens[i][b]);
      dn += nums[i][b];
      dd += dens[i][b];
    }
    out[i].name = metrics[i].name;
    out[i].batch_numerators = nums[i];
    out[i].batch_denominators = dens[i];
    out[i].measured = dd > 0;
    // The ratio before the scale: a part of its whole (dn <= dd) gives at
    // most the scale, a share at most 100%.
    out[i].value = dd > 0 ? metrics[i].scale * (dn / dd) : 0;
    const double hw = batch.HalfWidth95();
    if (dd > 0 && std::isfinite(hw)) out[i].ci95 = metrics[i].scale * hw;
  }
  return out;
}

}  // namespace

std::vector<MetricEstimate> MeasureBatches(Simulator& sim, const MeasurementPlan& plan,
                                           const std::function<void()>& reset,
                                           const std::vector<RatioMetric>& metrics, MeasureOutcome* outcome) {
  const Time start = sim.Now() + plan.warmup;
  sim.RunUntil(start);
  reset();
  const size_t m = metrics.size();
  std::vector<double> num_prev(m), den_prev(m);
  for (size_t i = 0; i < m; ++i) {
    num_prev[i] = metrics[i].numerator();
    den_prev[i] = metrics[i].denominator();
  }
  std::vector<std::vector<double>> nums(m), dens(m);
  // One batch to `end`: each metric's counts since the last boundary.
  auto batch_to = [&](Time end) {
    sim.RunUntil(end);
    for (size_t i = 0; i < m; ++i) {
      const double num = metrics[i].numerator();
      const double den = metrics[i].denominator();
      nums[i].push_back(num - num_prev[i]);
      dens[i].push_back(den - den_prev[i]);
      num_prev[i] = num;
      den_prev[i] = den;
    }
  };
  for (int b = 1; b <= plan.batches; ++b) {
    // Integer batch boundaries: the last one is exactly the window's end.
    batch_to(start + Time::Picos(plan.duration.ps() / plan.batches * b +
                                 (b == plan.batches ? plan.duration.ps() % plan.batches : 0)));
  }
  std::vector<MetricEstimate> out = Estimates(metrics, nums, dens);
  Time length = Time::Picos(plan.duration.ps() / std::max(1, plan.batches));
  if (plan.precision > 0 && plan.batches >= 2 && length > Time::Zero()) {
    const Time cap = start + plan.duration * plan.max_factor;
    auto reached = [&] {
      for (const MetricEstimate& e : out) {
        if (Asked(plan, e.name) && !WithinPrecision(e, plan.precision)) return false;
      }
      return true;
    };
    // Doubling: B more batches of the current length, then pairs merge
    // into B batches of twice it; the precision is looked at only then.
    while (!reached() && sim.Now() + length * plan.batches <= cap && !sim.stalled()) {
      for (int b = 0; b < plan.batches; ++b) batch_to(sim.Now() + length);
      for (size_t i = 0; i < m; ++i) {
        for (size_t b = 0; b < nums[i].size() / 2; ++b) {
          nums[i][b] = nums[i][2 * b] + nums[i][2 * b + 1];
          dens[i][b] = dens[i][2 * b] + dens[i][2 * b + 1];
        }
        nums[i].resize(nums[i].size() / 2);
        dens[i].resize(dens[i].size() / 2);
      }
      length = length * 2;
      out = Estimates(metrics, nums, dens);
    }
  }
  for (MetricEstimate& e : out) e.batch_length = length;
  if (outcome != nullptr) {
    outcome->measured = sim.Now() - start;
    outcome->batches = static_cast<int>(m > 0 ? nums[0].size() : static_cast<size_t>(plan.batches));
    outcome->batch_length = length;
    outcome->reached = true;
    outcome->missed.clear();
    if (plan.precision > 0) {
      for (const MetricEstimate& e : out) {
        if (Asked(plan, e.name) && !WithinPrecision(e, plan.precision)) {
          outcome->reached = false;
          outcome->missed.push_back(e.name);
        }
      }
    }
  }
  return out;
}

}  // namespace sim
