#include "analysis/runner.h"

#include <algorithm>
#include <functional>
#include <map>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "google/protobuf/util/message_differencer.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analysis/published.h"
#include "analysis/gains.h"
#include "analysis/reads.h"

namespace analysis {

std::vector<absl::StatusOr<viosim::VariantResult>> RunResolved(const viosim::ScenarioFile& file,
                                                               const std::vector<viosim::Scenario>& resolved,
                                                               const std::vector<std::string>& names,
                                                               const RunRequest& request) {
  std::vector<absl::StatusOr<viosim::VariantResult>> results(resolved.size(), absl::UnknownError("not run"));
  viosim::RunOptions options = request.options;
  options.base_dir = std::filesystem::path(file.path).parent_path().string();
  if (options.base_dir.empty()) options.base_dir = ".";
  ParallelFor(resolved.size(), request.jobs,
              [&](size_t i) { results[i] = viosim::RunScenario(resolved[i], names[i], options); });
  return results;
}

void ParallelFor(size_t n, int jobs, const std::function<void(size_t)>& work) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) work(i);
  };
  const int threads = std::max(1, std::min<int>(jobs, static_cast<int>(n)));
  if (threads == 1) {
    worker();
    return;
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
}

double ErrorPct(double modeled, double published) {
  if (published != 0) return 100.0 * (modeled - published) / std::fabs(published);
  return modeled == 0 ? 0 : INFINITY;
}

absl::StatusOr<std::vector<viosim::VariantResult>> RunVariants(const viosim::ScenarioFile& file,
                                                                  const std::vector<std::string>& variants,
                                                                  const RunRequest& request) {
  std::vector<viosim::Scenario> resolved;
  resolved.reserve(variants.size());
  for (const std::string& v : variants) {
    absl::StatusOr<viosim::Scenario> s = viosim::ResolveVariant(file, v, request.overrides);
    if (!s.ok()) return s.status();
    resolved.push_back(*std::move(s));
  }
  std::vector<absl::StatusOr<viosim::VariantResult>> results = RunResolved(file, resolved, variants, request);
  std::vector<viosim::VariantResult> out;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok()) {
      return absl::Status(results[i].status().code(),
                          absl::StrCat(file.path, ": variant '", variants[i], "': ", results[i].status().message()));
    }
    out.push_back(*std::move(results[i]));
    out.back().description = viosim::VariantDescription(file, variants[i]);
  }
  return out;
}

namespace {

// The values of "V1,V2,...", split at commas, the spaces around each
// dropped (a list is typed "2, 4, 8"). A value that starts with a quote
// (" or ') whose closing quote, unescaped, comes before a comma or the end
// (spaces aside) is one value whatever commas and spaces it holds: "a, b"
// as a scenario file would read it. Any other quote is an ordinary
// character.
std::vector<absl::string_view> SplitValues(absl::string_view list) {
  std::vector<absl::string_view> out;
  size_t start = 0;
  while (true) {
    size_t end = list.find(',', start);
    size_t first = start;
    while (first < list.size() && absl::ascii_isspace(static_cast<unsigned char>(list[first]))) ++first;
    const char q = first < list.size() ? list[first] : '\0';
    if (q == '"' || q == '\'') {
      for (size_t i = first + 1; i < list.size(); ++i) {
        if (list[i] == '\\') {
          ++i;
        } else if (list[i] == q) {
          size_t after = i + 1;
          while (after < list.size() && absl::ascii_isspace(static_cast<unsigned char>(list[after]))) ++after;
          if (after == list.size()) end = absl::string_view::npos;
          if (after < list.size() && list[after] == ',') end = after;
          break;
        }
      }
    }
    if (end == absl::string_view::npos) {
      out.push_back(absl::StripAsciiWhitespace(list.substr(start)));
      return out;
    }
    out.push_back(absl::StripAsciiWhitespace(list.substr(start, end - start)));
    start = end + 1;
  }
}

}  // namespace

