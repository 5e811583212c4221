#include "analysis/shard.h"

#include "analysis/reads.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analysis/gate.h"
#include "analysis/json.h"
#include "analysis/runner.h"
#include "scenarios/input_file.h"
#include "scenarios/loader.h"

namespace analysis {

absl::StatusOr<ShardSpec> ParseShard(absl::string_view text) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("--shard '", text, "': ", why));
  };
  const std::vector<absl::string_view> parts = absl::StrSplit(text, '/');
  if (parts.size() != 2) return bad("expected K/N, e.g. 0/4 (shard K of N, K from 0 to N-1)");
  auto digits = [](absl::string_view s) {
    return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == absl::string_view::npos;
  };
  ShardSpec spec;
  if (!digits(parts[0]) || !digits(parts[1]) || !absl::SimpleAtoi(parts[0], &spec.k) ||
      !absl::SimpleAtoi(parts[1], &spec.n)) {
    return bad("K and N must be whole numbers, e.g. 0/4");
  }
  if (spec.n < 1) return bad("N must be at least 1");
  if (spec.k >= spec.n) return bad(absl::StrCat("K must be from 0 to ", spec.n - 1));
  return spec;
}

std::string ContentHash(absl::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return absl::StrFormat("%016x", h);
}

namespace {

// ---- A small JSON reader for the lines RunShard writes ----

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool b = false;
  double number = 0;
  std::string str;
  std::vector<JsonValue> items;
  // An object's members in order. Not a vector of std::pair: a pair needs
  // JsonValue complete where it is named, and clang's libstdc++ checks it.
  struct Member;
  std::vector<Member> members;
  absl::string_view raw;  // the value's text as written

  const JsonValue* Find(absl::string_view key) const;
};

struct JsonValue::Member {
  std::string key;
  JsonValue value;
};

