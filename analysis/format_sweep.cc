// `viosim calibrate` and `viosim sweep` (plain, on a grid, or with --refit):
// a search's steps and outcome, and a sweep's values with each refit and
// the gains between two variants.
#include "analysis/format.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analysis/format_internal.h"
#include "analysis/json.h"

namespace analysis {

namespace {

// A field's last `keep` names ("mmio_exit_user.value"), to head its column;
// the title line gives the whole path.
std::string ShortName(const std::string& field, size_t keep = 2) {
  const std::vector<std::string> names = absl::StrSplit(field, '.');
  keep = std::min(keep, names.size());
  return absl::StrJoin(names.end() - keep, names.end(), ".");
}

std::string StepName(const BisectionStep& s) {
  switch (s.at) {
    case BisectionStep::At::kLo:
      return "lo";
    case BisectionStep::At::kHi:
      return "hi";
    case BisectionStep::At::kMid:
      break;
  }
  return absl::StrCat(s.iteration);
}

std::string ErrorText(double error_pct) {
  return std::isfinite(error_pct) ? absl::StrFormat("%+.2f%%", error_pct) : "inf";
}

// "not monotonic between X and Y" for a midpoint outside its bracket's values.
std::string StepNote(const Calibration& c, size_t i) {
  const BisectionStep& s = c.search.steps[i];
  if (!s.non_monotonic) return "";
  return absl::StrCat("not monotonic between ", c.values[s.bracket_lo], " and ", c.values[s.bracket_hi]);
}

const char* OutcomeName(BisectionOutcome o) {
  switch (o) {
    case BisectionOutcome::kFitted:
      return "fitted";
    case BisectionOutcome::kNotBracketed:
      return "not_bracketed";
    case BisectionOutcome::kNotConverged:
      break;
  }
  return "not_converged";
}

// "not converged within T% after N iterations" (or at the resolution).
std::string NotConverged(const Calibration& c) {
  const int iterations = static_cast<int>(c.search.steps.size()) - 2;
  return absl::StrCat("not converged within ", c.tolerance_pct, "% ",
                      c.search.at_resolution ? absl::StrCat("(the bracket is below the field's resolution, ",
                                                            c.resolution, ", after ", iterations, " iterations)")
                                             : absl::StrCat("after ", iterations, " iterations"));
}

// The keys `calibrate` and `sweep --refit` share, from "field" to "resolution".
void CalibrationHeaderJson(const Calibration& c, JsonWriter& j) {
  j.Key("field").String(c.field)
      .Key("variant").String(c.variant)
      .Key("metric").String(c.metric)
      .Key("published").Number(c.published)
      .Key("role").String("calibration")
      .Key("source").String(c.source)
      .Key("cell_tolerance_pct").Number(c.cell_tolerance_pct)
      .Key("tolerance_pct").Number(c.tolerance_pct)
      .Key("max_iter").Int(c.max_iter)
      .Key("scale").String(c.scale)
      .Key("resolution").String(c.resolution);
}

// Step i's "value", "modeled", "ci95" and "error_pct".
void StepJson(const Calibration& c, size_t i, JsonWriter& j) {
  const BisectionStep& s = c.search.steps[i];
  j.Key("value").String(c.values[i]).Key("modeled").Number(s.eval.value);
  CiJson(s.eval.ci95, j.Key("ci95"));
  j.Key("error_pct").Number(s.error_pct);
}

}  // namespace

std::string CalibrationSummary(const Calibration& c) {
  const Bisection& b = c.search;
  const std::string published = absl::StrCat("published ", Sig(c.published), " (CALIBRATION",
                                             c.source.empty() ? "" : absl::StrCat(", source ", c.source), ")");
  if (b.outcome == BisectionOutcome::kNotBracketed) {
    return absl::StrCat("not bracketed: modeled ", c.metric, " is ", Sig(b.steps[0].eval.value), " at ",
                        c.field, " = ", c.values[0], " and ", Sig(b.steps[1].eval.value), " at ", c.values[1],
                        "; ", published, " is not between them");
  }
  const BisectionStep& s = b.steps[b.best];
  const std::string at = absl::StrCat(c.field, " = ", c.values[b.best], ": modeled ", Sig(s.eval.value),
                                      " (error ", ErrorText(s.error_pct), ") vs ", published);
  if (b.outcome == BisectionOutcome::kFitted) return absl::StrCat("fitted ", at);
  return absl::StrCat(NotConverged(c), "; closest ", at);
}

std::string FormatCalibration(const Calibration& c, Format f) {
  const Bisection& b = c.search;
  switch (f) {
    case Format::kText: {
      std::vector<std::vector<std::string>> rows = {{"step", ShortName(c.field), c.metric, "+/-", "error", ""}};
      for (size_t i = 0; i < b.steps.size(); ++i) {
        const BisectionStep& s = b.steps[i];
        rows.push_back({StepName(s), c.values[i], Sig(s.eval.value), Ci(s.eval.ci95), ErrorText(s.error_pct),
                        StepNote(c, i)});
      }
      return absl::StrCat(
          "scenario ", c.scenario, ": calibrate ", c.field, " to ", c.variant, "/", c.metric, "\n",
          "published ", Sig(c.published), " (CALIBRATION, tolerance ", absl::StrFormat("%g%%", c.cell_tolerance_pct),
          c.source.empty() ? "" : absl::StrCat(", source ", c.source), ")\n",
          "bisection on a ", c.scale, " scale; stops within ", absl::StrFormat("%g%%", c.tolerance_pct),
          " of published, at the field's resolution (", c.resolution, ") or after ", c.max_iter, " iterations\n",
          "(+/-: half-width of the 95% confidence interval, - where none was computed)\n\n", Table(rows, "", "llrrrl"),
          "\n", CalibrationSummary(c), "\n");
    }
    case Format::kJson: {
      JsonWriter j;
      j.BeginObject().Key("scenario").String(c.scenario);
      CalibrationHeaderJson(c, j);
      j.Key("steps").BeginArray();
      for (size_t i = 0; i < b.steps.size(); ++i) {
        j.BeginObject().Key("step").String(StepName(b.steps[i]));
        StepJson(c, i, j);
        j.Key("note").String(StepNote(c, i)).EndObject();
      }
      j.EndArray().Key("outcome").String(OutcomeName(b.outcome)).Key("result");
      if (b.best < 0) {
        j.Null();
      } else {
        j.BeginObject();
        StepJson(c, static_cast<size_t>(b.best), j);
        j.EndObject();
      }
      j.Key("summary").String(CalibrationSummary(c)).EndObject();
      return j.str();
    }
    case Format::kCsv: {
      std::string out = "step,value,modeled,ci95,error_pct,note\n";
      auto row = [&](const std::string& step, size_t i, const std::string& note) {
        const BisectionStep& s = b.steps[i];
        absl::StrAppend(&out, step, ",", CsvField(c.values[i]), ",", FormatNumber(s.eval.value), ",",
                        CiCsv(s.eval.ci95), ",", FormatNumber(s.error_pct), ",", CsvField(note), "\n");
      };
      for (size_t i = 0; i < b.steps.size(); ++i) row(StepName(b.steps[i]), i, StepNote(c, i));
      // The outcome: the fitted (or closest) step again, with the summary.
      if (b.best < 0) {
        absl::StrAppend(&out, OutcomeName(b.outcome), ",,,,,", CsvField(CalibrationSummary(c)), "\n");
      } else {
        row(OutcomeName(b.outcome), static_cast<size_t>(b.best), CalibrationSummary(c));
      }
      return out;
    }
  }
  return "";
}

namespace {

// What a refit adds to a sweep's row: the fitted value, the cell's modeled
// value and its error ("-" when not fitted).
std::vector<std::string> RefitColumns(const Calibration& c) {
  if (c.search.outcome != BisectionOutcome::kFitted) return {"-", "-", "-"};
  const BisectionStep& s = c.search.steps[c.search.best];
  return {c.values[c.search.best], Sig(s.eval.value), ErrorText(s.error_pct)};
}

// The text row's note on a refit: why it was not fitted, and where its
// search found the metric not monotonic.
std::string RefitNote(const Calibration& c) {
  const Bisection& b = c.search;
  std::vector<std::string> notes;
  if (b.outcome == BisectionOutcome::kNotBracketed) {
    notes.push_back(absl::StrCat("not fitted: not bracketed: ", c.variant, "/", c.metric, " is ",
                                 Sig(b.steps[0].eval.value), " at ", c.values[0], " and ", Sig(b.steps[1].eval.value),
                                 " at ", c.values[1], ", published ", Sig(c.published), " is not between them"));
  } else if (b.outcome == BisectionOutcome::kNotConverged) {
    const BisectionStep& s = b.steps[b.best];
    notes.push_back(absl::StrCat("not fitted: ", NotConverged(c), "; closest ", c.values[b.best], ": ",
                                 Sig(s.eval.value), " (", ErrorText(s.error_pct), ")"));
  }
  for (size_t i = 0; i < b.steps.size(); ++i) {
    if (b.steps[i].non_monotonic) notes.push_back(StepNote(c, i));
  }
  return absl::StrJoin(notes, "; ");
}

// A sweep, plain (`fits` null) or refitted (one fit per value).
// A sweep of two variants: per value, the second against the first, each
// metric's ratio and difference with intervals from paired batches.
// Each gain is keyed by its first point's index.
std::vector<std::pair<size_t, Comparison>> SweepGains(const Sweep& sweep) {
  std::vector<std::pair<size_t, Comparison>> out;
  if (sweep.variants.size() != 2) return out;
  for (size_t i = 0; i + 1 < sweep.points.size(); i += 2) {
    const SweepPoint& a = sweep.points[i];
    const SweepPoint& b = sweep.points[i + 1];
    if (a.metrics.empty() || b.metrics.empty()) continue;
    viosim::VariantResult ra, rb;
    ra.variant = a.variant;
    ra.metrics = a.metrics;
    rb.variant = b.variant;
    rb.metrics = b.metrics;
    out.emplace_back(i, Compare(ra, rb));
  }
  return out;
}

std::string SweepOutput(const Sweep& sweep, const std::vector<Calibration>* fits, Format f) {
  const size_t per_value = sweep.variants.size();
  const std::vector<std::pair<size_t, Comparison>> gains = SweepGains(sweep);
  auto fit_of = [&](size_t point) -> const Calibration& { return (*fits)[point / per_value]; };
  // A point's place: its value, then on a grid its values on the others.
  auto place = [&sweep](size_t point) {
    std::vector<std::string> at = {sweep.points[point].value};
    at.insert(at.end(), sweep.points[point].at.begin(), sweep.points[point].at.end());
    return at;
  };
  std::vector<std::string> axes_head = {ShortName(sweep.field)};
  for (const SweepAxis& a : sweep.more) axes_head.push_back(ShortName(a.field));
  switch (f) {
    case Format::kText: {
      std::vector<std::string> head = axes_head;
      std::string align(axes_head.size(), 'l');
      if (fits != nullptr) {
        // Both fields' columns headed by as many last names as tell them apart.
        const Calibration& c = fits->front();
        size_t keep = 2;
        while (ShortName(sweep.field, keep) == ShortName(c.field, keep) && ShortName(c.field, keep) != c.field) {
          ++keep;
        }
        head = {ShortName(sweep.field, keep), ShortName(c.field, keep), absl::StrCat(c.variant, "/", c.metric),
                "error"};
        align += "l";
      }
      for (const std::string& v : sweep.variants) {
        for (const std::string& m : sweep.metrics) {
          head.push_back(absl::StrCat(v, " ", m));
          head.push_back("+/-");
        }
      }
      if (fits != nullptr) head.push_back("");
      align.resize(head.size() - 1, 'r');
      align += fits != nullptr ? "l" : "r";
      std::vector<std::vector<std::string>> rows = {head};
      for (size_t i = 0; i < sweep.points.size(); ++i) {
        const SweepPoint& p = sweep.points[i];
        std::vector<std::string>* row = &rows.back();
        if (i % per_value == 0) {
          rows.push_back(place(i));
          row = &rows.back();
          if (fits != nullptr) {
            const std::vector<std::string> refit = RefitColumns(fit_of(i));
            row->insert(row->end(), refit.begin(), refit.end());
          }
        }
        for (const sim::MetricEstimate& m : p.metrics) {
          row->push_back(Value(m));
          row->push_back(Ci(m.ci95));
        }
        if (p.metrics.empty()) row->resize(row->size() + 2 * sweep.metrics.size(), "-");
        if (fits != nullptr && i % per_value == per_value - 1) row->push_back(RefitNote(fit_of(i)));
      }
      std::string over = sweep.field;
      for (const SweepAxis& a : sweep.more) absl::StrAppend(&over, " x ", a.field);
      std::string title = absl::StrCat("scenario ", sweep.scenario, ": sweep over ", over, "\n");
      if (fits != nullptr) {
        const Calibration& c = fits->front();
        absl::StrAppend(&title, "at each value ", c.field, " is refitted to ", c.variant, "/", c.metric,
                        ", published ", Sig(c.published), " (CALIBRATION, tolerance ",
                        absl::StrFormat("%g%%", c.cell_tolerance_pct),
                        c.source.empty() ? "" : absl::StrCat(", source ", c.source), "):\n", "bisection over ",
                        c.values[0], "..", c.values[1], " on a ", c.scale, " scale; stops within ",
                        absl::StrFormat("%g%%", c.tolerance_pct), " of published, at the field's resolution (",
                        c.resolution, ") or after ", c.max_iter, " iterations\n");
      }
      std::string gain_table;
      if (!gains.empty()) {
        std::vector<std::vector<std::string>> g = {axes_head};
        for (const std::string& m : sweep.metrics) {
          g[0].push_back(absl::StrCat(sweep.variants[1], "/", sweep.variants[0], " ", m));
          g[0].push_back("+/-");
        }
        for (const auto& [point, c] : gains) {
          g.push_back(place(point));
          for (const Gain& x : c.gains) {
            g.back().push_back(x.ratio ? absl::StrFormat("%.4g", *x.ratio) : "-");
            g.back().push_back(x.ratio_ci95 ? absl::StrFormat("%.2g", *x.ratio_ci95) : "-");
          }
        }
        gain_table = absl::StrCat(
            "\ngains (the ratio; its 95% interval from the two runs' batches, paired)\n",
            Table(g, "", std::string(axes_head.size(), 'l') + std::string(g[0].size() - axes_head.size(), 'r')));
      }
      std::string precision;
      if (sweep.precision > 0) {
        precision = absl::StrFormat("\nprecision %g%%: ", 100 * sweep.precision);
        absl::StrAppend(&precision, sweep.precision_missed.empty()
                                        ? "every point's tabulated intervals within it\n"
                                        : absl::StrCat("not reached at the cap at ",
                                                       absl::StrJoin(sweep.precision_missed, "; "), "\n"));
      }
      return absl::StrCat(title,
                          "(+/-: half-width of the 95% confidence interval, - where none was computed)\n\n",
                          Table(rows, "", align), gain_table, precision);
    }
    case Format::kJson: {
      JsonWriter j;
      j.BeginObject().Key("scenario").String(sweep.scenario).Key("field").String(sweep.field);
      if (sweep.precision > 0) {
        j.Key("precision").BeginObject().Key("target_pct").Number(100 * sweep.precision).Key("missed").BeginArray();
        for (const std::string& m : sweep.precision_missed) j.String(m);
        j.EndArray().EndObject();
      }
      if (!sweep.more.empty()) {
        // A grid: its further axes; each point's values on them are its "at".
        j.Key("more").BeginArray();
        for (const SweepAxis& a : sweep.more) {
          j.BeginObject().Key("field").String(a.field).Key("values").BeginArray();
          for (const std::string& v : a.values) j.String(v);
          j.EndArray().EndObject();
        }
        j.EndArray();
      }
      if (fits != nullptr) {
        const Calibration& c = fits->front();
        j.Key("calibration").BeginObject();
        CalibrationHeaderJson(c, j);
        j.Key("lo").String(c.values[0]).Key("hi").String(c.values[1]).EndObject();
      }
      j.Key("points").BeginArray();
      for (size_t i = 0; i < sweep.points.size(); ++i) {
        const SweepPoint& p = sweep.points[i];
        j.BeginObject().Key("value").String(p.value);
        if (!sweep.more.empty()) {
          j.Key("at").BeginArray();
          for (const std::string& v : p.at) j.String(v);
          j.EndArray();
        }
        if (fits != nullptr) {
          const Calibration& c = fit_of(i);
          const Bisection& b = c.search;
          j.Key("refit").BeginObject().Key("outcome").String(OutcomeName(b.outcome));
          if (b.best < 0) {
            j.Key("value").Null().Key("modeled").Null().Key("ci95").Null().Key("error_pct").Null();
          } else {
            StepJson(c, static_cast<size_t>(b.best), j);
          }
          j.Key("iterations").Int(static_cast<int64_t>(b.steps.size()) - 2);
          j.Key("notes").BeginArray();
          for (size_t k = 0; k < b.steps.size(); ++k) {
            if (b.steps[k].non_monotonic) j.String(StepNote(c, k));
          }
          j.EndArray().Key("summary").String(CalibrationSummary(c)).EndObject();
        }
        j.Key("variant").String(p.variant);
        j.Key("metrics").BeginObject();
        for (const sim::MetricEstimate& m : p.metrics) CiJson(MeasuredValue(m), j.Key(m.name));
        j.EndObject().Key("ci95").BeginObject();
        for (const sim::MetricEstimate& m : p.metrics) CiJson(m.ci95, j.Key(m.name));
        j.EndObject().EndObject();
      }
      j.EndArray();
      if (!gains.empty()) {
        j.Key("gains").BeginArray();
        for (const auto& [point, c] : gains) {
          for (const Gain& x : c.gains) {
            j.BeginObject().Key("value").String(sweep.points[point].value);
            if (!sweep.more.empty()) {
              j.Key("at").BeginArray();
              for (const std::string& v : sweep.points[point].at) j.String(v);
              j.EndArray();
            }
            j.Key("a").String(c.a).Key("b").String(c.b);
            j.Key("metric").String(x.metric);
            CiJson(x.ratio, j.Key("ratio"));
            CiJson(x.ratio_ci95, j.Key("ratio_ci95"));
            j.Key("difference").Number(x.difference);
            CiJson(x.difference_ci95, j.Key("difference_ci95"));
            j.EndObject();
          }
        }
        j.EndArray();
      }
      j.EndObject();
      return j.str();
    }
    case Format::kCsv: {
      // The swept value's column is not called "value": that is the metric's.
      // A grid's further axes: swept_value_2, swept_value_3.
      std::string more_head;
      for (size_t k = 0; k < sweep.more.size(); ++k) absl::StrAppend(&more_head, ",swept_value_", k + 2);
      std::string out = fits == nullptr ? absl::StrCat("swept_value", more_head, ",variant,metric,value,ci95\n")
                                        : "swept_value,refit_outcome,refit_value,cell_modeled,cell_ci95,"
                                          "cell_error_pct,variant,metric,value,ci95,refit_note\n";
      for (size_t i = 0; i < sweep.points.size(); ++i) {
        const SweepPoint& p = sweep.points[i];
        std::string refit, note;
        if (fits != nullptr) {
          const Calibration& c = fit_of(i);
          const Bisection& b = c.search;
          refit = absl::StrCat(OutcomeName(b.outcome), ",");
          if (b.best < 0) {
            refit += ",,,,";
          } else {
            const BisectionStep& s = b.steps[b.best];
            absl::StrAppend(&refit, CsvField(c.values[b.best]), ",", FormatNumber(s.eval.value), ",",
                            CiCsv(s.eval.ci95), ",", FormatNumber(s.error_pct), ",");
          }
          note = absl::StrCat(",", CsvField(RefitNote(c)));
        }
        auto row = [&](const std::string& metric, const std::string& value, const std::string& ci) {
          absl::StrAppend(&out, CsvField(p.value), ",");
          for (const std::string& v : p.at) absl::StrAppend(&out, CsvField(v), ",");
          absl::StrAppend(&out, refit, CsvField(p.variant), ",", CsvField(metric), ",", value, ",", ci, note, "\n");
        };
        for (const sim::MetricEstimate& m : p.metrics) row(m.name, CiCsv(MeasuredValue(m)), CiCsv(m.ci95));
        // Not fitted: nothing ran at this value.
        if (p.metrics.empty()) {
          for (const std::string& m : sweep.metrics) row(m, "", "");
        }
      }
      return out;
    }
  }
  return "";
}

}  // namespace

std::string FormatSweep(const Sweep& sweep, Format f) { return SweepOutput(sweep, nullptr, f); }

std::string FormatRefitSweep(const RefitSweep& r, Format f) { return SweepOutput(r.sweep, &r.fits, f); }

}  // namespace analysis