absl::StatusOr<SweepSpec> ParseSweepSpec(absl::string_view over) {
  const size_t eq = over.find('=');
  SweepSpec spec;
  if (eq != absl::string_view::npos) spec.field = std::string(absl::StripAsciiWhitespace(over.substr(0, eq)));
  if (spec.field.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--over '", over, "': expected FIELD=V1,V2,..., e.g. platform.kvm.mmio_exit_user.value=2us,6us"));
  }
  for (absl::string_view v : SplitValues(over.substr(eq + 1))) {
    if (v.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--over '", over, "': field '", spec.field, "': empty value in the list"));
    }
    spec.values.emplace_back(v);
  }
  return spec;
}

absl::StatusOr<SweepSpec> ParseGridSpec(const std::vector<std::string>& overs) {
  if (overs.empty() || overs.size() > 3) {
    return absl::InvalidArgumentError(absl::StrCat("--over: given ", overs.size(),
                                                   " times; a sweep takes one field, or a grid of two or three"));
  }
  absl::StatusOr<SweepSpec> spec = ParseSweepSpec(overs[0]);
  if (!spec.ok()) return spec.status();
  for (size_t i = 1; i < overs.size(); ++i) {
    absl::StatusOr<SweepSpec> axis = ParseSweepSpec(overs[i]);
    if (!axis.ok()) return axis.status();
    bool again = axis->field == spec->field;
    for (const SweepAxis& a : spec->more) again = again || a.field == axis->field;
    if (again) {
      return absl::InvalidArgumentError(
          absl::StrCat("--over '", overs[i], "': field '", axis->field, "' is already an axis of the grid"));
    }
    spec->more.push_back({axis->field, axis->values});
  }
  return spec;
}

absl::StatusOr<SweepPlan> PlanSweep(const viosim::ScenarioFile& file, const SweepSpec& spec,
                                    const std::vector<std::string>& variants,
                                    const std::vector<std::string>& metrics, const RunRequest& request) {
  SweepPlan out;
  Sweep& sweep = out.sweep;
  sweep.scenario = file.scenario.name();
  sweep.field = spec.field;
  for (const std::string& v : spec.values) sweep.values.push_back(viosim::ValueAsRead(v));
  for (const SweepAxis& a : spec.more) {
    SweepAxis read{a.field, {}};
    for (const std::string& v : a.values) read.values.push_back(viosim::ValueAsRead(v));
    sweep.more.push_back(std::move(read));
  }
  sweep.variants = variants.empty() ? viosim::VariantNames(file) : variants;
  // Each value alone first, so that a bad field or value names --over.
  std::vector<const SweepAxis*> axes;
  const SweepAxis first{spec.field, spec.values};
  axes.push_back(&first);
  for (const SweepAxis& a : spec.more) axes.push_back(&a);
  for (const SweepAxis* a : axes) {
    for (const std::string& v : a->values) {
      viosim::Scenario scratch = file.scenario;
      absl::Status s = viosim::ApplyOverride(&scratch, absl::StrCat(a->field, "=", v), "--over");
      if (!s.ok()) return s;
    }
  }
  // Every combination, the first axis slowest.
  std::vector<std::vector<size_t>> combos = {{}};
  for (const SweepAxis* a : axes) {
    std::vector<std::vector<size_t>> next;
    for (const std::vector<size_t>& c : combos) {
      for (size_t k = 0; k < a->values.size(); ++k) {
        next.push_back(c);
        next.back().push_back(k);
      }
    }
    combos = std::move(next);
  }
  std::vector<viosim::Scenario>& resolved = out.resolved;
  std::vector<std::string>& names = out.names;
  for (const std::vector<size_t>& c : combos) {
    RunRequest at = request;
    std::vector<std::string> coords;
    for (size_t k = 0; k < axes.size(); ++k) {
      at.overrides.push_back(absl::StrCat(axes[k]->field, "=", axes[k]->values[c[k]]));
      coords.push_back(k == 0 ? sweep.values[c[k]] : sweep.more[k - 1].values[c[k]]);
    }
    for (const std::string& variant : sweep.variants) {
      absl::StatusOr<viosim::Scenario> s = viosim::ResolveVariant(file, variant, at.overrides, "--over");
      if (!s.ok()) return s.status();
      resolved.push_back(*std::move(s));
      names.push_back(variant);
      out.coords.push_back(coords);
    }
  }
  const std::vector<std::string> available = viosim::MetricNames(resolved.front());
  sweep.metrics = metrics;
  if (sweep.metrics.empty() && !available.empty()) {
    const bool has_iops = std::find(available.begin(), available.end(), "iops") != available.end();
    sweep.metrics.push_back(has_iops ? "iops" : available.front());
  }
  for (size_t i = 0; i < resolved.size(); ++i) {
    const std::vector<std::string> known = viosim::MetricNames(resolved[i]);
    for (const std::string& m : sweep.metrics) {
      if (std::find(known.begin(), known.end(), m) == known.end()) {
        return absl::InvalidArgumentError(absl::StrCat("--metric '", m, "': not a metric of scenario '",
                                                       sweep.scenario, "' (variant '", names[i],
                                                       "'); its metrics are: ", absl::StrJoin(known, ", ")));
      }
    }
  }
  // A field no swept variant reads would give the same row at every value.
  // (Read as it is set: an fio option is read once the job file has it.)
  std::vector<std::string> at_first = request.overrides;
  std::vector<NamedPath> named;
  for (const SweepAxis* a : axes) {
    at_first.push_back(absl::StrCat(a->field, "=", a->values.front()));
    named.push_back({"--over", a->field});
  }
  if (absl::Status s = CheckNamedPathsRead(file, sweep.variants, at_first, named); !s.ok()) return s;
  return out;
}