const JsonValue* JsonValue::Find(absl::string_view key) const {
  for (const Member& m : members) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

class JsonReader {
 public:
  explicit JsonReader(absl::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> Document() {
    JsonValue v;
    if (!Value(&v, 0)) return absl::InvalidArgumentError(error_);
    Space();
    if (pos_ != text_.size()) return absl::InvalidArgumentError(At("text after the JSON value"));
    return v;
  }

 private:
  std::string At(absl::string_view what) const { return absl::StrCat(what, " at column ", pos_ + 1); }
  bool Fail(absl::string_view what) {
    if (error_.empty()) error_ = At(what);
    return false;
  }
  void Space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r')) ++pos_;
  }
  bool Literal(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return Fail("not JSON");
    pos_ += word.size();
    return true;
  }

  bool String(std::string* out) {
    if (pos_ >= text_.size() || text_[pos_] != '"') return Fail("expected a string");
    ++pos_;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      switch (e) {
        case '"': case '\\': case '/': out->push_back(e); break;
        case 'n': out->push_back('\n'); break;
        case 't': out->push_back('\t'); break;
        case 'r': out->push_back('\r'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'u': {
          unsigned code = 0;
          if (pos_ + 4 > text_.size() ||
              std::from_chars(text_.data() + pos_, text_.data() + pos_ + 4, code, 16).ptr != text_.data() + pos_ + 4) {
            return Fail("bad \\u escape");
          }
          pos_ += 4;
          // The writer escapes only control characters this way.
          if (code > 0x7f) return Fail("\\u escape beyond ASCII");
          out->push_back(static_cast<char>(code));
          break;
        }
        default: return Fail("bad escape in a string");
      }
    }
    return Fail("unterminated string");
  }

  // From the opening bracket at pos_: items separated by ',' up to `close`,
  // each read by `item`.
  bool Items(char close, const std::function<bool()>& item) {
    ++pos_;
    Space();
    if (pos_ < text_.size() && text_[pos_] == close) {
      ++pos_;
      return true;
    }
    while (item()) {
      Space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
      } else if (pos_ < text_.size() && text_[pos_] == close) {
        ++pos_;
        return true;
      } else {
        return Fail(absl::StrCat("expected ',' or '", std::string(1, close), "'"));
      }
    }
    return false;
  }

  bool Value(JsonValue* v, int depth) {
    if (depth > 16) return Fail("nested too deeply");
    Space();
    if (pos_ >= text_.size()) return Fail("expected a value");
    const size_t start = pos_;
    const char c = text_[pos_];
    bool ok = true;
    if (c == '{') {
      v->kind = JsonValue::Kind::kObject;
      ok = Items('}', [&] {
        Space();
        std::string key;
        JsonValue item;
        if (!String(&key)) return false;
        Space();
        if (pos_ >= text_.size() || text_[pos_++] != ':') return Fail("expected ':'");
        if (!Value(&item, depth + 1)) return false;
        v->members.push_back(JsonValue::Member{std::move(key), std::move(item)});
        return true;
      });
    } else if (c == '[') {
      v->kind = JsonValue::Kind::kArray;
      ok = Items(']', [&] {
        JsonValue item;
        if (!Value(&item, depth + 1)) return false;
        v->items.push_back(std::move(item));
        return true;
      });
    } else if (c == '"') {
      v->kind = JsonValue::Kind::kString;
      ok = String(&v->str);
    } else if (c == 't' || c == 'f') {
      v->kind = JsonValue::Kind::kBool;
      v->b = c == 't';
      ok = Literal(c == 't' ? "true" : "false");
    } else if (c == 'n') {
      ok = Literal("null");
    } else {
      v->kind = JsonValue::Kind::kNumber;
      size_t end = pos_;
      while (end < text_.size() && absl::string_view("+-0123456789.eE").find(text_[end]) != absl::string_view::npos) {
        ++end;
      }
      const auto r = std::from_chars(text_.data() + pos_, text_.data() + end, v->number);
      if (end == pos_ || r.ptr != text_.data() + end) return Fail("bad number");
      pos_ = end;
    }
    if (ok) v->raw = text_.substr(start, pos_ - start);
    return ok;
  }

  absl::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

// ---- Writing a point's line ----

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

// The fields every line of one run shares, in the order written; `merge`
// requires each to be the same text on every line.
constexpr const char* kSharedFields[] = {"viosim", "command", "scenarios", "overrides", "args", "points"};

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

// ---- The commands' points ----

// Loads a scenario as the commands do (file-level --set applied) with its
// content hash and its seed.
struct Loaded {
  viosim::ScenarioFile file;
  std::string hash;
  uint64_t seed = 0;
};

absl::StatusOr<Loaded> Load(const std::string& path, const std::vector<std::string>& overrides) {
  Loaded out;
  absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(path);
  if (!file.ok()) return file.status();
  if (absl::Status s = viosim::ApplyFileOverrides(&*file, overrides); !s.ok()) return s;
  out.file = *std::move(file);
  absl::StatusOr<std::string> bytes = viosim::ReadInputFile(path, "scenario file");
  if (!bytes.ok()) return bytes.status();
  out.hash = ContentHash(*bytes);
  absl::StatusOr<viosim::Scenario> base = viosim::ResolveVariant(out.file, viosim::kBaseVariant, overrides);
  if (!base.ok()) return base.status();
  out.seed = base->run().seed();
  return out;
}

std::vector<std::string> ArgOf(const Invocation& inv, absl::string_view name) {
  for (const auto& [k, v] : inv.args) {
    if (k == name) return v;
  }
  return {};
}

viosim::VariantResult AsResult(const PointResult& p) {
  viosim::VariantResult r;
  r.variant = p.variant;
  r.metrics = p.metrics;
  return r;
}

// The one value of the command's argument `name`; InvalidArgument naming
// `flag` when it is not given once.
absl::StatusOr<std::string> OneArg(const Invocation& inv, absl::string_view name, absl::string_view flag) {
  const std::vector<std::string> v = ArgOf(inv, name);
  if (v.size() != 1) return absl::InvalidArgumentError(absl::StrCat(inv.command, ": expected one ", flag));
  return v[0];
}

template <typename T>
absl::StatusOr<T> NumberArg(const Invocation& inv, absl::string_view name, absl::string_view flag) {
  absl::StatusOr<std::string> text = OneArg(inv, name, flag);
  if (!text.ok()) return text.status();
  T v{};
  const bool ok = [&] {
    if constexpr (std::is_floating_point_v<T>) {
      return absl::SimpleAtod(*text, &v);
    } else {
      return absl::SimpleAtoi(*text, &v);
    }
  }();
  if (!ok) return absl::InvalidArgumentError(absl::StrCat(flag, " '", *text, "' is not a number"));
  return v;
}

// A command found to name more points than a caller allows: `named` is
// how many are known so far (a lower bound).
absl::Status TooManyPoints(size_t named, size_t max_points) {
  return absl::ResourceExhaustedError(
      absl::StrCat("the command names at least ", named, " points (at most ", max_points, " allowed)"));
}

// `sweep --refit`: one point per value, its refit then its variants.
absl::StatusOr<PointSet> RefitSweepPoints(const Invocation& inv, std::shared_ptr<viosim::ScenarioFile> file,
                                          const SweepSpec& spec, const RunRequest& request) {
  CalibrateSpec refit;
  refit.flag = "--refit";
  absl::StatusOr<std::string> field = OneArg(inv, "refit", "--refit");
  absl::StatusOr<std::string> cell = OneArg(inv, "cell", "--cell");
  absl::StatusOr<std::string> range = OneArg(inv, "range", "--range");
  absl::StatusOr<double> tolerance = NumberArg<double>(inv, "tolerance", "--tolerance");
  absl::StatusOr<int> max_iter = NumberArg<int>(inv, "max-iter", "--max-iter");
  for (const absl::Status& s : {field.status(), cell.status(), range.status(), tolerance.status(), max_iter.status()}) {
    if (!s.ok()) return s;
  }
  refit.field = *field;
  refit.tolerance_pct = *tolerance;
  refit.max_iter = *max_iter;
  if (absl::Status s = ParseCellAndRange(*cell, *range, &refit); !s.ok()) return s;
  absl::StatusOr<RefitSweepPlan> plan =
      PlanRefitSweep(*file, spec, refit, ArgOf(inv, "variant"), ArgOf(inv, "metric"), request);
  if (!plan.ok()) return plan.status();
  auto shared = std::make_shared<RefitSweepPlan>(*std::move(plan));
  PointSet set;
  for (size_t i = 0; i < shared->sweep.sweep.values.size(); ++i) {
    set.ids.push_back(absl::StrCat(i, ":", shared->sweep.sweep.values[i], "/refit"));
    set.kinds.push_back(PointKind::kRefit);
  }
  set.run = [file, shared](size_t i) -> absl::StatusOr<PointResult> {
    absl::StatusOr<RefitValue> v = RunRefitValue(*file, *shared, i);
    if (!v.ok()) return v.status();
    PointResult r;
    r.refit = *std::move(v);
    return r;
  };
  set.render = [file, shared, ids = set.ids](const std::vector<PointResult>& all,
                                             Format f) -> absl::StatusOr<Rendered> {
    std::vector<RefitValue> values;
    std::vector<std::string> not_fitted;
    const std::vector<std::string>& variants = shared->sweep.sweep.variants;
    for (size_t i = 0; i < all.size(); ++i) {
      RefitValue v = *all[i].refit;
      const bool fitted = v.fit.search.outcome == BisectionOutcome::kFitted;
      bool same = v.results.size() == (fitted ? variants.size() : 0);
      for (size_t j = 0; same && j < v.results.size(); ++j) same = v.results[j].variant == variants[j];
      if (!same) {
        return absl::InvalidArgumentError(absl::StrCat("point ", ids[i], ": its runs are not the variants ",
                                                       fitted ? absl::StrJoin(variants, ", ") : "none (not fitted)"));
      }
      if (!fitted) not_fitted.push_back(shared->sweep.sweep.values[i]);
      v.fit = CalibrationAt(*shared, i, std::move(v.fit.values), std::move(v.fit.search));
      values.push_back(std::move(v));
    }
    absl::StatusOr<RefitSweep> sweep = AssembleRefitSweep(*file, *shared, std::move(values));
    if (!sweep.ok()) return sweep.status();
    Rendered out{FormatRefitSweep(*sweep, f), !not_fitted.empty()};
    if (!not_fitted.empty()) {
      out.note = absl::StrCat(shared->refit.field, " not fitted at ", shared->spec.field, " = ",
                              absl::StrJoin(not_fitted, ", "));
    }
    return out;
  };
  return set;
}

absl::StatusOr<PointSet> SweepPoints(const Invocation& inv, size_t max_points) {
  if (inv.scenarios.size() != 1) return absl::InvalidArgumentError("sweep: expected one scenario");
  const std::vector<std::string> over = ArgOf(inv, "over");
  if (over.empty()) return absl::InvalidArgumentError("sweep: expected --over");
  if (over.size() > 1 && !ArgOf(inv, "refit").empty()) {
    return absl::InvalidArgumentError("sweep: --refit takes one --over, not a grid");
  }
  absl::StatusOr<Loaded> loaded = Load(inv.scenarios[0], inv.overrides);
  if (!loaded.ok()) return loaded.status();
  if (absl::Status s = CheckPathsRead(loaded->file, {}, inv.overrides); !s.ok()) return s;
  auto file = std::make_shared<viosim::ScenarioFile>(std::move(loaded->file));
  absl::StatusOr<SweepSpec> spec = ParseGridSpec(over);
  if (!spec.ok()) return spec.status();
  // Each value is checked against every variant before a point is named:
  // count first.
  const size_t variants =
      ArgOf(inv, "refit").empty()
          ? (ArgOf(inv, "variant").empty() ? viosim::VariantNames(*file).size() : ArgOf(inv, "variant").size())
          : 1;
  size_t combos = spec->values.size();
  for (const SweepAxis& a : spec->more) combos *= a.values.size();
  if (combos * variants > max_points) return TooManyPoints(combos * variants, max_points);
  RunRequest request;
  request.overrides = inv.overrides;
  if (!ArgOf(inv, "refit").empty()) {
    absl::StatusOr<PointSet> set = RefitSweepPoints(inv, file, *spec, request);
    if (!set.ok()) return set.status();
    set->hashes = {loaded->hash};
    set->seeds = {loaded->seed};
    return set;
  }
  absl::StatusOr<SweepPlan> plan = PlanSweep(*file, *spec, ArgOf(inv, "variant"), ArgOf(inv, "metric"), request);
  if (!plan.ok()) return plan.status();
  auto shared = std::make_shared<SweepPlan>(*std::move(plan));
  PointSet set;
  set.hashes = {loaded->hash};
  set.seeds = {loaded->seed};
  for (size_t i = 0; i < shared->resolved.size(); ++i) {
    set.ids.push_back(absl::StrCat(i, ":", absl::StrJoin(shared->coords[i], ","), "/", shared->names[i]));
    set.kinds.push_back(PointKind::kRun);
  }
  set.run = [file, shared, request](size_t i) -> absl::StatusOr<PointResult> {
    std::vector<absl::StatusOr<viosim::VariantResult>> r =
        RunResolved(*file, {shared->resolved[i]}, {shared->names[i]}, request);
    if (!r[0].ok()) {
      const std::vector<std::string>& at = shared->coords[i];
      std::string where = absl::StrCat(shared->sweep.field, "=", at[0]);
      for (size_t k = 0; k < shared->sweep.more.size(); ++k) {
        absl::StrAppend(&where, ", ", shared->sweep.more[k].field, "=", at[k + 1]);
      }
      return absl::Status(r[0].status().code(), absl::StrCat(file->path, ": variant '", shared->names[i], "', ",
                                                             where, ": ", r[0].status().message()));
    }
    return PointResult{r[0]->variant, r[0]->metrics};
  };
  set.render = [shared](const std::vector<PointResult>& all, Format f) -> absl::StatusOr<Rendered> {
    Sweep sweep = shared->sweep;
    for (size_t i = 0; i < all.size(); ++i) {
      const std::vector<std::string>& at = shared->coords[i];
      absl::StatusOr<SweepPoint> p = PointOf(at[0], AsResult(all[i]), sweep.metrics);
      if (!p.ok()) return p.status();
      p->at.assign(at.begin() + 1, at.end());
      sweep.points.push_back(*std::move(p));
    }
    return Rendered{FormatSweep(sweep, f)};
  };
  return set;
}

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

}  // namespace

