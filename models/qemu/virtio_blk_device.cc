#include "models/qemu/virtio_blk_device.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/check.h"

namespace models {

VirtioBlkDevice::VirtioBlkDevice(sim::Simulator& sim, Virtqueue& vq, Scheduler& host, std::vector<Cpu*> host_cpus,
                                 int vcpus, const QemuCosts& costs, QemuAio aio, QemuHostCosts host_costs,
                                 uint64_t seed, bool pooled)
    : sim_(&sim),
      vq_(&vq),
      host_(&host),
      host_cpus_(std::move(host_cpus)),
      vcpus_(vcpus),
      pooled_(pooled),
      bql_(sim, "qemu_global_mutex"),
      costs_(costs),
      aio_(aio),
      host_costs_(host_costs),
      disk_spread_(sim::Distribution::Exponential(costs.disk_latency_exp_mean.value)),
      disk_rng_(sim::Rng::ForStream(seed, "qemu.disk")) {}

namespace {

// Parks the caller for good.
struct Forever {
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) const noexcept {}
  void await_resume() const noexcept {}
};

}  // namespace

void VirtioBlkDevice::Start(VcpuThreadBody vcpu_thread) {
  VIOSIM_CHECK(bus_ != nullptr, "the device is on a transport before QEMU's threads start");
  const bool pool = aio_ == QemuAio::kThreads;
  VIOSIM_CHECK(vcpus_ >= 1 && (pooled_ ? !host_cpus_.empty()
                                       : static_cast<int>(host_cpus_.size()) == vcpus_ + 1 + (pool ? 1 : 0)),
               "a host CPU for each vCPU thread, the main loop and, with aio=threads, the pool; or a pool of them");
  std::vector<int> all;  // pooled: every thread may run on every host CPU
  for (const Cpu* c : host_cpus_) all.push_back(c->id());
  // Pinned: role k on host_cpus[k] (the workers together on the last).
  auto place = [&](size_t k, const std::string& label) {
    if (pooled_) return all;
    host_cpus_[k]->set_trace_label(label);
    return std::vector<int>{host_cpus_[k]->id()};
  };
  for (int k = 0; k <= vcpus_; ++k) {
    const std::string name = k < vcpus_ ? absl::StrCat("qemu/vcpu", k) : std::string("qemu/main");
    threads_.push_back(std::make_unique<Task>(name, place(static_cast<size_t>(k), name)));
    Task& t = *threads_.back();
    host_->Start(t, k == vcpus_ ? MainLoop() : vcpu_thread ? vcpu_thread(k, t) : VcpuThread());
  }
  if (!pool) return;
  worker_req_.resize(kPoolThreads);
  for (int w = 0; w < kPoolThreads; ++w) {
    threads_.push_back(
        std::make_unique<Task>(absl::StrCat("qemu/worker", w), place(static_cast<size_t>(vcpus_ + 1), "qemu/pool")));
    host_->Start(*threads_.back(), PoolWorker(w));
  }
}

sim::Task VirtioBlkDevice::VcpuThread() { co_await Forever{}; }

// kvm_cpu_exec after KVM_RUN returns: the BQL, then its own path (on the
// thread's CPU, read again after a sleep for the lock).
sim::Task VirtioBlkDevice::LockForExit(int vcpu) {
  co_await bql_.Lock(ThreadCpu(vcpu));
  co_await ThreadCpu(vcpu).Run(costs_.exit_userspace.value);
}

sim::Task VirtioBlkDevice::QueueNotify(int vcpu) {
  co_await LockForExit(vcpu);
  co_await HandleOutput(*threads_[static_cast<size_t>(vcpu)]);
  co_await bql_.Unlock(ThreadCpu(vcpu));
}

// KVM's in-kernel ioeventfd -> eventfd_signal: the main loop woken from
// ppoll, by the vCPU thread in its exit.
sim::Task VirtioBlkDevice::SignalIoeventfd(int vcpu) {
  notify_pending_ = true;
  co_await WakeMainLoop(ThreadCpu(vcpu));
}

// An eventfd the main loop polls became readable: try_to_wake_up of the
// main loop by `waker` (in its context), the fast path when it is awake.
Scheduler::WakeUpAwaiter VirtioBlkDevice::WakeMainLoop(Cpu& waker) {
  return host_->TryToWakeUp(*threads_[static_cast<size_t>(vcpus_)], waker);
}

sim::Task VirtioBlkDevice::HandleOutput(Task& thread) {
  ++stats_.notifies;
  co_await thread.Run(costs_.notify_dispatch.value);
  // virtio_blk_handle_output(): pop until the ring is empty.
  while (std::optional<VirtQueueElement> e = vq_->Pop()) {
    ++stats_.pops;
    co_await thread.Run(costs_.pop_submit.value);
    ++in_flight_;
    if (aio_ == QemuAio::kThreads) {
      co_await PoolSubmit(thread, *e);
    } else {
      sim_->Spawn(DiskIo(*e));
    }
  }
}

