// What it costs to move a contended cache line -- a lock word, a wait
// queue's list head, a shared counter -- from the CPU that wrote it last to
// the CPU that wants it, by the distance between the two (CpuDistance,
// models/cpu/cpu.h). The spinlocks (spinlock.h) charge one such transfer per
// hand-off, from the releasing CPU to the next owner; a CacheLine
// (cache_line.h) charges one per access that finds the line elsewhere.
//
// The platform defaults are one-way hand-offs of a line between two pinned
// threads doing compare-and-swap ping-pong (round trip / 2), the closest
// published proxy for a lock word changing hands. Sources in
// handoff_costs.cc.
#ifndef VIOSIM_MODELS_SYNC_HANDOFF_COSTS_H_
#define VIOSIM_MODELS_SYNC_HANDOFF_COSTS_H_

#include <array>

#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "sim/time.h"

namespace models {

inline constexpr int kCpuDistances = static_cast<int>(CpuDistance::kRemote) + 1;

struct LockHandoffCosts {
  // The line is already in this CPU's own cache (the last writer is this
  // CPU): no transfer, only the access itself.
  Param<sim::Time> same_cpu;
  // SMT siblings: the line moves within one core's private caches.
  Param<sim::Time> same_core;
  // Two cores under one last-level cache (one CCX on AMD Zen, one socket's
  // mesh on Intel Xeon Scalable).
  Param<sim::Time> same_llc;
  // Two LLC domains of one socket (another CCX or CCD on AMD Zen).
  Param<sim::Time> same_socket;
  // Two sockets.
  Param<sim::Time> other_socket;

  // The transfer from `from`'s CPU to `to`'s, by their distance.
  sim::Time Of(CpuDistance d) const;
  sim::Time Between(const Cpu& from, const Cpu& to) const {
    return &from == &to ? same_cpu.value : Of(DistanceOf(from.place(), to.place()));
  }
  // The values indexed by CpuDistance, for a hot path.
  std::array<sim::Time, kCpuDistances> Table() const;

  // One cost whatever the distance (a model without topology); `source`
  // applies to every entry.
  static LockHandoffCosts Uniform(sim::Time t, Source source = {SourceKind::kDefined, "one hand-off cost"});
};

// The distance a line travels from `from` to `to` when its memory is homed
// on socket `home` (-1: not modeled): two LLCs of a socket other than the
// home socket talk through the home socket's directory, so such a pair
// costs what a pair across sockets does (the 2x EPYC matrices show it:
// handoff_costs.cc). Otherwise DistanceOf(from, to).
inline CpuDistance HomedDistance(const CpuPlace& from, const CpuPlace& to, int home) {
  const CpuDistance d = DistanceOf(from, to);
  return home >= 0 && d == CpuDistance::kSocket && from.socket != home ? CpuDistance::kRemote : d;
}

// 2x AMD EPYC 7702 (Rome, Zen 2): four cores per CCX share an L3; a socket
// has sixteen CCXs.
LockHandoffCosts EpycRomeHandoffCosts();
// 2x Intel Xeon Gold 6242 (Cascade Lake): one L3 per socket, on a mesh.
LockHandoffCosts CascadeLakeHandoffCosts();

}  // namespace models

#endif  // VIOSIM_MODELS_SYNC_HANDOFF_COSTS_H_
