// A point's line as RunShard writes it (the invocation's shared fields,
// then the point's index, id and result, numbers exact) and as MergeShards
// reads it back.
#include "analysis/shard_internal.h"

#include <cmath>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "analysis/json.h"

namespace analysis {

// ---- Writing a point's line ----

namespace {

// Exact: 17 significant digits read back as the same double. Non-finite
// values are strings.
std::string ExactNumber(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  return absl::StrFormat("%.17g", v);
}

absl::StatusOr<double> ReadNumber(const JsonValue& v) {
  if (v.kind == JsonValue::Kind::kNumber) return v.number;
  if (v.kind == JsonValue::Kind::kString) {
    if (v.str == "nan") return std::nan("");
    if (v.str == "inf") return HUGE_VAL;
    if (v.str == "-inf") return -HUGE_VAL;
  }
  return absl::InvalidArgumentError(absl::StrCat("not a number: ", v.raw));
}

std::string StringArray(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) absl::StrAppend(&out, i ? "," : "", JsonWriter::Quote(v[i]));
  return out + "]";
}

}  // namespace

std::string SharedPrefix(const Invocation& inv, const PointSet& set, absl::string_view version) {
  std::string scenarios = "[";
  for (size_t i = 0; i < inv.scenarios.size(); ++i) {
    absl::StrAppend(&scenarios, i ? "," : "", "{\"path\":", JsonWriter::Quote(inv.scenarios[i]),
                    ",\"hash\":", JsonWriter::Quote(set.hashes[i]), ",\"seed\":", set.seeds[i], "}");
  }
  scenarios += "]";
  std::string args = "{";
  for (size_t i = 0; i < inv.args.size(); ++i) {
    absl::StrAppend(&args, i ? "," : "", JsonWriter::Quote(inv.args[i].first), ":", StringArray(inv.args[i].second));
  }
  args += "}";
  return absl::StrCat("{\"viosim\":", JsonWriter::Quote(version), ",\"command\":", JsonWriter::Quote(inv.command),
                      ",\"scenarios\":", scenarios, ",\"overrides\":", StringArray(inv.overrides), ",\"args\":", args,
                      ",\"points\":", set.ids.size());
}

