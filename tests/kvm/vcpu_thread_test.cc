// A vCPU's thread looping on KVM_RUN (Kvm::AttachThread, Kvm::RunLoop): in
// the guest it is busy on its host CPU; an exit's host side runs in its
// context there, the world switch's halves with the host's interrupts off
// and the handler's work preemptible, so a thread preempted in its handler
// stretches the exit and stands its vCPU still.
#include "gtest/gtest.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/sched_fair.h"
#include "models/cpu/task.h"
#include "models/kvm/kvm.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {
namespace {

using sim::Time;
using namespace sim::literals;  // NOLINT

// One vCPU, its thread on one host CPU of the fair policy (a woken
// sleeper preempts at once), and another host task that sleeps until
// woken, then runs `other_run` and sleeps again.
struct Rig {
  explicit Rig(Time other_run, Time try_to_wake_up = 0_us, Time irq_kick_exit = 0_us)
      : host(sim, Params()), host0(sim, 0, "host0"), guest(sim), vcpu(sim, 100, "vcpu0") {
    SchedCosts costs;
    costs.context_switch = 1_us;
    costs.try_to_wake_up = try_to_wake_up;
    host0.set_sched_costs(costs);
    host.AddCpu(host0);
    guest.AddCpu(vcpu);
    KvmCosts kc;
    kc.mmio_exit_user.value = 4_us;
    kc.irq_kick_exit.value = irq_kick_exit;
    kvm = std::make_unique<Kvm>(sim, kc);
    kvm->AttachThread(vcpu, thread, host);
    host.Start(other, Other(other_run));
    host.Start(thread, kvm->RunLoop(vcpu));
  }
  static FairParams Params() {
    FairParams p;
    p.wakeup_granularity = 0_us;
    return p;
  }
  sim::Task Other(Time run) {
    while (!woken) {
      other.SetState(Task::State::kInterruptible);
      if (woken) break;
      co_await other.Schedule();
    }
    other.SetState(Task::State::kRunning);
    co_await other.Run(run);
    other_done = sim.Now();
    other.SetState(Task::State::kInterruptible);
    co_await other.Schedule();
  }
  // A timer's interrupt on the host CPU at `at` that wakes `other`.
  sim::Task WakeOtherAt(Time at) {
    co_await sim.Delay(at - sim.Now());
    host0.RaiseIrq([](Rig& r) -> sim::Task {
      r.woken = true;
      co_await r.host.TryToWakeUp(r.other, r.host0);
    }(*this));
  }
  // QEMU's emulation in the thread: `cost` on its CPU.
  sim::Task Emulate(Time cost) { co_await kvm->thread_of(vcpu)->cpu()->Run(cost); }
  // A guest task that makes one exit at `at` whose handler costs `cost`.
  sim::Task ExitAt(Time at, Time cost) {
    co_await sim.Delay(at);
    co_await kvm->MmioExitUser(vcpu, ExitKind::kMmioNotify, Emulate(cost));
    exit_done = sim.Now();
  }

