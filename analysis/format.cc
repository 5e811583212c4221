#include "analysis/format.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/format_internal.h"
#include "analysis/json.h"
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

std::string Num(double v, int decimals) {
  if (!std::isfinite(v)) return "inf";
  return absl::StrFormat("%.*f", decimals, v);
}

}  // namespace

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

namespace {

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

}  // namespace analysis
