// QEMU 2.0's virtio-blk device, as the guest's accesses reach it through
// its transport (virtio_transport.h: virtio-mmio on the 2014 KVM/ARM board,
// without ioeventfd or irqfd; virtio-pci for what-ifs).
//
// Submission, in the vCPU thread that trapped on the QueueNotify write
// (kvm_cpu_exec -> virtio_mmio_write -> virtio_queue_notify ->
// virtio_blk_handle_output), synchronously, under the BQL:
//   notify_dispatch        the MMIO dispatch down to handle_output
//   per popped request     virtqueue_pop (with EVENT_IDX it writes
//                          avail_event = avail->idx), virtio_blk_handle_request,
//                          bdrv_aio_readv -> linux-aio io_submit: pop_submit
// The loop pops until the ring is empty; QEMU 2.0's non-dataplane device
// does not switch notifications off around it (virtio_blk_handle_output of
// that era is just `while ((req = virtio_blk_get_request(s)))
// virtio_blk_handle_request(req, &mrb);` then virtio_submit_multiwrite, with
// no virtio_queue_set_notification), so avail_event follows every pop.
//
// The host block device serves each request after a latency with mean
// `disk_latency`: (disk_latency - disk_latency_exp_mean) +
// Exp(disk_latency_exp_mean), drawn from the device's own random stream,
// with no limit on requests in flight (the guest's 64 tags bound them).
//
// Completion, in the main loop: the AIO eventfd wakes ppoll (main_wakeup,
// outside the BQL), then under the BQL per completed request
// (qemu_laio_completion_cb -> virtio_blk_rw_complete ->
// virtio_blk_req_complete): virtqueue_push and virtio_notify, i.e.
// ShouldNotify (EVENT_IDX used_event test) and, if true, the transport's
// interrupt (VirtioBus::NotifyIrq: virtio-mmio's level-triggered line, or
// virtio-pci's MSI-X).
//
// QEMU's threads are tasks on host CPUs (models/cpu): one vCPU thread per
// vCPU, each on its own host CPU (it runs the guest; its host code runs in
// the guest's exits), and the main loop thread on another. The BQL is a
// sleeping mutex of those tasks with glibc's futex semantics
// (models/sync/mutex.h): a contended thread sleeps, the unlocker pays
// try_to_wake_up on its host CPU, and the woken thread runs after the host's
// wake-up latency and a context switch, retrying (arrivals barge).
//
// Every userspace exit also costs the vCPU thread's own path between
// ioctl(KVM_RUN) returning and the next KVM_RUN (exit_userspace:
// kvm_arch_post_run, the exit_reason switch, address_space_rw's region
// lookup, kvm_arch_pre_run). QEMU 2.0's kvm_cpu_exec takes the BQL right
// after KVM_RUN returns and drops it just before re-entry, so that path is
// serialized with all device emulation.
//
// A transport's register accesses (virtio-mmio's InterruptStatus and
// InterruptACK) are userspace exits too: the trapping vCPU thread takes the
// BQL and runs kvm_cpu_exec's path (LockForExit) before the access.
#ifndef VIOSIM_MODELS_QEMU_VIRTIO_BLK_DEVICE_H_
#define VIOSIM_MODELS_QEMU_VIRTIO_BLK_DEVICE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "models/cpu/param.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "models/sync/mutex.h"
#include "models/virtio/virtqueue.h"
#include "sim/distribution.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

struct QemuCosts {
  Param<sim::Time> exit_userspace;   // per userspace exit, kvm_cpu_exec's own path, under the BQL
  Param<sim::Time> notify_dispatch;  // per QueueNotify exit, under the BQL
  Param<sim::Time> pop_submit;       // per popped request, under the BQL
  Param<sim::Time> main_wakeup;      // main loop: ppoll return, eventfd read, io_getevents
  Param<sim::Time> complete;         // per completed request, under the BQL: push + notify test
  Param<sim::Time> mmio_register;    // the transport's status read or ack write, under the BQL
  Param<sim::Time> irq_line;         // one KVM_IRQ_LINE ioctl (or irqfd write), under the BQL
  Param<sim::Time> disk_latency;     // host block device, per 4 KiB read: the mean
  Param<sim::Time> disk_latency_exp_mean;  // its exponential part (0: fixed)
};