// thread_pool_submit_aio(): the request on the pool's list, then
// qemu_sem_post(&pool->sem): glibc's sem_post futex-wakes a sleeper, if
// any, from the posting thread (here under the BQL).
sim::Task VirtioBlkDevice::PoolSubmit(Task& thread, VirtQueueElement e) {
  pool_requests_.push_back(e);
  ++sem_count_;
  if (sem_sleepers_.empty()) co_return;
  Task* w = sem_sleepers_.front();
  sem_sleepers_.pop_front();
  ++stats_.pool_wakes;
  co_await thread.Run(host_costs_.syscall);
  co_await host_->TryToWakeUp(*w, *thread.cpu());
}

// worker_thread(): take a request when the semaphore has a count (else
// sleep on it), run it (preadv: a syscall, then asleep in the host's block
// device), mark it done and schedule the completion bottom half
// (aio_notify: a write to the main loop's eventfd).
sim::Task VirtioBlkDevice::PoolWorker(int w) {
  Task& me = *threads_[static_cast<size_t>(vcpus_ + 1 + w)];
  for (;;) {
    while (sem_count_ == 0) {
      me.SetState(Task::State::kInterruptible);
      sem_sleepers_.push_back(&me);
      co_await me.Schedule();
      me.SetState(Task::State::kRunning);
    }
    --sem_count_;
    worker_req_[static_cast<size_t>(w)] = pool_requests_.front();
    pool_requests_.pop_front();
    co_await me.Run(host_costs_.syscall);
    me.SetState(Task::State::kUninterruptible);
    sim_->Spawn(PreadvDone(me, *me.cpu()));  // the disk interrupts the submitting CPU
    co_await me.Schedule();
    me.SetState(Task::State::kRunning);
    co_await me.Run(host_costs_.syscall);
    done_.push_back(worker_req_[static_cast<size_t>(w)]);
    co_await WakeMainLoop(*me.cpu());  // the eventfd write's wake-up of ppoll
  }
}

sim::Task VirtioBlkDevice::PreadvDone(Task& worker, Cpu& cpu) {
  co_await sim_->Delay(
      sim::MeanKeptExponential(costs_.disk_latency.value, costs_.disk_latency_exp_mean.value, disk_spread_, disk_rng_));
  cpu.RaiseIrq(WakeWorker(worker, cpu));
}

sim::Task VirtioBlkDevice::WakeWorker(Task& worker, Cpu& cpu) { co_await host_->TryToWakeUp(worker, cpu); }

sim::Task VirtioBlkDevice::DiskIo(VirtQueueElement e) {
  co_await sim_->Delay(
      sim::MeanKeptExponential(costs_.disk_latency.value, costs_.disk_latency_exp_mean.value, disk_spread_, disk_rng_));
  done_.push_back(e);
  // The host's AIO completion (aio_complete -> eventfd_signal) in the
  // disk's interrupt, taken on the main loop's CPU.
  Cpu& main = *threads_[static_cast<size_t>(vcpus_)]->cpu();
  main.RaiseIrq([](VirtioBlkDevice& d, Cpu& c) -> sim::Task { co_await d.WakeMainLoop(c); }(*this, main));
}

sim::Task VirtioBlkDevice::MainLoop() {
  Task& me = *threads_[static_cast<size_t>(vcpus_)];
  for (;;) {
    // ppoll: asleep until an eventfd it polls is written.
    for (;;) {
      me.SetState(Task::State::kInterruptible);
      if (!done_.empty() || notify_pending_) break;
      co_await me.Schedule();
    }
    me.SetState(Task::State::kRunning);
    ++stats_.main_wakeups;
    co_await me.Run(costs_.main_wakeup.value);
    co_await bql_.Lock(*me.cpu());
    // Passes with the BQL kept while a bottom half is scheduled (a
    // zero-timeout poll), or a handler or a completion is ready.
    do {
      co_await Pass(me);
    } while (!em_bh_.empty() || !done_.empty() || notify_pending_);
    co_await bql_.Unlock(*me.cpu());
  }
}

sim::Task VirtioBlkDevice::Pass(Task& main) {
  ++stats_.main_passes;
  co_await main.Run(costs_.main_loop_pass.value);
  // aio_bh_poll: the bdrv_co_em_bh halves scheduled by an earlier pass
  // (new bottom halves go to the head of the list, behind the walk), each
  // virtio_blk_rw_complete -> virtio_blk_req_complete.
  std::deque<VirtQueueElement> due;
  due.swap(em_bh_);
  for (const VirtQueueElement& e : due) {
    --in_flight_;
    ++stats_.completions;
    co_await main.Run(costs_.complete.value);
    vq_->Push(e, 4096 + 1);  // data and the status byte
    if (vq_->ShouldNotify()) co_await bus_->NotifyIrq(main);  // virtio_notify
  }
  // The completions found: thread_pool_completion_bh, further down the
  // same walk (aio=threads), or the AIO eventfd's handler (aio=native);
  // each callback schedules its request's bdrv_co_em_bh.
  while (!done_.empty()) {
    const VirtQueueElement e = done_.front();
    done_.pop_front();
    if (aio_ == QemuAio::kThreads) co_await main.Run(costs_.pool_complete.value);
    em_bh_.push_back(e);
  }
  // The ioeventfd's handler: handle_output.
  if (notify_pending_) {
    notify_pending_ = false;
    co_await HandleOutput(main);
  }
}

}  // namespace models
