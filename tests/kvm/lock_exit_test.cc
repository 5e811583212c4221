// A guest spinlock held across a VM exit, on Exec-driven vCPUs (the
// mechanism of the virtio_blk kick-under-vq_lock case): with one vCPU
// nothing spins; with k waiters behind a holder whose exit costs a fixed C,
// waiter i waits as FIFO ticket order says.
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/kvm/kvm.h"
#include "models/sync/spinlock.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {
namespace {

using sim::Time;

struct Rig {
  explicit Rig(int n, Time exit_cost) : kvm(sim, Costs(exit_cost)), lock(sim, "vq_lock", Time::Zero()) {
    for (int i = 0; i < n; ++i) cpus.push_back(std::make_unique<Cpu>(sim, i, "vcpu"));
  }
  static KvmCosts Costs(Time exit_cost) {
    KvmCosts c;
    c.mmio_exit_user.value = exit_cost;
    return c;
  }
  sim::Simulator sim;
  Kvm kvm;
  Spinlock lock;
  std::vector<std::unique_ptr<Cpu>> cpus;
  std::vector<Time> acquired;
  std::vector<Time> released;
};

sim::Task Handler(sim::Simulator& sim, Time cost) { co_await sim.Delay(cost); }

sim::Task Locked(Rig& r, Cpu& cpu, Time handler) {
  co_await r.lock.Lock(cpu);
  cpu.SetState(CpuState::kRunning);
  r.acquired[cpu.id()] = r.sim.Now();
  co_await r.kvm.MmioExitUser(cpu, ExitKind::kMmioNotify, Handler(r.sim, handler));
  r.released[cpu.id()] = r.sim.Now();
  r.lock.Unlock(cpu);
}

// Guest work of `pre`, then the lock held across one exit.
sim::Task Submitter(Rig& r, Cpu& cpu, Time pre, Time handler, int times) {
  for (int i = 0; i < times; ++i) {
    co_await cpu.Exec(pre);
    co_await HeldRegion(cpu, Locked(r, cpu, handler));
  }
}

TEST(LockExit, OneVcpuNeverSpins) {
  Rig r(1, Time::Micros(10));
  r.acquired.resize(1);
  r.released.resize(1);
  r.sim.Spawn(Submitter(r, *r.cpus[0], Time::Micros(2), Time::Micros(20), 100));
  r.sim.RunUntil(Time::Millis(100));
  EXPECT_EQ(r.lock.stat().acquisitions, 100u);
  EXPECT_EQ(r.lock.stat().contentions, 0u);
  EXPECT_EQ(r.cpus[0]->TimeIn(CpuState::kSpinning), Time::Zero());
  // 100 x (2us guest + 30us in the exit).
  EXPECT_EQ(r.released[0], Time::Micros(3200));
  EXPECT_EQ(r.cpus[0]->TimeIn(CpuState::kExit), Time::Micros(3000));
  EXPECT_EQ(r.kvm.stats().exits[0], 100u);
}

// The holder takes the lock at t = 1us and keeps it for the exit, whose
// cost C = exit + handler is fixed; k waiters arrive at 2us, 3us, ... and
// are served in ticket order: waiter i owns the lock at 1us + i*C and has
// spun from its arrival until then, with interrupts off throughout.
TEST(LockExit, WaitersSpinInFifoOrderAcrossTheExit) {
  for (int k : {1, 2, 3}) {
    const Time exit_cost = Time::Micros(10);
    const Time handler = Time::Micros(15);
    const Time c = exit_cost + handler;
    Rig r(k + 1, exit_cost);
    r.acquired.resize(k + 1);
    r.released.resize(k + 1);
    for (int i = 0; i <= k; ++i) {
      r.sim.Spawn(Submitter(r, *r.cpus[i], Time::Micros(1 + i), handler, 1));
    }
    r.sim.RunUntil(Time::Millis(100));
    Time total_wait;
    for (int i = 0; i <= k; ++i) {
      const Time arrival = Time::Micros(1 + i);
      const Time owns = Time::Micros(1) + c * i;
      EXPECT_EQ(r.acquired[i], owns) << "k=" << k << " vcpu " << i;
      EXPECT_EQ(r.released[i], owns + c);
      EXPECT_EQ(r.cpus[i]->TimeIn(CpuState::kSpinning), owns - arrival) << "k=" << k << " vcpu " << i;
      EXPECT_EQ(r.cpus[i]->TimeIn(CpuState::kExit), c);
      EXPECT_EQ(r.cpus[i]->IrqOffTime(), owns + c - arrival);
      total_wait += owns - arrival;
    }
    EXPECT_EQ(r.lock.stat().contentions, static_cast<uint64_t>(k));
    EXPECT_EQ(Time::Picos(static_cast<int64_t>(r.lock.stat().wait.sum())), total_wait);
    EXPECT_EQ(r.lock.stat().hold.sum(), static_cast<double>((c * (k + 1)).ps()));
  }
}

// Nothing else runs on a vCPU while it is in a held region: interrupt work
// raised meanwhile waits for its end.
sim::Task Irq(Rig& r, Cpu& cpu, Time at, Time* ran_at) {
  co_await r.sim.Delay(at);
  co_await cpu.ExecIrq(Time::Micros(1));
  *ran_at = r.sim.Now();
}

TEST(LockExit, InterruptWaitsForTheExitToEnd) {
  Rig r(1, Time::Micros(10));
  r.acquired.resize(1);
  r.released.resize(1);
  Time irq_done;
  r.sim.Spawn(Submitter(r, *r.cpus[0], Time::Micros(1), Time::Micros(5), 1));
  r.sim.Spawn(Irq(r, *r.cpus[0], Time::Micros(3), &irq_done));
  r.sim.RunUntil(Time::Millis(100));
  // The exit runs 1us..16us; the interrupt raised at 3us runs 16us..17us.
  EXPECT_EQ(r.released[0], Time::Micros(16));
  EXPECT_EQ(irq_done, Time::Micros(17));
}

}  // namespace
}  // namespace models
