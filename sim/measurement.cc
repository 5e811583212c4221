#include "sim/measurement.h"

#include <cmath>

#include "sim/stats.h"

namespace sim {

std::vector<MetricEstimate> MeasureBatches(Simulator& sim, const MeasurementPlan& plan,
                                           const std::function<void()>& reset,
                                           const std::vector<RatioMetric>& metrics) {
  const Time start = sim.Now() + plan.warmup;
  sim.RunUntil(start);
  reset();
  const size_t m = metrics.size();
  std::vector<double> num0(m), den0(m);
  std::vector<RatioBatchMeans> batch(m);
  for (size_t i = 0; i < m; ++i) {
    num0[i] = metrics[i].numerator();
    den0[i] = metrics[i].denominator();
  }
  std::vector<double> num_prev = num0, den_prev = den0;
  std::vector<MetricEstimate> out(m);
  for (int b = 1; b <= plan.batches; ++b) {
    // Integer batch boundaries: the last one is exactly the window's end.
    const Time end = start + Time::Picos(plan.duration.ps() / plan.batches * b +
                                         (b == plan.batches ? plan.duration.ps() % plan.batches : 0));
    sim.RunUntil(end);
    for (size_t i = 0; i < m; ++i) {
      const double num = metrics[i].numerator();
      const double den = metrics[i].denominator();
      const double dn = num - num_prev[i];
      const double dd = den - den_prev[i];
      batch[i].Add(dn, dd);
      out[i].batch_numerators.push_back(dn);
      out[i].batch_denominators.push_back(dd);
      num_prev[i] = num;
      den_prev[i] = den;
    }
  }
  for (size_t i = 0; i < m; ++i) {
    const double dn = num_prev[i] - num0[i];
    const double dd = den_prev[i] - den0[i];
    out[i].name = metrics[i].name;
    out[i].measured = dd > 0;
    // The ratio before the scale: a part of its whole (dn <= dd) gives at
    // most the scale, a share at most 100%.
    out[i].value = dd > 0 ? metrics[i].scale * (dn / dd) : 0;
    const double hw = batch[i].HalfWidth95();
    if (dd > 0 && std::isfinite(hw)) out[i].ci95 = metrics[i].scale * hw;
  }
  return out;
}

}  // namespace sim
