#include "analysis/shard.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>

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
  std::vector<std::pair<std::string, JsonValue>> members;
  absl::string_view raw;  // the value's text as written

  const JsonValue* Find(absl::string_view key) const {
    for (const auto& [k, v] : members) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

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
        v->members.emplace_back(std::move(key), std::move(item));
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

std::string PointLine(absl::string_view prefix, const ShardSpec& shard, size_t index, const std::string& id,
                      const PointResult& r) {
  std::string metrics = "[";
  for (size_t i = 0; i < r.metrics.size(); ++i) {
    const sim::MetricEstimate& m = r.metrics[i];
    absl::StrAppend(&metrics, i ? "," : "", "{\"name\":", JsonWriter::Quote(m.name), ",\"value\":", ExactNumber(m.value),
                    ",\"ci95\":", m.ci95 ? ExactNumber(*m.ci95) : "null",
                    ",\"measured\":", m.measured ? "true" : "false", "}");
  }
  metrics += "]";
  return absl::StrCat(prefix, ",\"shard\":\"", shard.k, "/", shard.n, "\",\"index\":", index,
                      ",\"id\":", JsonWriter::Quote(id), ",\"variant\":", JsonWriter::Quote(r.variant),
                      ",\"metrics\":", metrics, "}\n");
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

absl::StatusOr<PointSet> SweepPoints(const Invocation& inv) {
  if (inv.scenarios.size() != 1) return absl::InvalidArgumentError("sweep: expected one scenario");
  const std::vector<std::string> over = ArgOf(inv, "over");
  if (over.size() != 1) return absl::InvalidArgumentError("sweep: expected one --over");
  absl::StatusOr<Loaded> loaded = Load(inv.scenarios[0], inv.overrides);
  if (!loaded.ok()) return loaded.status();
  auto file = std::make_shared<viosim::ScenarioFile>(std::move(loaded->file));
  absl::StatusOr<SweepSpec> spec = ParseSweepSpec(over[0]);
  if (!spec.ok()) return spec.status();
  RunRequest request;
  request.overrides = inv.overrides;
  absl::StatusOr<SweepPlan> plan = PlanSweep(*file, *spec, ArgOf(inv, "variant"), ArgOf(inv, "metric"), request);
  if (!plan.ok()) return plan.status();
  auto shared = std::make_shared<SweepPlan>(*std::move(plan));
  const size_t per_value = shared->sweep.variants.size();
  PointSet set;
  set.hashes = {loaded->hash};
  set.seeds = {loaded->seed};
  for (size_t i = 0; i < shared->resolved.size(); ++i) {
    set.ids.push_back(absl::StrCat(i, ":", shared->sweep.values[i / per_value], "/", shared->names[i]));
  }
  set.run = [file, shared, request, per_value](size_t i) -> absl::StatusOr<PointResult> {
    std::vector<absl::StatusOr<viosim::VariantResult>> r =
        RunResolved(*file, {shared->resolved[i]}, {shared->names[i]}, request);
    if (!r[0].ok()) {
      return absl::Status(r[0].status().code(),
                          absl::StrCat(file->path, ": variant '", shared->names[i], "', ", shared->sweep.field, "=",
                                       shared->sweep.values[i / per_value], ": ", r[0].status().message()));
    }
    return PointResult{r[0]->variant, r[0]->metrics};
  };
  set.render = [shared, per_value](const std::vector<PointResult>& all, Format f) -> absl::StatusOr<Rendered> {
    Sweep sweep = shared->sweep;
    for (size_t i = 0; i < all.size(); ++i) {
      absl::StatusOr<SweepPoint> p = PointOf(sweep.values[i / per_value], AsResult(all[i]), sweep.metrics);
      if (!p.ok()) return p.status();
      sweep.points.push_back(*std::move(p));
    }
    return Rendered{FormatSweep(sweep, f)};
  };
  return set;
}

// Reproduce: per scenario, each variant a published cell names at the
// scenario's seed, then each again at the next seed. The gate runs the same
// points and checks the cells against `baseline` (a path; empty: none).
absl::StatusOr<PointSet> ReproducePoints(const Invocation& inv, const std::optional<std::string>& baseline) {
  struct Table {
    viosim::ScenarioFile file;
    ReproducePlan plan;
    size_t first = 0;  // index of its first point
  };
  auto tables = std::make_shared<std::vector<Table>>();
  RunRequest request;
  request.overrides = inv.overrides;
  PointSet set;
  struct Run {
    size_t table;
    std::string variant;
    bool replicate;
  };
  auto runs = std::make_shared<std::vector<Run>>();
  for (const std::string& path : inv.scenarios) {
    absl::StatusOr<Loaded> loaded = Load(path, inv.overrides);
    if (!loaded.ok()) return loaded.status();
    absl::StatusOr<ReproducePlan> plan = PlanReproduce(loaded->file, request);
    if (!plan.ok()) return plan.status();
    set.hashes.push_back(loaded->hash);
    set.seeds.push_back(loaded->seed);
    tables->push_back({std::move(loaded->file), *std::move(plan), runs->size()});
    const Table& t = tables->back();
    for (bool replicate : {false, true}) {
      for (const std::string& v : t.plan.variants) {
        const uint64_t seed = replicate ? t.plan.replicate_seed : loaded->seed;
        set.ids.push_back(absl::StrCat(runs->size(), ":", path, "/", v, "@seed=", seed));
        runs->push_back({tables->size() - 1, v, replicate});
      }
    }
  }
  set.run = [tables, runs, request](size_t i) -> absl::StatusOr<PointResult> {
    const Run& run = (*runs)[i];
    const Table& t = (*tables)[run.table];
    absl::StatusOr<std::vector<viosim::VariantResult>> r =
        RunVariants(t.file, {run.variant}, run.replicate ? t.plan.Replicate(request) : request);
    if (!r.ok()) return r.status();
    return PointResult{r->front().variant, r->front().metrics};
  };
  set.render = [tables, request, baseline](const std::vector<PointResult>& all,
                                           Format f) -> absl::StatusOr<Rendered> {
    std::vector<Reproduction> reps;
    for (const Table& t : *tables) {
      const size_t n = t.plan.variants.size();
      std::vector<viosim::VariantResult> results, replicates;
      for (size_t i = 0; i < n; ++i) {
        results.push_back(AsResult(all[t.first + i]));
        replicates.push_back(AsResult(all[t.first + n + i]));
      }
      absl::StatusOr<Reproduction> rep = ReproductionOf(t.file, request, t.plan, std::move(results), replicates);
      if (!rep.ok()) return rep.status();
      reps.push_back(*std::move(rep));
    }
    if (!baseline) return Rendered{FormatCells(reps, f)};
    absl::StatusOr<viosim::Baseline> b = viosim::LoadBaselineFile(*baseline);
    if (!b.ok()) return b.status();
    const GateReport report = CheckGate(reps, *b);
    return Rendered{FormatGate(reps, report, f), report.failures > 0};
  };
  return set;
}

}  // namespace

absl::StatusOr<PointSet> BuildPointSet(const Invocation& inv) {
  if (inv.command == "sweep") return SweepPoints(inv);
  if (inv.command == "reproduce") return ReproducePoints(inv, std::nullopt);
  if (inv.command == "gate") {
    const std::vector<std::string> baseline = ArgOf(inv, "baseline");
    if (baseline.size() != 1) return absl::InvalidArgumentError("gate: expected one --baseline");
    return ReproducePoints(inv, baseline[0]);
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
    out += PointLine(prefix, shard, owned[j], set.ids[owned[j]], *results[j]);
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

absl::StatusOr<PointResult> ReadResult(const JsonValue& line) {
  PointResult r;
  const JsonValue* variant = line.Find("variant");
  const JsonValue* metrics = line.Find("metrics");
  if (variant == nullptr || variant->kind != JsonValue::Kind::kString) {
    return absl::InvalidArgumentError("field 'variant' missing or not a string");
  }
  r.variant = variant->str;
  if (metrics == nullptr || metrics->kind != JsonValue::Kind::kArray) {
    return absl::InvalidArgumentError("field 'metrics' missing or not a list");
  }
  for (const JsonValue& m : metrics->items) {
    const JsonValue* name = m.Find("name");
    const JsonValue* value = m.Find("value");
    const JsonValue* ci = m.Find("ci95");
    const JsonValue* measured = m.Find("measured");
    if (name == nullptr || name->kind != JsonValue::Kind::kString || value == nullptr || ci == nullptr ||
        measured == nullptr || measured->kind != JsonValue::Kind::kBool) {
      return absl::InvalidArgumentError("field 'metrics': each needs name, value, ci95 and measured");
    }
    sim::MetricEstimate e;
    e.name = name->str;
    absl::StatusOr<double> v = ReadNumber(*value);
    if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat("field 'metrics' value: ", v.status().message()));
    e.value = *v;
    if (ci->kind != JsonValue::Kind::kNull) {
      absl::StatusOr<double> c = ReadNumber(*ci);
      if (!c.ok()) return absl::InvalidArgumentError(absl::StrCat("field 'metrics' ci95: ", c.status().message()));
      e.ci95 = *c;
    }
    e.measured = measured->b;
    r.metrics.push_back(std::move(e));
  }
  return r;
}

std::string Listed(const std::vector<size_t>& indices, const std::vector<std::string>& ids) {
  std::vector<std::string> names;
  for (size_t i = 0; i < indices.size() && i < 10; ++i) names.push_back(ids[indices[i]]);
  if (indices.size() > 10) names.push_back(absl::StrCat("and ", indices.size() - 10, " more"));
  return absl::StrJoin(names, ", ");
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
        return absl::InvalidArgumentError(absl::StrCat(p.where, ": field '", field, "' is ", b->raw, " but ",
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
  absl::StatusOr<PointSet> set = BuildPointSet(inv);
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
    const JsonValue* index = p.value.Find("index");
    const JsonValue* id = p.value.Find("id");
    size_t i = 0;
    if (index == nullptr || !absl::SimpleAtoi(index->raw, &i) || i >= total) {
      return absl::InvalidArgumentError(absl::StrCat(p.where, ": field 'index' missing or not from 0 to ", total - 1));
    }
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
    absl::StatusOr<PointResult> r = ReadResult(p.value);
    if (!r.ok()) return absl::InvalidArgumentError(absl::StrCat(p.where, ": ", r.status().message()));
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
