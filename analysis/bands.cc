#include "analysis/bands.h"

#include "analysis/reads.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "scenarios/units.h"
#include "sim/distribution.h"
#include "sim/rng.h"

namespace analysis {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

viosim::Uncertainty Make(double relative_pct, double factor, const char* reason) {
  viosim::Uncertainty u;
  if (factor > 0) {
    u.set_factor(factor);
  } else {
    u.set_relative_pct(relative_pct);
  }
  u.set_reason(reason);
  return u;
}

// The Source at `path` ("a.b[2].source") in `s`; null when absent.
const viosim::Source* SourceAt(const viosim::Scenario& s, const std::string& path) {
  const Message* m = &s;
  for (absl::string_view step : absl::StrSplit(path, '.')) {
    int index = -1;
    std::string name(step);
    if (const size_t open = name.find('['); open != std::string::npos) {
      if (!absl::SimpleAtoi(name.substr(open + 1, name.size() - open - 2), &index)) return nullptr;
      name = name.substr(0, open);
    }
    const FieldDescriptor* fd = m->GetDescriptor()->FindFieldByName(name);
    if (fd == nullptr || fd->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return nullptr;
    if (fd->is_repeated()) {
      if (index < 0 || index >= m->GetReflection()->FieldSize(*m, fd)) return nullptr;
      m = &m->GetReflection()->GetRepeatedMessage(*m, fd, index);
    } else {
      m = &m->GetReflection()->GetMessage(*m, fd);
    }
  }
  return google::protobuf::DynamicCastToGenerated<viosim::Source>(m);
}

// The field's value as a number: seconds for a duration.
double NumberOf(const CostField& f) {
  return f.value == CostField::Value::kDuration ? f.duration.ToSeconds() : f.number;
}

// `text` as the field reads it, in NumberOf's units.
absl::StatusOr<double> BoundOf(const CostField& f, const std::string& text) {
  if (f.value == CostField::Value::kDuration) {
    absl::StatusOr<sim::Time> t = viosim::ParseDuration(text);
    if (!t.ok()) return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a duration, as ", f.path, " is"));
    return t->ToSeconds();
  }
  double v = 0;
  if (!absl::SimpleAtod(text, &v)) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a number, as ", f.path, " is"));
  }
  return v;
}

// The multiples of the value an uncertainty spans.
absl::Status Span(const viosim::Uncertainty& u, const CostField& f, UncertainField* out) {
  switch (u.spread_case()) {
    case viosim::Uncertainty::kRelativePct:
      out->lo_factor = 1 - u.relative_pct() / 100;
      out->hi_factor = 1 + u.relative_pct() / 100;
      out->log_scale = false;
      return absl::OkStatus();
    case viosim::Uncertainty::kFactor:
      out->lo_factor = 1 / u.factor();
      out->hi_factor = u.factor();
      out->log_scale = true;
      return absl::OkStatus();
    case viosim::Uncertainty::kRange: {
      absl::StatusOr<double> lo = BoundOf(f, u.range().lo());
      absl::StatusOr<double> hi = BoundOf(f, u.range().hi());
      if (!lo.ok()) return lo.status();
      if (!hi.ok()) return hi.status();
      const double v = NumberOf(f);
      if (!(*lo <= v && v <= *hi)) {
        return absl::InvalidArgumentError(absl::StrCat("the range ", u.range().lo(), "..", u.range().hi(),
                                                       " does not hold the value of ", f.path));
      }
      out->lo_factor = *lo / v;
      out->hi_factor = *hi / v;
      out->log_scale = u.range().log_scale();
      return absl::OkStatus();
    }
    default:
      return absl::InvalidArgumentError("no spread given");
  }
}

// Point i's multiple of a field, for every i: one stratum of probability
// each, in an order of the field's own.
std::vector<double> LatinColumn(const UncertainField& f, int k, uint64_t seed) {
  sim::Rng rng = sim::Rng::ForStream(seed, absl::StrCat("band/", f.field.path));
  std::vector<int> stratum(static_cast<size_t>(k));
  std::iota(stratum.begin(), stratum.end(), 0);
  for (size_t i = stratum.size() - 1; i > 0; --i) std::swap(stratum[i], stratum[rng.Below(i + 1)]);
  std::vector<double> column;
  column.reserve(stratum.size());
  for (int s : stratum) {
    const double u = (s + rng.Uniform01()) / k;
    if (f.log_scale) {
      const double lo = sim::internal::Log(f.lo_factor);
      column.push_back(sim::internal::Exp(lo + u * (sim::internal::Log(f.hi_factor) - lo)));
    } else {
      column.push_back(f.lo_factor + u * (f.hi_factor - f.lo_factor));
    }
  }
  return column;
}

// Replaces the assignment of `field` in `assignments`, or appends it.
void Assign(std::vector<std::string>* assignments, const std::string& field, const std::string& value) {
  const std::string prefix = field + "=";
  for (std::string& a : *assignments) {
    if (a.rfind(prefix, 0) == 0) {
      a = prefix + value;
      return;
    }
  }
  assignments->push_back(prefix + value);
}

std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t t = i; t <= j; ++t) rank[order[t]] = (static_cast<double>(i + j) / 2) + 1;
    i = j + 1;
  }
  return rank;
}

}  // namespace

