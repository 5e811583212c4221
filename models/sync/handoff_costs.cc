// Line-transfer figures. Both platforms come from the raw core-to-core
// matrices published in the KCORES/core-to-core-latency-plus repository
// (results/*.csv): for every pair of CPUs, the mean time for one CPU's
// compare-and-swap to see the other's, i.e. a ping-pong round trip halved
// (src/bench/cas.rs divides by the round trips and by two). The repository
// prints the matrices only; each figure below is the median over the pairs
// of one kind, taken from the matrix, with the spread of those pairs.
#include "models/sync/handoff_costs.h"

namespace models {

sim::Time LockHandoffCosts::Of(CpuDistance d) const {
  switch (d) {
    case CpuDistance::kSame: return same_cpu.value;
    case CpuDistance::kCore: return same_core.value;
    case CpuDistance::kLlc: return same_llc.value;
    case CpuDistance::kSocket: return same_socket.value;
    case CpuDistance::kRemote: return other_socket.value;
  }
  return other_socket.value;
}

std::array<sim::Time, kCpuDistances> LockHandoffCosts::Table() const {
  std::array<sim::Time, kCpuDistances> t;
  for (int d = 0; d < kCpuDistances; ++d) t[d] = Of(static_cast<CpuDistance>(d));
  return t;
}

LockHandoffCosts LockHandoffCosts::Uniform(sim::Time t, Source source) {
  return LockHandoffCosts{{t, source}, {t, source}, {t, source}, {t, source}, {t, source}};
}

namespace {

constexpr Source kNoTransfer{SourceKind::kDefined,
                             "The last writer is this CPU: the line is in its own cache and does not move; "
                             "what the access itself costs belongs to the caller's work"};

}  // namespace

LockHandoffCosts EpycRomeHandoffCosts() {
  using sim::Time;
  LockHandoffCosts c;
  c.same_cpu = {Time::Zero(), kNoTransfer};
  c.same_core = {Time::Nanos(8),
                 {SourceKind::kDerived,
                  "SMT siblings, median 8 ns: 'Dual AMD EPYC 7302 16-Core Processor by-herver.csv' "
                  "(the EPYC 7702 matrix was taken with SMT off; the 7302 has the same Zen 2 core)"}};
  c.same_llc = {Time::Nanos(25),
                {SourceKind::kDerived,
                 "Cores of one CCX, median 25 ns (24-26): 'Dual AMD EPYC 7702 64-Core Processor "
                 "by-herver.csv', cores 0-3 forming one CCX; nviennot/core-to-core-latency's README "
                 "gives 24 ns inside a CCX of a Threadripper 3960X (Zen 2)"}};
  c.same_socket = {Time::Nanos(132),
                   {SourceKind::kDerived,
                    "Cores on other CCDs of socket 0, median 132 ns (99-141), same 7702 matrix; another "
                    "CCX of the same CCD is 119 ns. On socket 1 the same kind of pair costs 220-234 ns, "
                    "like a cross-socket pair: the bounced line's home node is on socket 0. "
                    "HomedDistance gives such pairs other_socket's cost for a line with a home socket"}};
  c.other_socket = {Time::Nanos(233),
                    {SourceKind::kDerived,
                     "Pairs across the two sockets, median 233 ns (10th percentile 224, 90th 246), "
                     "same 7702 matrix; the 7302 matrix agrees (230 ns)"}};
  return c;
}

LockHandoffCosts CascadeLakeHandoffCosts() {
  using sim::Time;
  LockHandoffCosts c;
  c.same_cpu = {Time::Zero(), kNoTransfer};
  c.same_core = {Time::Nanos(7),
                 {SourceKind::kDerived,
                  "SMT siblings (cpu n and n+32), median 7 ns: 'Dual Intel(R) Xeon Gold 6242 @ 2.8GHz "
                  "by-Concyclics.csv'"}};
  c.same_llc = {Time::Nanos(48),
                {SourceKind::kDerived,
                 "Two cores of one socket, median 48 ns (43-56), same 6242 matrix (socket = (cpu / 16) "
                 "mod 2); nviennot/core-to-core-latency's README gives 48 ns for this CPU too"}};
  c.same_socket = {Time::Nanos(48),
                   {SourceKind::kDerived,
                    "A Cascade Lake socket has a single L3, so no pair of CPUs is at this distance; "
                    "the same-socket figure above stands in"}};
  c.other_socket = {Time::Nanos(141),
                    {SourceKind::kDerived,
                     "Pairs across the two sockets, median 141 ns (134-146), same 6242 matrix; "
                     "nviennot/core-to-core-latency's README gives 136 ns"}};
  return c;
}

}  // namespace models
