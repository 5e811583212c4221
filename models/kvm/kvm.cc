#include "models/kvm/kvm.h"

#include <utility>

namespace models {

const char* ExitKindName(ExitKind k) {
  switch (k) {
    case ExitKind::kMmioNotify: return "mmio_notify";
    case ExitKind::kMmioIsrRead: return "mmio_isr_read";
    case ExitKind::kMmioIsrAck: return "mmio_isr_ack";
    case ExitKind::kIrqKick: return "irq_kick";
    case ExitKind::kCount: break;
  }
  return "?";
}

sim::Task Kvm::MmioExit(Cpu& vcpu, ExitKind kind, sim::Task handler, sim::Time round_trip) {
  ++stats_.exits[static_cast<int>(kind)];
  const CpuState before = vcpu.state();
  vcpu.SetState(CpuState::kExit);
  const sim::Time half = round_trip / 2;
  co_await sim_->Delay(half);
  co_await handler;
  co_await sim_->Delay(round_trip - half);
  vcpu.SetState(before == CpuState::kExit ? CpuState::kRunning : before);
}

namespace {

// The region's body starts one zero-length event later: when a region
// begins in the continuation of an Exec chunk, the Exec engine marks the
// CPU running (a poller) after that continuation returns, which would
// overwrite the state the body sets. Nothing else can start on the CPU in
// between (it is held and interrupts are off).
sim::Task YieldThen(Cpu& vcpu, sim::Task body) {
  co_await vcpu.sim().Delay(sim::Time::Zero());
  vcpu.SetState(CpuState::kRunning);
  co_await body;
}

}  // namespace

sim::Task HeldRegion(Cpu& vcpu, sim::Task body) {
  vcpu.LocalIrqSave();
  co_await vcpu.SpinUntil(YieldThen(vcpu, std::move(body)));
  vcpu.LocalIrqRestore();
}

}  // namespace models