namespace {

std::string ExactOptional(const std::optional<double>& v) { return v ? ExactNumber(*v) : "null"; }

std::string MetricsJson(const std::vector<sim::MetricEstimate>& metrics) {
  std::string out = "[";
  for (size_t i = 0; i < metrics.size(); ++i) {
    const sim::MetricEstimate& m = metrics[i];
    // The batches too (numerators, denominators), so that a merge pairs two
    // runs' batches as one process does (reproduce's effects).
    std::string num, den;
    for (size_t b = 0; b < m.batch_numerators.size(); ++b) {
      absl::StrAppend(&num, b ? "," : "", ExactNumber(m.batch_numerators[b]));
      absl::StrAppend(&den, b ? "," : "", ExactNumber(m.batch_denominators[b]));
    }
    absl::StrAppend(&out, i ? "," : "", "{\"name\":", JsonWriter::Quote(m.name), ",\"value\":", ExactNumber(m.value),
                    ",\"ci95\":", ExactOptional(m.ci95), ",\"measured\":", m.measured ? "true" : "false",
                    ",\"num\":[", num, "],\"den\":[", den, "]}");
  }
  return out + "]";
}

// A variant's run: "variant" and "metrics", as members of an object.
std::string RunMembers(const std::string& variant, const std::vector<sim::MetricEstimate>& metrics) {
  return absl::StrCat("\"variant\":", JsonWriter::Quote(variant), ",\"metrics\":", MetricsJson(metrics));
}

constexpr std::pair<BisectionStep::At, const char*> kStepAt[] = {
    {BisectionStep::At::kLo, "lo"}, {BisectionStep::At::kHi, "hi"}, {BisectionStep::At::kMid, "mid"}};
constexpr std::pair<BisectionOutcome, const char*> kOutcome[] = {{BisectionOutcome::kFitted, "fitted"},
                                                                 {BisectionOutcome::kNotBracketed, "not_bracketed"},
                                                                 {BisectionOutcome::kNotConverged, "not_converged"}};

template <typename E, size_t N>
const char* NameOf(const std::pair<E, const char*> (&names)[N], E e) {
  for (const auto& [value, name] : names) {
    if (value == e) return name;
  }
  return "";
}

// A refit sweep value: the search (each step's field value as set, its
// position, the metric there) and the variants run after it.
std::string RefitMembers(const RefitValue& r) {
  const Calibration& c = r.fit;
  std::string steps = "[";
  for (size_t i = 0; i < c.search.steps.size(); ++i) {
    const BisectionStep& s = c.search.steps[i];
    absl::StrAppend(&steps, i ? "," : "", "{\"set\":", JsonWriter::Quote(i < c.values.size() ? c.values[i] : ""),
                    ",\"at\":\"", NameOf(kStepAt, s.at), "\",\"iteration\":", s.iteration, ",\"x\":", ExactNumber(s.x),
                    ",\"value\":", ExactNumber(s.eval.value), ",\"ci95\":", ExactOptional(s.eval.ci95),
                    ",\"error_pct\":", ExactNumber(s.error_pct), ",\"bracket_lo\":", s.bracket_lo,
                    ",\"bracket_hi\":", s.bracket_hi, ",\"non_monotonic\":", s.non_monotonic ? "true" : "false", "}");
  }
  std::string runs = "[";
  for (size_t i = 0; i < r.results.size(); ++i) {
    absl::StrAppend(&runs, i ? "," : "", "{", RunMembers(r.results[i].variant, r.results[i].metrics), "}");
  }
  return absl::StrCat("\"refit\":{\"steps\":", steps, "],\"outcome\":\"", NameOf(kOutcome, c.search.outcome),
                      "\",\"at_resolution\":", c.search.at_resolution ? "true" : "false",
                      ",\"best\":", c.search.best, ",\"runs\":", runs, "]}");
}

// A band point: whether its refit held (else which fit failed, why, and in
// which round), every --set it applied, and each PREDICTION cell's value.
std::string BandMembers(const BandPoint& b) {
  std::string values = "[", ci95 = "[";
  for (size_t i = 0; i < b.values.size(); ++i) {
    absl::StrAppend(&values, i ? "," : "", ExactOptional(b.values[i]));
    absl::StrAppend(&ci95, i ? "," : "", ExactOptional(i < b.ci95.size() ? b.ci95[i] : std::nullopt));
  }
  return absl::StrCat("\"band\":{\"refitted\":", b.refitted ? "true" : "false",
                      ",\"failure\":", JsonWriter::Quote(b.failure), ",\"failed_round\":", b.failed_round,
                      ",\"assignments\":", StringArray(b.assignments), ",\"values\":", values, "],\"ci95\":", ci95,
                      "]}");
}

}  // namespace

std::string PointLine(absl::string_view prefix, const ShardSpec& shard, size_t index, const std::string& id,
                      PointKind kind, const PointResult& r) {
  std::string result;
  switch (kind) {
    case PointKind::kRun: result = RunMembers(r.variant, r.metrics); break;
    case PointKind::kRefit: result = RefitMembers(*r.refit); break;
    case PointKind::kBand: result = BandMembers(*r.band); break;
  }
  return absl::StrCat(prefix, ",\"shard\":\"", shard.k, "/", shard.n, "\",\"index\":", index,
                      ",\"id\":", JsonWriter::Quote(id), ",", result, "}\n");
}

// ---- Reading a point's line ----

namespace {

absl::StatusOr<std::vector<std::string>> Strings(const JsonValue* v, absl::string_view field) {
  if (v == nullptr || v->kind != JsonValue::Kind::kArray) {
    return absl::InvalidArgumentError(absl::StrCat("field '", field, "' missing or not a list"));
  }
  std::vector<std::string> out;
  for (const JsonValue& s : v->items) {
    if (s.kind != JsonValue::Kind::kString) {
      return absl::InvalidArgumentError(absl::StrCat("field '", field, "' holds a non-string"));
    }
    out.push_back(s.str);
  }
  return out;
}

}  // namespace

