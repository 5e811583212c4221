#include "analysis/gains.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/stats.h"

namespace analysis {
std::optional<double> HalfWidth(const std::vector<double>& x) {
  const size_t k = x.size();
  if (k < 2) return std::nullopt;
  // Equal values have no spread; summing them in parts would leave
  // rounding's last bits as one.
  if (std::all_of(x.begin(), x.end(), [&x](double v) { return v == x[0]; })) return 0.0;
  double mean = 0;
  for (double v : x) mean += v / static_cast<double>(k);
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  const double kd = static_cast<double>(k);
  return sim::StudentT975(static_cast<int64_t>(k) - 1) * std::sqrt(ss / (kd - 1) / kd);
}

Comparison Compare(const viosim::VariantResult& a, const viosim::VariantResult& b) {
  Comparison c;
  c.a = a.variant;
  c.b = b.variant;
  for (const sim::MetricEstimate& ma : a.metrics) {
    const sim::MetricEstimate* mb = nullptr;
    for (const sim::MetricEstimate& m : b.metrics) {
      if (m.name == ma.name) mb = &m;
    }
    if (mb == nullptr) continue;
    Gain g;
    g.metric = ma.name;
    g.a = ma.value;
    g.b = mb->value;
    g.difference = mb->value - ma.value;
    const bool measured = ma.measured && mb->measured;
    if (measured && ma.value != 0) g.ratio = mb->value / ma.value;
    // Batch i of one run against batch i of the other.
    const size_t k = ma.batch_numerators.size();
    // Batches pair when they cover the same stretches: as many, as long
    // (runs under --precision may stop at different lengths).
    if (measured && k >= 2 && mb->batch_numerators.size() == k && ma.batch_denominators.size() == k &&
        ma.batch_length == mb->batch_length &&
        mb->batch_denominators.size() == k) {
      std::vector<double> ratios, diffs;
      bool ratios_ok = true;
      for (size_t i = 0; i < k; ++i) {
        const double x = ma.batch_numerators[i] / ma.batch_denominators[i];
        const double y = mb->batch_numerators[i] / mb->batch_denominators[i];
        if (!std::isfinite(x) || !std::isfinite(y)) {
          ratios_ok = false;
          break;
        }
        diffs.push_back(y - x);
        if (x == 0) ratios_ok = false;
        if (ratios_ok) ratios.push_back(y / x);
      }
      if (diffs.size() == k) {
        // Scaled as the metric is: the batches hold numerators over
        // denominators, the metric their ratio times its scale.
        double num = 0, den = 0;
        for (size_t i = 0; i < k; ++i) {
          num += ma.batch_numerators[i];
          den += ma.batch_denominators[i];
        }
        const double scale = ma.value != 0 && num != 0 && den != 0 ? ma.value / (num / den) : 1;
        std::optional<double> h = HalfWidth(diffs);
        if (h) g.difference_ci95 = *h * scale;
      }
      if (ratios_ok && ratios.size() == k) g.ratio_ci95 = HalfWidth(ratios);
    }
    c.gains.push_back(std::move(g));
  }
  return c;
}

absl::StatusOr<std::optional<Comparison>> CompareOf(const std::vector<viosim::VariantResult>& results,
                                                    absl::string_view compare) {
  if (compare.empty()) {
    // The first two variants in the file's order: the before/after pair a
    // scenario leads with (a third, such as another fix, by --compare).
    if (results.size() < 2) return std::optional<Comparison>();
    return std::optional<Comparison>(Compare(results[0], results[1]));
  }
  const size_t slash = compare.rfind('/');
  if (slash == absl::string_view::npos || slash == 0 || slash + 1 == compare.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--compare '", compare, "': expected A/B, two variants of the run"));
  }
  // "X/Y": X against Y, the ratio X / Y.
  const absl::string_view bn = compare.substr(0, slash), an = compare.substr(slash + 1);
  const viosim::VariantResult *a = nullptr, *b = nullptr;
  std::vector<std::string> names;
  for (const viosim::VariantResult& r : results) {
    names.push_back(r.variant);
    if (r.variant == an) a = &r;
    if (r.variant == bn) b = &r;
  }
  if (a == nullptr || b == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--compare '", compare, "': '", b == nullptr ? bn : an,
                                                   "' is not a variant of the run (it runs: ",
                                                   absl::StrJoin(names, ", "), ")"));
  }
  return std::optional<Comparison>(Compare(*a, *b));
}

std::string GainsText(const Comparison& c) {
  std::string out = absl::StrFormat("\n== gains: %s against %s (95%% intervals from the runs' batches, paired)\n", c.b, c.a);
  absl::StrAppend(&out, absl::StrFormat("  %-28s %14s %14s %18s %22s\n", "metric", c.a, c.b,
                                        absl::StrCat(c.b, "/", c.a), absl::StrCat(c.b, "-", c.a)));
  for (const Gain& g : c.gains) {
    const std::string ratio =
        g.ratio ? absl::StrFormat("%.4g%s", *g.ratio, g.ratio_ci95 ? absl::StrFormat(" +/-%.2g", *g.ratio_ci95) : "")
                : "-";
    const std::string diff = absl::StrFormat("%+.6g%s", g.difference,
                                             g.difference_ci95 ? absl::StrFormat(" +/-%.2g", *g.difference_ci95) : "");
    absl::StrAppend(&out, absl::StrFormat("  %-28s %14.6g %14.6g %18s %22s\n", g.metric, g.a, g.b, ratio, diff));
  }
  return out;
}

}  // namespace analysis
