#include "analysis/format.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analysis/json.h"
#include "models/cpu/sched.h"
#include "scenarios/stack.h"
#include "scenarios/stacks/vhost_net.h"
#include "sim/time.h"

namespace analysis {

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Table(const std::vector<std::vector<std::string>>& rows, const std::string& indent,
                  const std::string& align) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line = indent;
    for (size_t i = 0; i < r.size(); ++i) {
      if (i > 0) line += "  ";
      const std::string pad(width[i] - r[i].size(), ' ');
      line += i < align.size() && align[i] == 'l' ? r[i] + pad : pad + r[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

namespace {

// A field's last `keep` names ("mmio_exit_user.value"), to head its column;
// the title line gives the whole path.
std::string ShortName(const std::string& field, size_t keep = 2) {
  const std::vector<std::string> names = absl::StrSplit(field, '.');
  keep = std::min(keep, names.size());
  return absl::StrJoin(names.end() - keep, names.end(), ".");
}

std::string Num(double v, int decimals) {
  if (!std::isfinite(v)) return "inf";
  return absl::StrFormat("%.*f", decimals, v);
}

// Enough decimals for about 6 significant digits, at most 3.
std::string Sig(double v) {
  const double a = std::fabs(v);
  int d = a >= 1e5 ? 0 : a >= 1e3 ? 1 : a >= 10 ? 2 : 3;
  return Num(v, d);
}

// A confidence half-width, "-" when none was computed.
std::string Ci(const std::optional<double>& ci) { return ci ? Sig(*ci) : "-"; }

// A metric's value: "not measured" (JSON null, CSV empty) when its
// denominator stayed zero, never a 0 that looks like a measurement.
std::string Value(const sim::MetricEstimate& m) { return m.measured ? Sig(m.value) : "not measured"; }

// The same for JSON (null when none) and CSV (an empty field).
void CiJson(const std::optional<double>& ci, JsonWriter& j) {
  if (ci) {
    j.Number(*ci);
  } else {
    j.Null();
  }
}
std::string CiCsv(const std::optional<double>& ci) { return ci ? FormatNumber(*ci) : ""; }
std::optional<double> MeasuredValue(const sim::MetricEstimate& m) {
  return m.measured ? std::optional<double>(m.value) : std::nullopt;
}

void RunText(const std::string& scenario, const std::string& description,
             const std::vector<viosim::VariantResult>& results, std::string* out) {
  absl::StrAppend(out, "scenario ", scenario, description.empty() ? "" : ": ", description, "\n");
  for (const viosim::VariantResult& r : results) {
    absl::StrAppend(out, "\n== variant ", r.variant, r.description.empty() ? "" : ": ", r.description, "\n");
    absl::StrAppend(out, FormatVariantText(r));
  }
}

}  // namespace

std::string FormatVariantText(const viosim::VariantResult& r) {
  std::string text;
  std::string* out = &text;
  absl::StrAppend(out, absl::StrFormat("   seed %d, warm-up %s, measured %s in %d batches, %d events\n", r.seed,
                                       sim::FormatTime(r.warmup), sim::FormatTime(r.duration), r.batches,
                                       r.events));
  if (r.precision > 0) {
    absl::StrAppend(out, absl::StrFormat("   precision %g%%: ", 100 * r.precision),
                    r.precision_reached
                        ? "every measured interval within it"
                        : absl::StrCat("not reached at the cap for ", absl::StrJoin(r.precision_missed, ", ")),
                    "\n");
  }
  if (!r.bound_detail.empty()) absl::StrAppend(out, "   bound: ", r.bound_detail, "\n");
  absl::StrAppend(out, "\n");
  // "-": no interval computed for the metric.
  std::vector<std::vector<std::string>> rows = {{"metric", "value", "95% CI +/-"}};
  bool unmeasured = false;
  for (const sim::MetricEstimate& m : r.metrics) {
    rows.push_back({m.name, Value(m), Ci(m.ci95)});
    unmeasured |= !m.measured;
  }
  absl::StrAppend(out, Table(rows, "   "));
  if (unmeasured) {
    absl::StrAppend(out, "   not measured: what the metric averages over (completions, acquisitions) did not "
                         "happen in the window\n");
  }
  if (!r.locks.empty()) {
    absl::StrAppend(out, "\n   lock_stat (as /proc/lock_stat; times in us, waittime over contended "
                         "acquisitions):\n");
    absl::StrAppend(out, FormatLockStat(r.locks, "   "));
  }
  if (!r.cpus.empty()) {
    absl::StrAppend(out, "\n   CPU time (% of the measured window):\n");
    std::vector<std::string> head = {"cpu"};
    for (const std::string& s : r.cpu_states) head.push_back(s);
    head.push_back("irqs-off");
    std::vector<std::vector<std::string>> crows = {head};
    std::vector<double> mean(r.cpu_states.size() + 1, 0);
    for (const viosim::CpuRow& c : r.cpus) {
      std::vector<std::string> row = {c.name};
      for (size_t i = 0; i < c.state_pct.size(); ++i) {
        row.push_back(Num(c.state_pct[i], 1));
        mean[i] += c.state_pct[i] / r.cpus.size();
      }
      row.push_back(Num(c.irq_off_pct, 1));
      mean.back() += c.irq_off_pct / r.cpus.size();
      crows.push_back(std::move(row));
    }
    if (r.cpus.size() > 1) {
      std::vector<std::string> row = {"mean"};
      for (double m : mean) row.push_back(Num(m, 1));
      crows.push_back(std::move(row));
    }
    absl::StrAppend(out, Table(crows, "   "));
  }
  return text;
}

namespace {

void RunJson(const std::string& scenario, const std::vector<viosim::VariantResult>& results, const Comparison* gains,
             std::string* out) {
  JsonWriter j;
  j.BeginObject().Key("scenario").String(scenario).Key("variants").BeginArray();
  for (const viosim::VariantResult& r : results) {
    j.BeginObject().Key("name").String(r.variant);
    VariantJson(r, j);
    j.EndObject();
  }
  j.EndArray();
  if (gains != nullptr) {
    j.Key("gains").BeginObject().Key("a").String(gains->a).Key("b").String(gains->b).Key("metrics").BeginArray();
    for (const Gain& g : gains->gains) {
      j.BeginObject().Key("metric").String(g.metric).Key("a").Number(g.a).Key("b").Number(g.b);
      CiJson(g.ratio, j.Key("ratio"));
      CiJson(g.ratio_ci95, j.Key("ratio_ci95"));
      j.Key("difference").Number(g.difference);
      CiJson(g.difference_ci95, j.Key("difference_ci95"));
      j.EndObject();
    }
    j.EndArray().EndObject();
  }
  j.EndObject();
  *out += j.str();
}

}  // namespace

void VariantJson(const viosim::VariantResult& r, JsonWriter& j) {
  j.Key("metrics").BeginObject();
  for (const auto& m : r.metrics) CiJson(MeasuredValue(m), j.Key(m.name));
  j.EndObject().Key("ci95").BeginObject();
  for (const auto& m : r.metrics) CiJson(m.ci95, j.Key(m.name));
  j.EndObject();
  if (!r.bound.empty()) j.Key("bound").String(r.bound).Key("bound_detail").String(r.bound_detail);
  j.Key("seed").Uint(r.seed);
  j.Key("warmup_s").Number(r.warmup.ToSeconds());
  j.Key("duration_s").Number(r.duration.ToSeconds());
  j.Key("batches").Int(r.batches);
  if (r.precision > 0) {
    j.Key("precision").BeginObject().Key("target_pct").Number(100 * r.precision).Key("reached").Bool(
        r.precision_reached);
    j.Key("missed").BeginArray();
    for (const std::string& m : r.precision_missed) j.String(m);
    j.EndArray().EndObject();
  }
  j.Key("events").Uint(r.events);
  j.Key("lock_stat").BeginArray();
  for (const viosim::LockStatRow& l : r.locks) {
    j.BeginObject()
        .Key("class_name").String(l.name)
        .Key("con_bounces").Uint(l.con_bounces)
        .Key("contentions").Uint(l.contentions)
        .Key("waittime_min_us").Number(l.wait_min_us)
        .Key("waittime_max_us").Number(l.wait_max_us)
        .Key("waittime_total_us").Number(l.wait_total_us)
        .Key("waittime_avg_us").Number(l.wait_avg_us)
        .Key("acq_bounces").Uint(l.acq_bounces)
        .Key("acquisitions").Uint(l.acquisitions)
        .Key("holdtime_min_us").Number(l.hold_min_us)
        .Key("holdtime_max_us").Number(l.hold_max_us)
        .Key("holdtime_total_us").Number(l.hold_total_us)
        .Key("holdtime_avg_us").Number(l.hold_avg_us)
        .EndObject();
  }
  j.EndArray().Key("cpus").BeginArray();
  for (const viosim::CpuRow& c : r.cpus) {
    j.BeginObject().Key("name").String(c.name);
    for (size_t i = 0; i < c.state_pct.size(); ++i) j.Key(absl::StrCat(r.cpu_states[i], "_pct")).Number(c.state_pct[i]);
    j.Key("irqs_off_pct").Number(c.irq_off_pct).EndObject();
  }
  j.EndArray();
}

namespace {

void CellsJson(const std::vector<Reproduction>& reps, JsonWriter& j) {
  j.Key("cells").BeginArray();
  for (const Reproduction& rep : reps) {
    for (const Cell& c : rep.cells) {
      j.BeginObject()
          .Key("scenario").String(c.scenario)
          .Key("variant").String(c.variant)
          .Key("metric").String(c.metric)
          .Key("published").Number(c.published);
      CiJson(c.measured ? std::optional<double>(c.modeled) : std::nullopt, j.Key("modeled"));
      CiJson(c.ci_informative ? c.ci95 : std::nullopt, j.Key("ci95"));
      j.Key("ci95_informative").Bool(c.ci_informative);
      j.Key("error_pct").Number(c.error_pct)
          .Key("role").String(c.role)
          .Key("tolerance_pct").Number(c.tolerance_pct)
          .Key("within").Bool(c.within)
          .Key("source").String(c.source)
          .Key("known_gap").String(c.known_gap);
      CiJson(c.expected, j.Key("expected"));
      if (c.effect) {
        const Effect& e = *c.effect;
        j.Key("effect").BeginObject().Key("partner").String(e.partner).Key("published").Number(e.published);
        j.Key("modeled").Number(e.modeled);
        CiJson(e.ci95, j.Key("ci95"));
        j.Key("error_pct").Number(e.error_pct);
        CiJson(e.tolerance_pct, j.Key("tolerance_pct"));
        j.Key("within").Bool(e.within).EndObject();
      }
      if (c.mechanism) {
        const MechanismBound& m = *c.mechanism;
        j.Key("bound").BeginObject().Key("partner").String(m.partner).Key("resources").BeginArray();
        for (const std::string& r : m.resources) j.String(r);
        j.EndArray()
            .Key("bound").Number(m.bound)
            .Key("published_difference").Number(m.published_difference)
            .Key("modeled_difference").Number(m.modeled_difference)
            .Key("beyond").Bool(m.beyond)
            .EndObject();
      }
      if (c.band) {
        const CellBand& b = *c.band;
        j.Key("band").BeginObject();
        CiJson(b.points > 0 ? std::optional<double>(b.p5) : std::nullopt, j.Key("p5"));
        CiJson(b.points > 0 ? std::optional<double>(b.p50) : std::nullopt, j.Key("p50"));
        CiJson(b.points > 0 ? std::optional<double>(b.p95) : std::nullopt, j.Key("p95"));
        j.Key("k").Number(b.k).Key("refit_failed").Number(b.refit_failed).Key("points").Number(b.points);
        j.Key("refit_failures").BeginArray();
        for (const CellBand::Failure& w : b.failures) {
          j.BeginObject().Key("reason").String(w.reason).Key("points").Number(w.points).EndObject();
        }
        j.EndArray();
        j.Key("inside").Bool(b.inside).Key("point_inside").Bool(b.point_inside).Key("outside_why").BeginArray();
        for (const std::string& w : b.outside_why) j.String(w);
        j.EndArray();
        j.Key("drivers").BeginArray();
        for (const BandDriver& d : b.drivers) {
          j.BeginObject().Key("field").String(d.field).Key("rank_corr").Number(d.rank_corr).EndObject();
        }
        j.EndArray();
        if (!b.alternatives.empty()) {
          j.Key("alternatives").BeginArray();
          for (const CellBand::Alternative& a : b.alternatives) {
            j.BeginObject().Key("name").String(a.name).Key("weight").Number(a.weight);
            CiJson(a.value, j.Key("value"));
            j.Key("refit").BeginArray();
            for (const std::string& r : a.refit) j.String(r);
            j.EndArray();
            j.Key("dropped").String(a.dropped);
            CiJson(a.p5, j.Key("p5"));
            CiJson(a.p95, j.Key("p95"));
            j.EndObject();
          }
          j.EndArray();
        }
        j.EndObject();
      }
      j.EndObject();
    }
  }
  j.EndArray();
}

std::vector<std::vector<std::string>> CellRows(const std::vector<Reproduction>& reps) {
  std::vector<std::vector<std::string>> rows = {
      {"scenario", "variant", "metric", "published", "modeled", "95% CI +/-", "error", "tolerance", "role", ""}};
  for (const Reproduction& rep : reps) {
    for (const Cell& c : rep.cells) {
      rows.push_back({c.scenario, c.variant, c.metric, Sig(c.published), c.measured ? Sig(c.modeled) : "not measured",
                      c.ci_informative ? Ci(c.ci95) : "n/i",
                      std::isfinite(c.error_pct) ? absl::StrFormat("%+.2f%%", c.error_pct) : "inf",
                      absl::StrFormat("%g%%", c.tolerance_pct), c.role,
                      c.within ? "ok" : (c.known_gap.empty() ? "OUTSIDE" : "OUTSIDE (known gap)")});
    }
  }
  return rows;
}

const char* kCellCsvHeader =
    "scenario,variant,metric,published,modeled,ci95,error_pct,role,tolerance_pct,within,ci95_informative\n";

std::string CellCsvRow(const Cell& c) {
  return absl::StrCat(CsvField(c.scenario), ",", CsvField(c.variant), ",", CsvField(c.metric), ",",
                      FormatNumber(c.published), ",", c.measured ? FormatNumber(c.modeled) : "", ",",
                      CiCsv(c.ci_informative ? c.ci95 : std::nullopt), ",", FormatNumber(c.error_pct), ",", c.role,
                      ",", FormatNumber(c.tolerance_pct), ",", c.within ? "true" : "false", ",",
                      c.ci_informative ? "true" : "false", "\n");
}

// A cell's kBandCsvColumns, after a comma.
std::string BandCsv(const std::optional<CellBand>& band) {
  constexpr size_t kDrivers = 3;
  if (!band) return std::string(7 + 2 * kDrivers, ',');
  const CellBand& b = *band;
  const bool any = b.points > 0;
  std::string out = absl::StrCat(",", any ? FormatNumber(b.p5) : "", ",", any ? FormatNumber(b.p50) : "", ",",
                                 any ? FormatNumber(b.p95) : "", ",", b.k, ",", b.refit_failed, ",", b.points, ",",
                                 any ? (b.inside ? "true" : "false") : "");
  for (size_t i = 0; i < kDrivers; ++i) {
    if (i < b.drivers.size()) {
      absl::StrAppend(&out, ",", CsvField(b.drivers[i].field), ",", FormatNumber(b.drivers[i].rank_corr));
    } else {
      out += ",,";
    }
  }
  return out;
}

// "n/i" in the interval column: what it means, with the seed compared.
std::string NotInformativeNote(const std::vector<Reproduction>& reps) {
  for (const Reproduction& rep : reps) {
    for (const Cell& c : rep.cells) {
      if (!c.ci_informative) {
        return absl::StrCat("n/i: no informative interval: the value is the same at seed ", c.replicate_seed,
                            " (a deterministic bottleneck sets it; the batches' spread is not a sampling error)\n");
      }
    }
  }
  return "";
}

// A cell's name in the prediction lines: its variant, and its metric too
// where the table has more than one.
std::string CellName(const std::vector<Cell>& cells, size_t i) {
  for (const Cell& c : cells) {
    if (c.metric != cells[i].metric) return absl::StrCat(cells[i].variant, "/", cells[i].metric);
  }
  return cells[i].variant;
}

std::string Names(const std::vector<Cell>& cells, const std::vector<size_t>& group) {
  std::string out;
  for (size_t i : group) absl::StrAppend(&out, out.empty() ? "" : " = ", CellName(cells, i));
  return out;
}

// Per scenario: how many independent predictions its prediction cells hold
// and the error over them.
std::string PredictionsText(const std::vector<Reproduction>& reps) {
  std::string out;
  for (const Reproduction& rep : reps) {
    const PredictionCount n = CountPredictions(rep.cells);
    if (n.prediction_cells == 0) continue;
    absl::StrAppend(&out, rep.scenario, ": ", n.prediction_cells, " prediction cell",
                    n.prediction_cells == 1 ? "" : "s", ", ", n.independent.size(), " independent prediction",
                    n.independent.size() == 1 ? "" : "s");
    if (n.cells_in_independent > 0) {
      absl::StrAppend(&out, absl::StrFormat(", mean |error| %.2f%% over %s %d cell%s", n.mae_pct,
                                            n.independent.size() == 1 ? "its" : "their", n.cells_in_independent,
                                            n.cells_in_independent == 1 ? "" : "s"));
      if (n.cells_no_gap != n.cells_in_independent && n.cells_no_gap > 0) {
        absl::StrAppend(&out, absl::StrFormat(" (%.2f%% over the %d without a known gap)", n.mae_no_gap_pct,
                                              n.cells_no_gap));
      }
    }
    absl::StrAppend(&out, "\n");
    bool repeated = false;
    for (const auto& g : n.independent) repeated |= g.size() > 1;
    if (repeated) {
      absl::StrAppend(&out, "  one modeled value each:");
      for (const auto& g : n.independent) absl::StrAppend(&out, " [", Names(rep.cells, g), "]");
      absl::StrAppend(&out, "\n");
    }
    if (!n.repeats_calibration.empty()) {
      absl::StrAppend(&out, "  ", n.repeats_calibration.size(),
                      " repeat a calibration cell's value (not predictions):");
      for (const auto& [p, c] : n.repeats_calibration) {
        absl::StrAppend(&out, " ", CellName(rep.cells, p), " = ", CellName(rep.cells, c), ";");
      }
      out.back() = '\n';
    }
  }
  return out;
}

void PredictionsJson(const std::vector<Reproduction>& reps, JsonWriter& j) {
  j.Key("predictions").BeginArray();
  for (const Reproduction& rep : reps) {
    const PredictionCount n = CountPredictions(rep.cells);
    j.BeginObject().Key("scenario").String(rep.scenario);
    j.Key("prediction_cells").Number(n.prediction_cells);
    j.Key("independent").BeginArray();
    for (const auto& g : n.independent) {
      j.BeginArray();
      for (size_t i : g) j.String(rep.cells[i].variant);
      j.EndArray();
    }
    j.EndArray();
    j.Key("repeats_calibration").BeginArray();
    for (const auto& [p, c] : n.repeats_calibration) {
      j.BeginObject().Key("variant").String(rep.cells[p].variant).Key("same_as").String(rep.cells[c].variant);
      j.EndObject();
    }
    j.EndArray();
    j.Key("mae_pct").Number(n.mae_pct).Key("cells").Number(n.cells_in_independent);
    j.EndObject();
  }
  j.EndArray();
}

}  // namespace

std::string FormatLockStat(const std::vector<viosim::LockStatRow>& rows, const std::string& indent) {
  std::vector<std::vector<std::string>> t = {{"class name", "con-bounces", "contentions", "waittime-min",
                                              "waittime-max", "waittime-total", "waittime-avg", "acq-bounces",
                                              "acquisitions", "holdtime-min", "holdtime-max", "holdtime-total",
                                              "holdtime-avg"}};
  for (const auto& r : rows) {
    t.push_back({r.name, absl::StrCat(r.con_bounces), absl::StrCat(r.contentions), Num(r.wait_min_us, 2),
                 Num(r.wait_max_us, 2), Num(r.wait_total_us, 2), Num(r.wait_avg_us, 2), absl::StrCat(r.acq_bounces),
                 absl::StrCat(r.acquisitions), Num(r.hold_min_us, 2), Num(r.hold_max_us, 2),
                 Num(r.hold_total_us, 2), Num(r.hold_avg_us, 2)});
  }
  return Table(t, indent);
}

std::string FormatRun(const std::string& scenario, const std::string& description,
                      const std::vector<viosim::VariantResult>& results, Format f, const Comparison* gains) {
  std::string out;
  switch (f) {
    case Format::kText:
      RunText(scenario, description, results, &out);
      if (gains != nullptr) out += GainsText(*gains);
      break;
    case Format::kJson:
      RunJson(scenario, results, gains, &out);
      break;
    case Format::kCsv:
      out = "scenario,variant,metric,value,ci95\n";
      for (const auto& r : results) {
        for (const auto& m : r.metrics) {
          absl::StrAppend(&out, CsvField(scenario), ",", CsvField(r.variant), ",", m.name, ",",
                          CiCsv(MeasuredValue(m)), ",", CiCsv(m.ci95), "\n");
        }
      }
      // The gains as rows of their own: variant "B/A", metric "M:ratio"
      // and "M:difference".
      if (gains != nullptr) {
        const std::string pair = CsvField(absl::StrCat(gains->b, "/", gains->a));
        for (const Gain& g : gains->gains) {
          absl::StrAppend(&out, CsvField(scenario), ",", pair, ",", g.metric, ":ratio,", CiCsv(g.ratio), ",",
                          CiCsv(g.ratio_ci95), "\n");
          absl::StrAppend(&out, CsvField(scenario), ",", pair, ",", g.metric, ":difference,", FormatNumber(g.difference),
                          ",", CiCsv(g.difference_ci95), "\n");
        }
      }
      break;
  }
  return out;
}

// The prediction bands of `reps`' cells (`reproduce --bands`), and which
// scenarios' prediction cells have none (no cost of theirs is uncertain);
// empty without --bands.
std::string BandsText(const std::vector<Reproduction>& reps, bool bands) {
  if (!bands) return "";
  std::vector<std::vector<std::string>> rows = {{"scenario", "variant", "metric", "published", "point", "p5", "p50",
                                                 "p95", "published in band", "refit failed", "points"}};
  std::string drivers;
  std::string failures;
  std::string unbanded;
  std::string alternatives;
  std::string outside;
  for (const Reproduction& rep : reps) {
    bool predicts = false, banded = false;
    for (const Cell& c : rep.cells) {
      predicts |= c.role == "prediction";
      banded |= c.band.has_value();
    }
    if (predicts && !banded) {
      absl::StrAppend(&unbanded, "  ", rep.scenario,
                      ": no band: none of its costs carries an uncertainty (each is DEFINED or FITTED), so every "
                      "point would be the point estimate\n");
    }
    for (const Cell& c : rep.cells) {
      if (!c.band) continue;
      const CellBand& b = *c.band;
      const bool any = b.points > 0;
      rows.push_back({c.scenario, c.variant, c.metric, Sig(c.published), c.measured ? Sig(c.modeled) : "not measured",
                      any ? Sig(b.p5) : "-", any ? Sig(b.p50) : "-", any ? Sig(b.p95) : "-",
                      any ? (b.inside ? "inside" : "OUTSIDE") : "-", absl::StrCat(b.refit_failed, "/", b.k),
                      absl::StrCat(b.points)});
      absl::StrAppend(&drivers, "  ", c.scenario, " / ", c.variant, " / ", c.metric, ":");
      for (size_t i = 0; i < b.drivers.size() && i < 3; ++i) {
        absl::StrAppend(&drivers, i == 0 ? " " : ", ", b.drivers[i].field, absl::StrFormat(" %+.2f", b.drivers[i].rank_corr));
      }
      absl::StrAppend(&drivers, "\n");
      for (const CellBand::Failure& w : b.failures) {
        const std::string line = absl::StrCat("  refit failed at ", w.points, " of ", b.k, " points of ", c.scenario, ": ", w.reason, "\n");
        if (failures.find(line) == std::string::npos) absl::StrAppend(&failures, line);
      }
      if (!b.point_inside) {
        absl::StrAppend(&outside, "  ", c.scenario, " / ", c.variant, " / ", c.metric, ": point ", Sig(c.modeled),
                        " outside ", Sig(b.p5), "..", Sig(b.p95), ": ", absl::StrJoin(b.outside_why, "; "), "\n");
      }
      for (const CellBand::Alternative& a : b.alternatives) {
        absl::StrAppend(&alternatives, "  ", c.scenario, " / ", c.variant, " / ", c.metric, " under ", a.name,
                        absl::StrFormat(" (weight %g)", a.weight), ": ");
        if (!a.dropped.empty()) {
          absl::StrAppend(&alternatives, a.value ? Sig(*a.value) : "-", "; dropped: ", a.dropped, "\n");
          continue;
        }
        absl::StrAppend(&alternatives, a.value ? Sig(*a.value) : "-",
                        a.p5 && a.p95 ? absl::StrCat(" (its points ", Sig(*a.p5), "..", Sig(*a.p95), ")") : "",
                        a.refit.empty() ? "" : absl::StrCat("; refitted ", absl::StrJoin(a.refit, ", ")), "\n");
      }
    }
  }
  if (rows.size() == 1) return unbanded.empty() ? "" : absl::StrCat("\nprediction bands\n", unbanded);
  return absl::StrCat("\nprediction bands (5-95% over the points whose refit succeeded)\n",
                      Table(rows, "", "lllrrrrrlrr"),
                      outside.empty() ? "" : absl::StrCat("point estimates outside their band, and why:\n", outside),
                      alternatives.empty() ? "" : absl::StrCat("alternatives (each model choice the sources leave open, "
                                                               "refitted under it; the band pools the kept ones):\n",
                                                               alternatives),
                      "drivers (Spearman rank correlation of a cost's drawn value with the cell, top 3):\n", drivers, failures,
                      unbanded);
}

std::string FormatCells(const std::vector<Reproduction>& reps, Format f, bool band_columns) {
  switch (f) {
    case Format::kText: {
      int outside = 0, total = 0;
      for (const auto& rep : reps) {
        for (const auto& c : rep.cells) {
          ++total;
          if (!c.within) ++outside;
        }
      }
      std::string gaps, bounds, effects;
      for (const auto& rep : reps) {
        for (const auto& c : rep.cells) {
          if (c.effect) {
            const Effect& e = *c.effect;
            absl::StrAppend(&effects, absl::StrFormat("  %-22s %-22s %-16s %-22s %10.4gx %10.4gx%-12s %+8.1f%%%s\n",
                                                      c.scenario, c.variant, c.metric, e.partner, e.published,
                                                      e.modeled, e.ci95 ? absl::StrFormat(" +/-%.2g", *e.ci95) : "",
                                                      e.error_pct,
                                                      e.tolerance_pct ? absl::StrFormat("  %s (tolerance %g%%)",
                                                                                        e.within ? "ok" : "OUTSIDE",
                                                                                        *e.tolerance_pct)
                                                                      : ""));
          }
          if (c.mechanism) {
            const MechanismBound& m = *c.mechanism;
            absl::StrAppend(&bounds, c.scenario, " / ", c.variant, " / ", c.metric, ": published ",
                            Sig(m.published_difference), " from ", m.partner, ", modeled ", Sig(m.modeled_difference),
                            "; ", absl::StrJoin(m.resources, " + "), " made ideal in ", m.partner, " gives ",
                            Sig(m.bound), m.beyond ? ": beyond the mechanism's bound" : ": within it", "\n");
          }
          if (c.mechanism && c.mechanism->beyond && !c.within) {
            absl::StrAppend(&gaps, "beyond the mechanism's bound, ", c.scenario, " / ", c.variant, " / ", c.metric,
                            ": ", absl::StrJoin(c.mechanism->resources, " + "), " could account for at most ",
                            Sig(std::fabs(c.mechanism->bound)), " (published difference ", Sig(c.mechanism->published_difference),
                            ")\n");
          } else if (!c.known_gap.empty()) {
            absl::StrAppend(&gaps, "known gap, ", c.scenario, " / ", c.variant, " / ", c.metric,
                            c.expected ? absl::StrCat(" (expected ", Sig(*c.expected), ")") : "", ": ", c.known_gap,
                            "\n");
          }
        }
      }
      if (!effects.empty()) {
        effects = absl::StrCat(
            "\neffects (each prediction over the calibration cell of its metric nearest to it: what a what-if reads)\n",
            absl::StrFormat("  %-22s %-22s %-16s %-22s %11s %11s%-12s %9s\n", "scenario", "variant", "metric",
                            "over", "published", "modeled", "", "error"),
            effects);
      }
      if (!bounds.empty()) {
        bounds = absl::StrCat("\nmechanism bounds (what the lock a patch moves the call out of could give, made "
                              "ideal in the variant before the patch: `viosim explain --ideal`)\n", bounds);
      }
      return absl::StrCat(Table(CellRows(reps), "", "lllrrrrrll"), NotInformativeNote(reps),
                          absl::StrFormat("\n%d cells: %d within tolerance, %d outside\n", total, total - outside,
                                          outside),
                          PredictionsText(reps), effects, bounds, gaps, BandsText(reps, band_columns));
    }
    case Format::kJson: {
      JsonWriter j;
      j.BeginObject();
      CellsJson(reps, j);
      PredictionsJson(reps, j);
      j.EndObject();
      return j.str();
    }
    case Format::kCsv: {
      if (!band_columns) {
        std::string out = kCellCsvHeader;
        for (const auto& rep : reps) {
          for (const auto& c : rep.cells) out += CellCsvRow(c);
        }
        return out;
      }
      // Each line with the band columns before its newline.
      const absl::string_view header(kCellCsvHeader);
      std::string out = absl::StrCat(header.substr(0, header.size() - 1), ",", kBandCsvColumns, "\n");
      for (const auto& rep : reps) {
        for (const auto& c : rep.cells) {
          const std::string row = CellCsvRow(c);
          absl::StrAppend(&out, absl::string_view(row).substr(0, row.size() - 1), BandCsv(c.band), "\n");
        }
      }
      return out;
    }
  }
  return "";
}

std::string FormatGate(const std::vector<Reproduction>& reps, const GateReport& report, Format f) {
  int cells = 0;
  for (const Reproduction& r : reps) cells += static_cast<int>(r.cells.size());
  const std::string verdict =
      report.failures == 0
          ? absl::StrFormat("gate: PASS (%d cells)", cells)
          : absl::StrFormat("gate: FAIL (%d problem%s, %d cells gated)", report.failures,
                            report.failures == 1 ? "" : "s", cells);
  switch (f) {
    case Format::kText: {
      std::string out = Table(CellRows(reps), "", "lllrrrrrll");
      // Per cell, what the gate holds it to: its baseline, its move and
      // the drift it is allowed.
      std::vector<std::vector<std::string>> rows = {
          {"scenario", "variant", "metric", "modeled", "baseline", "moved", "allowed", "gate"}};
      for (const GateFinding& g : report.findings) {
        if (g.metric.empty()) continue;
        rows.push_back({g.scenario, g.variant, g.metric, Sig(g.modeled), g.baseline ? Sig(*g.baseline) : "-",
                        g.moved_pct ? absl::StrFormat("%+.3f%%", *g.moved_pct) : "-",
                        absl::StrFormat("%.3g%%", g.allowed_pct), g.problem.empty() ? "ok" : "FAIL"});
      }
      out += "\n";
      out += Table(rows, "", "lllrrrrl");
      out += "\n";
      for (const GateFinding& g : report.findings) {
        if (!g.problem.empty()) absl::StrAppend(&out, g.scenario, " / ", g.variant, " / ", g.metric, ": ", g.problem, "\n");
      }
      return absl::StrCat(out, verdict, "\n");
    }
    case Format::kJson: {
      JsonWriter j;
      j.BeginObject();
      CellsJson(reps, j);
      j.Key("failures").BeginArray();
      for (const GateFinding& g : report.findings) {
        if (g.problem.empty()) continue;
        j.BeginObject().Key("scenario").String(g.scenario).Key("variant").String(g.variant);
        j.Key("metric").String(g.metric).Key("problem").String(g.problem).EndObject();
      }
      j.EndArray().Key("gate").BeginArray();
      for (const GateFinding& g : report.findings) {
        if (g.metric.empty()) continue;
        j.BeginObject().Key("scenario").String(g.scenario).Key("variant").String(g.variant);
        j.Key("metric").String(g.metric).Key("modeled").Number(g.modeled);
        CiJson(g.baseline, j.Key("baseline"));
        CiJson(g.moved_pct, j.Key("moved_pct"));
        j.Key("allowed_pct").Number(g.allowed_pct).Key("ok").Bool(g.problem.empty()).EndObject();
      }
      j.EndArray().Key("pass").Bool(report.failures == 0).EndObject();
      return j.str();
    }
    case Format::kCsv: {
      std::string out = "scenario,variant,metric,problem\n";
      for (const GateFinding& g : report.findings) {
        if (g.problem.empty()) continue;
        absl::StrAppend(&out, CsvField(g.scenario), ",", CsvField(g.variant), ",", CsvField(g.metric), ",",
                        CsvField(g.problem), "\n");
      }
      return out;
    }
  }
  return "";
}

std::string FormatList(const viosim::ScenarioFile& file, const std::vector<std::string>& metrics,
                       const std::vector<double>& references, Format f) {
  const viosim::Scenario& s = file.scenario;
  const std::vector<std::string> variants = viosim::VariantNames(file);
  switch (f) {
    case Format::kText: {
      std::string out = absl::StrCat("scenario ", s.name(), s.description().empty() ? "" : ": ", s.description(),
                                     "\n\nvariants:\n");
      std::vector<std::vector<std::string>> rows;
      for (const std::string& v : variants) rows.push_back({v, viosim::VariantDescription(file, v)});
      absl::StrAppend(&out, Table(rows, "  ", "ll"), "\nmetrics:\n");
      for (const std::string& m : metrics) absl::StrAppend(&out, "  ", m, "\n");
      absl::StrAppend(&out, "\npublished:\n");
      std::vector<std::vector<std::string>> prow = {
          {"variant", "metric", "value", "tolerance", "role", "from", "source"}};
      for (int i = 0; i < s.published_size(); ++i) {
        const viosim::Published& p = s.published(i);
        prow.push_back({p.variant(), p.metric(), Sig(references[i]), absl::StrFormat("%g%%", p.tolerance_pct()),
                        p.role() == viosim::Published::CALIBRATION ? "calibration" : "prediction",
                        p.has_value() ? "typed in" : viosim::Published::Analytic_Name(p.analytic()),
                        p.source()});
      }
      absl::StrAppend(&out, Table(prow, "  ", "llrrlll"));
      return out;
    }
    case Format::kJson: {
      JsonWriter j;
      j.BeginObject().Key("scenario").String(s.name()).Key("variants").BeginArray();
      for (const std::string& v : variants) {
        j.BeginObject().Key("name").String(v).Key("description").String(viosim::VariantDescription(file, v));
        j.EndObject();
      }
      j.EndArray().Key("metrics").BeginArray();
      for (const std::string& m : metrics) j.String(m);
      j.EndArray().Key("published").BeginArray();
      for (int i = 0; i < s.published_size(); ++i) {
        const viosim::Published& p = s.published(i);
        j.BeginObject().Key("variant").String(p.variant()).Key("metric").String(p.metric());
        j.Key("value").Number(references[i]);
        if (p.has_analytic()) j.Key("analytic").String(viosim::Published::Analytic_Name(p.analytic()));
        j.Key("role").String(p.role() == viosim::Published::CALIBRATION ? "calibration" : "prediction");
        j.Key("tolerance_pct").Number(p.tolerance_pct()).Key("source").String(p.source()).EndObject();
      }
      j.EndArray().EndObject();
      return j.str();
    }
    case Format::kCsv: {
      std::string out = "kind,name,detail\n";
      for (const std::string& v : variants) {
        absl::StrAppend(&out, "variant,", CsvField(v), ",", CsvField(viosim::VariantDescription(file, v)), "\n");
      }
      for (const std::string& m : metrics) absl::StrAppend(&out, "metric,", CsvField(m), ",\n");
      return out;
    }
  }
  return "";
}

std::string FormatScenarioIndex(const std::vector<std::string>& paths,
                                const std::vector<viosim::ScenarioFile>& files, Format f) {
  switch (f) {
    case Format::kText: {
      std::vector<std::vector<std::string>> rows = {{"file", "scenario", "variants", "published", "description"}};
      for (size_t i = 0; i < files.size(); ++i) {
        const viosim::Scenario& s = files[i].scenario;
        rows.push_back({paths[i], s.name(), absl::StrCat(viosim::VariantNames(files[i]).size()),
                        absl::StrCat(s.published_size()), s.description()});
      }
      std::vector<std::vector<std::string>> parts = {{"stack part", "CPUs", "what it is", "metrics beyond fio's"}};
      for (const viosim::StackPart& p : viosim::StackParts()) {
        parts.push_back({absl::StrCat("stack { ", p.name, " {...} }"), p.vcpus ? "vCPUs" : "host CPUs", p.summary,
                         absl::StrJoin(p.metric_names(), " ")});
      }
      // The network stack, which carries workload.iperf instead of fio.
      parts.push_back({"stack { vhost_net {...} }", "host CPUs",
                       "network, with workload.iperf: Linux 3.0 vhost-net, a 1-vCPU guest's virtio-net, tap, 10 GbE",
                       absl::StrJoin(viosim::stacks::VhostNetMetricNames(), " ")});
      return absl::StrCat(Table(rows, "", "llrrl"), "\nRegistered stack parts (a scenario sets one):\n",
                          Table(parts, "", "llll"), "Schedulers (platform.scheduler): ",
                          absl::StrJoin(models::SchedulerNames(), ", "),
                          "\n\n`viosim list FILE` shows one scenario's variants, metrics and published values.\n");
    }
    case Format::kJson: {
      JsonWriter j;
      j.BeginObject().Key("scenarios").BeginArray();
      for (size_t i = 0; i < files.size(); ++i) {
        const viosim::Scenario& s = files[i].scenario;
        j.BeginObject().Key("file").String(paths[i]).Key("scenario").String(s.name());
        j.Key("variants").Number(static_cast<double>(viosim::VariantNames(files[i]).size()));
        j.Key("published").Number(s.published_size()).Key("description").String(s.description()).EndObject();
      }
      j.EndArray().EndObject();
      return j.str();
    }
    case Format::kCsv: {
      std::string out = "file,scenario,variants,published,description\n";
      for (size_t i = 0; i < files.size(); ++i) {
        const viosim::Scenario& s = files[i].scenario;
        absl::StrAppend(&out, CsvField(paths[i]), ",", CsvField(s.name()), ",",
                        viosim::VariantNames(files[i]).size(), ",", s.published_size(), ",",
                        CsvField(s.description()), "\n");
      }
      return out;
    }
  }
  return "";
}

namespace {

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
