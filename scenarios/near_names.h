// Names near a misspelt one, for "did you mean" in error messages.
#ifndef VIOSIM_SCENARIOS_NEAR_NAMES_H_
#define VIOSIM_SCENARIOS_NEAR_NAMES_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace viosim {

// The Levenshtein distance: single-character insertions, deletions and
// substitutions turning `a` into `b`.
size_t EditDistance(absl::string_view a, absl::string_view b);

// Up to `n` of `candidates` within `max_distance` edits of `name`, nearest
// first (ties in the candidates' order).
std::vector<std::string> NearNames(absl::string_view name, const std::vector<std::string>& candidates, size_t n,
                                   size_t max_distance);

}  // namespace viosim

#endif  // VIOSIM_SCENARIOS_NEAR_NAMES_H_