absl::StatusOr<SweepPoint> PointOf(const std::string& value, const viosim::VariantResult& result,
                                   const std::vector<std::string>& metrics) {
  SweepPoint p;
  p.value = value;
  p.variant = result.variant;
  for (const std::string& m : metrics) {
    auto it = std::find_if(result.metrics.begin(), result.metrics.end(),
                           [&m](const sim::MetricEstimate& e) { return e.name == m; });
    if (it == result.metrics.end()) {
      return absl::InternalError(absl::StrCat("variant '", result.variant, "' did not report metric '", m, "'"));
    }
    p.metrics.push_back(*it);
  }
  return p;
}

absl::StatusOr<Sweep> RunSweep(const viosim::ScenarioFile& file, const SweepSpec& spec,
                               const std::vector<std::string>& variants,
                               const std::vector<std::string>& metrics, const RunRequest& request) {
  absl::StatusOr<SweepPlan> r = PlanSweep(file, spec, variants, metrics, request);
  if (!r.ok()) return r.status();
  Sweep& sweep = r->sweep;
  const std::vector<std::string>& names = r->names;
  // A precision is asked of the metrics the sweep tabulates.
  RunRequest at = request;
  at.options.precision_metrics = sweep.metrics;
  std::vector<absl::StatusOr<viosim::VariantResult>> results = RunResolved(file, r->resolved, names, at);
  for (size_t i = 0; i < results.size(); ++i) {
    const std::vector<std::string>& coords = r->coords[i];
    if (!results[i].ok()) {
      std::string where = absl::StrCat(spec.field, "=", coords[0]);
      for (size_t k = 0; k < spec.more.size(); ++k) absl::StrAppend(&where, ", ", spec.more[k].field, "=", coords[k + 1]);
      return absl::Status(results[i].status().code(), absl::StrCat(file.path, ": variant '", names[i], "', ", where,
                                                                   ": ", results[i].status().message()));
    }
    absl::StatusOr<SweepPoint> p = PointOf(coords[0], *results[i], sweep.metrics);
    if (!p.ok()) return p.status();
    p->at.assign(coords.begin() + 1, coords.end());
    sweep.points.push_back(*std::move(p));
    sweep.precision = at.options.precision;
    if (!results[i]->precision_reached) {
      sweep.precision_missed.push_back(absl::StrCat(absl::StrJoin(coords, ","), "/", names[i], ": ",
                                                    absl::StrJoin(results[i]->precision_missed, ", ")));
    }
  }
  return std::move(sweep);
}

