#include "models/kvm/kvm.h"

#include <algorithm>
#include <utility>

#include "sim/check.h"

namespace models {

const char* ExitKindName(ExitKind k) {
  switch (k) {
    case ExitKind::kMmioNotify: return "mmio_notify";
    case ExitKind::kMmioIsrRead: return "mmio_isr_read";
    case ExitKind::kMmioIsrAck: return "mmio_isr_ack";
    case ExitKind::kIrqKick: return "irq_kick";
    case ExitKind::kWfe: return "wfe";
    case ExitKind::kWfi: return "wfi";
    case ExitKind::kCount: break;
  }
  return "?";
}

sim::Task Kvm::MmioExit(Cpu& vcpu, ExitKind kind, sim::Task handler, sim::Time round_trip) {
  ++stats_.exits[static_cast<int>(kind)];
  vcpu.BeginExit();
  co_await OnThread(vcpu, MmioHostSide(vcpu, std::move(handler), round_trip));
  vcpu.EndExit();
  // Back in the guest: an interrupt injected meanwhile is taken first.
  co_await vcpu.TakePending();
}

sim::Task Kvm::MmioHostSide(Cpu& vcpu, sim::Task handler, sim::Time round_trip) {
  const sim::Time half = round_trip / 2;
  co_await SwitchHalfOn(vcpu, half, /*out=*/true);
  co_await handler;
  co_await SwitchHalfOn(vcpu, round_trip - half, /*out=*/false);
}

sim::Task Kvm::SwitchHalfOn(const Cpu& vcpu, sim::Time half, bool out) {
  Task* t = thread_of(vcpu);
  if (t == nullptr) {
    co_await SwitchHalf(half, out);
    co_return;
  }
  Cpu& host = *t->cpu();
  host.LocalIrqSave();
  co_await SwitchHalf(half, out);
  host.LocalIrqRestore();
}

Kvm::Thread::Thread(Kvm& k, Cpu& v, Task& t, Scheduler& s)
    : kvm(&k),
      vcpu(&v),
      task(&t),
      sched(&s),
      enter(*k.sim_),
      done(*k.sim_),
      idle_cb(Callback::Bind<&Thread::OnIdle>(this)),
      work_cb(Callback::Bind<&Thread::OnHaltWork>(this)) {}

void Kvm::AttachThread(Cpu& vcpu, Task& thread, Scheduler& host) {
  const size_t id = static_cast<size_t>(vcpu.id());
  if (threads_.size() <= id) threads_.resize(id + 1);
  VIOSIM_CHECK(threads_[id] == nullptr, "one thread per vCPU");
  threads_[id] = std::make_unique<Thread>(*this, vcpu, thread, host);
  thread.set_vcpu(&vcpu);  // its preemptions stand the vCPU still
  vcpu.set_idle_callback(threads_[id]->idle_cb.handle());
}

void Kvm::Thread::OnIdle() {
  if (halt || work.valid() || !vcpu->idle() || vcpu->has_pending_work() || vcpu->halt_blocked()) return;
  // The idle loop's WFI: the vCPU leaves the guest.
  halt = true;
  vcpu->BlockHalted(work_cb.handle());
  enter.NotifyOne();
}

void Kvm::Thread::OnHaltWork() {
  // kvm_vcpu_kick(): the IPI to the thread's CPU wakes it there.
  if (asleep) task->cpu()->RaiseIrq(WakeThread(*this));
}

sim::Task Kvm::WakeThread(Thread& t) { co_await t.sched->TryToWakeUp(*t.task, *t.task->cpu()); }

// kvm_handle_wfx() -> kvm_vcpu_block() (3.14): the trap out, asleep until
// the vCPU has work, the trap back in.
sim::Task Kvm::Halt(Thread& t) {
  ++stats_.exits[static_cast<int>(ExitKind::kWfi)];
  const sim::Time half = costs_.irq_kick_exit.value / 2;
  co_await SwitchHalfOn(*t.vcpu, half, /*out=*/true);
  for (;;) {
    t.task->SetState(Task::State::kInterruptible);
    if (t.vcpu->has_pending_work()) break;  // kvm_arch_vcpu_runnable()
    t.asleep = true;
    co_await t.task->Schedule();
    t.asleep = false;
  }
  t.task->SetState(Task::State::kRunning);
  co_await SwitchHalfOn(*t.vcpu, costs_.irq_kick_exit.value - half, /*out=*/false);
  t.halt = false;
  if (t.vcpu->irqs_pending() > 0) t.from_halt_at = sim_->Now();  // entered with it: no kick exit
  t.vcpu->UnblockHalted();
}

sim::Task Kvm::RunLoop(const Cpu& vcpu) {
  Thread& t = *threads_[static_cast<size_t>(vcpu.id())];
  t.OnIdle();  // a vCPU idle from the start halts at once
  for (;;) {
    // In the guest: busy on the host CPU, preemptible.
    while (!t.work.valid() && !t.halt) co_await t.task->cpu()->SpinUntil(t.enter.Wait(), CpuTime::kUser);
    if (t.halt) {
      co_await Halt(t);
      continue;
    }
    sim::Task work = std::move(t.work);
    co_await work;
    t.done.NotifyOne();
  }
}

sim::Task Kvm::OnThread(const Cpu& vcpu, sim::Task work) {
  Thread* thread = ThreadOf(vcpu);
  if (thread == nullptr) {
    co_await work;
    co_return;
  }
  Thread& t = *thread;
  VIOSIM_CHECK(!t.work.valid(), "a vCPU makes one exit at a time");
  t.work = std::move(work);
  t.enter.NotifyOne();
  co_await t.done.Wait();
}

sim::Time Kvm::halt_poll_window(int id) const {
  return id >= 0 && static_cast<size_t>(id) < halt_window_.size() ? halt_window_[static_cast<size_t>(id)]
                                                                  : sim::Time::Zero();
}

// kvm_vcpu_block() with 4.18's grow_halt_poll_ns / shrink_halt_poll_ns at
// their defaults (grow x2 from 10us, shrink 0), block_ns being the halt's
// length up to the kick (and the wake-up when the thread slept).
sim::Time Kvm::EndHalt(const Cpu& vcpu, sim::Time since) {
  const size_t id = static_cast<size_t>(vcpu.id());
  if (halt_window_.size() <= id) halt_window_.resize(id + 1, sim::Time::Zero());
  sim::Time& window = halt_window_[id];
  const sim::Time max = costs_.halt_poll_ns.value;
  const sim::Time halted = sim_->Now() - since;
  const bool polled = window > sim::Time::Zero() && halted <= window;
  const sim::Time wake = polled ? sim::Time::Zero() : costs_.vcpu_wake.value;
  ++(polled ? stats_.halt_polled : stats_.halt_slept);
  const sim::Time block = halted + wake;
  if (max == sim::Time::Zero()) {
    window = sim::Time::Zero();
  } else if (block <= window) {
    // within the window: kept
  } else if (window > sim::Time::Zero() && block > max) {
    window = sim::Time::Zero();
  } else if (window < max && block < max) {
    window = std::min(window > sim::Time::Zero() ? window * 2 : sim::Time::Micros(10), max);
  }
  return wake;
}

sim::Task Kvm::IrqKick(Cpu& vcpu) {
  if (Thread* t = ThreadOf(vcpu); t != nullptr && t->from_halt_at == sim_->Now()) {
    // The vCPU came back from its halt with this interrupt: no kick.
    t->from_halt_at = sim::Time::Max();
    co_return;
  }
  ++stats_.exits[static_cast<int>(ExitKind::kIrqKick)];
  const sim::Time since = vcpu.halted_since();
  const sim::Time wake = halts_modeled() && since != sim::Time::Max() ? EndHalt(vcpu, since) : sim::Time::Zero();
  vcpu.BeginExit();
  co_await OnThread(vcpu, KickHostSide(vcpu, wake));
  vcpu.EndExit();
}

sim::Task Kvm::KickHostSide(const Cpu& vcpu, sim::Time wake) {
  // A world switch out and back in: with a thread, the host's interrupts
  // off on its CPU throughout.
  Task* t = thread_of(vcpu);
  if (t != nullptr) t->cpu()->LocalIrqSave();
  if (costs_.vgic_dist_hold.value == sim::Time::Zero()) {
    co_await sim_->Delay(wake + costs_.irq_kick_exit.value);
  } else {
    if (wake > sim::Time::Zero()) co_await sim_->Delay(wake);
    const sim::Time half = costs_.irq_kick_exit.value / 2;
    co_await SwitchHalf(half, /*out=*/true);
    co_await SwitchHalf(costs_.irq_kick_exit.value - half, /*out=*/false);
  }
  if (t != nullptr) t->cpu()->LocalIrqRestore();
}

sim::Task Kvm::SwitchHalf(sim::Time half, bool out) {
  const sim::Time hold = costs_.vgic_dist_hold.value;
  if (hold == sim::Time::Zero()) {
    co_await sim_->Delay(half);
    co_return;
  }
  VIOSIM_CHECK(half >= hold, "a world switch's half holds the vGIC distributor lock within it");
  if (out) {
    co_await sim_->Delay(half - hold);
    co_await DistLocked();  // kvm_vgic_sync_hwstate, after the guest exits
  } else {
    co_await DistLocked();  // kvm_vgic_flush_hwstate, before the guest is entered
    co_await sim_->Delay(half - hold);
  }
}

sim::Task Kvm::WithDistLock(Task& caller, sim::Time total) {
  const sim::Time hold = costs_.vgic_dist_hold.value;
  if (hold == sim::Time::Zero()) {
    co_await caller.Run(total);
    co_return;
  }
  VIOSIM_CHECK(total >= hold, "an ioctl into the vGIC holds its distributor lock within its time");
  co_await caller.Run(total - hold);
  Cpu& cpu = *caller.cpu();
  cpu.LocalIrqSave();
  co_await DistLocked();
  cpu.LocalIrqRestore();
}

// A FIFO of the paths taking the lock, as Lindley's recursion: each takes
// it when it arrives or when the one before it lets go, whichever is later,
// and holds it vgic_dist_hold; one event per acquisition.
sim::Task Kvm::DistLocked() {
  const sim::Time now = sim_->Now();
  const sim::Time took = std::max(now, dist_free_at_);
  dist_free_at_ = took + costs_.vgic_dist_hold.value;
  ++dist_stat_.acquisitions;
  dist_stat_.hold.Record(costs_.vgic_dist_hold.value.ps());
  if (took > now) {
    ++dist_stat_.contentions;
    dist_stat_.wait.Record((took - now).ps());
  }
  co_await sim_->Delay(dist_free_at_ - now);
}

sim::Task Kvm::WhileSpinning(const uint64_t* generation, uint64_t mine) {
  // Each trap: the way out (wfe_trap/2, its sync under the lock at its
  // end), kvm_vcpu_on_spin, the way in (the flush under the lock at its
  // start, then the rest); the way in of one trap and the way out of the
  // next are one stretch of time.
  const sim::Time hold = costs_.vgic_dist_hold.value;
  const sim::Time half = costs_.wfe_trap.value / 2;
  const sim::Time rest = costs_.wfe_trap.value - half;
  if (hold == sim::Time::Zero()) {
    while (*generation == mine) {
      ++stats_.exits[static_cast<int>(ExitKind::kWfe)];
      co_await sim_->Delay(costs_.wfe_trap.value);
    }
    co_return;
  }
  co_await sim_->Delay(half - hold);
  while (*generation == mine) {
    ++stats_.exits[static_cast<int>(ExitKind::kWfe)];
    co_await DistLocked();  // kvm_vgic_sync_hwstate
    co_await DistLocked();  // kvm_vgic_flush_hwstate
    co_await sim_->Delay(rest - hold + half - hold);
  }
}

}  // namespace models
