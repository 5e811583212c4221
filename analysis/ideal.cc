#include "analysis/ideal.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/json.h"
#include "analysis/reads.h"

namespace analysis {
namespace {

const sim::MetricEstimate* Find(const viosim::VariantResult& r, const std::string& metric) {
  for (const sim::MetricEstimate& m : r.metrics) {
    if (m.name == metric) return &m;
  }
  return nullptr;
}

// The last identifier of a lock's name: "&conf->wait_barrier" is
// "wait_barrier".
std::string ShortName(const std::string& name) {
  size_t at = name.find_last_of(">.&");
  return at == std::string::npos ? name : name.substr(at + 1);
}

absl::StatusOr<viosim::VariantResult> RunWith(const viosim::ScenarioFile& file, const std::string& variant,
                                              const std::vector<std::string>& ideal, const RunRequest& request) {
  absl::StatusOr<viosim::Scenario> resolved = viosim::ResolveVariant(file, variant, request.overrides);
  if (!resolved.ok()) return resolved.status();
  RunRequest r = request;
  r.options.ideal = ideal;
  std::vector<absl::StatusOr<viosim::VariantResult>> out = RunResolved(file, {*resolved}, {variant}, r);
  return std::move(out.front());
}

}  // namespace

absl::StatusOr<std::vector<sim::Simulator::Resource>> ResourcesOf(const viosim::ScenarioFile& file,
                                                                  const std::string& variant,
                                                                  const std::vector<std::string>& overrides) {
  absl::StatusOr<viosim::VariantResult> built = BuildOnly(file, variant, overrides);
  if (!built.ok()) return built.status();
  return built->resources;
}

absl::StatusOr<Bound> BoundOf(const viosim::ScenarioFile& file, const std::string& variant, const std::string& metric,
                              const std::vector<std::string>& resources, const RunRequest& request) {
  Bound b;
  b.resources = resources;
  absl::StatusOr<viosim::VariantResult> plain = RunWith(file, variant, {}, request);
  if (!plain.ok()) return plain.status();
  absl::StatusOr<viosim::VariantResult> ideal = RunWith(file, variant, resources, request);
  if (!ideal.ok()) return ideal.status();
  const sim::MetricEstimate* a = Find(*plain, metric);
  const sim::MetricEstimate* z = Find(*ideal, metric);
  if (a == nullptr || z == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("variant '", variant, "' does not report metric '", metric, "'"));
  }
  b.value = a->value;
  b.ideal_value = z->value;
  b.bound = z->value - a->value;
  return b;
}

absl::StatusOr<IdealExplanation> ExplainIdeal(const viosim::ScenarioFile& file, const std::string& variant_in,
                                              const std::string& metric_in, const std::string& only,
                                              const RunRequest& request) {
  IdealExplanation x;
  x.scenario = file.scenario.name();
  x.variant = variant_in.empty() ? viosim::VariantNames(file).front() : variant_in;
  absl::StatusOr<viosim::Scenario> base = viosim::ResolveVariant(file, x.variant, request.overrides);
  if (!base.ok()) return base.status();
  const std::vector<std::string> metrics = viosim::MetricNames(*base);
  if (metric_in.empty()) {
    x.metric = std::find(metrics.begin(), metrics.end(), "iops") != metrics.end() ? "iops" : metrics.front();
  } else if (std::find(metrics.begin(), metrics.end(), metric_in) == metrics.end()) {
    return absl::InvalidArgumentError(absl::StrCat("--metric '", metric_in, "': not a metric of ", file.path,
                                                   " (metrics: ", absl::StrJoin(metrics, ", "), ")"));
  } else {
    x.metric = metric_in;
  }
  absl::StatusOr<std::vector<sim::Simulator::Resource>> resources = ResourcesOf(file, x.variant, request.overrides);
  if (!resources.ok()) return resources.status();
  std::vector<sim::Simulator::Resource> chosen;
  for (const sim::Simulator::Resource& r : *resources) {
    if (only.empty() || r.name == only) chosen.push_back(r);
  }
  if (chosen.empty()) {
    std::vector<std::string> names;
    for (const sim::Simulator::Resource& r : *resources) names.push_back(r.name);
    return absl::InvalidArgumentError(absl::StrCat("--ideal '", only, "': variant '", x.variant, "' of ", file.path,
                                                   " has no lock or line of that name (it has: ",
                                                   names.empty() ? "none" : absl::StrJoin(names, ", "), ")"));
  }
  // The variant as it is, then one run per resource made ideal.
  std::vector<std::vector<std::string>> ideal_sets = {{}};
  for (const sim::Simulator::Resource& r : chosen) ideal_sets.push_back({r.name});
  std::vector<absl::StatusOr<viosim::VariantResult>> results(ideal_sets.size(), absl::UnknownError("not run"));
  ParallelFor(ideal_sets.size(), request.jobs,
              [&](size_t i) { results[i] = RunWith(file, x.variant, ideal_sets[i], RunRequest{request.overrides,
                                                                                            request.options, 1}); });
  for (const auto& r : results) {
    if (!r.ok()) return r.status();
  }
  x.runs = static_cast<int>(results.size());
  const sim::MetricEstimate* plain = Find(*results[0], x.metric);
  if (plain == nullptr) return absl::InternalError(absl::StrCat("metric '", x.metric, "' not reported"));
  x.value = plain->value;
  x.value_ci95 = plain->ci95;
  for (size_t i = 0; i < chosen.size(); ++i) {
    const viosim::VariantResult& r = *results[i + 1];
    const sim::MetricEstimate* m = Find(r, x.metric);
    if (m == nullptr) return absl::InternalError(absl::StrCat("metric '", x.metric, "' not reported"));
    IdealBound b;
    b.resource = chosen[i].name;
    b.kind = chosen[i].kind;
    b.value = x.value;
    b.ideal_value = m->value;
    b.bound = m->value - x.value;
    b.ideal_ci95 = m->ci95;
    // A lock whose word sits on a hot line the model still moves.
    if (b.kind != "line") {
      if (const sim::MetricEstimate* moves = Find(r, absl::StrCat("xfer_per_io_", ShortName(b.resource)));
          moves != nullptr && moves->value > 0) {
        b.note = absl::StrFormat("its line %s still moves %.3g times per I/O (the model's other accesses to it)",
                                 ShortName(b.resource), moves->value);
      }
    }
    x.ideal.push_back(std::move(b));
  }
  std::stable_sort(x.ideal.begin(), x.ideal.end(),
                   [](const IdealBound& a, const IdealBound& b) { return std::fabs(a.bound) > std::fabs(b.bound); });
  return x;
}

