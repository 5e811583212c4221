// What shard.cc, shard_lines.cc and the commands' point factories
// (sweep_points.cc, reproduce_points.cc) share: the helpers that plan a
// command's points from its Invocation, the factories BuildPointSet
// dispatches to, and the writing and reading of a point's line.
#ifndef VIOSIM_ANALYSIS_SHARD_INTERNAL_H_
#define VIOSIM_ANALYSIS_SHARD_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "analysis/bands.h"
#include "analysis/json_value.h"
#include "analysis/runner.h"
#include "analysis/shard.h"
#include "scenarios/loader.h"

namespace analysis {

// ---- The commands' points (shard.cc) ----

// Loads a scenario as the commands do (file-level --set applied) with its
// content hash and its seed.
struct Loaded {
  viosim::ScenarioFile file;
  std::string hash;
  uint64_t seed = 0;
};

absl::StatusOr<Loaded> Load(const std::string& path, const std::vector<std::string>& overrides);
std::vector<std::string> ArgOf(const Invocation& inv, absl::string_view name);
viosim::VariantResult AsResult(const PointResult& p);
absl::StatusOr<std::string> OneArg(const Invocation& inv, absl::string_view name, absl::string_view flag);

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

absl::Status TooManyPoints(size_t named, size_t max_points);

// ---- The commands' point factories, which BuildPointSet dispatches to ----

// sweep_points.cc
absl::StatusOr<PointSet> SweepPoints(const Invocation& inv, size_t max_points);

// reproduce_points.cc
absl::StatusOr<PointSet> ReproducePoints(const Invocation& inv, const std::optional<std::string>& baseline,
                                         const std::optional<BandSpec>& bands, size_t max_points);

// ---- A point's line (shard_lines.cc) ----

// The fields every line of one run shares, in the order written; `merge`
// requires each to be the same text on every line.
constexpr const char* kSharedFields[] = {"viosim", "command", "scenarios", "overrides", "args", "points"};

std::string SharedPrefix(const Invocation& inv, const PointSet& set, absl::string_view version);
std::string PointLine(absl::string_view prefix, const ShardSpec& shard, size_t index, const std::string& id,
                      PointKind kind, const PointResult& r);
absl::Status ReadInvocation(const JsonValue& line, Invocation* inv, std::vector<std::string>* hashes,
                            std::vector<uint64_t>* seeds);
const JsonValue* Member(const JsonValue& v, absl::string_view key, JsonValue::Kind kind);
absl::StatusOr<PointResult> ReadResult(const JsonValue& line, PointKind kind);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_SHARD_INTERNAL_H_
