// Output formats of the `viosim` subcommands: readable text, JSON (a
// contract other tools read; see docs/cli.md) and CSV. Pure functions from
// results to text; the command line decides where the text goes.
#ifndef VIOSIM_ANALYSIS_FORMAT_H_
#define VIOSIM_ANALYSIS_FORMAT_H_

#include <string>
#include <vector>

#include "analysis/calibrate.h"
#include "analysis/gate.h"
#include "analysis/json.h"
#include "analysis/gains.h"
#include "analysis/runner.h"
#include "scenarios/builder.h"
#include "scenarios/loader.h"

namespace analysis {

enum class Format { kText, kJson, kCsv };

// `viosim run`: {"scenario": name, "variants": [{"name", "metrics", "ci95", ...}]}
// With `gains`: text adds the gains table, JSON a "gains" object ({"a",
// "b", "metrics": [{"metric", "a", "b", "ratio", "ratio_ci95",
// "difference", "difference_ci95"}]}), CSV rows of variant "B/A" and metric
// "M:ratio" / "M:difference".
std::string FormatRun(const std::string& scenario, const std::string& description,
                      const std::vector<viosim::VariantResult>& results, Format f,
                      const Comparison* gains = nullptr);

// `viosim reproduce` and `viosim gate`: one row per cell.
// JSON: {"cells": [{"scenario", "variant", "metric", "published", "modeled",
// "error_pct", "role", "tolerance_pct", "within", ...}]}. With
// `band_columns` (reproduce --bands), the CSV's header and every row gain
// kBandCsvColumns, empty where a cell has no band.
std::string FormatCells(const std::vector<Reproduction>& reps, Format f, bool band_columns = false);

// The band columns of reproduce --bands' CSV: the percentiles (empty when no
// point succeeded), k, refit_failed, points, inside, and the top three
// drivers with their rank correlations (empty where there are fewer).
inline constexpr char kBandCsvColumns[] =
    "band_p5,band_p50,band_p95,band_k,band_refit_failed,band_points,band_inside,band_driver_1,band_rank_corr_1,"
    "band_driver_2,band_rank_corr_2,band_driver_3,band_rank_corr_3";

// `viosim gate`: the cells, then each failure and a one-line verdict.
std::string FormatGate(const std::vector<Reproduction>& reps, const GateReport& report, Format f);

// `viosim list`: variants, metrics and published values. `references` holds
// each published cell's reference value (typed in or computed), in order.
std::string FormatList(const viosim::ScenarioFile& file, const std::vector<std::string>& metrics,
                       const std::vector<double>& references, Format f);

// `viosim list` without a scenario: one line per scenario file (its path,
// name, variant and published-cell counts, description), in `paths` order.
std::string FormatScenarioIndex(const std::vector<std::string>& paths,
                                const std::vector<viosim::ScenarioFile>& files, Format f);

// `viosim sweep`: a table with one row per value and, per (variant, metric),
// the modeled value and its 95% half-width ("-" where none was computed).
// JSON: {"scenario", "field", "points": [{"value", "variant", "metrics",
// "ci95"}]}. CSV: swept_value,variant,metric,value,ci95.
std::string FormatSweep(const Sweep& sweep, Format f);

// `viosim sweep --refit`: the same, with per value the refitted field's
// value, the calibration cell's modeled value and its error, and a last
// column noting a refit not fitted ("not fitted: ...") or a search that
// found the metric not monotonic. JSON adds "calibration" (the cell and the
// search, as `calibrate` describes them, plus "lo" and "hi") and per point
// "refit": {"outcome", "value", "modeled", "ci95", "error_pct",
// "iterations", "notes", "summary"}. CSV: swept_value, refit_outcome,
// refit_value, cell_modeled, cell_ci95, cell_error_pct, variant, metric,
// value, ci95, refit_note; a value not fitted has its rows with no value.
std::string FormatRefitSweep(const RefitSweep& r, Format f);

// `viosim calibrate`: the search step by step (the field's value as it was
// set, the modeled metric, its 95% half-width, the error against the
// published value, and a note where the metric was not monotonic), then
// CalibrationSummary. JSON: {"scenario", "field", "variant", "metric",
// "published", "role", "source", "cell_tolerance_pct", "tolerance_pct",
// "max_iter", "scale", "resolution", "steps": [{"step", "value", "modeled",
// "ci95", "error_pct", "note"}], "outcome", "result", "summary"}.
// CSV: step,value,modeled,ci95,error_pct,note, then one row for the outcome.
std::string FormatCalibration(const Calibration& c, Format f);

// One line: "fitted FIELD = VALUE: modeled M (error E%) vs published P
// (CALIBRATION, source S)", or why nothing was fitted.
std::string CalibrationSummary(const Calibration& c);

// One variant's part of `viosim run`'s report: its run, what bounds it, its
// metrics, lock_stat and CPU time (text indented by three spaces, and the
// same as JSON keys written into the object `j` has open).
std::string FormatVariantText(const viosim::VariantResult& r);
void VariantJson(const viosim::VariantResult& r, JsonWriter& j);

// Lays out rows of cells in columns two spaces apart, each line after
// `indent`, trailing spaces dropped. `align` has one letter per column, 'l'
// or 'r'; columns beyond it are right-aligned.
std::string Table(const std::vector<std::vector<std::string>>& rows, const std::string& indent,
                  const std::string& align = "l");

// `s` as one CSV field: quoted (quotes doubled) when it holds a comma, a
// quote or a newline.
std::string CsvField(const std::string& s);

// /proc/lock_stat's table for `rows` (times in microseconds).
std::string FormatLockStat(const std::vector<viosim::LockStatRow>& rows, const std::string& indent);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_FORMAT_H_
