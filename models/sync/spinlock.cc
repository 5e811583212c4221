#include "models/sync/spinlock.h"

#include <utility>

#include "sim/trace.h"

namespace models {

void LockStat::Reset() {
  acquisitions = contentions = acq_bounces = con_bounces = 0;
  wait.Reset();
  hold.Reset();
}

Spinlock::Spinlock(sim::Simulator& sim, std::string name, sim::Time handoff)
    : sim_(&sim), name_(std::move(name)), handoff_(handoff) {}

void Spinlock::TraceHold(Cpu& cpu, sim::Time now) const {
  sim_->trace()->Complete(Cpu::kTracePid, cpu.id(), name_, acquired_at_, now - acquired_at_, "lock");
}

}  // namespace models
