// The host's CPUs as linebench sees them: read from sysfs
// (/sys/devices/system/cpu), each pair of CPUs classed by how far a cache
// line travels between them, in the classes viosim's hand-off costs use
// (models/sync/handoff_costs.h): same core (SMT siblings), same last-level
// cache, same socket, other socket. The distance of a CPU to itself is the
// local hit (same_cpu).
#ifndef VIOSIM_BENCH_LINE_TOPOLOGY_H_
#define VIOSIM_BENCH_LINE_TOPOLOGY_H_

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace linebench {

enum class Distance {
  kSameCpu,
  kSameCore,
  kSameLlc,
  kSameSocket,
  kOtherSocket,
  // Two cores of one socket on a host whose sysfs names no level-3 cache for
  // one of them: same_llc or same_socket, which of the two is not known.
  kSameSocketLlcUnknown,
};
inline constexpr int kDistances = static_cast<int>(Distance::kSameSocketLlcUnknown) + 1;
inline constexpr std::array<Distance, kDistances> kAllDistances = {
    Distance::kSameCpu,     Distance::kSameCore,    Distance::kSameLlc,
    Distance::kSameSocket,  Distance::kOtherSocket, Distance::kSameSocketLlcUnknown};

// "same_cpu", "same_core", "same_llc", "same_socket", "other_socket" (the
// scenario's field names) and "llc_unknown".
const char* DistanceName(Distance d);

struct CpuInfo {
  int cpu = 0;
  int socket = 0;                 // topology/physical_package_id
  int core = 0;                   // topology/core_id (unique within a socket)
  std::vector<int> siblings;      // topology/thread_siblings_list (itself included)
  int llc = -1;                   // lowest CPU of the L3's shared_cpu_list; -1: none reported
};

struct Topology {
  std::vector<CpuInfo> cpus;  // ascending by CPU number
  std::string model;          // /proc/cpuinfo "model name", or "unknown CPU"

  const CpuInfo& Of(int cpu) const;
  Distance Between(int a, int b) const;
  int Sockets() const;
  // Distinct LLC domains among the CPUs that report one.
  int Llcs() const;
  bool LlcKnown() const;  // every CPU reports an L3
  bool Smt() const;       // some CPU has a sibling among `cpus`
};

// A kernel CPU list ("0-3,8,10-11") as its CPUs, ascending, no duplicates.
// `what` names the text in errors.
absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text, absl::string_view what);

// Reads `root` (normally /sys/devices/system/cpu): the online CPUs and, for
// each, its package, core, siblings and L3. `only` (empty: all online CPUs)
// restricts the result to those CPUs, each of which must be online. Siblings
// outside the selection are dropped. Errors name the file.
absl::StatusOr<Topology> ReadTopology(const std::string& root, const std::vector<int>& only);

// Every unordered pair {a, b}, a < b, of the topology's CPUs, by distance.
std::array<std::vector<std::pair<int, int>>, kDistances> PairsByDistance(const Topology& topo);

// The order CPUs are taken in for N threads: "llc-local" fills one LLC (one
// core per CPU first, then their siblings) before the next, one socket
// before the next; "spread" takes a CPU of each LLC in turn, alternating
// sockets. The first N of the order are the CPUs of an N-thread run.
std::vector<int> PlacementOrder(const Topology& topo, absl::string_view placement);

}  // namespace linebench

#endif  // VIOSIM_BENCH_LINE_TOPOLOGY_H_