// The invocation a line describes, its scenarios' hashes and seeds.
absl::Status ReadInvocation(const JsonValue& line, Invocation* inv, std::vector<std::string>* hashes,
                            std::vector<uint64_t>* seeds) {
  const JsonValue* command = line.Find("command");
  if (command == nullptr || command->kind != JsonValue::Kind::kString) {
    return absl::InvalidArgumentError("field 'command' missing or not a string");
  }
  inv->command = command->str;
  absl::StatusOr<std::vector<std::string>> overrides = Strings(line.Find("overrides"), "overrides");
  if (!overrides.ok()) return overrides.status();
  inv->overrides = *overrides;
  const JsonValue* scenarios = line.Find("scenarios");
  if (scenarios == nullptr || scenarios->kind != JsonValue::Kind::kArray) {
    return absl::InvalidArgumentError("field 'scenarios' missing or not a list");
  }
  for (const JsonValue& s : scenarios->items) {
    const JsonValue* path = s.Find("path");
    const JsonValue* hash = s.Find("hash");
    const JsonValue* seed = s.Find("seed");
    if (path == nullptr || hash == nullptr || seed == nullptr || path->kind != JsonValue::Kind::kString ||
        hash->kind != JsonValue::Kind::kString || seed->kind != JsonValue::Kind::kNumber) {
      return absl::InvalidArgumentError("field 'scenarios' needs path, hash and seed");
    }
    inv->scenarios.push_back(path->str);
    hashes->push_back(hash->str);
    uint64_t n = 0;
    if (!absl::SimpleAtoi(seed->raw, &n)) return absl::InvalidArgumentError("field 'scenarios': bad seed");
    seeds->push_back(n);
  }
  const JsonValue* args = line.Find("args");
  if (args == nullptr || args->kind != JsonValue::Kind::kObject) {
    return absl::InvalidArgumentError("field 'args' missing or not an object");
  }
  for (const auto& [k, v] : args->members) {
    absl::StatusOr<std::vector<std::string>> values = Strings(&v, absl::StrCat("args.", k));
    if (!values.ok()) return values.status();
    inv->args.emplace_back(k, *values);
  }
  return absl::OkStatus();
}

namespace {

absl::Status Missing(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("field '", field, "' missing or not ", what));
}

}  // namespace

// The member `key` of `v` (an object), of kind `kind`; null otherwise.
const JsonValue* Member(const JsonValue& v, absl::string_view key, JsonValue::Kind kind) {
  const JsonValue* m = v.Find(key);
  return m != nullptr && m->kind == kind ? m : nullptr;
}

namespace {

absl::StatusOr<int> ReadInt(const JsonValue& v, absl::string_view key) {
  const JsonValue* m = Member(v, key, JsonValue::Kind::kNumber);
  int n = 0;
  if (m == nullptr || !absl::SimpleAtoi(m->raw, &n)) return Missing(key, "a whole number");
  return n;
}

absl::StatusOr<bool> ReadBool(const JsonValue& v, absl::string_view key) {
  const JsonValue* m = Member(v, key, JsonValue::Kind::kBool);
  if (m == nullptr) return Missing(key, "true or false");
  return m->b;
}

// A number or null.
absl::StatusOr<std::optional<double>> ReadOptional(const JsonValue& v, absl::string_view what) {
  if (v.kind == JsonValue::Kind::kNull) return std::nullopt;
  absl::StatusOr<double> n = ReadNumber(v);
  if (!n.ok()) return absl::InvalidArgumentError(absl::StrCat("field '", what, "': ", n.status().message()));
  return *n;
}

absl::StatusOr<std::vector<sim::MetricEstimate>> ReadMetrics(const JsonValue& run) {
  const JsonValue* metrics = Member(run, "metrics", JsonValue::Kind::kArray);
  if (metrics == nullptr) return Missing("metrics", "a list");
  std::vector<sim::MetricEstimate> out;
  for (const JsonValue& m : metrics->items) {
    const JsonValue* name = Member(m, "name", JsonValue::Kind::kString);
    const JsonValue* value = m.Find("value");
    const JsonValue* ci = m.Find("ci95");
    absl::StatusOr<bool> measured = ReadBool(m, "measured");
    if (name == nullptr || value == nullptr || ci == nullptr || !measured.ok()) {
      return absl::InvalidArgumentError("field 'metrics': each needs name, value, ci95 and measured");
    }
    sim::MetricEstimate e;
    e.name = name->str;
    absl::StatusOr<double> v = ReadNumber(*value);
    if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat("field 'metrics' value: ", v.status().message()));
    e.value = *v;
    absl::StatusOr<std::optional<double>> c = ReadOptional(*ci, "metrics' ci95");
    if (!c.ok()) return c.status();
    e.ci95 = *c;
    e.measured = *measured;
    for (auto [key, into] : {std::pair{"num", &e.batch_numerators}, std::pair{"den", &e.batch_denominators}}) {
      const JsonValue* list = m.Find(key);
      if (list == nullptr) continue;
      if (list->kind != JsonValue::Kind::kArray) {
        return absl::InvalidArgumentError(absl::StrCat("field 'metrics' ", key, ": a list of numbers"));
      }
      for (const JsonValue& x : list->items) {
        absl::StatusOr<double> d = ReadNumber(x);
        if (!d.ok()) return absl::InvalidArgumentError(absl::StrCat("field 'metrics' ", key, ": ", d.status().message()));
        into->push_back(*d);
      }
    }
    if (e.batch_numerators.size() != e.batch_denominators.size()) {
      return absl::InvalidArgumentError("field 'metrics': num and den must be as long as each other");
    }
    out.push_back(std::move(e));
  }
  return out;
}

