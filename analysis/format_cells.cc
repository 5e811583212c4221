// `viosim reproduce` and `viosim gate`: the cells' table, JSON and CSV, with
// the predictions, effects, mechanism bounds and prediction bands beside
// them, and the gate's findings and verdict.
#include "analysis/format.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/format_internal.h"
#include "analysis/json.h"

namespace analysis {

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

}  // namespace analysis