absl::StatusOr<std::optional<UncertainField>> UncertaintyOf(const viosim::Scenario& base, const CostField& f) {
  const viosim::Source* source = SourceAt(base, f.source_path);
  if (source == nullptr) return absl::InternalError(absl::StrCat("no Source at ", f.source_path));
  if (f.kind == viosim::Source::FITTED) return std::nullopt;  // refitted, not drawn
  const viosim::UncertaintyDefaults& defaults = base.uncertainty_defaults();
  UncertainField u;
  u.field = f;
  if (source->has_uncertainty()) {
    u.uncertainty = source->uncertainty();
    u.origin = "own";
  } else {
    const viosim::Uncertainty* d = nullptr;
    if (f.kind == viosim::Source::MEASURED && defaults.has_measured()) d = &defaults.measured();
    if (f.kind == viosim::Source::DERIVED && defaults.has_derived()) d = &defaults.derived();
    if (f.kind == viosim::Source::ESTIMATED && defaults.has_estimated()) d = &defaults.estimated();
    if (d != nullptr) {
      u.uncertainty = *d;
      u.origin = "file default";
    } else if (std::optional<viosim::Uncertainty> b = BuiltInUncertainty(f.kind)) {
      u.uncertainty = *b;
      u.origin = "built-in default";
    } else {
      return std::nullopt;  // DEFINED: exact
    }
  }
  if (NumberOf(f) <= 0) return std::nullopt;  // a cost that vanishes stays zero
  if (absl::Status s = Span(u.uncertainty, f, &u); !s.ok()) return s;
  return u;
}

std::optional<viosim::Uncertainty> BuiltInUncertainty(viosim::Source::Kind kind) {
  switch (kind) {
    case viosim::Source::MEASURED:
      return Make(5, 0, "built-in default for a measured value: +-5%");
    case viosim::Source::DERIVED:
      return Make(20, 0, "built-in default for a derived value: +-20%");
    case viosim::Source::ESTIMATED:
      return Make(0, 2, "built-in default for an estimated value: times or divided by 2");
    default:
      return std::nullopt;
  }
}

