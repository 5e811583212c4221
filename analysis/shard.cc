#include "analysis/shard.h"

#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analysis/json_value.h"
#include "analysis/runner.h"
#include "analysis/shard_internal.h"
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

// ---- The commands' points ----

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

// A command found to name more points than a caller allows: `named` is
// how many are known so far (a lower bound).
absl::Status TooManyPoints(size_t named, size_t max_points) {
  return absl::ResourceExhaustedError(
      absl::StrCat("the command names at least ", named, " points (at most ", max_points, " allowed)"));
}

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
