#include "analysis/explain.h"

#include "analysis/gains.h"
#include "analysis/reads.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "analysis/json.h"
#include "scenarios/units.h"
#include "sim/stats.h"

namespace analysis {
namespace {

// The field's magnitude: picoseconds for a duration, else its number.
double Magnitude(const CostField& f) {
  return f.value == CostField::Value::kDuration ? static_cast<double>(f.duration.ps()) : f.number;
}

std::string ValueText(const CostField& f) {
  return f.value == CostField::Value::kDuration ? sim::FormatTime(f.duration) : absl::StrFormat("%.6g", f.number);
}

// The field at `path` in `s` (as CostFields lists it); null when absent.
std::optional<CostField> FieldAt(const viosim::Scenario& s, const std::string& path) {
  for (CostField& f : CostFields(s)) {
    if (f.path == path) return f;
  }
  return std::nullopt;
}

const sim::MetricEstimate* MetricOf(const viosim::VariantResult& r, const std::string& name) {
  for (const sim::MetricEstimate& m : r.metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// The first line of a status message: a check's reason without its list of
// where each value came from.
std::string FirstLine(const absl::Status& s) {
  std::vector<std::string> lines = absl::StrSplit(s.message(), '\n');
  return lines.empty() ? std::string(s.message()) : lines.front();
}

// The 95% half-width of the per-batch elasticities of a pair of runs: each
// batch's ln(M+ / M-) over `log_step`; none when a batch is missing or not
// positive, or there are fewer than two.
std::optional<double> PairedHalfWidth(const sim::MetricEstimate& plus, const sim::MetricEstimate& minus,
                                      double log_step) {
  const size_t k = plus.batch_numerators.size();
  if (k < 2 || minus.batch_numerators.size() != k || plus.batch_denominators.size() != k ||
      minus.batch_denominators.size() != k) {
    return std::nullopt;
  }
  std::vector<double> e;
  for (size_t b = 0; b < k; ++b) {
    const double p = plus.batch_numerators[b] / plus.batch_denominators[b];
    const double m = minus.batch_numerators[b] / minus.batch_denominators[b];
    if (!(p > 0) || !(m > 0) || !std::isfinite(p) || !std::isfinite(m)) return std::nullopt;
    e.push_back(std::log(p / m) / log_step);
  }
  return HalfWidth(e);
}

// How strongly a cost sets the metric, in words, from |e|.
std::string Strength(double abs_e) {
  if (abs_e >= 0.9) return "nearly in proportion: it is most of the one path that sets the rate";
  if (abs_e >= 0.3) return "strongly: it is a large part of the path that sets the value";
  if (abs_e >= 0.05) return "partly: it shares the critical path with other costs";
  return "hardly";
}

std::string SourceWords(const CostField& f) {
  switch (f.kind) {
    case viosim::Source::ESTIMATED:
      return "an estimate, so a measurement of it would change this answer most";
    case viosim::Source::FITTED:
      return "fitted to a calibration cell, so it absorbs what the model leaves out";
    case viosim::Source::MEASURED:
      return "measured";
    case viosim::Source::DERIVED:
      return "derived from measurements";
    case viosim::Source::DEFINED:
      return "a parameter of the experiment itself";
    default:
      return "of unstated source";
  }
}

std::vector<std::string> Reading(const Explanation& x) {
  std::vector<std::string> out;
  out.push_back(absl::StrFormat("%s of %s / %s is %.6g%s.", x.metric, x.scenario, x.variant, x.value,
                                x.base.bound_detail.empty() ? "" : absl::StrCat("; bound: ", x.base.bound_detail)));
  const double pct = 100 * x.step;
  int shown = 0;
  for (const CostElasticity& c : x.costs) {
    if (!c.skipped.empty() || shown == 3) break;
    if (std::fabs(c.elasticity) < 0.05 && shown > 0) break;
    ++shown;
    const bool up = c.elasticity < 0;  // a faster (smaller) cost raises the metric
    out.push_back(absl::StrFormat(
        "%d. %s (%s) moves %s %s (elasticity %.3g): %.0f%% less of it would %s %s by about %.1f%%; it is %s.", shown,
        c.field.path, ValueText(c.field), x.metric, Strength(std::fabs(c.elasticity)), c.elasticity, pct,
        up ? "raise" : "lower", x.metric, std::fabs(c.elasticity) * pct, SourceWords(c.field)));
  }
  if (shown == 0) out.push_back("No cost moves the metric by an elasticity of 0.05 or more.");
  // The lock with the most waiting, and what a CPU spends its time on.
  const viosim::LockStatRow* lock = nullptr;
  for (const viosim::LockStatRow& l : x.base.locks) {
    if (l.contentions > 0 && (lock == nullptr || l.wait_total_us > lock->wait_total_us)) lock = &l;
  }
  if (lock != nullptr) {
    out.push_back(absl::StrFormat(
        "Most waiting is for %s: %.0f%% of its %d acquisitions contended, waiting %.3g us on average against a "
        "mean hold of %.3g us.",
        lock->name, 100.0 * static_cast<double>(lock->contentions) / static_cast<double>(lock->acquisitions),
        lock->acquisitions, lock->wait_avg_us, lock->hold_avg_us));
  }
  if (!x.base.cpus.empty()) {
    std::vector<std::pair<double, std::string>> mean;
    for (size_t i = 0; i < x.base.cpu_states.size(); ++i) {
      double m = 0;
      for (const viosim::CpuRow& c : x.base.cpus) m += c.state_pct[i] / static_cast<double>(x.base.cpus.size());
      if (x.base.cpu_states[i] != "idle") mean.push_back({-m, x.base.cpu_states[i]});
    }
    std::stable_sort(mean.begin(), mean.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> parts;
    for (size_t i = 0; i < mean.size() && i < 2; ++i) {
      if (-mean[i].first >= 1) parts.push_back(absl::StrFormat("%s %.1f%%", mean[i].second, -mean[i].first));
    }
    if (!parts.empty()) {
      out.push_back(absl::StrCat("The CPUs' mean time goes most to ", absl::StrJoin(parts, " and "), "."));
    }
  }
  int flat = 0, evaluated = 0;
  for (const CostElasticity& c : x.costs) {
    if (!c.skipped.empty()) continue;
    ++evaluated;
    if (std::fabs(c.elasticity) < 0.05) ++flat;
  }
  out.push_back(absl::StrFormat(
      "%d of %d costs move it by less than 0.05 per unit (|elasticity| < 0.05): off the paths that set it%s.", flat,
      evaluated,
      x.ci_informative ? ""
                       : absl::StrCat("; the value is the same at seed ", x.replicate_seed,
                                      ", so no interval is informative (n/i)")));
  return out;
}

}  // namespace

absl::StatusOr<double> ParseStep(absl::string_view text) {
  absl::string_view t = text;
  const bool percent = absl::ConsumeSuffix(&t, "%");
  double v = 0;
  if (!absl::SimpleAtod(t, &v) || !std::isfinite(v)) {
    return absl::InvalidArgumentError(absl::StrCat("--step '", text, "': not a number (e.g. 10% or 0.1)"));
  }
  if (percent) v /= 100;
  if (!(v > 0 && v < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--step '", text, "': must lie strictly between 0 and 1 (0% and 100%)"));
  }
  return v;
}

absl::StatusOr<Explanation> Explain(const viosim::ScenarioFile& file, const ExplainSpec& spec,
                                    const RunRequest& request) {
  Explanation x;
  x.scenario = file.scenario.name();
  x.variant = spec.variant.empty() ? viosim::VariantNames(file).front() : spec.variant;
  x.step = spec.step;
  absl::StatusOr<viosim::Scenario> base = viosim::ResolveVariant(file, x.variant, request.overrides);
  if (!base.ok()) return base.status();
  const std::vector<std::string> metrics = viosim::MetricNames(*base);
  if (metrics.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.path, ": variant '", x.variant, "' has no workload, so no metric to explain"));
  }
  if (spec.metric.empty()) {
    x.metric = std::find(metrics.begin(), metrics.end(), "iops") != metrics.end() ? "iops" : metrics.front();
  } else if (std::find(metrics.begin(), metrics.end(), spec.metric) == metrics.end()) {
    return absl::InvalidArgumentError(absl::StrCat("--metric '", spec.metric, "': not a metric of ", file.path,
                                                   " (metrics: ", absl::StrJoin(metrics, ", "), ")"));
  } else {
    x.metric = spec.metric;
  }

  // The runs: the variant, its replicate at seed + 1, then c+ and c- of
  // each field that can take the step.
  std::vector<viosim::Scenario> runs = {*base};
  x.replicate_seed = base->run().seed() + 1;
  {
    std::vector<std::string> o = request.overrides;
    o.push_back(absl::StrCat("run.seed=", x.replicate_seed));
    absl::StatusOr<viosim::Scenario> again = viosim::ResolveVariant(file, x.variant, o);
    if (!again.ok()) return again.status();
    runs.push_back(*std::move(again));
  }
  std::vector<double> log_steps;   // per cost: ln(c+ / c-), 0 when skipped
  std::vector<size_t> first_run;  // per cost: index of its c+ run
  // The costs the variant reads: a field it never reads has no elasticity
  // to measure (scenarios/params.h).
  absl::StatusOr<viosim::ReadSet> reads = ReadsOf(file, x.variant, request.overrides);
  if (!reads.ok()) return reads.status();
  std::vector<CostField> fields = CostFieldsRead(*base, *reads);
  x.costed_fields = static_cast<int>(fields.size());
  if (!spec.fields.empty()) {
    std::vector<CostField> chosen;
    for (const std::string& prefix : spec.fields) {
      bool any = false;
      for (const CostField& f : fields) any |= absl::StartsWith(f.path, prefix);
      if (!any) {
        std::vector<std::string> paths;
        for (const CostField& f : fields) paths.push_back(f.path);
        return absl::InvalidArgumentError(absl::StrCat("--field '", prefix, "': no costed field of ", file.path,
                                                       " / ", x.variant, " starts with it (costed fields: ",
                                                       absl::StrJoin(paths, ", "), ")"));
      }
    }
    for (const CostField& f : fields) {
      for (const std::string& prefix : spec.fields) {
        if (absl::StartsWith(f.path, prefix)) {
          chosen.push_back(f);
          break;
        }
      }
    }
    fields = std::move(chosen);
  }
  for (const CostField& f : fields) {
    CostElasticity c;
    c.field = f;
    log_steps.push_back(0);
    first_run.push_back(0);
    if (Magnitude(f) == 0) c.skipped = "zero: no relative step";
    std::vector<viosim::Scenario> pair;
    std::vector<double> at;
    for (double k : {1 + spec.step, 1 - spec.step}) {
      if (!c.skipped.empty()) break;
      absl::StatusOr<std::string> a = ScaledAssignment(f, k);
      if (!a.ok()) {
        c.skipped = FirstLine(a.status());
        break;
      }
      std::vector<std::string> o = request.overrides;
      o.push_back(*a);
      absl::StatusOr<viosim::Scenario> s = viosim::ResolveVariant(file, x.variant, o);
      if (!s.ok()) {
        c.skipped = absl::StrCat("x", k, " refused: ", FirstLine(s.status()));
        break;
      }
      std::optional<CostField> g = FieldAt(*s, f.path);
      if (!g) {
        c.skipped = "the scaled field is not a cost any more";
        break;
      }
      at.push_back(Magnitude(*g));
      pair.push_back(*std::move(s));
    }
    if (c.skipped.empty() && at[0] == at[1]) c.skipped = "the step rounds to no change";
    if (c.skipped.empty()) {
      log_steps.back() = std::log(at[0] / at[1]);
      first_run.back() = runs.size();
      runs.push_back(std::move(pair[0]));
      runs.push_back(std::move(pair[1]));
    }
    x.costs.push_back(std::move(c));
  }

  std::vector<absl::StatusOr<viosim::VariantResult>> results(runs.size(), absl::UnknownError("not run"));
  viosim::RunOptions options = request.options;
  options.base_dir = std::filesystem::path(file.path).parent_path().string();
  if (options.base_dir.empty()) options.base_dir = ".";
  ParallelFor(runs.size(), request.jobs,
              [&](size_t i) { results[i] = viosim::RunScenario(runs[i], x.variant, options); });
  for (const auto& r : results) {
    if (!r.ok()) {
      return absl::Status(r.status().code(),
                          absl::StrCat(file.path, ": variant '", x.variant, "': ", r.status().message()));
    }
  }
  x.runs = static_cast<int>(runs.size());
  x.base = *results[0];
  x.base.description = viosim::VariantDescription(file, x.variant);
  const sim::MetricEstimate* m = MetricOf(x.base, x.metric);
  const sim::MetricEstimate* again = MetricOf(*results[1], x.metric);
  if (m == nullptr || !m->measured) {
    return absl::InvalidArgumentError(absl::StrCat(file.path, ": variant '", x.variant, "': metric '", x.metric,
                                                   "' was not measured (nothing it averages over happened)"));
  }
  x.value = m->value;
  x.ci_informative = again == nullptr || again->value != m->value;
  if (x.ci_informative) x.value_ci95 = m->ci95;

  for (size_t i = 0; i < x.costs.size(); ++i) {
    CostElasticity& c = x.costs[i];
    if (!c.skipped.empty()) continue;
    const sim::MetricEstimate* p = MetricOf(*results[first_run[i]], x.metric);
    const sim::MetricEstimate* q = MetricOf(*results[first_run[i] + 1], x.metric);
    if (p == nullptr || q == nullptr || !p->measured || !q->measured || !(p->value > 0) || !(q->value > 0)) {
      c.skipped = absl::StrCat(x.metric, " not measured or not positive at a step");
      continue;
    }
    c.plus = p->value;
    c.minus = q->value;
    c.elasticity = std::log(p->value / q->value) / log_steps[i];
    if (x.ci_informative) c.ci95 = PairedHalfWidth(*p, *q, log_steps[i]);
  }
  std::stable_sort(x.costs.begin(), x.costs.end(), [](const CostElasticity& a, const CostElasticity& b) {
    if (a.skipped.empty() != b.skipped.empty()) return a.skipped.empty();
    if (!a.skipped.empty()) return false;
    return std::fabs(a.elasticity) > std::fabs(b.elasticity);
  });
  x.reading = Reading(x);
  return x;
}

namespace {

std::string Sig(double v) { return absl::StrFormat("%.4g", v); }

std::string CiText(const Explanation& x, const CostElasticity& c) {
  if (!x.ci_informative) return "n/i";
  return c.ci95 ? Sig(*c.ci95) : "-";
}

// A bar of |e| on a scale where 1 is 20 characters, '-' to the left for a
// cost whose reduction raises the metric, '+' to the right otherwise.
std::string Bar(double e) {
  const int n = std::min(40, static_cast<int>(std::lround(std::fabs(e) * 20)));
  return e < 0 ? absl::StrCat(std::string(static_cast<size_t>(n), '<')) : std::string(static_cast<size_t>(n), '>');
}

}  // namespace

std::string FormatExplanation(const Explanation& x, Format f) {
  switch (f) {
    case Format::kText: {
      std::string out = absl::StrFormat("explain %s / %s: %s = %.6g", x.scenario, x.variant, x.metric, x.value);
      if (!x.ci_informative) {
        absl::StrAppend(&out, " (n/i: the same at seed ", x.replicate_seed, ")");
      } else if (x.value_ci95) {
        absl::StrAppend(&out, " +/- ", Sig(*x.value_ci95));
      }
      absl::StrAppend(&out, absl::StrFormat("; each cost x(1 +/- %g), same seed, %d runs", x.step, x.runs));
      if (static_cast<int>(x.costs.size()) < x.costed_fields) {
        absl::StrAppend(&out, absl::StrFormat("; %d of %d costed fields (--field)", x.costs.size(), x.costed_fields));
      }
      absl::StrAppend(&out, "\n\n");
      for (const std::string& r : x.reading) absl::StrAppend(&out, r, "\n");
      absl::StrAppend(&out, "\nelasticity d ln ", x.metric,
                      " / d ln cost (95% CI from paired batches; < : less of the cost raises it, > : lowers it)\n");
      std::vector<std::vector<std::string>> rows = {{"field", "source", "value", "elasticity", "95% CI +/-", ""}};
      for (const CostElasticity& c : x.costs) {
        if (!c.skipped.empty()) continue;
        rows.push_back({c.field.path, SourceKindName(c.field.kind), ValueText(c.field),
                        absl::StrFormat("%+.4f", c.elasticity), CiText(x, c), Bar(c.elasticity)});
      }
      absl::StrAppend(&out, Table(rows, "  ", "lllrrl"));
      bool any_skipped = false;
      for (const CostElasticity& c : x.costs) {
        if (c.skipped.empty()) continue;
        if (!any_skipped) absl::StrAppend(&out, "\nnot varied:\n");
        any_skipped = true;
        absl::StrAppend(&out, "  ", c.field.path, " (", SourceKindName(c.field.kind), ", ", ValueText(c.field),
                        "): ", c.skipped, "\n");
      }
      absl::StrAppend(&out, "\nmechanism (the variant as `viosim run` shows it):\n");
      absl::StrAppend(&out, FormatVariantText(x.base));
      return out;
    }
    case Format::kJson: {
      JsonWriter j;
      j.BeginObject()
          .Key("scenario").String(x.scenario)
          .Key("variant").String(x.variant)
          .Key("metric").String(x.metric)
          .Key("value").Number(x.value);
      // "costs" holds exactly the contract's four keys, ranked; the rest of
      // each cost is in "cost_details", in the same order.
      j.Key("costs").BeginArray();
      for (const CostElasticity& c : x.costs) {
        if (!c.skipped.empty()) continue;
        j.BeginObject().Key("field").String(c.field.path).Key("source").String(SourceKindName(c.field.kind));
        j.Key("elasticity").Number(c.elasticity);
        if (c.ci95 && x.ci_informative) {
          j.Key("ci95").Number(*c.ci95);
        } else {
          j.Key("ci95").Null();
        }
        j.EndObject();
      }
      j.EndArray().Key("cost_details").BeginArray();
      for (const CostElasticity& c : x.costs) {
        if (!c.skipped.empty()) continue;
        j.BeginObject().Key("field").String(c.field.path).Key("value").String(ValueText(c.field));
        j.Key("ref").String(c.field.ref).Key("plus").Number(c.plus).Key("minus").Number(c.minus).EndObject();
      }
      j.EndArray().Key("not_varied").BeginArray();
      for (const CostElasticity& c : x.costs) {
        if (c.skipped.empty()) continue;
        j.BeginObject().Key("field").String(c.field.path).Key("source").String(SourceKindName(c.field.kind));
        j.Key("value").String(ValueText(c.field)).Key("reason").String(c.skipped).EndObject();
      }
      j.EndArray();
      if (x.value_ci95) {
        j.Key("value_ci95").Number(*x.value_ci95);
      } else {
        j.Key("value_ci95").Null();
      }
      j.Key("ci95_informative").Bool(x.ci_informative).Key("replicate_seed").Uint(x.replicate_seed);
      j.Key("step").Number(x.step).Key("runs").Int(x.runs).Key("costed_fields").Int(x.costed_fields);
      j.Key("reading").BeginArray();
      for (const std::string& r : x.reading) j.String(r);
      j.EndArray();
      j.Key("mechanism").BeginObject();
      VariantJson(x.base, j);
      j.EndObject();
      j.EndObject();
      return j.str();
    }
    case Format::kCsv: {
      std::string out = "rank,field,source,value,elasticity,ci95,plus,minus,skipped\n";
      int rank = 0;
      for (const CostElasticity& c : x.costs) {
        ++rank;
        const bool ok = c.skipped.empty();
        absl::StrAppend(&out, rank, ",", CsvField(c.field.path), ",", SourceKindName(c.field.kind), ",",
                        CsvField(ValueText(c.field)), ",", ok ? FormatNumber(c.elasticity) : "", ",",
                        ok && x.ci_informative && c.ci95 ? FormatNumber(*c.ci95) : "", ",",
                        ok ? FormatNumber(c.plus) : "", ",", ok ? FormatNumber(c.minus) : "", ",",
                        CsvField(c.skipped), "\n");
      }
      return out;
    }
  }
  return "";
}

}  // namespace analysis
