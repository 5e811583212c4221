// A lock's holds in the trace: a hold still in progress when a traced run
// ends is drawn up to its end (Simulator::CloseTraceSlices), as a CPU's
// state is, and a trace source outlives or predeceases its simulator
// without harm.
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/sync/spinlock.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "tests/sync/holder.h"
#include "tests/sync/machine.h"

namespace models {
namespace {

using sim::Time;
using testing::HasSubstr;
using testing::Not;
using namespace sim::literals;  // NOLINT

TEST(LockTraceTest, AHoldInProgressWhenTheRunEndsIsDrawnToItsEnd) {
  sim::TraceWriter trace;
  Machine m(TwoSocketPlaces());
  Spinlock lock(m.sim, "still_held", 10_ns);
  Got got;
  StartHolder(m, &lock, 0, 10_us, 1000_us, &got);  // takes it at 10us, keeps it past the end
  m.sim.set_trace(&trace);
  m.sim.RunUntil(50_us);
  ASSERT_TRUE(lock.locked());
  EXPECT_THAT(trace.Finish(), Not(HasSubstr("still_held")));
  m.sim.CloseTraceSlices();
  EXPECT_THAT(trace.Finish(),
              HasSubstr(R"({"name":"still_held","cat":"lock","ph":"X","ts":10.000000,"dur":40.000000,"pid":1,"tid":0)"));
}

TEST(LockTraceTest, AHoldEndedBeforeTheRunEndsIsDrawnOnce) {
  sim::TraceWriter trace;
  Machine m(TwoSocketPlaces());
  Spinlock lock(m.sim, "released", 10_ns);
  Got got;
  StartHolder(m, &lock, 0, 10_us, 5_us, &got);
  m.sim.set_trace(&trace);
  m.sim.RunUntil(50_us);
  m.sim.CloseTraceSlices();
  const std::string json = trace.Finish();
  const size_t first = json.find(R"("name":"released")");
  ASSERT_NE(first, std::string::npos) << json;
  EXPECT_EQ(json.find(R"("name":"released")", first + 1), std::string::npos) << json;
}

TEST(LockTraceTest, ASourceAndItsSimulatorMayEndInEitherOrder) {
  auto sim = std::make_unique<sim::Simulator>();
  auto first = std::make_unique<Spinlock>(*sim, "a", 10_ns);
  auto second = std::make_unique<Spinlock>(*sim, "b", 10_ns);
  auto third = std::make_unique<Spinlock>(*sim, "c", 10_ns);
  second.reset();  // unlinked from the middle
  sim->CloseTraceSlices();
  sim.reset();     // the simulator first
  first.reset();   // then sources that outlived it
  third.reset();
}

}  // namespace
}  // namespace models
