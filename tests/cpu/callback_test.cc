// Callback: both of its forms (the three-word frame and the coroutine) call
// their member function once per resumption, at the times scheduled, and a
// callback returning a handle runs that coroutine at once. InlineCallback
// does the same from a frame inside its owner.
#include "models/cpu/callback.h"

#include <coroutine>
#include <vector>

#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {
namespace {

struct Counter {
  sim::Simulator* sim;
  std::vector<sim::Time> calls;
  void Fire() { calls.push_back(sim->Now()); }
};

// Returns `next` once, then a null handle.
struct Handoff {
  sim::Simulator* sim;
  std::coroutine_handle<> next;
  int calls = 0;
  std::coroutine_handle<> Fire() {
    ++calls;
    return std::exchange(next, {});
  }
};

struct Park {
  std::coroutine_handle<>* slot;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) { *slot = h; }
  void await_resume() const noexcept {}
};

sim::Task Waiter(sim::Simulator& sim, std::coroutine_handle<>* slot, std::vector<sim::Time>* ran) {
  co_await Park{slot};
  ran->push_back(sim.Now());
}

class CallbackTest : public ::testing::TestWithParam<bool> {};

TEST_P(CallbackTest, CallsTheFunctionOncePerResumption) {
  sim::Simulator sim;
  Counter c{&sim, {}};
  Callback cb = Callback::Bind<&Counter::Fire>(&c, /*frame=*/GetParam());
  ASSERT_TRUE(cb.valid());
  sim.ScheduleAt(sim::Time::Micros(3), cb.handle());
  sim.RunUntil(sim::Time::Micros(10));
  sim.ScheduleAt(sim::Time::Micros(12), cb.handle());
  sim.RunUntil(sim::Time::Micros(20));
  sim.Wake(cb.handle());
  sim.RunUntil(sim::Time::Micros(30));
  EXPECT_EQ(c.calls, (std::vector<sim::Time>{sim::Time::Micros(3), sim::Time::Micros(12), sim::Time::Micros(20)}));
}

TEST_P(CallbackTest, AMovedCallbackKeepsItsHandle) {
  sim::Simulator sim;
  Counter c{&sim, {}};
  Callback a = Callback::Bind<&Counter::Fire>(&c, GetParam());
  const std::coroutine_handle<> h = a.handle();
  Callback b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b.handle(), h);
  Callback d;
  d = std::move(b);
  EXPECT_EQ(d.handle(), h);
  sim.ScheduleAt(sim::Time::Micros(1), d.handle());
  sim.RunUntil(sim::Time::Micros(2));
  EXPECT_EQ(c.calls.size(), 1u);
}

TEST_P(CallbackTest, AReturnedHandleRunsAtOnce) {
  sim::Simulator sim;
  std::vector<sim::Time> ran;
  Handoff h{&sim, {}};
  sim.Spawn(Waiter(sim, &h.next, &ran));
  sim.RunUntil(sim::Time::Micros(1));
  ASSERT_TRUE(h.next);
  Callback cb = Callback::Bind<&Handoff::Fire>(&h, GetParam());
  sim.ScheduleAt(sim::Time::Micros(5), cb.handle());
  sim.ScheduleAt(sim::Time::Micros(7), cb.handle());
  sim.RunUntil(sim::Time::Micros(10));
  EXPECT_EQ(h.calls, 2);
  EXPECT_EQ(ran, std::vector<sim::Time>{sim::Time::Micros(5)});
}

// An owner that never moves, its callbacks' frames inside it.
struct Owner {
  explicit Owner(sim::Simulator* s) : counter{s, {}}, handoff{s, {}} {}
  Counter counter;
  Handoff handoff;
  InlineCallback<Counter, &Counter::Fire> fire{&counter};
  InlineCallback<Handoff, &Handoff::Fire> pass{&handoff};
};

TEST(InlineCallbackTest, CallsTheFunctionOncePerResumptionFromInsideItsOwner) {
  sim::Simulator sim;
  Owner o(&sim);
  if constexpr (kCallbackHasFrame) {
    // The handle is the frame's address, inside the owner.
    const auto* at = static_cast<const char*>(o.fire.handle().address());
    EXPECT_GE(at, reinterpret_cast<const char*>(&o));
    EXPECT_LT(at, reinterpret_cast<const char*>(&o + 1));
  }
  EXPECT_EQ(o.fire.handle(), o.fire.handle());
  sim.ScheduleAt(sim::Time::Micros(3), o.fire.handle());
  sim.RunUntil(sim::Time::Micros(10));
  sim.Wake(o.fire.handle());
  sim.RunUntil(sim::Time::Micros(20));
  EXPECT_EQ(o.counter.calls, (std::vector<sim::Time>{sim::Time::Micros(3), sim::Time::Micros(10)}));

  std::vector<sim::Time> ran;
  sim.Spawn(Waiter(sim, &o.handoff.next, &ran));
  sim.RunUntil(sim::Time::Micros(21));
  sim.ScheduleAt(sim::Time::Micros(25), o.pass.handle());
  sim.ScheduleAt(sim::Time::Micros(27), o.pass.handle());
  sim.RunUntil(sim::Time::Micros(30));
  EXPECT_EQ(o.handoff.calls, 2);
  EXPECT_EQ(ran, std::vector<sim::Time>{sim::Time::Micros(25)});
}

INSTANTIATE_TEST_SUITE_P(Forms, CallbackTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Frame" : "Coroutine"; });

}  // namespace
}  // namespace models
