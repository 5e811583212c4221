// The change a what-if asks about, not only the levels: per metric, the
// ratio and the difference of one variant's value over another's, each
// with its 95% interval from the two runs' batches paired (the runs share
// the scenario's seed and batch plan, so batch i of one faces batch i of
// the other, as explain's elasticities pair them).
#ifndef VIOSIM_ANALYSIS_GAINS_H_
#define VIOSIM_ANALYSIS_GAINS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "scenarios/builder.h"

namespace analysis {

struct Gain {
  std::string metric;
  double a = 0, b = 0;  // the metric in each variant
  std::optional<double> ratio;  // b / a; none when a is 0 or either is not measured
  std::optional<double> ratio_ci95;
  double difference = 0;  // b - a
  std::optional<double> difference_ci95;
};

struct Comparison {
  std::string a, b;  // variant names: b is compared with a
  std::vector<Gain> gains;  // in a's metric order, the metrics both report
};

// The 95% half-width of the mean of `x` (Student's t): how paired batch
// differences, ratios or elasticities give an interval. None under two.
std::optional<double> HalfWidth(const std::vector<double>& x);

// `b` against `a`.
Comparison Compare(const viosim::VariantResult& a, const viosim::VariantResult& b);

// "--compare B/A" (split at the last '/'): B against A, the ratio B / A,
// each a variant of `results`; without it (empty), the second of exactly
// two results against the first, and nullopt for any other number.
// InvalidArgument naming --compare.
absl::StatusOr<std::optional<Comparison>> CompareOf(const std::vector<viosim::VariantResult>& results,
                                                    absl::string_view compare);

// Text: a table (metric, A, B, B/A with its interval, B-A with its).
std::string GainsText(const Comparison& c);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_GAINS_H_
