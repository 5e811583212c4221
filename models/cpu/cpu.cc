#include "models/cpu/cpu.h"

#include <utility>

#include "sim/trace.h"

namespace models {

const char* CpuStateName(CpuState s) {
  switch (s) {
    case CpuState::kIdle: return "idle";
    case CpuState::kRunning: return "running";
    case CpuState::kSpinning: return "spinning";
    case CpuState::kExit: return "exit";
    case CpuState::kCount: break;
  }
  return "?";
}

Cpu::Cpu(sim::Simulator& sim, int id, std::string name)
    : sim_(&sim),
      id_(id),
      name_(std::move(name)),
      state_since_(sim.Now()),
      occupancy_(kCpuStates, sim.Now(), static_cast<int>(CpuState::kIdle)),
      irq_off_(2, sim.Now(), 0),
      irqs_enabled_(sim) {}

void Cpu::NameTraceTrack(sim::TraceWriter& t) {
  state_since_ = sim_->Now();
  t.SetThreadName(kTracePid, id_, name_);
  t.SetThreadSortIndex(kTracePid, id_, id_);
}

void Cpu::LocalIrqSave() {
  if (irq_off_depth_++ == 0) irq_off_.Set(1, sim_->Now());
}

void Cpu::LocalIrqRestore() {
  if (--irq_off_depth_ == 0) {
    irq_off_.Set(0, sim_->Now());
    irqs_enabled_.NotifyAll();
  }
}

void Cpu::ResetStats() {
  occupancy_.Reset(sim_->Now());
  irq_off_.Reset(sim_->Now());
}

void Cpu::TraceState(CpuState next) {
  sim::TraceWriter* t = sim_->trace();
  const sim::Time now = sim_->Now();
  if (state_ != CpuState::kIdle && now > state_since_) {
    t->Complete(kTracePid, id_, CpuStateName(state_), state_since_, now - state_since_, "cpu");
  }
  state_since_ = now;
  (void)next;
}

}  // namespace models