std::vector<std::string> PlacementResourcesBetween(const viosim::Scenario& a, const viosim::Scenario& b);

// How many fields two resolved scenarios differ in.
int FieldsApart(const viosim::Scenario& a, const viosim::Scenario& b) {
  class Counter : public google::protobuf::util::MessageDifferencer::Reporter {
   public:
    void ReportAdded(const google::protobuf::Message&, const google::protobuf::Message&,
                     const std::vector<google::protobuf::util::MessageDifferencer::SpecificField>&) override {
      ++n;
    }
    void ReportDeleted(const google::protobuf::Message&, const google::protobuf::Message&,
                       const std::vector<google::protobuf::util::MessageDifferencer::SpecificField>&) override {
      ++n;
    }
    void ReportModified(const google::protobuf::Message&, const google::protobuf::Message&,
                        const std::vector<google::protobuf::util::MessageDifferencer::SpecificField>&) override {
      ++n;
    }
    int n = 0;
  };
  Counter counter;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesTo(&counter);
  d.Compare(a, b);
  return counter.n;
}

absl::StatusOr<ReproducePlan> PlanReproduce(const viosim::ScenarioFile& file, const RunRequest& request) {
  ReproducePlan plan;
  const auto& published = file.scenario.published();
  if (published.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.path, ":1:1: field 'published': the file has no published cell, so nothing to reproduce "
                                "(`viosim run` runs its variants)"));
  }
  // Variants in file order, each once, that some published cell names.
  std::vector<std::string> candidates = viosim::VariantNames(file);
  if (candidates.front() != viosim::kBaseVariant) candidates.insert(candidates.begin(), viosim::kBaseVariant);
  for (const std::string& v : candidates) {
    for (const viosim::Published& p : published) {
      if (viosim::SameVariant(p.variant(), v)) {
        plan.variants.push_back(v);
        break;
      }
    }
  }
  if (!plan.variants.empty()) {
    absl::StatusOr<viosim::Scenario> base = viosim::ResolveVariant(file, plan.variants.front(), request.overrides);
    if (!base.ok()) return base.status();
    plan.replicate_seed = base->run().seed() + 1;
  }
  // Pairs of published cells of one metric whose variants differ only in
  // placement switches: the PREDICTION cell is bounded by its partner's
  // locks made ideal.
  std::map<std::string, viosim::Scenario> resolved;
  for (const std::string& v : plan.variants) {
    absl::StatusOr<viosim::Scenario> r = viosim::ResolveVariant(file, v, request.overrides);
    if (!r.ok()) return r.status();
    resolved[v] = *std::move(r);
  }
  for (size_t i = 0; i < static_cast<size_t>(published.size()); ++i) {
    const viosim::Published& c = published[static_cast<int>(i)];
    if (c.role() != viosim::Published::PREDICTION) continue;
    for (size_t j = 0; j < static_cast<size_t>(published.size()); ++j) {
      const viosim::Published& p = published[static_cast<int>(j)];
      if (j == i || p.metric() != c.metric() || viosim::SameVariant(p.variant(), c.variant())) continue;
      const std::string pv = viosim::SameVariant(p.variant(), viosim::kBaseVariant) ? viosim::kBaseVariant : p.variant();
      const std::string cv = viosim::SameVariant(c.variant(), viosim::kBaseVariant) ? viosim::kBaseVariant : c.variant();
      const std::vector<std::string> locks = PlacementResourcesBetween(resolved[cv], resolved[pv]);
      if (locks.empty()) continue;
      size_t run = 0;
      while (run < plan.ideal_runs.size() &&
             !(plan.ideal_runs[run].variant == pv && plan.ideal_runs[run].resources == locks)) {
        ++run;
      }
      if (run == plan.ideal_runs.size()) plan.ideal_runs.push_back({pv, locks});
      plan.pairings.push_back({i, j, run});
      break;  // one partner per cell: the first published
    }
  }
  return plan;
}

