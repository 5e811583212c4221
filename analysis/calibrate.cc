#include "analysis/calibrate.h"

#include "analysis/reads.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/published.h"
#include "scenarios/units.h"
#include "sim/time.h"

namespace analysis {

namespace {

bool Brackets(double target, double y1, double y2) {
  return std::min(y1, y2) <= target && target <= std::max(y1, y2);
}

// How a field's values are read, rounded and written back.
struct FieldCodec {
  std::string resolution;
  std::function<absl::StatusOr<double>(absl::string_view)> parse;
  std::function<double(double)> snap;
  std::function<std::string(double)> format;
};

FieldCodec CodecFor(viosim::ScalarKind kind) {
  switch (kind) {
    case viosim::ScalarKind::kDuration:
      // Picoseconds; midpoints rounded to whole nanoseconds.
      return FieldCodec{
          "1ns",
          [](absl::string_view s) -> absl::StatusOr<double> {
            absl::StatusOr<sim::Time> t = viosim::ParseDuration(s);
            if (!t.ok()) return t.status();
            return static_cast<double>(t->ps());
          },
          [](double ps) { return std::round(ps / 1000.0) * 1000.0; },
          [](double ps) {
            return viosim::FormatDurationForInput(sim::Time::Picos(static_cast<int64_t>(std::llround(ps))));
          }};
    case viosim::ScalarKind::kInteger:
      return FieldCodec{
          "1",
          [](absl::string_view s) -> absl::StatusOr<double> {
            int64_t v = 0;
            if (!absl::SimpleAtoi(s, &v)) {
              return absl::InvalidArgumentError(absl::StrCat("'", s, "' is not an integer"));
            }
            return static_cast<double>(v);
          },
          [](double x) { return std::round(x); }, [](double x) { return absl::StrCat(std::llround(x)); }};
    case viosim::ScalarKind::kReal:
    case viosim::ScalarKind::kOther:
      break;
  }
  // Written with 6 significant digits, and rounded to what is written.
  auto format = [](double x) { return absl::StrFormat("%.6g", x); };
  return FieldCodec{"6 significant digits",
                    [](absl::string_view s) -> absl::StatusOr<double> {
                      double v = 0;
                      if (!absl::SimpleAtod(s, &v)) {
                        return absl::InvalidArgumentError(absl::StrCat("'", s, "' is not a number"));
                      }
                      return v;
                    },
                    [format](double x) {
                      double v = x;
                      return absl::SimpleAtod(format(x), &v) ? v : x;
                    },
                    format};
}

// The published cell `spec` names, refusing what cannot be fitted to.
absl::StatusOr<viosim::Published> TargetCell(const viosim::ScenarioFile& file, const CalibrateSpec& spec) {
  const std::string cell = spec.metric.empty() ? spec.variant : absl::StrCat(spec.variant, "/", spec.metric);
  const std::string flag = absl::StrCat("--cell '", cell, "': ");
  std::vector<std::string> all, of_variant;
  std::vector<const viosim::Published*> matches;
  for (const viosim::Published& p : file.scenario.published()) {
    all.push_back(absl::StrCat(p.variant(), "/", p.metric()));
    if (!viosim::SameVariant(p.variant(), spec.variant)) continue;
    of_variant.push_back(p.metric());
    if (spec.metric.empty() || p.metric() == spec.metric) matches.push_back(&p);
  }
  if (of_variant.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, file.path, " has no published cell for variant '", spec.variant, "'; its published cells are: ",
        all.empty() ? "none" : absl::StrJoin(all, ", ")));
  }
  if (matches.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, "variant '", spec.variant, "' has no published metric '",
                                                   spec.metric, "'; its published metrics are: ",
                                                   absl::StrJoin(of_variant, ", ")));
  }
  if (matches.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(flag, "variant '", spec.variant, "' has ", matches.size(),
                                                   " published cells; name one as VARIANT/METRIC, with METRIC one of: ",
                                                   absl::StrJoin(of_variant, ", ")));
  }
  const viosim::Published& p = *matches.front();
  if (p.role() != viosim::Published::CALIBRATION) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, "the cell's role is ", viosim::Published::Role_Name(p.role()),
        "; fitting to a prediction is not calibration (a prediction is what the calibrated model is checked "
        "against)"));
  }
  if (!p.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, "the published value is analytic (", viosim::Published::Analytic_Name(p.analytic()),
        "), computed from the variant's own parameters, so there is nothing to fit"));
  }
  return p;
}

}  // namespace

