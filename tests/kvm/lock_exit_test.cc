// A guest spinlock held across a VM exit (the mechanism of the virtio_blk
// kick-under-vq_lock case), taken with spin_lock_irqsave by tasks on their
// vCPUs: with one vCPU nothing spins; with k waiters behind a holder whose
// exit costs a fixed C, waiter i waits as FIFO ticket order says; an
// interrupt raised on a vCPU in an exit waits for the exit to end.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "models/kvm/kvm.h"
#include "models/sync/spinlock.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"
#include "tests/cpu/machine.h"

namespace models {
namespace {

using sim::Time;

struct Rig {
  Rig(int n, Time exit_cost)
      : m(n, SchedCosts(), "vcpu"),
        sim(m.sim),
        kvm(sim, Costs(exit_cost)),
        lock(sim, "vq_lock", Time::Zero()),
        acquired(n),
        released(n) {}
  static KvmCosts Costs(Time exit_cost) {
    KvmCosts c;
    c.mmio_exit_user.value = exit_cost;
    return c;
  }
  // Runs `body` as a task pinned to vCPU `i`.
  void Start(int i, sim::Task body) {
    tasks.push_back(std::make_unique<Task>("guest" + std::to_string(i), std::vector<int>{i}));
    m.sched.Start(*tasks.back(), std::move(body));
  }
  Cpu& vcpu(int i) { return m.cpu(i); }

  testbed::Machine m;
  sim::Simulator& sim;
  Kvm kvm;
  Spinlock lock;
  std::vector<std::unique_ptr<Task>> tasks;
  std::vector<Time> acquired;
  std::vector<Time> released;
};

// QEMU's emulation of the access, run by the vCPU thread in the exit.
sim::Task Handler(sim::Simulator& sim, Time cost) { co_await sim.Delay(cost); }

// Guest work of `pre`, then spin_lock_irqsave, the QueueNotify exit with the
// lock held, spin_unlock_irqrestore; `times` times.
sim::Task Submitter(Rig& r, Cpu& cpu, Time pre, Time handler, int times) {
  for (int i = 0; i < times; ++i) {
    co_await cpu.Run(pre);
    cpu.LocalIrqSave();
    co_await r.lock.Lock(cpu);
    r.acquired[cpu.id()] = r.sim.Now();
    co_await r.kvm.MmioExitUser(cpu, ExitKind::kMmioNotify, Handler(r.sim, handler));
    r.released[cpu.id()] = r.sim.Now();
    r.lock.UnlockIrqRestore(cpu);
  }
}

TEST(LockExit, OneVcpuNeverSpins) {
  const Time exit_cost = Time::Micros(10), handler = Time::Micros(20), pre = Time::Micros(2);
  const int times = 100;
  Rig r(1, exit_cost);
  r.Start(0, Submitter(r, r.vcpu(0), pre, handler, times));
  r.sim.RunUntil(Time::Millis(100));
  EXPECT_EQ(r.lock.stat().acquisitions, static_cast<uint64_t>(times));
  EXPECT_EQ(r.lock.stat().contentions, 0u);
  EXPECT_EQ(r.vcpu(0).TimeIn(CpuTime::kSpin), Time::Zero());
  // Guest work and exits back to back.
  EXPECT_EQ(r.released[0], (pre + exit_cost + handler) * times);
  EXPECT_EQ(r.vcpu(0).TimeIn(CpuTime::kExit), (exit_cost + handler) * times);
  EXPECT_EQ(r.kvm.stats().exits[static_cast<int>(ExitKind::kMmioNotify)], static_cast<uint64_t>(times));
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
    for (int i = 0; i <= k; ++i) r.Start(i, Submitter(r, r.vcpu(i), Time::Micros(1 + i), handler, 1));
    r.sim.RunUntil(Time::Millis(100));
    Time total_wait;
    for (int i = 0; i <= k; ++i) {
      const Time arrival = Time::Micros(1 + i);
      const Time owns = Time::Micros(1) + c * i;
      EXPECT_EQ(r.acquired[i], owns) << "k=" << k << " vcpu " << i;
      EXPECT_EQ(r.released[i], owns + c);
      EXPECT_EQ(r.vcpu(i).TimeIn(CpuTime::kSpin), owns - arrival) << "k=" << k << " vcpu " << i;
      EXPECT_EQ(r.vcpu(i).TimeIn(CpuTime::kExit), c);
      EXPECT_EQ(r.vcpu(i).IrqOffTime(), owns + c - arrival);
      total_wait += owns - arrival;
    }
    EXPECT_EQ(r.lock.stat().contentions, static_cast<uint64_t>(k));
    EXPECT_EQ(Time::Picos(static_cast<int64_t>(r.lock.stat().wait.sum())), total_wait);
    EXPECT_EQ(r.lock.stat().hold.sum(), static_cast<double>((c * (k + 1)).ps()));
  }
}

// An interrupt handler of 1us raised on `cpu` at `at`.
sim::Task IrqWork(Cpu& cpu, Time* ran_at) {
  co_await cpu.Run(Time::Micros(1));
  *ran_at = cpu.sim().Now();
}
sim::Task RaiseAt(Cpu& cpu, Time at, Time* ran_at) {
  co_await cpu.sim().Delay(at);
  cpu.RaiseIrq(IrqWork(cpu, ran_at));
}

// An exit with interrupts on (released: back in the guest), then 1us of
// guest work.
sim::Task ExitThenWork(Rig& r, Cpu& cpu, Time pre, Time handler, Time* after) {
  co_await cpu.Run(pre);
  co_await r.kvm.MmioExitUser(cpu, ExitKind::kMmioNotify, Handler(r.sim, handler));
  r.released[cpu.id()] = r.sim.Now();
  co_await cpu.Run(Time::Micros(1));
  *after = r.sim.Now();
}

// Nothing else runs on a vCPU while it is out of the guest: an interrupt
// raised meanwhile waits for the exit's end. Under the lock (interrupts
// off) it is taken at the restore that follows the exit; with interrupts
// on, before the guest's next instruction.
TEST(LockExit, InterruptWaitsForTheExitToEnd) {
  const Time exit_cost = Time::Micros(10), handler = Time::Micros(5), pre = Time::Micros(1);
  const Time exit_end = pre + exit_cost + handler;  // the exit runs 1us..16us
  {
    Rig r(1, exit_cost);
    Time irq_done;
    r.Start(0, Submitter(r, r.vcpu(0), pre, handler, 1));
    r.sim.Spawn(RaiseAt(r.vcpu(0), Time::Micros(3), &irq_done));
    r.sim.RunUntil(Time::Millis(100));
    EXPECT_EQ(r.released[0], exit_end);
    EXPECT_EQ(irq_done, exit_end + Time::Micros(1));
  }
  {
    Rig r(1, exit_cost);
    Time irq_done, after;
    r.Start(0, ExitThenWork(r, r.vcpu(0), pre, handler, &after));
    r.sim.Spawn(RaiseAt(r.vcpu(0), Time::Micros(3), &irq_done));
    r.sim.RunUntil(Time::Millis(100));
    // The handler runs as the exit ends, before the guest goes on.
    EXPECT_EQ(irq_done, exit_end + Time::Micros(1));
    EXPECT_EQ(r.released[0], irq_done);
    EXPECT_EQ(after, irq_done + Time::Micros(1));
    EXPECT_EQ(r.vcpu(0).TimeIn(CpuTime::kExit), exit_cost + handler);
  }
}

}  // namespace
}  // namespace models