RunRequest ReproducePlan::IdealRun::Request(const RunRequest& request) const {
  RunRequest r = request;
  r.options.ideal = resources;
  return r;
}

std::vector<std::string> PlacementResourcesBetween(const viosim::Scenario& a, const viosim::Scenario& b) {
  viosim::Scenario x = a, y = b;
  std::vector<std::string> locks;
  // Every placement switch (a field with the (resource) option) of a
  // message both hold: noted when they differ, then cleared in both.
  std::function<void(google::protobuf::Message*, google::protobuf::Message*)> walk =
      [&](google::protobuf::Message* m, google::protobuf::Message* n) {
        const google::protobuf::Descriptor* d = m->GetDescriptor();
        const google::protobuf::Reflection* r = m->GetReflection();
        for (int k = 0; k < d->field_count(); ++k) {
          const google::protobuf::FieldDescriptor* f = d->field(k);
          if (f->is_repeated()) continue;
          if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
            if (r->HasField(*m, f) && r->HasField(*n, f)) walk(r->MutableMessage(m, f), r->MutableMessage(n, f));
            continue;
          }
          const std::string& lock = f->options().GetExtension(viosim::resource);
          if (lock.empty()) continue;
          if (r->GetEnumValue(*m, f) != r->GetEnumValue(*n, f) &&
              std::find(locks.begin(), locks.end(), lock) == locks.end()) {
            locks.push_back(lock);
          }
          r->ClearField(m, f);
          r->ClearField(n, f);
        }
      };
  walk(&x, &y);
  if (locks.empty() || !google::protobuf::util::MessageDifferencer::Equals(x, y)) return {};
  return locks;
}

absl::StatusOr<Reproduction> Reproduce(const viosim::ScenarioFile& file, const RunRequest& request) {
  absl::StatusOr<ReproducePlan> plan = PlanReproduce(file, request);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<std::vector<viosim::VariantResult>> results = RunVariants(file, plan->variants, request);
  if (!results.ok()) return results.status();
  // The same variants at the next seed: a value that does not move with the
  // seed has no sampling interval worth printing.
  std::vector<viosim::VariantResult> replicates;
  if (!plan->variants.empty()) {
    absl::StatusOr<std::vector<viosim::VariantResult>> r =
        RunVariants(file, plan->variants, plan->Replicate(request));
    if (!r.ok()) return r.status();
    replicates = *std::move(r);
  }
  std::vector<viosim::VariantResult> ideal;
  for (const ReproducePlan::IdealRun& run : plan->ideal_runs) {
    absl::StatusOr<std::vector<viosim::VariantResult>> r = RunVariants(file, {run.variant}, run.Request(request));
    if (!r.ok()) return r.status();
    ideal.push_back(std::move(r->front()));
  }
  return ReproductionOf(file, request, *plan, *std::move(results), replicates, ideal);
}

RunRequest ReproducePlan::Replicate(const RunRequest& request) const {
  RunRequest again = request;
  again.overrides.push_back(absl::StrCat("run.seed=", replicate_seed));
  return again;
}

