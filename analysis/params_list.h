// `viosim list --params SCENARIO`: every parameter each variant reads, as
// its stack, workload and run control read it (scenarios/params.h): the
// path `--set` takes, the value with its unit, where the number comes from
// (MEASURED, DERIVED, ESTIMATED, FITTED, DEFINED) and the range a
// prediction band draws it from. The tool's own list of what a what-if can
// change, as sst-info is for an SST component.
#ifndef VIOSIM_ANALYSIS_PARAMS_LIST_H_
#define VIOSIM_ANALYSIS_PARAMS_LIST_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/format.h"
#include "scenarios/loader.h"

namespace analysis {

struct ParamRow {
  std::string path;   // as --set takes it
  std::string value;  // as the variant holds it, durations with their unit
  // MEASURED, DERIVED, ESTIMATED, FITTED or DEFINED; DEFAULT for a field
  // the scenario leaves unset (the profile's or the model's value is used).
  std::string kind;
  std::string source;  // the Source's ref; for a field with no Source, what it is
  // The band's range (drawn values, in the field's unit) and where it comes
  // from; for a FITTED field, the cell it is refitted to instead.
  std::string band_lo, band_hi;
  std::string band_note;
};

struct VariantParams {
  std::string variant;
  std::vector<ParamRow> rows;  // sorted by path
};

// The parameters of `variants` (every variant when empty) with `overrides`.
absl::StatusOr<std::vector<VariantParams>> ListParams(const viosim::ScenarioFile& file,
                                                      const std::vector<std::string>& variants,
                                                      const std::vector<std::string>& overrides);

// Text: a table per variant. JSON: {"scenario", "variants": [{"name",
// "params": [{"path", "value", "kind", "source", "band": {"lo", "hi",
// "note"}}]}]}. CSV: scenario,variant,path,value,kind,band_lo,band_hi,source.
std::string FormatParams(const viosim::ScenarioFile& file, const std::vector<VariantParams>& params, Format format);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_PARAMS_LIST_H_