absl::StatusOr<Bisection> Bisect(const BisectionOptions& o,
                                 const std::function<absl::StatusOr<Evaluation>(double)>& evaluate) {
  Bisection b;
  auto measure = [&](BisectionStep step) -> absl::Status {
    absl::StatusOr<Evaluation> e = evaluate(step.x);
    if (!e.ok()) return e.status();
    step.eval = *e;
    step.error_pct = ErrorPct(e->value, o.target);
    b.steps.push_back(step);
    const int i = static_cast<int>(b.steps.size()) - 1;
    if (b.best < 0 || std::fabs(step.error_pct) < std::fabs(b.steps[b.best].error_pct)) b.best = i;
    return absl::OkStatus();
  };
  auto within = [&](int i) { return std::fabs(b.steps[i].error_pct) <= o.tolerance_pct; };

  BisectionStep lo{BisectionStep::At::kLo, 0, o.lo}, hi{BisectionStep::At::kHi, 0, o.hi};
  if (absl::Status s = measure(lo); !s.ok()) return s;
  if (absl::Status s = measure(hi); !s.ok()) return s;
  if (within(b.best)) {
    b.outcome = BisectionOutcome::kFitted;
    return b;
  }
  if (!Brackets(o.target, b.steps[0].eval.value, b.steps[1].eval.value)) {
    b.outcome = BisectionOutcome::kNotBracketed;
    b.best = -1;
    return b;
  }
  int a = 0, z = 1;  // the bracket's ends, as steps
  for (int it = 1; it <= o.max_iter; ++it) {
    const double xa = b.steps[a].x, xz = b.steps[z].x;
    const double mid = o.snap(o.log_scale ? std::sqrt(xa) * std::sqrt(xz) : xa + (xz - xa) / 2);
    if (!(mid > xa && mid < xz)) {
      b.at_resolution = true;
      break;
    }
    BisectionStep m{BisectionStep::At::kMid, it, mid};
    m.bracket_lo = a;
    m.bracket_hi = z;
    if (absl::Status s = measure(m); !s.ok()) return s;
    const int i = static_cast<int>(b.steps.size()) - 1;
    const double ya = b.steps[a].eval.value, yz = b.steps[z].eval.value, ym = b.steps[i].eval.value;
    b.steps[i].non_monotonic = ym < std::min(ya, yz) || ym > std::max(ya, yz);
    if (within(i)) {
      b.best = i;
      b.outcome = BisectionOutcome::kFitted;
      return b;
    }
    if (Brackets(o.target, ya, ym)) {
      z = i;
    } else {
      a = i;
    }
  }
  b.outcome = BisectionOutcome::kNotConverged;
  return b;
}

absl::Status CheckBisection(const Bisection& b) {
  const int n = static_cast<int>(b.steps.size());
  if (n < 2) return absl::InvalidArgumentError(absl::StrCat("steps: a search has its two ends first; this one has ", n, " steps"));
  for (int i = 0; i < n; ++i) {
    const BisectionStep& s = b.steps[i];
    const BisectionStep::At at = i == 0 ? BisectionStep::At::kLo : i == 1 ? BisectionStep::At::kHi : BisectionStep::At::kMid;
    const bool end = i < 2;
    if (s.at != at || s.iteration != (end ? 0 : i - 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("steps: step ", i, " is not ", end ? (i == 0 ? "the low end" : "the high end") : absl::StrCat("midpoint ", i - 1)));
    }
    const bool bracket_ok = end ? s.bracket_lo == -1 && s.bracket_hi == -1 && !s.non_monotonic
                                : s.bracket_lo >= 0 && s.bracket_hi >= 0 && s.bracket_lo < i && s.bracket_hi < i &&
                                      s.bracket_lo != s.bracket_hi;
    if (!bracket_ok) {
      return absl::InvalidArgumentError(absl::StrCat("steps: step ", i, "'s bracket is not ",
                                                     end ? "empty (an end has none)" : "two different steps before it"));
    }
  }
  if (b.outcome == BisectionOutcome::kNotBracketed) {
    if (n != 2 || b.best != -1) {
      return absl::InvalidArgumentError("best: a search that was not bracketed tried only its two ends and has no best step");
    }
  } else if (b.best < 0 || b.best >= n) {
    return absl::InvalidArgumentError(absl::StrCat("best: step ", b.best, " is not one of the ", n, " steps"));
  }
  return absl::OkStatus();
}