absl::StatusOr<Reproduction> ReproductionOf(const viosim::ScenarioFile& file, const RunRequest& request,
                                            const ReproducePlan& plan, std::vector<viosim::VariantResult> results,
                                            const std::vector<viosim::VariantResult>& replicates,
                                            const std::vector<viosim::VariantResult>& ideal) {
  Reproduction rep;
  rep.scenario = file.scenario.name();
  rep.path = file.path;
  rep.results = std::move(results);
  const auto& published = file.scenario.published();
  const std::vector<std::string>& variants = plan.variants;
  const uint64_t replicate_seed = plan.replicate_seed;
  absl::flat_hash_map<std::string, size_t> index;
  for (size_t i = 0; i < variants.size(); ++i) index[variants[i]] = i;
  std::vector<size_t> cell_of;  // per cell, its published cell's index
  std::map<std::string, viosim::Scenario> resolved_of;  // each variant as it ran

  for (const std::string& v : variants) {
    const viosim::VariantResult& r = rep.results[index[v]];
    absl::StatusOr<viosim::Scenario> resolved = viosim::ResolveVariant(file, v, request.overrides);
    if (!resolved.ok()) return resolved.status();
    resolved_of[v] = *resolved;
    for (int pi = 0; pi < published.size(); ++pi) {
      const viosim::Published& p = published[pi];
      if (!viosim::SameVariant(p.variant(), v)) continue;
      absl::StatusOr<double> ref = ReferenceValue(p, *resolved);
      if (!ref.ok()) return absl::InvalidArgumentError(absl::StrCat(file.path, ": ", ref.status().message()));
      const sim::MetricEstimate* m = nullptr;
      for (const sim::MetricEstimate& e : r.metrics) {
        if (e.name == p.metric()) m = &e;
      }
      const sim::MetricEstimate* again = nullptr;
      for (const sim::MetricEstimate& e : replicates[index[v]].metrics) {
        if (e.name == p.metric()) again = &e;
      }
      if (m == nullptr) {
        std::string names;
        for (const sim::MetricEstimate& e : r.metrics) absl::StrAppend(&names, names.empty() ? "" : ", ", e.name);
        return absl::InvalidArgumentError(absl::StrCat(file.path, ": published metric '", p.metric(),
                                                       "' is not a metric of variant '", v, "' (metrics: ",
                                                       names, ")"));
      }
      Cell c;
      c.scenario = rep.scenario;
      c.variant = v;
      c.metric = p.metric();
      c.published = *ref;
      c.modeled = m->value;
      c.ci95 = m->ci95;
      c.measured = m->measured;
      c.replicate_seed = replicate_seed;
      c.ci_informative = again == nullptr || again->value != m->value;
      c.error_pct = ErrorPct(c.modeled, c.published);
      c.role = p.role() == viosim::Published::CALIBRATION ? "calibration" : "prediction";
      c.tolerance_pct = p.tolerance_pct();
      c.within = std::fabs(c.error_pct) <= c.tolerance_pct;
      c.source = p.source();
      c.known_gap = p.known_gap();
      if (p.has_expected()) c.expected = p.expected();
      rep.cells.push_back(std::move(c));
      cell_of.push_back(static_cast<size_t>(pi));
    }
  }
  // The effects: each PREDICTION cell over the CALIBRATION cell of its
  // metric whose resolved variant differs from it in the fewest fields.
  {
    for (size_t k = 0; k < rep.cells.size(); ++k) {
      Cell& c = rep.cells[k];
      if (c.role != "prediction" || !c.measured) continue;
      const Cell* best = nullptr;
      int best_diff = 0;
      for (const Cell& p : rep.cells) {
        if (p.role != "calibration" || p.metric != c.metric || p.variant == c.variant || !p.measured) continue;
        const int d = FieldsApart(resolved_of[c.variant], resolved_of[p.variant]);
        if (best == nullptr || d < best_diff) {
          best = &p;
          best_diff = d;
        }
      }
      if (best == nullptr || best->published == 0 || best->modeled == 0) continue;
      Effect e;
      e.partner = best->variant;
      e.published = c.published / best->published;
      e.modeled = c.modeled / best->modeled;
      e.error_pct = 100 * (e.modeled / e.published - 1);
      if (const viosim::Published& p = published[static_cast<int>(cell_of[k])]; p.has_effect_tolerance_pct()) {
        e.tolerance_pct = p.effect_tolerance_pct();
        e.within = std::fabs(e.error_pct) <= *e.tolerance_pct;
      }
      const Comparison g = Compare(rep.results[index[best->variant]], rep.results[index[c.variant]]);
      for (const Gain& x : g.gains) {
        if (x.metric == c.metric && (c.ci_informative || best->ci_informative)) e.ci95 = x.ratio_ci95;
      }
      c.effect = e;
    }
  }
  // The mechanism bounds of the paired PREDICTION cells.
  for (const ReproducePlan::Pairing& pairing : plan.pairings) {
    if (pairing.run >= ideal.size()) continue;
    const auto at = [&](size_t published_index) -> Cell* {
      for (size_t k = 0; k < cell_of.size(); ++k) {
        if (cell_of[k] == published_index) return &rep.cells[k];
      }
      return nullptr;
    };
    Cell* c = at(pairing.cell);
    const Cell* p = at(pairing.partner);
    if (c == nullptr || p == nullptr) continue;
    const sim::MetricEstimate* z = nullptr;
    for (const sim::MetricEstimate& e : ideal[pairing.run].metrics) {
      if (e.name == c->metric) z = &e;
    }
    if (z == nullptr) continue;
    MechanismBound b;
    b.partner = p->variant;
    b.resources = plan.ideal_runs[pairing.run].resources;
    b.published_difference = c->published - p->published;
    b.modeled_difference = c->modeled - p->modeled;
    b.bound = z->value - p->modeled;
    b.beyond = std::fabs(b.published_difference) > std::fabs(b.bound);
    c->mechanism = b;
  }
  return rep;
}