// The device's side of its transport (QEMU's VirtioBusState and its
// transport's callbacks).
class VirtioBus {
 public:
  virtual ~VirtioBus() = default;
  // virtio_notify() -> the transport's notify: the queue's interrupt, by
  // the main loop under the BQL.
  virtual sim::Task NotifyIrq() = 0;
};

struct QemuDeviceStats {
  uint64_t notifies = 0;     // QueueNotify writes handled
  uint64_t pops = 0;
  uint64_t completions = 0;
  uint64_t main_wakeups = 0;
  void Reset() { *this = QemuDeviceStats(); }
};

class VirtioBlkDevice {
 public:
  // `seed` seeds the disk's latency stream (run.seed). QEMU's threads run
  // on `host`: vCPU thread k on host_cpus[k], the main loop on
  // host_cpus.back(). REQUIRES: one more host CPU than vCPUs, all on `host`.
  VirtioBlkDevice(sim::Simulator& sim, Virtqueue& vq, Scheduler& host, std::vector<Cpu*> host_cpus,
                  const QemuCosts& costs, uint64_t seed = 1);
  // The transport the device interrupts through. REQUIRES: set before
  // Start (the transport sets it).
  void set_bus(VirtioBus* bus) { bus_ = bus; }
  // Starts QEMU's threads.
  void Start();

  // virtio_queue_notify, as vCPU thread `vcpu` runs it in a userspace exit
  // for the guest's notify write.
  sim::Task QueueNotify(int vcpu);
  // The notify through an ioeventfd: the main loop runs handle_output
  // (under the BQL) when it wakes. Does not suspend.
  sim::Task SignalIoeventfd();
  // A userspace exit of vCPU thread `vcpu` into a register access: the BQL
  // taken and kvm_cpu_exec's own path run; and the way back (the BQL
  // dropped before KVM_RUN).
  sim::Task LockForExit(int vcpu) { return LockForExit(ThreadCpu(vcpu)); }
  sim::Task UnlockAfterExit(int vcpu) { return bql_.Unlock(ThreadCpu(vcpu)); }
  const QemuCosts& costs() const { return costs_; }

  // qemu_global_mutex.
  const Mutex& bql() const { return bql_; }
  void ResetStats() {
    stats_.Reset();
    bql_.ResetStats();
  }

  const QemuDeviceStats& stats() const { return stats_; }
  int in_flight() const { return in_flight_; }

 private:
  sim::Task DiskIo(VirtQueueElement e);
  sim::Task HandleOutput();  // the pop loop, BQL held
  sim::Task LockForExit(Cpu& thread_cpu);  // a userspace exit: take the BQL, then kvm_cpu_exec's own path
  sim::Task MainLoop();
  sim::Task VcpuThread();  // in the guest: its host code runs inside the guest's exits
  Cpu& ThreadCpu(int vcpu) const { return *host_cpus_[static_cast<size_t>(vcpu)]; }

  sim::Simulator* sim_;
  Virtqueue* vq_;
  Scheduler* host_;
  std::vector<Cpu*> host_cpus_;
  std::vector<std::unique_ptr<Task>> threads_;  // the vCPU threads, then the main loop
  Mutex bql_;
  QemuCosts costs_;
  sim::Distribution disk_spread_;  // Exp(disk_latency_exp_mean)
  sim::Rng disk_rng_;
  VirtioBus* bus_ = nullptr;
  std::deque<VirtQueueElement> done_;  // completed by the disk, not yet seen by the main loop
  sim::Signal done_signal_;
  int in_flight_ = 0;
  bool notify_pending_ = false;  // ioeventfd signalled, main loop not yet run
  QemuDeviceStats stats_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_QEMU_VIRTIO_BLK_DEVICE_H_
