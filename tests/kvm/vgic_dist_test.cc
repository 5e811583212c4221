// The vGIC distributor lock (models/kvm/kvm.h): every exit's sync and
// entry's flush hold it inside the exit's halves, in arrival order, and a
// vCPU spinning for a guest ticket lock traps its WFEs, two more holds per
// trap, which delay the holders that arrive behind them.
#include <cstdint>

#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/kvm/kvm.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"
#include "tests/cpu/machine.h"

namespace models {
namespace {

using sim::Time;

KvmCosts Costs(Time wfe_trap) {
  KvmCosts c;
  c.mmio_exit_user.value = Time::Micros(4);
  c.vgic_dist_hold.value = Time::Micros(1);
  c.wfe_trap.value = wfe_trap;
  return c;
}

sim::Task Nothing() { co_return; }

// One userspace exit of vCPU 0 from 0.5us, its handler free; returns when
// it ended, with the KVM counters.
struct Outcome {
  Time ended;
  uint64_t wfe_exits = 0;
  LockStat dist;
};
Outcome ExitBesideASpinner(bool spinner) {
  testbed::Machine m(2, SchedCosts(), "vcpu");
  Kvm kvm(m.sim, Costs(Time::Micros(4)));
  uint64_t generation = 1;
  Outcome out;
  if (spinner) m.sim.Spawn(kvm.WhileSpinning(&generation, 1));
  m.sim.Spawn([](sim::Simulator& s, Kvm& k, Cpu& vcpu, Time& ended) -> sim::Task {
    co_await s.Delay(Time::Nanos(500));
    co_await k.MmioExitUser(vcpu, ExitKind::kMmioNotify, Nothing());
    ended = s.Now();
  }(m.sim, kvm, m.cpu(0), out.ended));
  m.sim.Spawn([](sim::Simulator& s, uint64_t& g) -> sim::Task {
    co_await s.Delay(Time::Micros(20));
    ++g;  // the spinner has the lock
  }(m.sim, generation));
  m.sim.RunUntil(Time::Micros(100));
  out.wfe_exits = kvm.stats().exits[static_cast<int>(ExitKind::kWfe)];
  out.dist = kvm.dist_stat();
  return out;
}

TEST(VgicDist, AnExitAloneHoldsTheLockInsideItsHalves) {
  const Outcome o = ExitBesideASpinner(false);
  EXPECT_EQ(o.ended, Time::Nanos(4500));  // 0.5 + 4: the holds are part of the round trip
  EXPECT_EQ(o.dist.acquisitions, 2u);     // the sync on the way out, the flush on the way in
  EXPECT_EQ(o.dist.contentions, 0u);
  EXPECT_EQ(o.wfe_exits, 0u);
}

// The spinner's first trap syncs at 1us (held to 2us); our sync, asked at
// 1.5us, holds 2-3us; the spinner's flush, asked at 2us, 3-4us; ours, asked
// at 3us, 4-5us; then the last 1us of our way in: 6us. The spinner traps
// again every 4us (at 6, 10, 14, 18us) until it has the lock at 20us.
TEST(VgicDist, ATrappingSpinnerDelaysAnExitOnTheLock) {
  const Outcome o = ExitBesideASpinner(true);
  EXPECT_EQ(o.ended, Time::Micros(6));
  EXPECT_EQ(o.wfe_exits, 5u);
  EXPECT_EQ(o.dist.acquisitions, 12u);
  EXPECT_EQ(o.dist.contentions, 3u);
  EXPECT_EQ(o.dist.wait.sum(), static_cast<double>(Time::Nanos(2500).ps()));
}

}  // namespace
}  // namespace models