absl::StatusOr<viosim::VariantResult> ReadRun(const JsonValue& run) {
  viosim::VariantResult r;
  const JsonValue* variant = Member(run, "variant", JsonValue::Kind::kString);
  if (variant == nullptr) return Missing("variant", "a string");
  r.variant = variant->str;
  absl::StatusOr<std::vector<sim::MetricEstimate>> metrics = ReadMetrics(run);
  if (!metrics.ok()) return metrics.status();
  r.metrics = *std::move(metrics);
  return r;
}

template <typename E, size_t N>
absl::StatusOr<E> ReadName(const std::pair<E, const char*> (&names)[N], const JsonValue& v, absl::string_view key) {
  const JsonValue* m = Member(v, key, JsonValue::Kind::kString);
  for (const auto& [value, name] : names) {
    if (m != nullptr && m->str == name) return value;
  }
  return Missing(key, "a known name");
}

absl::StatusOr<BisectionStep> ReadStep(const JsonValue& v, std::string* set) {
  BisectionStep s;
  const JsonValue* as_set = Member(v, "set", JsonValue::Kind::kString);
  const JsonValue* x = v.Find("x");
  const JsonValue* value = v.Find("value");
  const JsonValue* ci = v.Find("ci95");
  const JsonValue* error = v.Find("error_pct");
  if (as_set == nullptr || x == nullptr || value == nullptr || ci == nullptr || error == nullptr) {
    return absl::InvalidArgumentError("field 'refit.steps': each needs set, x, value, ci95 and error_pct");
  }
  *set = as_set->str;
  absl::StatusOr<BisectionStep::At> at = ReadName(kStepAt, v, "at");
  absl::StatusOr<int> iteration = ReadInt(v, "iteration");
  absl::StatusOr<int> lo = ReadInt(v, "bracket_lo");
  absl::StatusOr<int> hi = ReadInt(v, "bracket_hi");
  absl::StatusOr<bool> non_monotonic = ReadBool(v, "non_monotonic");
  absl::StatusOr<double> xv = ReadNumber(*x);
  absl::StatusOr<double> ev = ReadNumber(*value);
  absl::StatusOr<double> ep = ReadNumber(*error);
  absl::StatusOr<std::optional<double>> cv = ReadOptional(*ci, "refit.steps' ci95");
  for (const absl::Status& st : {at.status(), iteration.status(), lo.status(), hi.status(), non_monotonic.status(),
                                 xv.status(), ev.status(), ep.status(), cv.status()}) {
    if (!st.ok()) return absl::InvalidArgumentError(absl::StrCat("field 'refit.steps': ", st.message()));
  }
  s.at = *at;
  s.iteration = *iteration;
  s.x = *xv;
  s.eval = Evaluation{*ev, *cv};
  s.error_pct = *ep;
  s.bracket_lo = *lo;
  s.bracket_hi = *hi;
  s.non_monotonic = *non_monotonic;
  return s;
}

