#include "analysis/runner.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/published.h"

namespace analysis {

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
  std::vector<absl::StatusOr<viosim::VariantResult>> results(variants.size(),
                                                                absl::UnknownError("not run"));
  viosim::RunOptions options = request.options;
  options.base_dir = std::filesystem::path(file.path).parent_path().string();
  if (options.base_dir.empty()) options.base_dir = ".";
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < variants.size(); i = next++) {
      results[i] = viosim::RunScenario(resolved[i], variants[i], options);
    }
  };
  const int threads = std::max(1, std::min<int>(request.jobs, static_cast<int>(variants.size())));
  if (threads == 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
    for (std::thread& t : pool) t.join();
  }
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

absl::StatusOr<Reproduction> Reproduce(const viosim::ScenarioFile& file, const RunRequest& request) {
  Reproduction rep;
  rep.scenario = file.scenario.name();
  rep.path = file.path;
  const auto& published = file.scenario.published();
  // Variants in file order, each once, that some published cell names.
  std::vector<std::string> variants;
  std::vector<std::string> candidates = viosim::VariantNames(file);
  if (candidates.front() != viosim::kBaseVariant) candidates.insert(candidates.begin(), viosim::kBaseVariant);
  for (const std::string& v : candidates) {
    for (const viosim::Published& p : published) {
      if (viosim::SameVariant(p.variant(), v)) {
        variants.push_back(v);
        break;
      }
    }
  }
  absl::StatusOr<std::vector<viosim::VariantResult>> results = RunVariants(file, variants, request);
  if (!results.ok()) return results.status();
  rep.results = *std::move(results);
  absl::flat_hash_map<std::string, size_t> index;
  for (size_t i = 0; i < variants.size(); ++i) index[variants[i]] = i;

  for (const std::string& v : variants) {
    const viosim::VariantResult& r = rep.results[index[v]];
    absl::StatusOr<viosim::Scenario> resolved = viosim::ResolveVariant(file, v, request.overrides);
    if (!resolved.ok()) return resolved.status();
    for (const viosim::Published& p : published) {
      if (!viosim::SameVariant(p.variant(), v)) continue;
      absl::StatusOr<double> ref = ReferenceValue(p, *resolved);
      if (!ref.ok()) return absl::InvalidArgumentError(absl::StrCat(file.path, ": ", ref.status().message()));
      const sim::MetricEstimate* m = nullptr;
      for (const sim::MetricEstimate& e : r.metrics) {
        if (e.name == p.metric()) m = &e;
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
      if (c.published != 0) {
        c.error_pct = 100.0 * (c.modeled - c.published) / std::fabs(c.published);
      } else {
        c.error_pct = c.modeled == 0 ? 0 : INFINITY;
      }
      c.role = p.role() == viosim::Published::CALIBRATION ? "calibration" : "prediction";
      c.tolerance_pct = p.tolerance_pct();
      c.within = std::fabs(c.error_pct) <= c.tolerance_pct;
      c.source = p.source();
      c.known_gap = p.known_gap();
      rep.cells.push_back(std::move(c));
    }
  }
  return rep;
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
