// What a run's variants read, and the what-ifs that would change nothing.
//
// A `--set`, `--over`, `--fit` or `--refit` path names one scalar of the
// scenario schema, which holds every model's parameters; a variant's
// stack and workload read only some of them (scenarios/params.h records
// which, as each variant is built). A path that no variant of the run
// reads would come back unchanged with exit 0, so it is refused, naming
// the path, the variants, and the closest paths they do read. Over several
// scenarios (gate, reproduce) a path applies where some variant reads it,
// is left out elsewhere (the output says where), and is refused only when
// no scenario reads it.
#ifndef VIOSIM_ANALYSIS_READS_H_
#define VIOSIM_ANALYSIS_READS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/cost_fields.h"
#include "scenarios/builder.h"
#include "scenarios/loader.h"
#include "scenarios/params.h"

namespace analysis {

// Variant `variant` of `file` with `overrides` resolved and built, nothing
// run: the result holds what it reads and the locks and lines it builds.
absl::StatusOr<viosim::VariantResult> BuildOnly(const viosim::ScenarioFile& file, const std::string& variant,
                                                const std::vector<std::string>& overrides);

// The paths variant `variant` of `file` reads with `overrides` applied
// (the variant is resolved, its stack and workload built, nothing run).
absl::StatusOr<viosim::ReadSet> ReadsOf(const viosim::ScenarioFile& file, const std::string& variant,
                                        const std::vector<std::string>& overrides);

// A path a command line names besides its --set assignments, with the
// flag that names it: {"--over", "platform.cpus"}.
struct NamedPath {
  std::string flag;
  std::string path;
};

// Refuses (InvalidArgument) each run-level --set assignment of `overrides`
// and each of `paths` that none of `variants` (all of the file's when
// empty) reads, with the closest paths they read. File-level assignments
// (variant[...], published[...]) are not checked here.
absl::Status CheckPathsRead(const viosim::ScenarioFile& file, const std::vector<std::string>& variants,
                            const std::vector<std::string>& overrides, const std::vector<NamedPath>& paths = {});

// Only `paths`, with `overrides` applied as the variants are resolved but
// not themselves checked (a fit's field beside a band point's drawn
// values, which other variants read).
absl::Status CheckNamedPathsRead(const viosim::ScenarioFile& file, const std::vector<std::string>& variants,
                                 const std::vector<std::string>& overrides, const std::vector<NamedPath>& paths);

// Refuses each run-level assignment of `overrides` whose path `reads`
// lacks, saying it is not read by `what` ("the stack of FILE for JOB").
absl::Status CheckSetsIn(const viosim::ReadSet& reads, const std::vector<std::string>& overrides,
                         const std::string& what);

// One scenario's share of a command line's --set assignments over several
// scenarios: those it reads (in order, file-level ones kept), and the
// run-level paths it does not read.
struct ScenarioOverrides {
  std::vector<std::string> applied;
  std::vector<std::string> unread;
};

// For each file, the assignments of `overrides` some variant of it reads,
// and a note per path left out somewhere ("--set 'P=V': not read by
// scenarios/x.textproto, scenarios/y.textproto: not applied there").
// InvalidArgument when a run-level path is read by no variant of any file.
struct OverridePlan {
  std::vector<ScenarioOverrides> files;  // in the order of `files`
  std::vector<std::string> notes;
};
absl::StatusOr<OverridePlan> PlanOverrides(const std::vector<const viosim::ScenarioFile*>& files,
                                           const std::vector<std::string>& overrides);

// The costed fields of `resolved` (CostFields) that `reads` holds: the
// list explain and the bands vary.
std::vector<CostField> CostFieldsRead(const viosim::Scenario& resolved, const viosim::ReadSet& reads);

// Up to `n` of `candidates` nearest `path` (edit distance over the whole
// path, then over its last two components), nearest first.
std::vector<std::string> ClosestPaths(const std::string& path, const std::vector<std::string>& candidates,
                                      size_t n = 3);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_READS_H_
