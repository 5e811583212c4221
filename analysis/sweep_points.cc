// `viosim sweep`'s points for sharding: one per (value, variant) run, or
// with --refit one per value (its refit, then its variants).
#include "analysis/shard_internal.h"

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/calibrate.h"
#include "analysis/reads.h"

namespace analysis {

namespace {

// `sweep --refit`: one point per value, its refit then its variants.
absl::StatusOr<PointSet> RefitSweepPoints(const Invocation& inv, std::shared_ptr<viosim::ScenarioFile> file,
                                          const SweepSpec& spec, const RunRequest& request) {
  CalibrateSpec refit;
  refit.flag = "--refit";
  absl::StatusOr<std::string> field = OneArg(inv, "refit", "--refit");
  absl::StatusOr<std::string> cell = OneArg(inv, "cell", "--cell");
  absl::StatusOr<std::string> range = OneArg(inv, "range", "--range");
  absl::StatusOr<double> tolerance = NumberArg<double>(inv, "tolerance", "--tolerance");
  absl::StatusOr<int> max_iter = NumberArg<int>(inv, "max-iter", "--max-iter");
  for (const absl::Status& s : {field.status(), cell.status(), range.status(), tolerance.status(), max_iter.status()}) {
    if (!s.ok()) return s;
  }
  refit.field = *field;
  refit.tolerance_pct = *tolerance;
  refit.max_iter = *max_iter;
  if (absl::Status s = ParseCellAndRange(*cell, *range, &refit); !s.ok()) return s;
  absl::StatusOr<RefitSweepPlan> plan =
      PlanRefitSweep(*file, spec, refit, ArgOf(inv, "variant"), ArgOf(inv, "metric"), request);
  if (!plan.ok()) return plan.status();
  auto shared = std::make_shared<RefitSweepPlan>(*std::move(plan));
  PointSet set;
  for (size_t i = 0; i < shared->sweep.sweep.values.size(); ++i) {
    set.ids.push_back(absl::StrCat(i, ":", shared->sweep.sweep.values[i], "/refit"));
    set.kinds.push_back(PointKind::kRefit);
  }
  set.run = [file, shared](size_t i) -> absl::StatusOr<PointResult> {
    absl::StatusOr<RefitValue> v = RunRefitValue(*file, *shared, i);
    if (!v.ok()) return v.status();
    PointResult r;
    r.refit = *std::move(v);
    return r;
  };
  set.render = [file, shared, ids = set.ids](const std::vector<PointResult>& all,
                                             Format f) -> absl::StatusOr<Rendered> {
    std::vector<RefitValue> values;
    std::vector<std::string> not_fitted;
    const std::vector<std::string>& variants = shared->sweep.sweep.variants;
    for (size_t i = 0; i < all.size(); ++i) {
      RefitValue v = *all[i].refit;
      const bool fitted = v.fit.search.outcome == BisectionOutcome::kFitted;
      bool same = v.results.size() == (fitted ? variants.size() : 0);
      for (size_t j = 0; same && j < v.results.size(); ++j) same = v.results[j].variant == variants[j];
      if (!same) {
        return absl::InvalidArgumentError(absl::StrCat("point ", ids[i], ": its runs are not the variants ",
                                                       fitted ? absl::StrJoin(variants, ", ") : "none (not fitted)"));
      }
      if (!fitted) not_fitted.push_back(shared->sweep.sweep.values[i]);
      v.fit = CalibrationAt(*shared, i, std::move(v.fit.values), std::move(v.fit.search));
      values.push_back(std::move(v));
    }
    absl::StatusOr<RefitSweep> sweep = AssembleRefitSweep(*file, *shared, std::move(values));
    if (!sweep.ok()) return sweep.status();
    Rendered out{FormatRefitSweep(*sweep, f), !not_fitted.empty()};
    if (!not_fitted.empty()) {
      out.note = absl::StrCat(shared->refit.field, " not fitted at ", shared->spec.field, " = ",
                              absl::StrJoin(not_fitted, ", "));
    }
    return out;
  };
  return set;
}

}  // namespace

absl::StatusOr<PointSet> SweepPoints(const Invocation& inv, size_t max_points) {
  if (inv.scenarios.size() != 1) return absl::InvalidArgumentError("sweep: expected one scenario");
  const std::vector<std::string> over = ArgOf(inv, "over");
  if (over.empty()) return absl::InvalidArgumentError("sweep: expected --over");
  if (over.size() > 1 && !ArgOf(inv, "refit").empty()) {
    return absl::InvalidArgumentError("sweep: --refit takes one --over, not a grid");
  }
  absl::StatusOr<Loaded> loaded = Load(inv.scenarios[0], inv.overrides);
  if (!loaded.ok()) return loaded.status();
  if (absl::Status s = CheckPathsRead(loaded->file, {}, inv.overrides); !s.ok()) return s;
  auto file = std::make_shared<viosim::ScenarioFile>(std::move(loaded->file));
  absl::StatusOr<SweepSpec> spec = ParseGridSpec(over);
  if (!spec.ok()) return spec.status();
  // Each value is checked against every variant before a point is named:
  // count first.
  const size_t variants =
      ArgOf(inv, "refit").empty()
          ? (ArgOf(inv, "variant").empty() ? viosim::VariantNames(*file).size() : ArgOf(inv, "variant").size())
          : 1;
  size_t combos = spec->values.size();
  for (const SweepAxis& a : spec->more) combos *= a.values.size();
  if (combos * variants > max_points) return TooManyPoints(combos * variants, max_points);
  RunRequest request;
  request.overrides = inv.overrides;
  if (!ArgOf(inv, "refit").empty()) {
    absl::StatusOr<PointSet> set = RefitSweepPoints(inv, file, *spec, request);
    if (!set.ok()) return set.status();
    set->hashes = {loaded->hash};
    set->seeds = {loaded->seed};
    return set;
  }
  absl::StatusOr<SweepPlan> plan = PlanSweep(*file, *spec, ArgOf(inv, "variant"), ArgOf(inv, "metric"), request);
  if (!plan.ok()) return plan.status();
  auto shared = std::make_shared<SweepPlan>(*std::move(plan));
  PointSet set;
  set.hashes = {loaded->hash};
  set.seeds = {loaded->seed};
  for (size_t i = 0; i < shared->resolved.size(); ++i) {
    set.ids.push_back(absl::StrCat(i, ":", absl::StrJoin(shared->coords[i], ","), "/", shared->names[i]));
    set.kinds.push_back(PointKind::kRun);
  }
  set.run = [file, shared, request](size_t i) -> absl::StatusOr<PointResult> {
    std::vector<absl::StatusOr<viosim::VariantResult>> r =
        RunResolved(*file, {shared->resolved[i]}, {shared->names[i]}, request);
    if (!r[0].ok()) {
      const std::vector<std::string>& at = shared->coords[i];
      std::string where = absl::StrCat(shared->sweep.field, "=", at[0]);
      for (size_t k = 0; k < shared->sweep.more.size(); ++k) {
        absl::StrAppend(&where, ", ", shared->sweep.more[k].field, "=", at[k + 1]);
      }
      return absl::Status(r[0].status().code(), absl::StrCat(file->path, ": variant '", shared->names[i], "', ",
                                                             where, ": ", r[0].status().message()));
    }
    return PointResult{r[0]->variant, r[0]->metrics};
  };
  set.render = [shared](const std::vector<PointResult>& all, Format f) -> absl::StatusOr<Rendered> {
    Sweep sweep = shared->sweep;
    for (size_t i = 0; i < all.size(); ++i) {
      const std::vector<std::string>& at = shared->coords[i];
      absl::StatusOr<SweepPoint> p = PointOf(at[0], AsResult(all[i]), sweep.metrics);
      if (!p.ok()) return p.status();
      p->at.assign(at.begin() + 1, at.end());
      sweep.points.push_back(*std::move(p));
    }
    return Rendered{FormatSweep(sweep, f)};
  };
  return set;
}

}  // namespace analysis
