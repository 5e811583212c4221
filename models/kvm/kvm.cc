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
  vcpu.BeginExit();
  const sim::Time half = round_trip / 2;
  co_await sim_->Delay(half);
  co_await handler;
  co_await sim_->Delay(round_trip - half);
  vcpu.EndExit();
  // Back in the guest: an interrupt injected meanwhile is taken first.
  co_await vcpu.TakePending();
}

sim::Task Kvm::IrqKick(Cpu& vcpu) {
  ++stats_.exits[static_cast<int>(ExitKind::kIrqKick)];
  vcpu.BeginExit();
  co_await sim_->Delay(costs_.irq_kick_exit.value);
  vcpu.EndExit();
}

}  // namespace models
