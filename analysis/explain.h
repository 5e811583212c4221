// `viosim explain`: which cost moves a metric, and by how much.
//
// For one variant and one metric M, every costed field c (analysis/
// cost_fields.h) is run at c x (1 + s) and c x (1 - s), with the same seed
// as the variant itself (common random numbers: the paired runs differ only
// by the change), and its elasticity is the central difference
//
//   e = ln(M(c+) / M(c-)) / ln(c+ / c-)
//
// with c+ and c- the values the field really took (a duration rounds to the
// picosecond, an integer to a whole number). e = -1: M is inversely
// proportional to c; e = 0: c is off every path that sets M.
//
// The interval comes from the two runs' own batches, paired: the runs share
// their seed and their batch windows, so batch b of c+ and batch b of c-
// saw the same random draws as far as the change let them; each batch pair
// gives ln(M_b(c+) / M_b(c-)) / ln(c+ / c-), and the 95% half-width is
// Student's t over those per-batch elasticities (the batch-means method of
// every other interval in viosim, applied to the difference). Pairing
// makes it far narrower than the two runs' intervals combined, at no extra
// run; replication over seeds would cost a run per seed and field.
//
// A model whose metric does not change with the seed (a deterministic
// bottleneck: `reproduce`'s n/i rule, checked the same way by one more run
// at seed + 1) gets no interval: the batches' spread says nothing then.
#ifndef VIOSIM_ANALYSIS_EXPLAIN_H_
#define VIOSIM_ANALYSIS_EXPLAIN_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analysis/cost_fields.h"
#include "analysis/format.h"
#include "analysis/runner.h"
#include "scenarios/builder.h"
#include "scenarios/loader.h"

namespace analysis {

struct ExplainSpec {
  std::string variant;  // empty: the file's first variant
  std::string metric;   // empty: "iops" when reported, else the first metric
  double step = 0.1;    // relative step s, 0 < s < 1
  // Empty: every costed field. Else only those whose path starts with one
  // of these (--field), to spend the runs on the costs asked about.
  std::vector<std::string> fields;
};

// Parses --step: "10%" or "0.1". InvalidArgument naming --step unless
// 0 < s < 1 (strictly: at 1 the cost would vanish).
absl::StatusOr<double> ParseStep(absl::string_view text);

// One costed field's elasticity.
struct CostElasticity {
  CostField field;
  // Why there is no elasticity ("zero: no relative step", a value the
  // scenario's checks refuse, a metric not measured); empty when there is.
  std::string skipped;
  double plus = 0, minus = 0;  // the metric at c+ and c-
  double elasticity = 0;
  // 95% half-width; none when not computed or not informative.
  std::optional<double> ci95;
};

struct Explanation {
  std::string scenario;  // the scenario's name
  std::string variant;
  std::string metric;
  double step = 0;
  viosim::VariantResult base;  // the variant as run: the mechanism view
  double value = 0;            // the metric in `base`
  std::optional<double> value_ci95;
  // False when the metric came out the same at seed + 1: no interval is
  // informative, and none is given.
  bool ci_informative = true;
  uint64_t replicate_seed = 0;
  // Ranked by |elasticity|, largest first (ties in field order); the
  // skipped ones last, in field order.
  std::vector<CostElasticity> costs;
  int costed_fields = 0;  // the variant's costed fields, before --field
  // The plain-language reading, one sentence per entry, from the figures.
  std::vector<std::string> reading;
  int runs = 0;  // simulations run
};

// Runs the variant, its replicate and two runs per costed field, on up to
// `request.jobs` threads (the result does not depend on how many).
// `request.overrides` apply to every run, before the field's change.
// InvalidArgument for an unknown variant or metric (listing what exists) or
// bad overrides, or a --field prefix no costed field starts with (listing
// the fields); a field whose scaled value the scenario's checks refuse is
// reported as skipped, with the reason, not as an error.
absl::StatusOr<Explanation> Explain(const viosim::ScenarioFile& file, const ExplainSpec& spec,
                                    const RunRequest& request);

// Text: the reading, the tornado table (elasticity, interval, a bar), the
// fields not varied and why, then the mechanism view as `viosim run` shows
// it. JSON: {"scenario", "variant", "metric", "value", "costs": [{"field",
// "source", "elasticity", "ci95"}, ...]}, the varied costs ranked (ci95
// null when not computed or not informative), and besides: "cost_details"
// (per varied cost in the same order: "field", "value", "ref", "plus",
// "minus"), "not_varied" ({"field", "source", "value", "reason"}),
// "value_ci95", "ci95_informative", "replicate_seed", "step", "runs",
// "costed_fields",
// "reading" (sentences) and "mechanism" (the variant as `run --format json`
// has it). CSV: rank,field,source,value,elasticity,ci95,plus,minus,skipped.
std::string FormatExplanation(const Explanation& e, Format f);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_EXPLAIN_H_
