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
//
// The vGIC's distributor lock (virt/kvm/arm/vgic.c, 3.14): every vCPU's
// exit syncs its list registers back (kvm_vgic_sync_hwstate) and every
// entry flushes pending interrupts into them (kvm_vgic_flush_hwstate),
// each under the VM-wide dist->lock, as does KVM_IRQ_LINE
// (kvm_vgic_inject_irq). With `vgic_dist_hold` set, each of those holds
// the lock that long, taken in arrival order, inside the time of the
// enclosing exit half or ioctl (a wait for it is added time). And with
// `wfe_trap` set, a guest spinning for a ticket lock sleeps in WFE, which
// KVM/ARM traps (HCR_EL2.TWE -> kvm_handle_wfx -> kvm_vcpu_on_spin): each
// trap is an exit and an entry, two more acquisitions of the lock, and
// gains nothing while every vCPU runs on its own host CPU (SpinTraps).
//
// The vCPU's thread (QEMU's, looping on ioctl(KVM_RUN)). With a host task
// attached as a vCPU's thread (AttachThread), that task runs RunLoop: in
// the guest it is busy on its host CPU (user time: the host's guest time)
// and preemptible there, its preemption standing the vCPU still (steal,
// models/cpu/cpu.h); an exit hands it the exit's host side, which it runs
// in its own context: the world switch's halves (with the host's
// interrupts off, as the run loop has them: not preemptible) and the
// handler (QEMU's emulation, whose work the device charges on the thread's
// CPU: preemptible, so a preempted exit lasts longer). Without a thread the
// host side is timed on no host CPU. Not on the thread yet: trapped WFEs
// (WhileSpinning).
//
// With a thread, an idle vCPU halts in the host as 3.14's KVM/ARM has it
// (no halt polling): its WFI traps (kvm_handle_wfx: the first half of a
// trap round trip, irq_kick_exit, out), the thread sleeps in
// kvm_vcpu_block() until the vCPU has work -- an interrupt raised on it,
// or a reschedule asked for (the guest's IPI) -- which kvm_vcpu_kick()
// wakes it for: an interrupt on the thread's host CPU (the IPI) whose
// handler runs try_to_wake_up, then the thread's context switch, the
// other half of the trap back in, and the vCPU takes the interrupt
// without a kick exit of its own. Meanwhile the vCPU stands still,
// accounted idle (Cpu::BlockHalted). The wake-up is charged on the
// thread's own host CPU, not on the injecting thread's (KVM_IRQ_LINE
// runs kvm_vcpu_kick in the main loop's ioctl).
//
// Halt polling (virt/kvm/kvm_main.c kvm_vcpu_block, Linux 4.0-5.x; x86
// from 4.18 on here). A guest's idle loop halts its vCPU (HLT exits), and
// KVM first polls for a wake-up for the vCPU's own window
// (vcpu->halt_poll_ns) before the vCPU thread sleeps. With `vcpu_wake`
// set, an interrupt kick on a halted vCPU (IrqKick) finds it either still
// polling -- the halt so far is within the window: irq_kick_exit, as
// before -- or asleep: the host wakes the vCPU thread first (vcpu_wake:
// kvm_vcpu_kick's wake-up, the IPI, the host core out of idle, the switch
// in). The window then adapts as kvm_vcpu_block does with the default
// module parameters of that era: with block_ns the halt's length, a halt
// within the window keeps it; one longer than halt_poll_ns (the module
// maximum) shrinks it to 0 (halt_poll_ns_shrink 0); a shorter one grows it
// (from 0 to 10us, then x2, capped at halt_poll_ns). halt_poll_ns 0 turns
// polling off: every kick on a halted vCPU pays vcpu_wake. Not modeled:
// halts that end for another reason (a timer), and the host CPU the
// polling burns.
#ifndef VIOSIM_MODELS_KVM_KVM_H_
#define VIOSIM_MODELS_KVM_KVM_H_

#include <coroutine>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "models/cpu/callback.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/param.h"
#include "models/cpu/spin_traps.h"
#include "models/cpu/task.h"
#include "models/sync/lock_stat.h"
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
  kWfe,             // a spinning vCPU's trapped WFE (kvm_handle_wfx)
  kWfi,             // an idle vCPU's trapped WFI (kvm_handle_wfx -> kvm_vcpu_block), with a thread
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
  // One hold of the vGIC distributor lock (a list-register sync or flush,
  // an injection's update); zero: the lock is not modeled.
  Param<sim::Time> vgic_dist_hold;
  // The round trip of one trapped WFE of a spinning vCPU; zero: spinners
  // do not trap.
  Param<sim::Time> wfe_trap;
  // Halt polling's module maximum (the halt_poll_ns parameter); zero:
  // polling off. Read only with vcpu_wake set.
  Param<sim::Time> halt_poll_ns;
  // Waking a halted vCPU's sleeping thread for an interrupt; zero: halts
  // are not modeled (an interrupt on a halted vCPU costs irq_kick_exit).
  Param<sim::Time> vcpu_wake;
};

struct KvmStats {
  uint64_t exits[kExitKinds] = {};
  // Interrupt kicks on a halted vCPU (with vcpu_wake set): caught by halt
  // polling, or after the vCPU thread had gone to sleep.
  uint64_t halt_polled = 0;
  uint64_t halt_slept = 0;
  void Reset() { *this = KvmStats(); }
};

