// A CPU executing costed work.
//
// A Cpu is a place where simulated threads execute. It keeps the time it
// spends in each state (running, spinning, idle, and the states later models
// add), whether local interrupts are disabled (spin_lock_irqsave), and how
// long they have been disabled. Work is charged with `co_await cpu.Run(cost)`,
// which is one event.
#ifndef VIOSIM_MODELS_CPU_CPU_H_
#define VIOSIM_MODELS_CPU_CPU_H_

#include <array>
#include <cstdint>
#include <string>

#include "sim/simulator.h"
#include "sim/stats.h"
#include "sim/time.h"

namespace sim {
class TraceWriter;
}

namespace models {

enum class CpuState : uint8_t {
  kIdle = 0,   // nothing to run
  kRunning,    // executing a thread's work (or the guest's, in a vCPU)
  kSpinning,   // burning cycles waiting for a spinlock
  kExit,       // a vCPU outside the guest, handling a VM exit
  kCount,
};
inline constexpr int kCpuStates = static_cast<int>(CpuState::kCount);
const char* CpuStateName(CpuState s);

class Cpu {
 public:
  // Trace process id under which CPUs appear, one track per CPU id.
  static constexpr int kTracePid = 1;

  Cpu(sim::Simulator& sim, int id, std::string name);
  Cpu(const Cpu&) = delete;
  Cpu& operator=(const Cpu&) = delete;

  int id() const { return id_; }
  const std::string& name() const { return name_; }
  sim::Simulator& sim() const { return *sim_; }
  CpuState state() const { return state_; }

  void SetState(CpuState s) {
    if (s == state_) return;
    occupancy_.Set(static_cast<int>(s), sim_->Now());
    if (sim_->trace() != nullptr) TraceState(s);
    state_ = s;
  }

  // Executes `cost` of work on this CPU: the CPU is running for that long.
  // `co_await cpu.Run(cost)`; one event.
  sim::Simulator::DelayAwaiter Run(sim::Time cost) {
    SetState(CpuState::kRunning);
    return sim_->Delay(cost);
  }

  // local_irq_save()/local_irq_restore(); nests.
  void LocalIrqSave();
  void LocalIrqRestore();
  bool irqs_disabled() const { return irq_off_depth_ > 0; }
  // Resumes when interrupts are enabled on this CPU (immediately if they
  // are): an interrupt handler waits here before it runs.
  struct IrqsEnabledAwaiter {
    Cpu* cpu;
    sim::Signal::Awaiter inner;
    bool await_ready() const noexcept { return cpu->irq_off_depth_ == 0; }
    void await_suspend(std::coroutine_handle<> h) { inner.await_suspend(h); }
    void await_resume() const noexcept {}
  };
  IrqsEnabledAwaiter IrqsEnabled() { return {this, irqs_enabled_.Wait()}; }

  // Statistics since the last ResetStats().
  sim::Time TimeIn(CpuState s) const {
    return occupancy_.TimeIn(static_cast<int>(s), sim_->Now());
  }
  double Share(CpuState s) const {
    return occupancy_.Share(static_cast<int>(s), sim_->Now());
  }
  sim::Time IrqOffTime() const { return irq_off_.TimeIn(1, sim_->Now()); }
  void ResetStats();

  // Names this CPU's track in a trace that starts now.
  void NameTraceTrack(sim::TraceWriter& t);

 private:
  void TraceState(CpuState next);

  sim::Simulator* sim_;
  int id_;
  std::string name_;
  CpuState state_ = CpuState::kIdle;
  sim::Time state_since_;  // start of the current trace slice (tracing on)
  sim::StateOccupancy occupancy_;
  int irq_off_depth_ = 0;
  sim::StateOccupancy irq_off_;  // 0: enabled, 1: disabled
  sim::Signal irqs_enabled_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_CPU_CPU_H_