namespace {

bool Agree(const Cell& a, const Cell& b) {
  if (a.metric != b.metric) return false;
  if (a.modeled == b.modeled) return true;
  return a.ci95.has_value() && b.ci95.has_value() && std::fabs(a.modeled - b.modeled) <= *a.ci95 + *b.ci95;
}

}  // namespace

PredictionCount CountPredictions(const std::vector<Cell>& cells) {
  PredictionCount out;
  std::vector<size_t> predictions, calibrations;
  for (size_t i = 0; i < cells.size(); ++i) {
    (cells[i].role == "prediction" ? predictions : calibrations).push_back(i);
  }
  out.prediction_cells = static_cast<int>(predictions.size());
  // Groups in cell order: a cell joins the first group it agrees with.
  std::vector<std::vector<size_t>> groups;
  for (size_t i : predictions) {
    bool joined = false;
    for (auto& g : groups) {
      for (size_t j : g) {
        if (Agree(cells[i], cells[j])) {
          g.push_back(i);
          joined = true;
          break;
        }
      }
      if (joined) break;
    }
    if (!joined) groups.push_back({i});
  }
  double sum = 0, sum_no_gap = 0;
  for (const auto& g : groups) {
    std::optional<size_t> fitted;
    for (size_t i : g) {
      for (size_t k : calibrations) {
        if (!fitted && Agree(cells[i], cells[k])) fitted = k;
      }
    }
    if (fitted) {
      for (size_t i : g) out.repeats_calibration.emplace_back(i, *fitted);
      continue;
    }
    out.independent.push_back(g);
    for (size_t i : g) {
      ++out.cells_in_independent;
      sum += std::fabs(cells[i].error_pct);
      if (cells[i].known_gap.empty()) {
        ++out.cells_no_gap;
        sum_no_gap += std::fabs(cells[i].error_pct);
      }
    }
  }
  if (out.cells_in_independent > 0) out.mae_pct = sum / out.cells_in_independent;
  if (out.cells_no_gap > 0) out.mae_no_gap_pct = sum_no_gap / out.cells_no_gap;
  return out;
}

absl::StatusOr<std::vector<std::string>> ScenarioFiles(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string p = entry.path().string();
    if (absl::EndsWith(p, ".textproto")) paths.push_back(p);
  }
  if (ec) return absl::NotFoundError(absl::StrCat(dir, ": cannot list scenarios: ", ec.message()));
  std::sort(paths.begin(), paths.end());
  return paths;
}

absl::StatusOr<std::vector<std::string>> ScenariosWithPublished(const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> paths = ScenarioFiles(dir);
  if (!paths.ok()) return paths.status();
  std::vector<std::string> out;
  for (const std::string& p : *paths) {
    absl::StatusOr<viosim::ScenarioFile> f = viosim::LoadScenarioFile(p);
    if (!f.ok()) return f.status();
    if (f->scenario.published_size() > 0) out.push_back(p);
  }
  return out;
}

}  // namespace analysis