std::string FormatIdeal(const IdealExplanation& x, Format f) {
  if (f == Format::kJson) {
    JsonWriter w;
    w.BeginObject().Key("scenario").String(x.scenario).Key("variant").String(x.variant).Key("metric").String(x.metric);
    w.Key("value").Number(x.value).Key("runs").Int(x.runs).Key("ideal").BeginArray();
    for (const IdealBound& b : x.ideal) {
      w.BeginObject().Key("resource").String(b.resource).Key("kind").String(b.kind).Key("metric").String(x.metric);
      w.Key("value").Number(b.value).Key("ideal_value").Number(b.ideal_value).Key("bound").Number(b.bound);
      w.Key("note").String(b.note).EndObject();
    }
    w.EndArray().EndObject();
    return w.str();
  }
  if (f == Format::kCsv) {
    std::string out = "rank,resource,kind,metric,value,ideal_value,bound,note\n";
    int rank = 0;
    for (const IdealBound& b : x.ideal) {
      absl::StrAppend(&out, ++rank, ",\"", b.resource, "\",", b.kind, ",", x.metric, ",", FormatNumber(b.value), ",",
                      FormatNumber(b.ideal_value), ",", FormatNumber(b.bound), ",\"", b.note, "\"\n");
    }
    return out;
  }
  std::string out = absl::StrFormat(
      "scenario %s, variant %s: the most each lock or line could move %s (%s as it runs), made ideal in turn\n"
      "(taken and released at no cost, never contended, the work under it unchanged; a line served as if in the "
      "CPU's cache)\n\n",
      x.scenario, x.variant, x.metric, FormatNumber(x.value));
  size_t width = 8;
  for (const IdealBound& b : x.ideal) width = std::max(width, b.resource.size());
  absl::StrAppend(&out, absl::StrFormat("  %-*s  %-8s  %14s  %14s  %9s\n", static_cast<int>(width), "resource", "kind",
                                        "ideal", "bound", "bound %"));
  for (const IdealBound& b : x.ideal) {
    const double pct = x.value != 0 ? 100 * b.bound / std::fabs(x.value) : 0;
    absl::StrAppend(&out, absl::StrFormat("  %-*s  %-8s  %14s  %+14.6g  %+8.2f%%\n", static_cast<int>(width),
                                          b.resource, b.kind, FormatNumber(b.ideal_value), b.bound, pct));
    if (!b.note.empty()) absl::StrAppend(&out, "  ", std::string(width, ' '), "  note: ", b.note, "\n");
  }
  absl::StrAppend(&out, "\n", x.runs, " runs\n");
  return out;
}

}  // namespace analysis