absl::StatusOr<PointSet> BuildPointSet(const Invocation& inv, size_t max_points) {
  if (inv.command == "sweep") return SweepPoints(inv, max_points);
  if (inv.command == "reproduce") {
    if (ArgOf(inv, "bands").empty()) return ReproducePoints(inv, std::nullopt, std::nullopt, max_points);
    BandSpec spec;
    absl::StatusOr<int> k = NumberArg<int>(inv, "bands", "--bands");
    absl::StatusOr<uint64_t> seed = NumberArg<uint64_t>(inv, "band-seed", "--band-seed");
    absl::StatusOr<int> passes = NumberArg<int>(inv, "band-passes", "--band-passes");
    for (const absl::Status& s : {k.status(), seed.status(), passes.status()}) {
      if (!s.ok()) return s;
    }
    spec.k = *k;
    spec.seed = *seed;
    spec.passes = *passes;
    return ReproducePoints(inv, std::nullopt, spec, max_points);
  }
  if (inv.command == "gate") {
    const std::vector<std::string> baseline = ArgOf(inv, "baseline");
    if (baseline.size() != 1) return absl::InvalidArgumentError("gate: expected one --baseline");
    return ReproducePoints(inv, baseline[0], std::nullopt, max_points);
  }
  return absl::InvalidArgumentError(absl::StrCat("command '", inv.command, "' has no points to shard"));
}

