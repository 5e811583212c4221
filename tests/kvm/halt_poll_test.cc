// KVM's halt polling (models/kvm/kvm.h): an interrupt kick on a halted
// vCPU is caught by polling while the halt is within the vCPU's window, and
// otherwise pays the wake-up of its sleeping thread; the window adapts as
// 4.18's kvm_vcpu_block does (grow x2 from 10us, shrink to 0, capped at
// halt_poll_ns).
#include <cstdint>
#include <vector>

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

KvmCosts Costs(Time halt_poll_ns, Time vcpu_wake) {
  KvmCosts c;
  c.irq_kick_exit.value = Time::Micros(1);
  c.halt_poll_ns.value = halt_poll_ns;
  c.vcpu_wake.value = vcpu_wake;
  return c;
}

// What each kick saw: when its handler ended and the window after it.
struct Kick {
  Time ended;
  Time window;
};

sim::Task Handler(Kvm& kvm, Cpu& vcpu, Kick& out) {
  co_await kvm.IrqKick(vcpu);
  out.ended = vcpu.sim().Now();
  out.window = kvm.halt_poll_window(vcpu.id());
}

// An idle vCPU (no task: halted from time 0) taking an interrupt at each
// of `at`.
std::vector<Kick> KicksAt(const KvmCosts& costs, const std::vector<Time>& at, KvmStats* stats) {
  testbed::Machine m(1, SchedCosts(), "vcpu");
  Kvm kvm(m.sim, costs);
  std::vector<Kick> kicks(at.size());
  for (size_t i = 0; i < at.size(); ++i) {
    m.sim.Spawn([](sim::Simulator& s, Time when, Kvm& k, Cpu& vcpu, Kick& out) -> sim::Task {
      co_await s.Delay(when);
      vcpu.RaiseIrq(Handler(k, vcpu, out));
    }(m.sim, at[i], kvm, m.cpu(0), kicks[i]));
  }
  m.sim.RunUntil(Time::Millis(1));
  *stats = kvm.stats();
  return kicks;
}

// The first kick finds no window: the thread slept (4us) and the halt of
// 5 + 4us grows the window to 10us. The second, 8us into the next halt,
// is caught by polling. The third, 15us in, is past the window: a wake,
// and the window doubles. The fourth, 300us in, is past halt_poll_ns: a
// wake, and the window falls to 0.
TEST(HaltPoll, TheWindowGrowsCatchesShortHaltsAndShrinksAfterALongOne) {
  KvmStats stats;
  const std::vector<Kick> k = KicksAt(Costs(Time::Micros(200), Time::Micros(4)),
                                      {Time::Micros(5), Time::Micros(18), Time::Micros(34), Time::Micros(339)}, &stats);
  EXPECT_EQ(k[0].ended, Time::Micros(10));
  EXPECT_EQ(k[0].window, Time::Micros(10));
  EXPECT_EQ(k[1].ended, Time::Micros(19));
  EXPECT_EQ(k[1].window, Time::Micros(10));
  EXPECT_EQ(k[2].ended, Time::Micros(39));
  EXPECT_EQ(k[2].window, Time::Micros(20));
  EXPECT_EQ(k[3].ended, Time::Micros(344));
  EXPECT_EQ(k[3].window, Time::Zero());
  EXPECT_EQ(stats.halt_polled, 1u);
  EXPECT_EQ(stats.halt_slept, 3u);
}

// The window never passes halt_poll_ns: halts of 9us each grow it 10, 20,
// 40, capped at 30us.
TEST(HaltPoll, TheWindowIsCappedAtHaltPollNs) {
  KvmStats stats;
  const std::vector<Kick> k =
      KicksAt(Costs(Time::Micros(30), Time::Micros(4)),
              {Time::Micros(5), Time::Micros(30), Time::Micros(60), Time::Micros(100)}, &stats);
  EXPECT_EQ(k[0].window, Time::Micros(10));  // 9us halt, slept
  EXPECT_EQ(k[1].window, Time::Micros(20));  // 20us halt, past 10us: slept, grows
  EXPECT_EQ(k[2].window, Time::Micros(30));  // 25 + 4us: slept, 40 capped at 30
  EXPECT_EQ(k[3].window, Time::Zero());      // 35 + 4us > 30us: shrinks
  EXPECT_EQ(stats.halt_polled, 0u);
}

// Polling off: every kick on the halted vCPU wakes its thread.
TEST(HaltPoll, OffEveryKickWakesTheThread) {
  KvmStats stats;
  const std::vector<Kick> k =
      KicksAt(Costs(Time::Zero(), Time::Micros(4)), {Time::Micros(5), Time::Micros(12)}, &stats);
  EXPECT_EQ(k[0].ended, Time::Micros(10));
  EXPECT_EQ(k[1].ended, Time::Micros(17));
  EXPECT_EQ(k[1].window, Time::Zero());
  EXPECT_EQ(stats.halt_slept, 2u);
}

// Two interrupts at once: the first ends the halt (the thread slept: 4us,
// then the 1us exit); the second was pending when the first's handler
// ended, so the vCPU never halted again: the exit alone, no halt counted.
TEST(HaltPoll, AnInterruptPendingWhenTheLastHandlerEndsIsNoHalt) {
  KvmStats stats;
  const std::vector<Kick> k = KicksAt(Costs(Time::Zero(), Time::Micros(4)), {Time::Micros(5), Time::Micros(5)}, &stats);
  EXPECT_EQ(k[0].ended, Time::Micros(10));
  EXPECT_EQ(k[1].ended, Time::Micros(11));
  EXPECT_EQ(stats.halt_slept, 1u);
  EXPECT_EQ(stats.halt_polled, 0u);
}

// Without vcpu_wake halts are not modeled: the kick costs irq_kick_exit.
TEST(HaltPoll, WithoutAWakeCostAKickIsTheExitAlone) {
  KvmStats stats;
  const std::vector<Kick> k = KicksAt(Costs(Time::Micros(200), Time::Zero()), {Time::Micros(5)}, &stats);
  EXPECT_EQ(k[0].ended, Time::Micros(6));
  EXPECT_EQ(stats.halt_polled + stats.halt_slept, 0u);
}

}  // namespace
}  // namespace models