absl::Status ParseCellAndRange(absl::string_view cell, absl::string_view range, CalibrateSpec* spec) {
  const size_t slash = cell.rfind('/');
  spec->variant = std::string(absl::StripAsciiWhitespace(cell.substr(0, slash)));
  spec->metric = slash == absl::string_view::npos ? ""
                                                  : std::string(absl::StripAsciiWhitespace(cell.substr(slash + 1)));
  if (spec->variant.empty() || (slash != absl::string_view::npos && spec->metric.empty())) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cell '", cell, "': expected VARIANT or VARIANT/METRIC, e.g. before/iops"));
  }
  const size_t comma = range.find(',');
  if (comma != absl::string_view::npos) {
    // A value in a scenario file's quotes ("1us"), as --set takes it.
    spec->lo = viosim::ValueAsRead(absl::StripAsciiWhitespace(range.substr(0, comma)));
    spec->hi = viosim::ValueAsRead(absl::StripAsciiWhitespace(range.substr(comma + 1)));
  }
  if (comma == absl::string_view::npos || spec->lo.empty() || spec->hi.empty() ||
      spec->hi.find(',') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--range '", range, "': expected LO,HI (two values of the field), e.g. 1us,80us"));
  }
  return absl::OkStatus();
}

// A calibration checked and ready to search: the Calibration without its
// steps, the search's options and the field's codec.
struct CalibrationPlan {
  Calibration c;
  BisectionOptions o;
  FieldCodec codec;
};

namespace {

// Every check Calibrate makes, before anything runs.
absl::StatusOr<CalibrationPlan> PlanCalibration(const viosim::ScenarioFile& file, const CalibrateSpec& spec,
                                                const RunRequest& request) {
  const std::string& flag = spec.flag;
  // The field: a duration or a number, set as --set sets it.
  if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(spec.field), "published")) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " '", spec.field, "': a published cell is the target, not a parameter of the model"));
  }
  absl::StatusOr<viosim::ScalarKind> kind = viosim::ScalarKindAt(file.scenario, spec.field, flag);
  if (!kind.ok()) return kind.status();
  if (*kind == viosim::ScalarKind::kOther) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " '", spec.field, "': field '", spec.field,
                                                   "' holds neither a duration nor a number, so it cannot be "
                                                   "bisected"));
  }
  CalibrationPlan plan;
  plan.codec = CodecFor(*kind);
  double ends[2];
  for (int i = 0; i < 2; ++i) {
    const std::string& v = i == 0 ? spec.lo : spec.hi;
    viosim::Scenario scratch = file.scenario;
    if (absl::Status s = viosim::ApplyOverride(&scratch, absl::StrCat(spec.field, "=", v), "--range"); !s.ok()) {
      return s;
    }
    absl::StatusOr<double> x = plan.codec.parse(v);
    if (!x.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--range '", spec.lo, ",", spec.hi, "': field '", spec.field,
                                                     "': ", x.status().message()));
    }
    ends[i] = *x;
  }
  if (!(ends[0] < ends[1])) {
    return absl::InvalidArgumentError(absl::StrCat("--range '", spec.lo, ",", spec.hi, "': field '", spec.field,
                                                   "': LO must be below HI"));
  }

  // The target, and the variant checked as it will run.
  absl::StatusOr<viosim::Published> cell = TargetCell(file, spec);
  if (!cell.ok()) return cell.status();
  // Both ends as they will run (a combination with other fields the models
  // cannot run is refused naming --range).
  RunRequest at = request;
  at.overrides.push_back(absl::StrCat(spec.field, "=", spec.hi));
  if (absl::StatusOr<viosim::Scenario> hi = viosim::ResolveVariant(file, spec.variant, at.overrides, "--range");
      !hi.ok()) {
    return hi.status();
  }
  at.overrides.back() = absl::StrCat(spec.field, "=", spec.lo);
  absl::StatusOr<viosim::Scenario> resolved = viosim::ResolveVariant(file, spec.variant, at.overrides, "--range");
  if (!resolved.ok()) return resolved.status();
  const std::vector<std::string> known = viosim::MetricNames(*resolved);
  if (std::find(known.begin(), known.end(), cell->metric()) == known.end()) {
    return absl::InvalidArgumentError(absl::StrCat("--cell: published metric '", cell->metric(),
                                                   "' is not a metric of variant '", spec.variant,
                                                   "'; its metrics are: ", absl::StrJoin(known, ", ")));
  }
  absl::StatusOr<double> target = ReferenceValue(*cell, *resolved);
  if (!target.ok()) return target.status();

  Calibration& c = plan.c;
  c.scenario = file.scenario.name();
  c.field = spec.field;
  c.variant = spec.variant;
  c.metric = cell->metric();
  c.published = *target;
  c.source = cell->source();
  c.cell_tolerance_pct = cell->tolerance_pct();
  c.tolerance_pct = spec.tolerance_pct;
  c.max_iter = spec.max_iter;
  c.resolution = plan.codec.resolution;
  BisectionOptions& o = plan.o;
  o.lo = ends[0];
  o.hi = ends[1];
  o.target = c.published;
  o.tolerance_pct = spec.tolerance_pct;
  o.max_iter = spec.max_iter;
  o.log_scale = ends[0] > 0;
  o.snap = plan.codec.snap;
  c.scale = o.log_scale ? "log" : "linear";
  // A field the cell's variant does not read cannot move the cell.
  std::vector<std::string> at_lo = request.overrides;
  at_lo.push_back(absl::StrCat(spec.field, "=", spec.lo));
  if (absl::Status s = CheckNamedPathsRead(file, {spec.variant}, at_lo, {{flag, spec.field}}); !s.ok()) {
    return s;
  }
  return plan;
}