std::string ListPoints(const PointSet& set) {
  std::string out;
  for (const std::string& id : set.ids) absl::StrAppend(&out, id, "\n");
  return out;
}

absl::StatusOr<std::string> RunShard(const Invocation& inv, const PointSet& set, const ShardSpec& shard, int jobs,
                                     absl::string_view version) {
  if (static_cast<size_t>(shard.n) > set.ids.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--shard ", shard.k, "/", shard.n, ": N is more than the ",
                                                   set.ids.size(), " points (see --list)"));
  }
  std::vector<size_t> owned;
  for (size_t i = 0; i < set.ids.size(); ++i) {
    if (shard.Owns(i)) owned.push_back(i);
  }
  std::vector<absl::StatusOr<PointResult>> results(owned.size(), absl::UnknownError("not run"));
  ParallelFor(owned.size(), jobs, [&](size_t j) { results[j] = set.run(owned[j]); });
  const std::string prefix = SharedPrefix(inv, set, version);
  std::string out;
  for (size_t j = 0; j < owned.size(); ++j) {
    if (!results[j].ok()) return results[j].status();
    out += PointLine(prefix, shard, owned[j], set.ids[owned[j]], set.kinds[owned[j]], *results[j]);
  }
  return out;
}

namespace {

struct Part {
  std::string where;  // FILE:LINE
  JsonValue value;
};

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

absl::Status Missing(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("field '", field, "' missing or not ", what));
}