double NearestRank(const std::vector<double>& sorted, double p) {
  const double n = static_cast<double>(sorted.size());
  size_t rank = static_cast<size_t>(std::ceil(p / 100 * n - 1e-9));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

double RankCorrelation(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return 0;
  const std::vector<double> rx = Ranks(x);
  const std::vector<double> ry = Ranks(y);
  const double mean = (static_cast<double>(x.size()) + 1) / 2;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (sxx == 0 || syy == 0) return 0;
  return sxy / std::sqrt(sxx * syy);
}

absl::StatusOr<BandPlan> DrawBands(const viosim::ScenarioFile& file, const BandSpec& spec, const RunRequest& request) {
  if (spec.k < 2 || spec.k > 100000) {
    return absl::InvalidArgumentError(absl::StrCat("--bands ", spec.k, ": give between 2 and 100000 points"));
  }
  if (spec.passes < 1 || spec.passes > 5) {
    return absl::InvalidArgumentError(absl::StrCat("--band-passes ", spec.passes, ": give 1 to 5 rounds of refits"));
  }
  absl::StatusOr<viosim::Scenario> base = viosim::ResolveVariant(file, viosim::kBaseVariant, request.overrides);
  if (!base.ok()) return base.status();
  BandPlan plan;
  plan.scenario = file.scenario.name();
  plan.spec = spec;
  // The costs the runs of a band read: its PREDICTION cells' variants and
  // the variants of the cells its fits are refitted to (scenarios/params.h).
  viosim::ReadSet reads;
  {
    std::set<std::string> read_by;
    for (const viosim::Published& p : file.scenario.published()) read_by.insert(p.variant());
    for (const std::string& v : viosim::VariantNames(file)) {
      if (read_by.count(v) == 0) continue;
      absl::StatusOr<viosim::ReadSet> r = ReadsOf(file, v, request.overrides);
      if (!r.ok()) return r.status();
      reads.Merge(*r);
    }
  }
  const std::vector<CostField> fields = CostFieldsRead(*base, reads);
  std::map<std::string, int> covered;  // fields per Source
  for (const CostField& f : fields) ++covered[f.source_path];
  std::set<std::string> fitted;
  std::set<std::string> sources_fitted;
  for (const CostField& f : fields) {
    const viosim::Source* source = SourceAt(*base, f.source_path);
    if (source == nullptr) return absl::InternalError(absl::StrCat("no Source at ", f.source_path));
    if (f.kind == viosim::Source::FITTED) {
      if (!sources_fitted.insert(f.source_path).second) continue;
      for (const viosim::Source::Fit& fit : source->fit()) {
        BandFit b;
        b.spec.field = fit.field().empty() ? f.path : fit.field();
        if (!fitted.insert(b.spec.field).second) continue;  // fitted to its first cell only
        b.spec.flag = absl::StrCat(f.source_path, ".fit");
        b.spec.tolerance_pct = spec.refit_tolerance_pct;
        b.spec.max_iter = spec.max_iter;
        b.cell = fit.cell();
        if (absl::Status s = ParseCellAndRange(fit.cell(), fit.range(), &b.spec); !s.ok()) {
          return absl::InvalidArgumentError(absl::StrCat(file.path, ": field '", f.source_path, "': ", s.message()));
        }
        plan.fits.push_back(std::move(b));
      }
      continue;
    }
    const std::string where = absl::StrCat(file.path, ": field '", f.source_path, ".uncertainty': ");
    if (source->uncertainty().has_range() && covered[f.source_path] > 1) {
      return absl::InvalidArgumentError(absl::StrCat(where, "an explicit range needs a Source of one field; this one covers ",
                                                     covered[f.source_path]));
    }
    absl::StatusOr<std::optional<UncertainField>> u = UncertaintyOf(*base, f);
    if (!u.ok()) return absl::InvalidArgumentError(absl::StrCat(where, u.status().message()));
    if (*u && (*u)->uncertainty.has_range() && covered[f.source_path] > 1) {  // a file default's range
      return absl::InvalidArgumentError(absl::StrCat(where, "an explicit range needs a Source of one field; this one covers ",
                                                     covered[f.source_path]));
    }
    if (*u) plan.fields.push_back(**std::move(u));
  }
  for (const BandFit& b : plan.fits) {
    for (const UncertainField& u : plan.fields) {
      if (u.field.path == b.spec.field) {
        return absl::InvalidArgumentError(absl::StrCat(file.path, ": ", b.spec.field, " is fitted and drawn at once"));
      }
    }
  }
  std::set<std::string> wanted;
  // Nothing uncertain (every cost DEFINED or FITTED): every point would be
  // the same run, and a band of width zero says nothing, so the cells get
  // none and no point runs (the report says why).
  for (int i = 0; i < file.scenario.published_size() && !plan.fields.empty(); ++i) {
    if (file.scenario.published(i).role() != viosim::Published::PREDICTION) continue;
    plan.cells.push_back(i);
    plan.cell_keys.emplace_back(file.scenario.published(i).variant(), file.scenario.published(i).metric());
    wanted.insert(file.scenario.published(i).variant());
  }
  for (const std::string& v : viosim::VariantNames(file)) {
    if (wanted.count(v) > 0) plan.variants.push_back(v);
  }
  std::vector<std::vector<double>> columns;
  for (const UncertainField& u : plan.fields) columns.push_back(LatinColumn(u, spec.k, spec.seed));
  plan.factors.assign(static_cast<size_t>(spec.k), std::vector<double>(plan.fields.size()));
  for (size_t d = 0; d < columns.size(); ++d) {
    for (size_t i = 0; i < columns[d].size(); ++i) plan.factors[i][d] = columns[d][i];
  }
  return plan;
}

absl::Status CheckBandPoints(const viosim::ScenarioFile& file, const BandPlan& plan, const RunRequest& request) {
  for (size_t i = 0; i < plan.factors.size() && !plan.cells.empty(); ++i) {
    std::vector<std::string> assignments = request.overrides;
    for (size_t d = 0; d < plan.fields.size(); ++d) {
      absl::StatusOr<std::string> a = ScaledAssignment(plan.fields[d].field, plan.factors[i][d]);
      if (!a.ok()) return a.status();
      assignments.push_back(*a);
    }
    for (const std::string& v : plan.variants) {
      absl::StatusOr<viosim::Scenario> r = viosim::ResolveVariant(file, v, assignments);
      if (!r.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("band point ", i, " (the uncertainties allow a value the scenario refuses): ",
                                                       r.status().message()));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BandPlan> PlanBands(const viosim::ScenarioFile& file, const BandSpec& spec, const RunRequest& request) {
  absl::StatusOr<BandPlan> plan = DrawBands(file, spec, request);
  if (!plan.ok()) return plan.status();
  // Every point's drawn values must be values the scenario accepts: bad
  // input shows now, before anything runs.
  if (absl::Status s = CheckBandPoints(file, *plan, request); !s.ok()) return s;
  return plan;
}

namespace {

// The p-th weighted percentile of (value, weight) pairs: the smallest value
// whose cumulative weight reaches p% of the whole (with equal weights, the
// nearest rank).
double WeightedRank(std::vector<std::pair<double, double>> v, double p) {
  std::sort(v.begin(), v.end());
  double total = 0;
  for (const auto& [x, w] : v) total += w;
  double cum = 0;
  for (const auto& [x, w] : v) {
    cum += w;
    if (cum >= p / 100 * total - 1e-12 * total) return x;
  }
  return v.back().first;
}

// The band's 5th, 50th and 95th percentiles of `v` (value, weight), and
// whether `published` lies between the outer two; nothing when `v` is empty.
void SetPercentiles(const std::vector<std::pair<double, double>>& v, double published, CellBand* band) {
  if (v.empty()) return;
  band->p5 = WeightedRank(v, 5);
  band->p50 = WeightedRank(v, 50);
  band->p95 = WeightedRank(v, 95);
  band->inside = band->p5 <= published && published <= band->p95;
}

// Whether the cell's point estimate lies in its band, and when not, why:
// costs drawn on one side of their value only, the fits' slack (each
// point refits to within the refit tolerance of its cell, from either
// side, while the point keeps the file's fitted values), and always the
// number of points (with K points the 5-95% band is about their range).
void ExplainPoint(const BandPlan& plan, const Cell& c, CellBand* band) {
  if (band->points == 0) return;
  band->point_inside = band->p5 <= c.modeled && c.modeled <= band->p95;
  if (band->point_inside) return;
  const double edge = c.modeled < band->p5 ? band->p5 : band->p95;
  const double gap_pct = 100 * std::fabs(edge - c.modeled) / std::fabs(c.modeled);
  std::vector<std::string> one_sided;
  for (const UncertainField& u : plan.fields) {
    if (u.lo_factor >= 1 && u.hi_factor > 1) {
      one_sided.push_back(absl::StrCat(u.field.path, " (drawn only above its value)"));
    } else if (u.hi_factor <= 1 && u.lo_factor < 1) {
      one_sided.push_back(absl::StrCat(u.field.path, " (drawn only below its value)"));
    }
  }
  if (!one_sided.empty()) {
    band->outside_why.push_back(absl::StrCat("costs drawn on one side of their value: ", absl::StrJoin(one_sided, ", ")));
  }
  if (!plan.fits.empty() && gap_pct <= 2 * plan.spec.refit_tolerance_pct) {
    std::vector<std::string> fits;
    for (const BandFit& f : plan.fits) fits.push_back(f.spec.field);
    band->outside_why.push_back(absl::StrFormat(
        "the fits' slack: each point refits %s to within %g%% of its cell, from either side, while the point keeps "
        "the file's fitted values; the point is %.2f%% from the band",
        absl::StrJoin(fits, ", "), plan.spec.refit_tolerance_pct, gap_pct));
  }
  band->outside_why.push_back(absl::StrFormat(
      "%d points: the 5-95%% band is about their range, and the point lies %.2f%% beyond it%s", band->points,
      gap_pct, band->points < 40 ? " (more points, --bands K, widen it toward the model's own spread)" : ""));
}

// A search whose range does not bracket its cell: the end nearer the cell
// when it lies within the cell's published tolerance, else -1.
int NearEdgeWithin(const Calibration& c) {
  int best = -1;
  for (size_t k = 0; k < c.search.steps.size() && k < 2; ++k) {
    const double e = std::fabs(c.search.steps[k].error_pct);
    if (e <= c.cell_tolerance_pct && (best < 0 || e < std::fabs(c.search.steps[static_cast<size_t>(best)].error_pct))) {
      best = static_cast<int>(k);
    }
  }
  return best;
}

}  // namespace

absl::StatusOr<BandPoint> RunBandPoint(const viosim::ScenarioFile& file, const BandPlan& plan, size_t i,
                                       const RunRequest& request) {
  BandPoint point;
  RunRequest at = request;
  at.jobs = 1;
  for (size_t d = 0; d < plan.fields.size(); ++d) {
    absl::StatusOr<std::string> a = ScaledAssignment(plan.fields[d].field, plan.factors[i][d]);
    if (!a.ok()) return a.status();
    at.overrides.push_back(*a);
    point.assignments.push_back(*a);
  }
  // A fit that fails before the last round keeps its value and is tried
  // again after the others; only a failure in the last round fails the point.
  for (int pass = 1; pass <= plan.spec.passes; ++pass) {
    const bool last = pass == plan.spec.passes;
    for (const BandFit& fit : plan.fits) {
      absl::StatusOr<Calibration> c = Calibrate(file, fit.spec, at);
      std::string failure;
      if (!c.ok()) {
        failure = std::string(c.status().message());
      } else if (const Bisection& s = c->search;
                 s.outcome == BisectionOutcome::kFitted ||
                 (s.outcome == BisectionOutcome::kNotConverged && s.at_resolution)) {
        Assign(&at.overrides, fit.spec.field, c->values[static_cast<size_t>(s.best)]);
        continue;
      } else if (const int edge = NearEdgeWithin(*c); s.outcome == BisectionOutcome::kNotBracketed && edge >= 0) {
        // The cell is out of the range's reach, but an end of the range
        // already holds it within its published tolerance: refitted there.
        Assign(&at.overrides, fit.spec.field, c->values[static_cast<size_t>(edge)]);
        continue;
      } else {
        failure = s.outcome == BisectionOutcome::kNotBracketed ? "its range does not bracket the cell" : "no convergence";
      }
      if (!last) continue;
      point.failure = absl::StrCat(fit.spec.field, " to ", fit.cell, ": ", failure);
      point.failed_round = pass;
      point.values.assign(plan.cells.size(), std::nullopt);
      point.ci95.assign(plan.cells.size(), std::nullopt);
      return point;
    }
  }
  for (size_t a = request.overrides.size() + plan.fields.size(); a < at.overrides.size(); ++a) {
    point.assignments.push_back(at.overrides[a]);
  }
  absl::StatusOr<std::vector<viosim::VariantResult>> results = RunVariants(file, plan.variants, at);
  if (!results.ok()) return results.status();
  point.refitted = true;
  for (int c : plan.cells) {
    const viosim::Published& p = file.scenario.published(c);
    std::optional<double> value;
    std::optional<double> ci95;
    for (const viosim::VariantResult& r : *results) {
      if (!viosim::SameVariant(r.variant, p.variant())) continue;
      for (const sim::MetricEstimate& e : r.metrics) {
        if (e.name == p.metric() && e.measured) {
          value = e.value;
          ci95 = e.ci95;
        }
      }
    }
    point.values.push_back(value);
    point.ci95.push_back(ci95);
  }
  return point;
}

void AttachBands(const BandPlan& plan, const std::vector<BandPoint>& points, std::vector<Cell>* cells) {
  int failed = 0;
  std::map<std::string, int> why;
  for (const BandPoint& p : points) {
    if (p.refitted) continue;
    ++failed;
    ++why[p.failure];
  }
  for (size_t j = 0; j < plan.cell_keys.size(); ++j) {
    CellBand band;
    band.k = static_cast<int>(points.size());
    band.refit_failed = failed;
    for (const auto& [reason, n] : why) band.failures.push_back({reason, n});
    std::vector<double> values;
    std::vector<std::vector<double>> drawn(plan.fields.size());
    for (size_t i = 0; i < points.size(); ++i) {
      if (!points[i].refitted || !points[i].values[j]) continue;
      values.push_back(*points[i].values[j]);
      for (size_t d = 0; d < plan.fields.size(); ++d) drawn[d].push_back(plan.factors[i][d]);
    }
    band.points = static_cast<int>(values.size());
    for (size_t d = 0; d < plan.fields.size(); ++d) {
      band.drivers.push_back({plan.fields[d].field.path, RankCorrelation(drawn[d], values)});
    }
    std::stable_sort(band.drivers.begin(), band.drivers.end(), [](const BandDriver& a, const BandDriver& b) {
      return std::fabs(a.rank_corr) > std::fabs(b.rank_corr);
    });
    std::vector<std::pair<double, double>> weighted;
    for (double v : values) weighted.emplace_back(v, 1.0);
    for (Cell& c : *cells) {
      if (c.variant != plan.cell_keys[j].first || c.metric != plan.cell_keys[j].second) continue;
      SetPercentiles(weighted, c.published, &band);
      ExplainPoint(plan, c, &band);
      c.band = band;
    }
  }
}

namespace {

// One alternative's share of a band: its plan and points, its nominal
// point (the costs as written, the fits refitted) and whether it is kept.
struct AlternativeRun {
  std::string name;
  double weight = 1;
  BandPlan plan;
  BandPoint nominal;
  std::vector<BandPoint> points;
  std::string dropped;
};

absl::StatusOr<AlternativeRun> RunAlternative(const viosim::ScenarioFile& file, const viosim::Alternative& alt,
                                              const BandSpec& spec, const RunRequest& request) {
  AlternativeRun out;
  out.name = alt.name();
  out.weight = alt.weight();
  absl::StatusOr<viosim::ScenarioFile> under = viosim::UnderAlternative(file, alt.name());
  if (!under.ok()) return under.status();
  absl::StatusOr<BandPlan> plan = PlanBands(*under, spec, request);
  if (!plan.ok()) return plan.status();
  out.plan = *std::move(plan);
  // The nominal point: every drawn factor 1.
  BandPlan nominal = out.plan;
  nominal.factors.assign(1, std::vector<double>(nominal.fields.size(), 1.0));
  absl::StatusOr<BandPoint> p = RunBandPoint(*under, nominal, 0, request);
  if (!p.ok()) return p.status();
  out.nominal = *std::move(p);
  if (!out.nominal.refitted) {
    // Its value all the same, at the costs as written (nothing refitted).
    out.dropped = absl::StrCat("not refitted (", out.nominal.failure, "); the value is at the costs as written");
    absl::StatusOr<std::vector<viosim::VariantResult>> plain = RunVariants(*under, out.plan.variants, request);
    if (!plain.ok()) return plain.status();
    out.nominal.values.assign(out.plan.cells.size(), std::nullopt);
    for (size_t j = 0; j < out.plan.cells.size(); ++j) {
      for (const viosim::VariantResult& r : *plain) {
        if (!viosim::SameVariant(r.variant, out.plan.cell_keys[j].first)) continue;
        for (const sim::MetricEstimate& e : r.metrics) {
          if (e.name == out.plan.cell_keys[j].second && e.measured) out.nominal.values[j] = e.value;
        }
      }
    }
    return out;
  }
  // Its calibration cells, with the refitted values: each within its tolerance.
  RunRequest at = request;
  for (size_t a = out.plan.fields.size(); a < out.nominal.assignments.size(); ++a) {
    at.overrides.push_back(out.nominal.assignments[a]);
  }
  absl::StatusOr<Reproduction> r = Reproduce(*under, at);
  if (!r.ok()) return r.status();
  for (const Cell& c : r->cells) {
    if (c.role == "calibration" && !c.within && c.known_gap.empty()) {
      out.dropped = absl::StrFormat("refitted, %s / %s is %+.1f%% off (tolerance %g%%)", c.variant, c.metric,
                                    c.error_pct, c.tolerance_pct);
      return out;
    }
  }
  std::vector<absl::StatusOr<BandPoint>> done(static_cast<size_t>(spec.k), absl::UnknownError("not run"));
  if (!out.plan.cells.empty()) {
    ParallelFor(done.size(), request.jobs, [&](size_t i) { done[i] = RunBandPoint(*under, out.plan, i, request); });
    for (absl::StatusOr<BandPoint>& q : done) {
      if (!q.ok()) return q.status();
      out.points.push_back(*std::move(q));
    }
  }
  return out;
}

// The bands over every alternative: per cell, each alternative's line and
// the weighted percentiles over the kept ones' points.
absl::Status RunAlternativeBands(const viosim::ScenarioFile& file, const BandSpec& spec, const RunRequest& request,
                                 Reproduction* rep) {
  std::vector<AlternativeRun> runs;
  for (const viosim::Alternative& alt : file.scenario.alternative()) {
    absl::StatusOr<AlternativeRun> r = RunAlternative(file, alt, spec, request);
    if (!r.ok()) return r.status();
    runs.push_back(*std::move(r));
  }
  for (Cell& c : rep->cells) {
    if (c.role != "prediction") continue;
    CellBand band;
    std::vector<std::pair<double, double>> pooled;
    // Each drawn field's factors beside the cell's values, over the kept
    // alternatives' refitted points (by field path: an alternative may read
    // other fields), and why the others did not refit.
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_field;
    std::map<std::string, int> why;
    for (const AlternativeRun& r : runs) {
      CellBand::Alternative line;
      line.name = r.name;
      line.weight = r.weight;
      line.dropped = r.dropped;
      for (size_t a = r.plan.fields.size(); a < r.nominal.assignments.size(); ++a) {
        line.refit.push_back(r.nominal.assignments[a]);
      }
      size_t j = 0;
      while (j < r.plan.cell_keys.size() &&
             !(r.plan.cell_keys[j].first == c.variant && r.plan.cell_keys[j].second == c.metric)) {
        ++j;
      }
      if (j < r.plan.cell_keys.size() && j < r.nominal.values.size()) line.value = r.nominal.values[j];
      if (r.dropped.empty() && j < r.plan.cell_keys.size()) {
        std::vector<double> own;
        band.k += static_cast<int>(r.points.size());
        for (size_t i = 0; i < r.points.size(); ++i) {
          const BandPoint& p = r.points[i];
          if (!p.refitted) {
            ++band.refit_failed;
            ++why[absl::StrCat(p.failure, " (under ", r.name, ")")];
            continue;
          }
          if (!p.values[j]) continue;
          own.push_back(*p.values[j]);
          pooled.emplace_back(*p.values[j], r.weight / std::max<size_t>(1, r.points.size()));
          for (size_t d = 0; d < r.plan.fields.size(); ++d) {
            auto& [drawn, values] = by_field[r.plan.fields[d].field.path];
            drawn.push_back(r.plan.factors[i][d]);
            values.push_back(*p.values[j]);
          }
        }
        if (!own.empty()) {
          std::sort(own.begin(), own.end());
          line.p5 = NearestRank(own, 5);
          line.p95 = NearestRank(own, 95);
        }
      }
      band.alternatives.push_back(std::move(line));
    }
    band.points = static_cast<int>(pooled.size());
    for (const auto& [reason, n] : why) band.failures.push_back({reason, n});
    for (const auto& [field, pairs] : by_field) {
      band.drivers.push_back({field, RankCorrelation(pairs.first, pairs.second)});
    }
    std::stable_sort(band.drivers.begin(), band.drivers.end(), [](const BandDriver& a, const BandDriver& b) {
      return std::fabs(a.rank_corr) > std::fabs(b.rank_corr);
    });
    SetPercentiles(pooled, c.published, &band);
    for (const AlternativeRun& r : runs) {
      if (r.dropped.empty()) {
        ExplainPoint(r.plan, c, &band);
        break;
      }
    }
    c.band = band;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunBands(const viosim::ScenarioFile& file, const BandSpec& spec, const RunRequest& request,
                      Reproduction* rep, BandPlan* plan_out, std::vector<BandPoint>* points_out) {
  if (file.scenario.alternative_size() > 0) return RunAlternativeBands(file, spec, request, rep);
  absl::StatusOr<BandPlan> plan = PlanBands(file, spec, request);
  if (!plan.ok()) return plan.status();
  std::vector<absl::StatusOr<BandPoint>> done(static_cast<size_t>(spec.k), absl::UnknownError("not run"));
  if (!plan->cells.empty()) {
    ParallelFor(done.size(), request.jobs, [&](size_t i) { done[i] = RunBandPoint(file, *plan, i, request); });
  }
  std::vector<BandPoint> points;
  for (absl::StatusOr<BandPoint>& p : done) {
    if (plan->cells.empty()) break;
    if (!p.ok()) return p.status();
    points.push_back(*std::move(p));
  }
  if (!plan->cells.empty()) AttachBands(*plan, points, &rep->cells);
  if (plan_out != nullptr) *plan_out = *std::move(plan);
  if (points_out != nullptr) *points_out = std::move(points);
  return absl::OkStatus();
}

}  // namespace analysis
