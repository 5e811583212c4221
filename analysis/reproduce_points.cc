// `viosim reproduce`'s and `viosim gate`'s points for sharding: per
// scenario its variants' runs at two seeds, its mechanism-bound runs and,
// with --bands, its band points.
#include "analysis/shard_internal.h"

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/gate.h"
#include "analysis/reads.h"

namespace analysis {

// Reproduce: per scenario, each variant a published cell names at the
// scenario's seed, then each again at the next seed, then (with `bands`) the
// band points when the scenario has PREDICTION cells. The gate runs the same
// points and checks the cells against `baseline` (a path; empty: none).
absl::StatusOr<PointSet> ReproducePoints(const Invocation& inv, const std::optional<std::string>& baseline,
                                         const std::optional<BandSpec>& bands, size_t max_points) {
  struct Table {
    viosim::ScenarioFile file;
    ReproducePlan plan;
    size_t first = 0;  // index of its first point
    std::optional<BandPlan> bands;  // with points from band_first on
    size_t band_first = 0;
    RunRequest request;  // the --set assignments this scenario reads
    size_t ideal_first = 0;  // its mechanism-bound runs (plan.ideal_runs)
  };
  auto tables = std::make_shared<std::vector<Table>>();
  RunRequest request;
  request.overrides = inv.overrides;
  PointSet set;
  struct Run {
    size_t table;
    std::string variant;  // empty for a band point
    bool replicate;
    size_t band_point = 0;
    int ideal_run = -1;  // an index into the plan's ideal_runs
  };
  auto runs = std::make_shared<std::vector<Run>>();
  // Each scenario takes the --set paths some variant of it reads (as the
  // unsharded command does); a path no scenario reads is refused.
  std::vector<viosim::ScenarioFile> plain;
  for (const std::string& path : inv.scenarios) {
    absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(path);
    if (!file.ok()) return file.status();
    if (absl::Status s = viosim::ApplyFileOverrides(&*file, inv.overrides); !s.ok()) return s;
    plain.push_back(*std::move(file));
  }
  std::vector<const viosim::ScenarioFile*> plain_ptrs;
  for (const viosim::ScenarioFile& f : plain) plain_ptrs.push_back(&f);
  absl::StatusOr<OverridePlan> override_plan = PlanOverrides(plain_ptrs, inv.overrides);
  if (!override_plan.ok()) return override_plan.status();
  for (size_t table = 0; table < inv.scenarios.size(); ++table) {
    const std::string& path = inv.scenarios[table];
    request.overrides = override_plan->files[table].applied;
    absl::StatusOr<Loaded> loaded = Load(path, request.overrides);
    if (!loaded.ok()) return loaded.status();
    std::optional<BandPlan> band_plan;
    if (bands && loaded->file.scenario.alternative_size() > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": --bands over the scenario's ", loaded->file.scenario.alternative_size(),
          " alternatives does not shard yet: run `viosim reproduce ", path, " --bands K` whole"));
    }
    if (bands) {
      absl::StatusOr<BandPlan> p = DrawBands(loaded->file, *bands, request);
      if (!p.ok()) return p.status();
      if (!p->cells.empty()) band_plan = *std::move(p);
    }
    absl::StatusOr<ReproducePlan> plan = PlanReproduce(loaded->file, request);
    if (!plan.ok()) return plan.status();
    // The points' checks cost a resolve each: count them first.
    const size_t named = runs->size() + 2 * plan->variants.size() + plan->ideal_runs.size() +
                         (band_plan ? static_cast<size_t>(band_plan->spec.k) : 0);
    if (named > max_points) return TooManyPoints(named, max_points);
    if (band_plan) {
      if (absl::Status s = CheckBandPoints(loaded->file, *band_plan, request); !s.ok()) return s;
    }
    set.hashes.push_back(loaded->hash);
    set.seeds.push_back(loaded->seed);
    tables->push_back({std::move(loaded->file), *std::move(plan), runs->size(), std::move(band_plan), 0, request});
    Table& t = tables->back();
    for (bool replicate : {false, true}) {
      for (const std::string& v : t.plan.variants) {
        const uint64_t seed = replicate ? t.plan.replicate_seed : loaded->seed;
        set.ids.push_back(absl::StrCat(runs->size(), ":", path, "/", v, "@seed=", seed));
        set.kinds.push_back(PointKind::kRun);
        runs->push_back({tables->size() - 1, v, replicate});
      }
    }
    t.ideal_first = runs->size();
    for (size_t k = 0; k < t.plan.ideal_runs.size(); ++k) {
      const ReproducePlan::IdealRun& ir = t.plan.ideal_runs[k];
      set.ids.push_back(absl::StrCat(runs->size(), ":", path, "/", ir.variant, "@ideal=", absl::StrJoin(ir.resources, "+")));
      set.kinds.push_back(PointKind::kRun);
      runs->push_back({tables->size() - 1, ir.variant, false, 0, static_cast<int>(k)});
    }
    if (!t.bands) continue;
    t.band_first = runs->size();
    const int k = t.bands->spec.k;
    for (int b = 0; b < k; ++b) {
      set.ids.push_back(absl::StrCat(runs->size(), ":", path, "/band-point-", b, "-of-", k,
                                     "@band-seed=", t.bands->spec.seed));
      set.kinds.push_back(PointKind::kBand);
      runs->push_back({tables->size() - 1, "", false, static_cast<size_t>(b)});
    }
  }
  set.run = [tables, runs](size_t i) -> absl::StatusOr<PointResult> {
    const Run& run = (*runs)[i];
    const Table& t = (*tables)[run.table];
    const RunRequest& request = t.request;
    if (run.variant.empty()) {
      absl::StatusOr<BandPoint> b = RunBandPoint(t.file, *t.bands, run.band_point, request);
      if (!b.ok()) return b.status();
      PointResult r;
      r.band = *std::move(b);
      return r;
    }
    absl::StatusOr<std::vector<viosim::VariantResult>> r = RunVariants(
        t.file, {run.variant},
        run.ideal_run >= 0 ? t.plan.ideal_runs[static_cast<size_t>(run.ideal_run)].Request(request)
                           : (run.replicate ? t.plan.Replicate(request) : request));
    if (!r.ok()) return r.status();
    return PointResult{r->front().variant, r->front().metrics};
  };
  set.render = [tables, baseline, ids = set.ids, band_columns = bands.has_value()](
                   const std::vector<PointResult>& all, Format f) -> absl::StatusOr<Rendered> {
    std::vector<Reproduction> reps;
    for (const Table& t : *tables) {
      const size_t n = t.plan.variants.size();
      std::vector<viosim::VariantResult> results, replicates;
      for (size_t i = 0; i < n; ++i) {
        results.push_back(AsResult(all[t.first + i]));
        replicates.push_back(AsResult(all[t.first + n + i]));
      }
      std::vector<viosim::VariantResult> ideal;
      for (size_t k = 0; k < t.plan.ideal_runs.size(); ++k) ideal.push_back(AsResult(all[t.ideal_first + k]));
      absl::StatusOr<Reproduction> rep =
          ReproductionOf(t.file, t.request, t.plan, std::move(results), replicates, ideal);
      if (!rep.ok()) return rep.status();
      if (t.bands) {
        std::vector<BandPoint> points;
        for (size_t b = 0; b < static_cast<size_t>(t.bands->spec.k); ++b) {
          const BandPoint& p = *all[t.band_first + b].band;
          if (p.values.size() != t.bands->cells.size()) {
            return absl::InvalidArgumentError(absl::StrCat("point ", ids[t.band_first + b], ": ", p.values.size(),
                                                           " cell values, but the scenario has ",
                                                           t.bands->cells.size(), " PREDICTION cells"));
          }
          points.push_back(p);
        }
        AttachBands(*t.bands, points, &rep->cells);
      }
      reps.push_back(*std::move(rep));
    }
    if (!baseline) return Rendered{FormatCells(reps, f, band_columns)};
    absl::StatusOr<viosim::Baseline> b = viosim::LoadBaselineFile(*baseline);
    if (!b.ok()) return b.status();
    const GateReport report = CheckGate(reps, *b);
    return Rendered{FormatGate(reps, report, f), report.failures > 0};
  };
  return set;
}

}  // namespace analysis