// The member `key` of `v` (an object), of kind `kind`; null otherwise.
const JsonValue* Member(const JsonValue& v, absl::string_view key, JsonValue::Kind kind) {
  const JsonValue* m = v.Find(key);
  return m != nullptr && m->kind == kind ? m : nullptr;
}

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

std::string Listed(const std::vector<size_t>& indices, const std::vector<std::string>& ids) {
  std::vector<std::string> names;
  for (size_t i = 0; i < indices.size() && i < 10; ++i) names.push_back(ids[indices[i]]);
  if (indices.size() > 10) names.push_back(absl::StrCat("and ", indices.size() - 10, " more"));
  return absl::StrJoin(names, ", ");
}

// A part's field 'index', checked against the `total` points.
absl::StatusOr<size_t> IndexOf(const Part& p, size_t total) {
  const JsonValue* index = p.value.Find("index");
  size_t i = 0;
  if (index == nullptr || !absl::SimpleAtoi(index->raw, &i) || i >= total) {
    return absl::InvalidArgumentError(absl::StrCat(p.where, ": field 'index' missing or not from 0 to ", total - 1));
  }
  return i;
}

// The error for parts that hold fewer points than the `claimed` they all
// name: the first missing indices and the shards that own them (by the
// first part's N), found in time proportional to the parts.
absl::Status MissingPoints(const std::vector<Part>& parts, size_t claimed) {
  std::set<size_t> held;
  for (const Part& p : parts) held.insert(*IndexOf(p, claimed));
  std::optional<ShardSpec> shard;
  if (const JsonValue* s = Member(parts.front().value, "shard", JsonValue::Kind::kString); s != nullptr) {
    if (absl::StatusOr<ShardSpec> parsed = ParseShard(s->str); parsed.ok()) shard = *parsed;
  }
  std::vector<std::string> first;
  std::set<int> owners;
  for (size_t i = 0; i < claimed && first.size() < 10; ++i) {
    if (held.count(i) > 0) continue;
    first.push_back(absl::StrCat(i));
    if (shard) owners.insert(static_cast<int>(i % static_cast<size_t>(shard->n)));
  }
  const size_t missing = claimed - held.size();
  if (missing > first.size()) first.push_back(absl::StrCat("and ", missing - first.size(), " more"));
  std::string whose;
  if (shard) {
    std::vector<std::string> names;
    for (int k : owners) names.push_back(absl::StrCat(k, "/", shard->n));
    whose = absl::StrCat("; written by --shard ", absl::StrJoin(names, ", "));
  }
  return absl::InvalidArgumentError(absl::StrCat(missing, " of ", claimed, " points missing (index ",
                                                 absl::StrJoin(first, ", "), whose,
                                                 "): a shard's file absent or cut short?"));
}

}  // namespace