class Kvm final : public SpinTraps {
 public:
  Kvm(sim::Simulator& sim, const KvmCosts& costs) : sim_(&sim), costs_(costs) {}

  const KvmCosts& costs() const { return costs_; }
  const KvmStats& stats() const { return stats_; }
  void ResetStats() {
    stats_.Reset();
    dist_stat_.Reset();
  }
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

  // `total` of host time of which the last vgic_dist_hold is under the
  // distributor lock (KVM_IRQ_LINE's update of the vGIC, called by QEMU's
  // thread `caller`, charged on its CPU: the rest preemptible, the hold with
  // the CPU's interrupts off).
  sim::Task WithDistLock(Task& caller, sim::Time total);

  // Whether spinning vCPUs trap their WFEs (wfe_trap set).
  bool spinners_trap() const { return costs_.wfe_trap.value > sim::Time::Zero(); }
  // A vCPU spinning for a guest ticket lock: its WFE traps, one after
  // another, each an exit counted as kWfe, until `*generation` is no longer
  // `mine` (the spinner took the lock). REQUIRES: spinners_trap().
  sim::Task WhileSpinning(const uint64_t* generation, uint64_t mine) override;

  // Makes `thread` vCPU `vcpu`'s thread (see the file comment); it is to
  // run RunLoop(vcpu). REQUIRES: before the run starts.
  void AttachThread(Cpu& vcpu, Task& thread, Scheduler& host);
  // The thread's body: in the guest until an exit hands it host work.
  sim::Task RunLoop(const Cpu& vcpu);
  // vCPU `vcpu`'s thread, or null.
  Task* thread_of(const Cpu& vcpu) const {
    const Thread* t = ThreadOf(vcpu);
    return t != nullptr ? t->task : nullptr;
  }

  // The distributor lock's lock_stat row (no bounces counted).
  const LockStat& dist_stat() const { return dist_stat_; }

  // Whether halts are modeled (vcpu_wake set), and vCPU `id`'s halt-polling
  // window now (vcpu->halt_poll_ns).
  bool halts_modeled() const { return costs_.vcpu_wake.value > sim::Time::Zero(); }
  sim::Time halt_poll_window(int id) const;

 private:
  sim::Task MmioExit(Cpu& vcpu, ExitKind kind, sim::Task handler, sim::Time round_trip);
  sim::Task MmioHostSide(Cpu& vcpu, sim::Task handler, sim::Time round_trip);
  sim::Task KickHostSide(const Cpu& vcpu, sim::Time wake);
  // `work`, the host side of an exit of `vcpu`, run by its thread when it
  // has one (and awaited until done), else at once in the caller's.
  sim::Task OnThread(const Cpu& vcpu, sim::Task work);
  // A world switch's half on the thread, if any: the host's interrupts
  // off around it.
  sim::Task SwitchHalfOn(const Cpu& vcpu, sim::Time half, bool out);
  // Half of a world switch of `half`: out (the sync at its end) or in (the
  // flush at its start), the hold inside it.
  sim::Task SwitchHalf(sim::Time half, bool out);
  // dist->lock taken in arrival order, held vgic_dist_hold, released.
  sim::Task DistLocked();
  // A kick on `vcpu`, halted since `since`: the wake-up its thread needs
  // (zero when halt polling catches it), and the window's adaptation.
  sim::Time EndHalt(const Cpu& vcpu, sim::Time since);

  sim::Simulator* sim_;
  KvmCosts costs_;
  KvmStats stats_;
  sim::Time dist_free_at_;  // when the distributor lock's last holder lets go
  LockStat dist_stat_;
  std::vector<sim::Time> halt_window_;  // per vCPU id
  // Per vCPU id: its thread, the host work handed to it, the two
  // hand-offs (to the thread, back to the guest), and the halt's state.
  struct Thread {
    Thread(Kvm& k, Cpu& v, Task& t, Scheduler& s);
    // The vCPU went idle (its idle callback): halt it, unless work came.
    void OnIdle();
    // Work for the halted vCPU (Cpu::BlockHalted's callback): wake the
    // thread if it sleeps.
    void OnHaltWork();
    Kvm* kvm;
    Cpu* vcpu;
    Task* task;
    Scheduler* sched;
    sim::Task work;
    sim::Signal enter;
    sim::Signal done;
    bool halt = false;      // a halt handed to the thread, not yet back in the guest
    bool asleep = false;    // in kvm_vcpu_block's schedule()
    sim::Time from_halt_at = sim::Time::Max();  // an interrupt taken then came with the halt's entry
    Callback idle_cb;
    Callback work_cb;
  };
  sim::Task Halt(Thread& t);
  // vCPU `vcpu`'s thread's state, or null.
  Thread* ThreadOf(const Cpu& vcpu) const;
  static sim::Task WakeThread(Thread& t);
  std::vector<std::unique_ptr<Thread>> threads_;
};

inline Kvm::Thread* Kvm::ThreadOf(const Cpu& vcpu) const {
  const size_t id = static_cast<size_t>(vcpu.id());
  return id < threads_.size() ? threads_[id].get() : nullptr;
}

}  // namespace models

#endif  // VIOSIM_MODELS_KVM_KVM_H_
