// Sharding: a command whose work is a list of independent points (a
// sweep's (value, variant) runs, a refit sweep's values, reproduce's variant
// runs at two seeds and its prediction bands' points) runs any subset of them, writes each point's result as one JSON line, and
// `viosim merge` puts the lines back together into exactly what the whole
// command prints.
//
// A command plugs in with a PointSet factory (see BuildPointSet): the
// points' stable ids, how to run one, and how to render all of them.
#ifndef VIOSIM_ANALYSIS_SHARD_H_
#define VIOSIM_ANALYSIS_SHARD_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analysis/bands.h"
#include "analysis/calibrate.h"
#include "analysis/format.h"
#include "sim/measurement.h"

namespace analysis {

// The binary's version, as `viosim --version` prints it; every part file
// carries it, and merge takes parts of this version only.
inline constexpr char kVersion[] = "viosim 0.1.0";

// "--shard K/N": this shard owns the points whose index i has i % N == K.
struct ShardSpec {
  int k = 0;
  int n = 1;
  bool Owns(size_t index) const { return static_cast<int>(index % static_cast<size_t>(n)) == k; }
};

// Parses "K/N" (decimal, 0 <= K < N). InvalidArgument naming --shard
// otherwise; whether N fits the number of points is checked by RunShard.
absl::StatusOr<ShardSpec> ParseShard(absl::string_view text);

// A command's whole output, and whether it reports a failed check (the
// gate: exit status 1).
struct Rendered {
  std::string text;
  bool check_failed = false;
  std::string note;  // why the check failed, for stderr when the text goes to a file
};

// What a point is, and so which part of PointResult it fills.
enum class PointKind {
  kRun,    // one variant's run: variant and metrics
  kRefit,  // one value of `sweep --refit`: refit
  kBand,   // one point of `reproduce --bands`: band
};

// What one point's run produced.
struct PointResult {
  std::string variant;
  std::vector<sim::MetricEstimate> metrics;
  std::optional<RefitValue> refit;
  std::optional<BandPoint> band;
};

// What a sharded command was asked: enough to plan its points again.
struct Invocation {
  std::string command;                 // "sweep", "reproduce", "gate"
  std::vector<std::string> scenarios;  // paths, as given
  std::vector<std::string> overrides;  // --seed and --set, in order
  // The command's own arguments by name, in a fixed order (e.g. "over",
  // "variant", "metric").
  std::vector<std::pair<std::string, std::vector<std::string>>> args;
};

struct PointSet {
  std::vector<std::string> ids;  // stable and unique, one per point
  std::vector<PointKind> kinds;  // one per point
  // Content hash of each scenario file, in Invocation::scenarios order.
  std::vector<std::string> hashes;
  // Each scenario's seed (its base variant's run.seed after the overrides).
  std::vector<uint64_t> seeds;
  // Runs point `index`; may be called from several threads at once.
  std::function<absl::StatusOr<PointResult>(size_t index)> run;
  // The whole command's output from every point's result, in id order.
  std::function<absl::StatusOr<Rendered>(const std::vector<PointResult>& all, Format f)> render;
};

// Plans the points of `inv` (loading its scenario files and checking
// everything as the command itself would), running nothing. Known
// commands: "sweep" (args "over", "variant", "metric"; with "refit",
// "cell", "range", "tolerance" and "max-iter" one point per value, its
// refit and its variants), "reproduce" (with "bands", "band-seed" and
// "band-passes" also each scenario's band points after its runs), and
// "gate" (reproduce's points; arg "baseline", read when rendering).
// ResourceExhausted as soon as the command is known to name more than
// `max_points` points, before the checks that cost a resolve per point:
// merge passes the number of points its parts hold, so that a few bytes of
// part cannot buy the planning of many points.
absl::StatusOr<PointSet> BuildPointSet(const Invocation& inv,
                                       size_t max_points = std::numeric_limits<size_t>::max());

// One line per point: its id.
std::string ListPoints(const PointSet& set);

// Runs the points `shard` owns on up to `jobs` threads and returns one JSON
// line per point, in index order, each carrying the binary's `version`, the
// invocation, the scenarios' hashes and seeds, the point's index and id and
// its result. InvalidArgument when N exceeds the number of points.
absl::StatusOr<std::string> RunShard(const Invocation& inv, const PointSet& set, const ShardSpec& shard,
                                     int jobs, absl::string_view version);

// `viosim merge`: reads the JSON lines of `files` (each a path and its
// text), checks that they come from one invocation of this `version` on
// unchanged scenario files, and that every point is there exactly once,
// then renders the whole output in format `f`. InvalidArgument naming the
// file, line and field, or the missing and duplicated points.
absl::StatusOr<Rendered> MergeShards(const std::vector<std::pair<std::string, std::string>>& files, Format f,
                                        absl::string_view version);

// 64-bit FNV-1a of `bytes`, as 16 hex digits.
std::string ContentHash(absl::string_view bytes);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_SHARD_H_