absl::StatusOr<Rendered> MergeShards(const std::vector<std::pair<std::string, std::string>>& files, Format f,
                                        absl::string_view version) {
  std::vector<Part> parts;
  for (const auto& [path, text] : files) {
    int line_no = 0;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      ++line_no;
      if (line.empty()) continue;
      const std::string where = absl::StrCat(path, ":", line_no);
      absl::StatusOr<JsonValue> v = JsonReader(line).Document();
      if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": not a viosim point: ", v.status().message()));
      if (v->kind != JsonValue::Kind::kObject || v->Find("viosim") == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": not a viosim point (written by --format jsonl, field 'viosim' expected)"));
      }
      parts.push_back({where, *std::move(v)});
    }
  }
  if (parts.empty()) {
    std::vector<std::string> names;
    for (const auto& file : files) names.push_back(file.first);
    return absl::InvalidArgumentError(absl::StrCat("no points in ", absl::StrJoin(names, ", ")));
  }
  const Part& first = parts.front();
  for (const Part& p : parts) {
    for (const char* field : kSharedFields) {
      const JsonValue* a = first.value.Find(field);
      const JsonValue* b = p.value.Find(field);
      if (b == nullptr) return absl::InvalidArgumentError(absl::StrCat(p.where, ": field '", field, "' missing"));
      if (a->raw != b->raw) {
        const JsonValue* id = Member(p.value, "id", JsonValue::Kind::kString);
        return absl::InvalidArgumentError(absl::StrCat(p.where, id != nullptr ? absl::StrCat(" (point ", id->str, ")") : "",
                                                       ": field '", field, "' is ", b->raw, " but ",
                                                       first.where, " has ", a->raw,
                                                       "; every part must come from the same command, binary, "
                                                       "scenario files, seed and overrides"));
      }
    }
  }
  const JsonValue* written_by = first.value.Find("viosim");
  if (written_by->kind != JsonValue::Kind::kString || written_by->str != version) {
    return absl::InvalidArgumentError(absl::StrCat(first.where, ": field 'viosim' is ", written_by->raw,
                                                   ", written by another binary than this ", version));
  }
  Invocation inv;
  std::vector<std::string> hashes;
  std::vector<uint64_t> seeds;
  if (absl::Status s = ReadInvocation(first.value, &inv, &hashes, &seeds); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(first.where, ": ", s.message()));
  }
  // Every point is one line of a part, so parts holding fewer lines than
  // the points they claim cannot merge: say which are missing from the
  // parts' own indices, before planning anything. After this the command is
  // planned with at most as many points as the parts hold.
  const JsonValue* points = first.value.Find("points");
  size_t claimed = 0;
  if (!absl::SimpleAtoi(points->raw, &claimed) || claimed == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(first.where, ": field 'points' is ", points->raw, ", not a number of points"));
  }
  for (const Part& p : parts) {
    if (absl::StatusOr<size_t> i = IndexOf(p, claimed); !i.ok()) return i.status();
  }
  if (claimed > parts.size()) return MissingPoints(parts, claimed);
  absl::StatusOr<PointSet> set = BuildPointSet(inv, claimed);
  if (absl::IsResourceExhausted(set.status())) {
    // The parts hold `claimed` points; the message's limit is that number.
    const absl::string_view m = set.status().message();
    return absl::InvalidArgumentError(
        absl::StrCat(first.where, ": field 'points' is ", claimed, " but ", m.substr(0, m.find(" (at most"))));
  }
  if (!set.ok()) return absl::Status(set.status().code(), absl::StrCat("merge: ", set.status().message()));
  for (size_t i = 0; i < inv.scenarios.size(); ++i) {
    if (set->hashes[i] != hashes[i]) {
      return absl::InvalidArgumentError(absl::StrCat(first.where, ": scenario '", inv.scenarios[i],
                                                     "' has changed since the parts were written (hash ", hashes[i],
                                                     ", now ", set->hashes[i], ")"));
    }
    if (set->seeds[i] != seeds[i]) {
      return absl::InvalidArgumentError(absl::StrCat(first.where, ": scenario '", inv.scenarios[i], "': seed ",
                                                     seeds[i], " in the parts, ", set->seeds[i], " now"));
    }
  }
  const size_t total = set->ids.size();
  if (first.value.Find("points")->raw != absl::StrCat(total)) {
    return absl::InvalidArgumentError(absl::StrCat(first.where, ": field 'points' is ", first.value.Find("points")->raw,
                                                   " but the command has ", total, " points"));
  }
  std::vector<std::optional<PointResult>> results(total);
  std::vector<std::string> seen_at(total);
  for (const Part& p : parts) {
    const JsonValue* id = p.value.Find("id");
    absl::StatusOr<size_t> index = IndexOf(p, total);
    if (!index.ok()) return index.status();
    const size_t i = *index;
    if (id == nullptr || id->kind != JsonValue::Kind::kString || id->str != set->ids[i]) {
      return absl::InvalidArgumentError(absl::StrCat(p.where, ": field 'id' of point ", i, " is ",
                                                     id == nullptr ? "missing" : std::string(id->raw), ", expected \"",
                                                     set->ids[i], "\""));
    }
    if (!seen_at[i].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("point ", set->ids[i], " is duplicated: ", seen_at[i], " and ", p.where));
    }
    seen_at[i] = p.where;
    absl::StatusOr<PointResult> r = ReadResult(p.value, set->kinds[i]);
    if (!r.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(p.where, " (point ", set->ids[i], "): ", r.status().message()));
    }
    results[i] = *std::move(r);
  }
  std::vector<size_t> missing;
  for (size_t i = 0; i < total; ++i) {
    if (!results[i]) missing.push_back(i);
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(missing.size(), " of ", total, " points missing: ",
                                                   Listed(missing, set->ids),
                                                   " (a shard's file absent or cut short?)"));
  }
  std::vector<PointResult> all;
  for (auto& r : results) all.push_back(*std::move(r));
  return set->render(all, f);
}

}  // namespace analysis