// The search of a checked calibration: one run of the variant per step.
absl::StatusOr<Calibration> Search(const viosim::ScenarioFile& file, const CalibrateSpec& spec,
                                   const RunRequest& request, const CalibrationPlan& plan) {
  Calibration c = plan.c;
  auto evaluate = [&](double x) -> absl::StatusOr<Evaluation> {
    const std::string value = plan.codec.format(x);
    RunRequest one = request;
    one.overrides.push_back(absl::StrCat(spec.field, "=", value));
    absl::StatusOr<std::vector<viosim::VariantResult>> r = RunVariants(file, {spec.variant}, one);
    if (!r.ok()) {
      return absl::Status(r.status().code(), absl::StrCat(spec.field, "=", value, ": ", r.status().message()));
    }
    for (const sim::MetricEstimate& m : r->front().metrics) {
      if (m.name == c.metric) {
        c.values.push_back(value);
        return Evaluation{m.value, m.ci95};
      }
    }
    return absl::InternalError(absl::StrCat("variant '", spec.variant, "' did not report metric '", c.metric, "'"));
  };
  absl::StatusOr<Bisection> search = Bisect(plan.o, evaluate);
  if (!search.ok()) return search.status();
  c.search = *std::move(search);
  return c;
}

}  // namespace

absl::StatusOr<Calibration> Calibrate(const viosim::ScenarioFile& file, const CalibrateSpec& spec,
                                      const RunRequest& request) {
  absl::StatusOr<CalibrationPlan> plan = PlanCalibration(file, spec, request);
  if (!plan.ok()) return plan.status();
  return Search(file, spec, request, *plan);
}

absl::StatusOr<RefitSweepPlan> PlanRefitSweep(const viosim::ScenarioFile& file, const SweepSpec& spec,
                                              const CalibrateSpec& refit, const std::vector<std::string>& variants,
                                              const std::vector<std::string>& metrics, const RunRequest& request) {
  if (!spec.more.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(refit.flag, ": refits along one --over only, not a grid (",
                                                   spec.more.size() + 1, " given)"));
  }
  if (absl::StripAsciiWhitespace(refit.field) == absl::StripAsciiWhitespace(spec.field)) {
    return absl::InvalidArgumentError(absl::StrCat(refit.flag, " '", refit.field,
                                                   "': that is the field --over sweeps; refit another one"));
  }
  absl::StatusOr<SweepPlan> sweep = PlanSweep(file, spec, variants, metrics, request);
  if (!sweep.ok()) return sweep.status();
  RefitSweepPlan plan;
  plan.sweep = *std::move(sweep);
  plan.spec = spec;
  plan.refit = refit;
  // The refit at each value, checked as it will run: inside one value, the
  // search and then the variants run one at a time.
  for (const std::string& value : spec.values) {
    RunRequest at = request;
    at.overrides.push_back(absl::StrCat(spec.field, "=", value));
    at.jobs = 1;
    absl::StatusOr<CalibrationPlan> checked = PlanCalibration(file, refit, at);
    if (!checked.ok()) return checked.status();
    plan.at.push_back(std::move(at));
    plan.fits.push_back(std::make_shared<const CalibrationPlan>(*std::move(checked)));
  }
  return plan;
}

