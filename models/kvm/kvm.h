// KVM as the guest sees it: a vCPU that leaves the guest for a VM exit, and
// interrupts injected into it.
//
// The platform is 2014 KVM/ARM (arch/arm/kvm/mmio.c, Linux 3.14): a guest
// store or load to an MMIO page takes a stage-2 abort; io_mem_abort() hands
// vGIC accesses to the in-kernel vGIC and every other access to userspace
// (KVM_EXIT_MMIO), since there is no kvm_io_bus and so no ioeventfd on ARM
// yet. The vCPU thread returns from ioctl(KVM_RUN) into QEMU, which emulates
// the access synchronously and re-enters the guest. For the guest the whole
// round trip is one long instruction: the vCPU runs nothing else, takes no
// interrupt, and whatever guest lock it holds stays held.
//
// Modelling a vCPU: a Cpu (models/cpu/cpu.h) is the guest's CPU, and guest
// code runs on it as tasks and interrupt handlers do on any CPU. An exit is
// `co_await kvm.MmioExitUser(cpu, kind, handler)` inside the guest
// function that makes the access: the CPU is in an exit (Cpu::BeginExit:
// exit time, no interrupt taken), half the world switch, the host-side
// handler (QEMU's emulation, a sim::Task the vCPU thread runs), the other
// half; then an interrupt that became pending is taken before the guest's
// next instruction.
#ifndef VIOSIM_MODELS_KVM_KVM_H_
#define VIOSIM_MODELS_KVM_KVM_H_

#include <coroutine>
#include <cstdint>
#include <utility>

#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

// Exit kinds counted for reports.
enum class ExitKind : uint8_t {
  kMmioNotify = 0,  // virtio-mmio QueueNotify write (the kick)
  kMmioIsrRead,     // virtio-mmio InterruptStatus read
  kMmioIsrAck,      // virtio-mmio InterruptACK write
  kIrqKick,         // a vCPU in the guest kicked out to take an injected IRQ
  kCount,
};
inline constexpr int kExitKinds = static_cast<int>(ExitKind::kCount);
const char* ExitKindName(ExitKind k);

struct KvmCosts {
  // One guest MMIO access that exits to userspace and back, excluding the
  // device emulation itself: stage-2 abort, EL2 -> host EL1 world switch
  // (EL1, vGIC and timer state), io_mem_abort decode, return to QEMU from
  // KVM_RUN, QEMU's kvm_cpu_exec dispatch, and the way back in. Charged half
  // on the way out, half on the way back.
  Param<sim::Time> mmio_exit_user;
  // From QEMU's KVM_IRQ_LINE to the target vCPU taking the interrupt in the
  // guest when it is running guest code: the vGIC queues the SPI and kicks
  // the vCPU (IPI, exit, entry with the list register loaded).
  Param<sim::Time> irq_inject;
  // The vCPU's own cost of being kicked out and re-entered for injection.
  Param<sim::Time> irq_kick_exit;
  // What-if (x86 KVM with ioeventfd, or KVM/ARM from 2015): the notify is
  // handled in the kernel (kvm_io_bus_write -> ioeventfd -> eventfd_signal)
  // and the vCPU goes straight back; QEMU picks the notification up in its
  // main loop. Off on the 2014 ARM platform.
  bool ioeventfd = false;
  // The in-kernel exit round trip used then.
  Param<sim::Time> mmio_exit_kernel;
  // Time per userspace exit that no sourced cost explains (fitted on 2014
  // KVM/ARM kick-lock), charged with mmio_exit_user as one round trip: the
  // same halves, outside the BQL. Not on in-kernel exits.
  Param<sim::Time> exit_unexplained;
};

struct KvmStats {
  uint64_t exits[kExitKinds] = {};
  void Reset() { *this = KvmStats(); }
};

class Kvm {
 public:
  Kvm(sim::Simulator& sim, const KvmCosts& costs) : sim_(&sim), costs_(costs) {}

  const KvmCosts& costs() const { return costs_; }
  const KvmStats& stats() const { return stats_; }
  void ResetStats() { stats_.Reset(); }
  uint64_t total_exits() const {
    uint64_t n = 0;
    for (uint64_t e : stats_.exits) n += e;
    return n;
  }

  // A guest MMIO access on `vcpu` that exits to userspace, where
  // `handler` (QEMU's emulation, run by the vCPU thread) is awaited.
  // REQUIRES: called by code running on `vcpu` (a task or a handler).
  sim::Task MmioExitUser(Cpu& vcpu, ExitKind kind, sim::Task handler) {
    return MmioExit(vcpu, kind, std::move(handler), costs_.mmio_exit_user.value + costs_.exit_unexplained.value);
  }
  // The same handled in the kernel (ioeventfd): `handler` is the in-kernel
  // effect (eventfd_signal), run halfway through mmio_exit_kernel.
  sim::Task MmioExitKernel(Cpu& vcpu, ExitKind kind, sim::Task handler) {
    return MmioExit(vcpu, kind, std::move(handler), costs_.mmio_exit_kernel.value);
  }

  // The vCPU is kicked out of the guest to take an injected interrupt and
  // re-entered with it pending: irq_kick_exit of exit time, the first step
  // of the guest's interrupt handler on `vcpu`.
  sim::Task IrqKick(Cpu& vcpu);

 private:
  sim::Task MmioExit(Cpu& vcpu, ExitKind kind, sim::Task handler, sim::Time round_trip);

  sim::Simulator* sim_;
  KvmCosts costs_;
  KvmStats stats_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_KVM_KVM_H_