  sim::Simulator sim;
  FairScheduler host;
  Cpu host0;
  PinnedFifoScheduler guest;
  Cpu vcpu;
  std::unique_ptr<Kvm> kvm;
  Task thread{"qemu/vcpu0", {0}};
  Task other{"other", {0}};
  Task guest_task{"guest", {100}};
  bool woken = false;
  Time other_done = Time::Max();
  Time exit_done = Time::Max();
};

TEST(VcpuThreadTest, AnExitOnAnUncontendedThreadTakesItsCosts) {
  Rig r(5_us);
  r.guest.Start(r.guest_task, r.ExitAt(10_us, 10_us));
  r.sim.RunUntil(1_ms);
  EXPECT_EQ(r.exit_done, 10_us + 4_us + 10_us);
  EXPECT_EQ(r.vcpu.TimeIn(CpuTime::kExit), 14_us);
  EXPECT_EQ(r.vcpu.TimeIn(CpuTime::kSteal), 0_us);
  // On the host: the handler's work and the world switch are system time
  // (with the two context switches at the start, `other` in and out, and
  // the thread's switch out when its vCPU, idle, halts).
  EXPECT_EQ(r.host0.TimeIn(CpuTime::kSystem), 10_us + 4_us + 2_us + 1_us);
  EXPECT_EQ(r.kvm->stats().exits[static_cast<int>(ExitKind::kWfi)], 1u);
  EXPECT_EQ(r.kvm->stats().exits[static_cast<int>(ExitKind::kMmioNotify)], 1u);
}

TEST(VcpuThreadTest, AThreadPreemptedInItsHandlerStretchesTheExit) {
  Rig r(20_us);
  r.guest.Start(r.guest_task, r.ExitAt(10_us, 10_us));
  r.sim.Spawn(r.WakeOtherAt(15_us));  // 3 us into the handler's 10
  r.sim.RunUntil(1_ms);
  // The switch to `other` 15-16, its run 16-36, the switch back 36-37;
  // the handler's 7 us left end at 44, the way back in at 46.
  EXPECT_EQ(r.other_done, 36_us);
  EXPECT_EQ(r.exit_done, 46_us);
  EXPECT_EQ(r.vcpu.TimeIn(CpuTime::kSteal), 22_us);
  EXPECT_EQ(r.vcpu.TimeIn(CpuTime::kExit), 14_us);
}

TEST(VcpuThreadTest, TheWorldSwitchIsNotPreempted) {
  Rig r(20_us);
  r.guest.Start(r.guest_task, r.ExitAt(10_us, 10_us));
  r.sim.Spawn(r.WakeOtherAt(11_us));  // in the way out (10-12), interrupts off
  r.sim.RunUntil(1_ms);
  // The timer's interrupt waits for the way out to end (12); `other`
  // preempts the thread when its handler starts: switch 12-13, run 13-33,
  // back 33-34, the handler 34-44, the way in 44-46.
  EXPECT_EQ(r.other_done, 33_us);
  EXPECT_EQ(r.exit_done, 46_us);
  EXPECT_EQ(r.vcpu.TimeIn(CpuTime::kSteal), 22_us);
}

TEST(VcpuThreadTest, AThreadPreemptedAsTheExitEndsHoldsTheGuestUntilItRunsAgain) {
  Rig r(20_us);
  r.guest.Start(r.guest_task, r.ExitAt(10_us, 10_us));
  r.sim.Spawn(r.WakeOtherAt(23_us));  // in the way back in (22-24), interrupts off
  r.sim.RunUntil(1_ms);
  // The timer's interrupt is taken at 24, as the exit ends; `other`
  // preempts the thread back in the guest: switch 24-25, run 25-45, back
  // 45-46. The guest goes on after its exit only then.
  EXPECT_EQ(r.other_done, 45_us);
  EXPECT_EQ(r.exit_done, 46_us);
  EXPECT_EQ(r.vcpu.TimeIn(CpuTime::kSteal), 22_us);
}

TEST(VcpuThreadTest, AThreadPreemptedInTheGuestStandsItsVcpuStill) {
  Rig r(20_us);
  Time done = Time::Max();
  r.guest.Start(r.guest_task, [](Rig& rig, Time* d) -> sim::Task {
    co_await rig.guest_task.Run(100_us);
    *d = rig.sim.Now();
  }(r, &done));
  r.sim.Spawn(r.WakeOtherAt(50_us));
  r.sim.RunUntil(1_ms);
  EXPECT_EQ(done, 100_us + 22_us);
  EXPECT_EQ(r.vcpu.TimeIn(CpuTime::kSteal), 22_us);
  // The thread in the guest is user time on the host: until the guest
  // task ends and its vCPU halts, all but the two switches at the start
  // and the 22 us above.
  EXPECT_EQ(r.host0.TimeIn(CpuTime::kUser), done - 2_us - 22_us);
}

TEST(VcpuThreadTest, AHaltedVcpusThreadSleepsUntilItsInterruptWakesIt) {
  Rig r(5_us, /*try_to_wake_up=*/500_ns, /*irq_kick_exit=*/2_us);
  Time handled = Time::Max();
  r.sim.Spawn([](Rig& rig, Time* at) -> sim::Task {
    co_await rig.sim.Delay(100_us);
    rig.vcpu.RaiseIrq([](Rig& g, Time* t) -> sim::Task {
      co_await g.kvm->IrqKick(g.vcpu);
      *t = g.sim.Now();
    }(rig, at));
  }(r, &handled));
  r.sim.RunUntil(1_ms);
  // Idle from the start, the vCPU halted and its thread slept. At 100 us
  // the interrupt's IPI on the thread's CPU runs try_to_wake_up (0.5 us),
  // the thread is switched in (1 us) and traps back in (half of 2 us): the
  // handler runs at 102.5 us, with no kick exit of its own. Then the vCPU
  // halts again.
  EXPECT_EQ(handled, 102_us + 500_ns);
  EXPECT_EQ(r.kvm->stats().exits[static_cast<int>(ExitKind::kIrqKick)], 0u);
  EXPECT_EQ(r.kvm->stats().exits[static_cast<int>(ExitKind::kWfi)], 2u);
  EXPECT_EQ(r.vcpu.TimeIn(CpuTime::kSteal), 0_us);
  EXPECT_EQ(r.vcpu.TimeIn(CpuTime::kIdle), 1_ms);
}

TEST(VcpuThreadTest, AGuestWakeUpOfATaskOnAHaltedVcpuWakesItsThread) {
  Rig r(5_us, /*try_to_wake_up=*/500_ns, /*irq_kick_exit=*/2_us);
  Cpu vcpu1(r.sim, 101, "vcpu1");  // no thread of its own: never halts
  r.guest.AddCpu(vcpu1);
  Task waker("waker", {101});
  Time ran = Time::Max();
  r.guest.Start(r.guest_task, [](Rig& rig, Time* at) -> sim::Task {
    rig.guest_task.SetState(Task::State::kInterruptible);
    co_await rig.guest_task.Schedule();  // asleep until the waker's wake-up
    *at = rig.sim.Now();
  }(r, &ran));
  r.guest.Start(waker, [](Rig& rig, Task& me) -> sim::Task {
    co_await me.Run(200_us);
    co_await rig.guest.TryToWakeUp(rig.guest_task, *me.cpu());
  }(r, waker));
  r.sim.RunUntil(1_ms);
  // The wake-up asks vcpu0 to reschedule (the guest's IPI): its thread is
  // woken (0.5 us), switched in (1 us), traps back in (1 us), and the task
  // runs.
  EXPECT_EQ(ran, 202_us + 500_ns);
}

}  // namespace
}  // namespace models