// The refit's search and runs. The Calibration holds only the steps' values
// as set and the search: the rest is the plan's (CalibrationAt).
absl::StatusOr<RefitValue> ReadRefit(const JsonValue& line) {
  const JsonValue* refit = Member(line, "refit", JsonValue::Kind::kObject);
  if (refit == nullptr) return Missing("refit", "an object (a sweep --refit value's result)");
  const JsonValue* steps = Member(*refit, "steps", JsonValue::Kind::kArray);
  const JsonValue* runs = Member(*refit, "runs", JsonValue::Kind::kArray);
  if (steps == nullptr || runs == nullptr) return Missing("refit.steps' or 'refit.runs", "a list");
  RefitValue out;
  Bisection& b = out.fit.search;
  for (const JsonValue& v : steps->items) {
    std::string set;
    absl::StatusOr<BisectionStep> step = ReadStep(v, &set);
    if (!step.ok()) return step.status();
    b.steps.push_back(*step);
    out.fit.values.push_back(std::move(set));
  }
  absl::StatusOr<BisectionOutcome> outcome = ReadName(kOutcome, *refit, "outcome");
  absl::StatusOr<bool> at_resolution = ReadBool(*refit, "at_resolution");
  absl::StatusOr<int> best = ReadInt(*refit, "best");
  for (const absl::Status& st : {outcome.status(), at_resolution.status(), best.status()}) {
    if (!st.ok()) return absl::InvalidArgumentError(absl::StrCat("field 'refit': ", st.message()));
  }
  b.outcome = *outcome;
  b.at_resolution = *at_resolution;
  b.best = *best;
  // The formats index the steps by what a search guarantees (the two ends,
  // the brackets, the best step): a part whose search could not have come
  // out of Bisect is refused here, not read out of bounds there.
  if (absl::Status st = CheckBisection(b); !st.ok()) {
    const std::pair<absl::string_view, absl::string_view> member_text = absl::StrSplit(st.message(), absl::MaxSplits(": ", 1));
    return absl::InvalidArgumentError(absl::StrCat("field 'refit.", member_text.first, "': ", member_text.second));
  }
  for (const JsonValue& v : runs->items) {
    absl::StatusOr<viosim::VariantResult> r = ReadRun(v);
    if (!r.ok()) return absl::InvalidArgumentError(absl::StrCat("field 'refit.runs': ", r.status().message()));
    out.results.push_back(*std::move(r));
  }
  return out;
}

absl::StatusOr<std::vector<std::optional<double>>> ReadOptionals(const JsonValue& band, absl::string_view key) {
  const JsonValue* list = Member(band, key, JsonValue::Kind::kArray);
  if (list == nullptr) return Missing(absl::StrCat("band.", key), "a list");
  std::vector<std::optional<double>> out;
  for (const JsonValue& v : list->items) {
    absl::StatusOr<std::optional<double>> n = ReadOptional(v, absl::StrCat("band.", key));
    if (!n.ok()) return n.status();
    out.push_back(*n);
  }
  return out;
}

absl::StatusOr<BandPoint> ReadBand(const JsonValue& line) {
  const JsonValue* band = Member(line, "band", JsonValue::Kind::kObject);
  if (band == nullptr) return Missing("band", "an object (a band point's result)");
  BandPoint b;
  absl::StatusOr<bool> refitted = ReadBool(*band, "refitted");
  absl::StatusOr<int> round = ReadInt(*band, "failed_round");
  const JsonValue* failure = Member(*band, "failure", JsonValue::Kind::kString);
  absl::StatusOr<std::vector<std::string>> assignments = Strings(band->Find("assignments"), "band.assignments");
  absl::StatusOr<std::vector<std::optional<double>>> values = ReadOptionals(*band, "values");
  absl::StatusOr<std::vector<std::optional<double>>> ci95 = ReadOptionals(*band, "ci95");
  if (failure == nullptr) return Missing("band.failure", "a string");
  for (const absl::Status& st : {refitted.status(), round.status(), assignments.status(), values.status(),
                                 ci95.status()}) {
    if (!st.ok()) return absl::InvalidArgumentError(absl::StrCat("field 'band': ", st.message()));
  }
  b.refitted = *refitted;
  b.failure = failure->str;
  b.failed_round = *round;
  b.assignments = *std::move(assignments);
  b.values = *std::move(values);
  b.ci95 = *std::move(ci95);
  if (b.values.size() != b.ci95.size()) return absl::InvalidArgumentError("field 'band': values and ci95 differ in length");
  return b;
}

}  // namespace

absl::StatusOr<PointResult> ReadResult(const JsonValue& line, PointKind kind) {
  PointResult r;
  switch (kind) {
    case PointKind::kRun: {
      absl::StatusOr<viosim::VariantResult> run = ReadRun(line);
      if (!run.ok()) return run.status();
      r.variant = run->variant;
      r.metrics = run->metrics;
      break;
    }
    case PointKind::kRefit: {
      absl::StatusOr<RefitValue> refit = ReadRefit(line);
      if (!refit.ok()) return refit.status();
      r.refit = *std::move(refit);
      break;
    }
    case PointKind::kBand: {
      absl::StatusOr<BandPoint> band = ReadBand(line);
      if (!band.ok()) return band.status();
      r.band = *std::move(band);
      break;
    }
  }
  return r;
}

}  // namespace analysis