absl::StatusOr<RefitValue> RunRefitValue(const viosim::ScenarioFile& file, const RefitSweepPlan& plan, size_t i) {
  auto fail = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(file.path, ": ", plan.spec.field, "=", plan.spec.values[i], ": ",
                                               s.message()));
  };
  RefitValue out;
  absl::StatusOr<Calibration> fit = Search(file, plan.refit, plan.at[i], *plan.fits[i]);
  if (!fit.ok()) return fail(fit.status());
  out.fit = *std::move(fit);
  const Calibration& c = out.fit;
  if (c.search.outcome != BisectionOutcome::kFitted) return out;
  RunRequest run = plan.at[i];
  run.overrides.push_back(absl::StrCat(plan.refit.field, "=", c.values[c.search.best]));
  absl::StatusOr<std::vector<viosim::VariantResult>> results = RunVariants(file, plan.sweep.sweep.variants, run);
  if (!results.ok()) return fail(results.status());
  out.results = *std::move(results);
  return out;
}

Calibration CalibrationAt(const RefitSweepPlan& plan, size_t i, std::vector<std::string> values, Bisection search) {
  Calibration c = plan.fits[i]->c;
  c.values = std::move(values);
  c.search = std::move(search);
  return c;
}

absl::StatusOr<RefitSweep> AssembleRefitSweep(const viosim::ScenarioFile& file, const RefitSweepPlan& plan,
                                              std::vector<RefitValue> values) {
  if (values.size() != plan.spec.values.size()) {
    return absl::InvalidArgumentError(absl::StrCat(file.path, ": ", values.size(), " refit values for the ",
                                                   plan.spec.values.size(), " values of ", plan.spec.field));
  }
  RefitSweep out;
  out.sweep = plan.sweep.sweep;
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string& value = out.sweep.values[i];  // as the field reads it
    if (values[i].fit.search.outcome != BisectionOutcome::kFitted) {
      for (const std::string& v : out.sweep.variants) out.sweep.points.push_back(SweepPoint{value, v, {}});
    }
    for (const viosim::VariantResult& r : values[i].results) {
      absl::StatusOr<SweepPoint> p = PointOf(value, r, out.sweep.metrics);
      if (!p.ok()) {
        return absl::Status(p.status().code(), absl::StrCat(file.path, ": ", plan.spec.field, "=", value, ": ",
                                                            p.status().message()));
      }
      out.sweep.points.push_back(*std::move(p));
    }
    out.fits.push_back(std::move(values[i].fit));
  }
  return out;
}

absl::StatusOr<RefitSweep> RunRefitSweep(const viosim::ScenarioFile& file, const SweepSpec& spec,
                                         const CalibrateSpec& refit, const std::vector<std::string>& variants,
                                         const std::vector<std::string>& metrics, const RunRequest& request) {
  absl::StatusOr<RefitSweepPlan> plan = PlanRefitSweep(file, spec, refit, variants, metrics, request);
  if (!plan.ok()) return plan.status();
  std::vector<absl::StatusOr<RefitValue>> done(spec.values.size(), absl::UnknownError("not run"));
  ParallelFor(done.size(), request.jobs, [&](size_t i) { done[i] = RunRefitValue(file, *plan, i); });
  std::vector<RefitValue> values;
  for (absl::StatusOr<RefitValue>& v : done) {
    if (!v.ok()) return v.status();
    values.push_back(*std::move(v));
  }
  return AssembleRefitSweep(file, *plan, std::move(values));
}

}  // namespace analysis
