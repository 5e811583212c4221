#include "analysis/reads.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "scenarios/near_names.h"

namespace analysis {
namespace {

// The last two components of a path ("mmio_exit_user.value").
std::string Tail(absl::string_view path) {
  std::vector<absl::string_view> parts = absl::StrSplit(path, '.');
  if (parts.size() <= 2) return std::string(path);
  return absl::StrCat(parts[parts.size() - 2], ".", parts.back());
}

std::string Quoted(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (const std::string& n : names) q.push_back(absl::StrCat("'", n, "'"));
  return absl::StrJoin(q, ", ");
}

// What the run's variants read, and which of them.
struct Reads {
  viosim::ReadSet all;
  std::vector<std::string> variants;
};

absl::StatusOr<Reads> ReadsOfAll(const viosim::ScenarioFile& file, const std::vector<std::string>& variants,
                                 const std::vector<std::string>& overrides) {
  Reads r;
  r.variants = variants.empty() ? viosim::VariantNames(file) : variants;
  for (const std::string& v : r.variants) {
    absl::StatusOr<viosim::ReadSet> one = ReadsOf(file, v, overrides);
    if (!one.ok()) return one.status();
    r.all.Merge(*one);
  }
  return r;
}

std::string NotRead(const viosim::ScenarioFile& file, const Reads& reads, absl::string_view what,
                    const std::string& path) {
  const std::vector<std::string> read(reads.all.paths().begin(), reads.all.paths().end());
  const std::vector<std::string> near = ClosestPaths(path, read);
  return absl::StrCat(what, ": field '", path, "' is not read by ",
                      reads.variants.size() == 1 ? "variant " : "variants ", Quoted(reads.variants), " of ",
                      file.path, ", so setting it would change nothing",
                      near.empty() ? "" : absl::StrCat("; did you mean ", absl::StrJoin(near, ", or "), "?"),
                      " (`viosim list --params ", file.path, "` lists every path each variant reads)");
}

absl::Status CheckReads(const viosim::ScenarioFile& file, const std::vector<std::string>& variants,
                        const std::vector<std::string>& overrides, const std::vector<NamedPath>& paths,
                        bool check_sets);

}  // namespace

std::vector<CostField> CostFieldsRead(const viosim::Scenario& resolved, const viosim::ReadSet& reads) {
  std::vector<CostField> out;
  for (CostField& f : CostFields(resolved)) {
    if (reads.Contains(f.path)) out.push_back(std::move(f));
  }
  return out;
}

std::vector<std::string> ClosestPaths(const std::string& path, const std::vector<std::string>& candidates, size_t n) {
  std::vector<std::tuple<size_t, size_t, std::string>> scored;
  const std::string tail = Tail(path);
  for (const std::string& c : candidates) {
    scored.emplace_back(viosim::EditDistance(path, c), viosim::EditDistance(tail, Tail(c)), c);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && out.size() < n; ++i) out.push_back(std::get<2>(scored[i]));
  return out;
}

absl::StatusOr<viosim::ReadSet> ReadsOf(const viosim::ScenarioFile& file, const std::string& variant,
                                        const std::vector<std::string>& overrides) {
  absl::StatusOr<viosim::VariantResult> built = BuildOnly(file, variant, overrides);
  if (!built.ok()) return built.status();
  return std::move(built->reads);
}

absl::StatusOr<viosim::VariantResult> BuildOnly(const viosim::ScenarioFile& file, const std::string& variant,
                                                const std::vector<std::string>& overrides) {
  absl::StatusOr<viosim::Scenario> resolved = viosim::ResolveVariant(file, variant, overrides);
  if (!resolved.ok()) return resolved.status();
  viosim::RunOptions options;
  options.build_only = true;
  options.base_dir = std::filesystem::path(file.path).parent_path().string();
  if (options.base_dir.empty()) options.base_dir = ".";
  absl::StatusOr<viosim::VariantResult> built = viosim::RunScenario(*resolved, variant, options);
  if (!built.ok()) {
    return absl::Status(built.status().code(),
                        absl::StrCat(file.path, ": variant '", variant, "': ", built.status().message()));
  }
  return built;
}

absl::Status CheckNamedPathsRead(const viosim::ScenarioFile& file, const std::vector<std::string>& variants,
                                 const std::vector<std::string>& overrides, const std::vector<NamedPath>& paths) {
  return CheckReads(file, variants, overrides, paths, /*check_sets=*/false);
}

absl::Status CheckPathsRead(const viosim::ScenarioFile& file, const std::vector<std::string>& variants,
                            const std::vector<std::string>& overrides, const std::vector<NamedPath>& paths) {
  return CheckReads(file, variants, overrides, paths, /*check_sets=*/true);
}

namespace {
absl::Status CheckReads(const viosim::ScenarioFile& file, const std::vector<std::string>& variants,
                        const std::vector<std::string>& overrides, const std::vector<NamedPath>& paths,
                        bool check_sets) {
  bool any = !paths.empty();
  for (const std::string& a : overrides) any = any || (check_sets && !viosim::IsFileLevelOverride(a));
  if (!any) return absl::OkStatus();
  absl::StatusOr<Reads> reads = ReadsOfAll(file, variants, overrides);
  if (!reads.ok()) return reads.status();
  std::vector<std::string> errors;
  for (const std::string& a : overrides) {
    if (!check_sets || viosim::IsFileLevelOverride(a)) continue;
    const std::string path = viosim::AssignmentPath(a);
    if (!reads->all.Contains(path)) errors.push_back(NotRead(file, *reads, absl::StrCat("--set '", a, "'"), path));
  }
  for (const NamedPath& p : paths) {
    if (viosim::IsFileLevelOverride(p.path)) continue;
    const std::string path = viosim::AssignmentPath(p.path);
    if (!reads->all.Contains(path)) errors.push_back(NotRead(file, *reads, absl::StrCat(p.flag, " '", path, "'"), path));
  }
  if (errors.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
}
}  // namespace

absl::Status CheckSetsIn(const viosim::ReadSet& reads, const std::vector<std::string>& overrides,
                         const std::string& what) {
  const std::vector<std::string> read(reads.paths().begin(), reads.paths().end());
  std::vector<std::string> errors;
  for (const std::string& a : overrides) {
    if (viosim::IsFileLevelOverride(a)) continue;
    const std::string path = viosim::AssignmentPath(a);
    if (reads.Contains(path)) continue;
    const std::vector<std::string> near = ClosestPaths(path, read);
    errors.push_back(absl::StrCat("--set '", a, "': field '", path, "' is not read by ", what,
                                  ", so setting it would change nothing",
                                  near.empty() ? "" : absl::StrCat("; did you mean ", absl::StrJoin(near, ", or "), "?")));
  }
  if (errors.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
}

absl::StatusOr<OverridePlan> PlanOverrides(const std::vector<const viosim::ScenarioFile*>& files,
                                           const std::vector<std::string>& overrides) {
  OverridePlan plan;
  std::vector<std::string> run_level;
  for (const std::string& a : overrides) {
    if (!viosim::IsFileLevelOverride(a)) run_level.push_back(a);
  }
  if (run_level.empty()) {  // nothing to look up
    plan.files.assign(files.size(), ScenarioOverrides{overrides, {}});
    return plan;
  }
  // Per assignment, the files that do not read its path.
  std::vector<std::vector<std::string>> unread_in(overrides.size());
  for (const viosim::ScenarioFile* file : files) {
    ScenarioOverrides mine;
    viosim::ReadSet all;
    for (const std::string& v : viosim::VariantNames(*file)) {
      // The assignments this variant can take: not into another stack or
      // workload kind than it has.
      absl::StatusOr<viosim::Scenario> plain = viosim::ResolveVariant(*file, v, {});
      if (!plain.ok()) return plain.status();
      std::vector<std::string> fits;
      for (const std::string& a : overrides) {
        if (viosim::IsFileLevelOverride(a) || !viosim::OneofMemberHeld(*plain, viosim::AssignmentPath(a))) {
          fits.push_back(a);
        }
      }
      absl::StatusOr<viosim::ReadSet> reads = ReadsOf(*file, v, fits);
      if (!reads.ok()) return reads.status();
      all.Merge(*reads);
    }
    for (size_t i = 0; i < overrides.size(); ++i) {
      const std::string& a = overrides[i];
      if (viosim::IsFileLevelOverride(a) || all.Contains(viosim::AssignmentPath(a))) {
        mine.applied.push_back(a);
      } else {
        mine.unread.push_back(viosim::AssignmentPath(a));
        unread_in[i].push_back(file->path);
      }
    }
    plan.files.push_back(std::move(mine));
  }
  std::vector<std::string> errors;
  for (size_t i = 0; i < overrides.size(); ++i) {
    if (unread_in[i].empty()) continue;
    const std::string& a = overrides[i];
    if (unread_in[i].size() == files.size()) {
      errors.push_back(absl::StrCat("--set '", a, "': field '", viosim::AssignmentPath(a),
                                    "' is read by no variant of ", absl::StrJoin(unread_in[i], ", "),
                                    ", so setting it would change nothing (`viosim list --params FILE` lists "
                                    "every path each variant reads)"));
    } else {
      plan.notes.push_back(absl::StrCat("--set '", a, "': not read by ", absl::StrJoin(unread_in[i], ", "),
                                        ": not applied there"));
    }
  }
  if (!errors.empty()) return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  return plan;
}

}  // namespace analysis
