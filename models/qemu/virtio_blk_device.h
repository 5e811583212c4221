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
//                          bdrv_aio_readv and the backend's submission: pop_submit
//   aio=threads            thread_pool_submit_aio -> qemu_sem_post: a futex
//                          wake (the host's syscall and try_to_wake_up) of
//                          an idle pool worker, if one sleeps on the semaphore
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
// The backend (QEMU's -drive aio=, block/raw-posix.c):
//   aio=native   Linux AIO: io_submit in pop_submit; the AIO eventfd wakes
//                the main loop, which reads the events (main_wakeup).
//   aio=threads  QEMU 2.0's default, the thread pool (thread-pool.c): up to
//                64 workers (max_threads), each a host task, sleeping on the
//                pool's semaphore; a posted request wakes one. The worker
//                runs preadv (a syscall, then asleep until the host block
//                device completes and its interrupt wakes it), marks the
//                request done and schedules the pool's bottom half
//                (qemu_bh_schedule -> aio_notify: a write to the main
//                loop's eventfd, a syscall), and goes back to the semaphore.
//
// Completion, in the main loop (main_loop_wait -> os_host_main_loop_wait):
// the main loop's thread sleeps in ppoll until an eventfd it polls is
// written -- a worker's aio_notify (aio=threads), the host's AIO completion
// in the disk's interrupt, taken on the main loop's CPU (aio=native), the
// ioeventfd (in the notifying vCPU thread's exit) -- whose writer pays
// try_to_wake_up; then ppoll returns (main_wakeup, outside the BQL), the
// BQL is taken, and glib
// dispatches in passes, each costing main_loop_pass. A pass with a bottom
// half scheduled polls with a zero timeout and keeps the BQL; the loop
// drops it only before a pass that may sleep. In a pass:
//   the ioeventfd notify's handler (handle_output), when signalled;
//   the completions found: with aio=threads, thread_pool_completion_bh per
//     done request (pool_complete), whose callback re-enters the request's
//     coroutine (bdrv_co_io_em_complete), which schedules bdrv_co_em_bh;
//     with aio=native the same through qemu_laio_completion_cb, its cost in
//     main_wakeup;
//   the bdrv_co_em_bh halves scheduled by an earlier pass (a bottom half
//     scheduled during aio_bh_poll's walk runs in the next pass): per request
//     virtio_blk_rw_complete -> virtio_blk_req_complete (complete):
//     virtqueue_push and virtio_notify, i.e. ShouldNotify (EVENT_IDX
//     used_event test) and, if true, the transport's interrupt
//     (VirtioBus::NotifyIrq: virtio-mmio's level-triggered line, or
//     virtio-pci's MSI-X).
// So a wake-up that finds completions pays at least two passes under the
// BQL, however many requests it completes.
//
// QEMU's threads are tasks on host CPUs (models/cpu), pinned as below, or
// pooled: every thread may run on any host CPU of the pool, where the
// host's scheduler places it. Pinned: one vCPU thread per
// vCPU, each on its own host CPU (it runs the guest; given Kvm::RunLoop as
// its body it runs KVM_RUN's loop, each exit's host side in its own
// context, else its host code runs in the guest's exits), the main loop
// thread on another, and with
// aio=threads the pool's workers together on one more (a host CPU for each
// role; a worker's own CPU work per request is two system calls, its
// wake-ups and switches, a few us). The BQL is a
// sleeping mutex of those tasks with glibc's futex semantics
// (models/sync/mutex.h): a contended thread sleeps, the unlocker pays
// try_to_wake_up on its host CPU, and the woken thread runs after the host's
// wake-up latency and a context switch, retrying (arrivals barge). Each
// thread's work is charged on its host CPU (Cpu::Run), so a thread that
// does not run does not progress.
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
#include <functional>
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
  Param<sim::Time> main_loop_pass;   // per main-loop pass under the BQL (glib dispatch)
  Param<sim::Time> pool_complete;    // aio=threads: per request, thread_pool_completion_bh's work
};

// QEMU's -drive aio= backend.
enum class QemuAio { kNative, kThreads };

// What the pool's threads cost on the host (aio=threads).
struct QemuHostCosts {
  sim::Time syscall;  // one system call's entry and exit (futex, preadv, write)
};

// The device's side of its transport (QEMU's VirtioBusState and its
// transport's callbacks).
class VirtioBus {
 public:
  virtual ~VirtioBus() = default;
  // virtio_notify() -> the transport's notify: the queue's interrupt, by
  // the main loop under the BQL (`main`, its thread: the ioctl's work is
  // charged on its CPU).
  virtual sim::Task NotifyIrq(Task& main) = 0;
};

struct QemuDeviceStats {
  uint64_t notifies = 0;     // QueueNotify writes handled
  uint64_t pops = 0;
  uint64_t completions = 0;
  uint64_t main_wakeups = 0;
  uint64_t main_passes = 0;   // main-loop passes under the BQL
  uint64_t pool_wakes = 0;    // aio=threads: futex wakes of a sleeping worker
  void Reset() { *this = QemuDeviceStats(); }
};

class VirtioBlkDevice {
 public:
  // `seed` seeds the disk's latency stream (run.seed). QEMU's threads run
  // on `host`: pinned (not `pooled`), vCPU thread k on host_cpus[k], the
  // main loop on host_cpus[vcpus], and with aio=threads the pool's workers
  // on host_cpus[vcpus + 1]; `pooled`, every thread may run on every one
  // of host_cpus, where `host`'s policy places it. REQUIRES: host_cpus on
  // `host`, holding the vCPU threads' and the main loop's, then one more
  // with aio=threads (pinned) or at least one (pooled); `vcpus` >= 1.
  VirtioBlkDevice(sim::Simulator& sim, Virtqueue& vq, Scheduler& host, std::vector<Cpu*> host_cpus, int vcpus,
                  const QemuCosts& costs, QemuAio aio = QemuAio::kNative, QemuHostCosts host_costs = {},
                  uint64_t seed = 1, bool pooled = false);
  // thread-pool.c's max_threads: the pool's workers (all started at once:
  // the steady state of a pool that spawns on demand and idles out after
  // 10 s).
  static constexpr int kPoolThreads = 64;
  // The transport the device interrupts through. REQUIRES: set before
  // Start (the transport sets it).
  void set_bus(VirtioBus* bus) { bus_ = bus; }
  // The body of vCPU thread k, given its task: by default parked for good
  // (the thread's host code then runs inside the guest's exits, timed on
  // no host CPU); Kvm::RunLoop for a vCPU thread that runs the guest.
  using VcpuThreadBody = std::function<sim::Task(int k, Task& thread)>;
  // Starts QEMU's threads.
  void Start(VcpuThreadBody vcpu_thread = {});

  // virtio_queue_notify, as vCPU thread `vcpu` runs it in a userspace exit
  // for the guest's notify write.
  sim::Task QueueNotify(int vcpu);
  // The notify through an ioeventfd, in the exit of vCPU thread `vcpu`:
  // the main loop is woken and runs handle_output (under the BQL).
  sim::Task SignalIoeventfd(int vcpu);
  // A userspace exit of vCPU thread `vcpu` into a register access: the BQL
  // taken and kvm_cpu_exec's own path run; and the way back (the BQL
  // dropped before KVM_RUN).
  sim::Task LockForExit(int vcpu);
  sim::Task UnlockAfterExit(int vcpu) { return bql_.Unlock(ThreadCpu(vcpu)); }
  // The host CPU vCPU thread `vcpu` runs on now (its register accesses'
  // work is charged there). REQUIRES: after Start.
  Cpu& ThreadCpu(int vcpu) const { return *threads_[static_cast<size_t>(vcpu)]->cpu(); }
  Task& thread(int vcpu) const { return *threads_[static_cast<size_t>(vcpu)]; }
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
  // Each step's work is charged on the CPU the thread is on then (a pooled
  // thread may move when preempted).
  sim::Task HandleOutput(Task& thread);  // the pop loop, BQL held
  sim::Task PoolSubmit(Task& thread, VirtQueueElement e);  // thread_pool_submit_aio's qemu_sem_post
  sim::Task PoolWorker(int w);                          // worker_thread
  sim::Task PreadvDone(Task& worker, Cpu& cpu);         // the host disk's completion
  sim::Task WakeWorker(Task& worker, Cpu& cpu);         // its interrupt handler on the worker's CPU
  sim::Task Pass(Task& main);                           // one main-loop pass under the BQL
  sim::Task MainLoop();
  Scheduler::WakeUpAwaiter WakeMainLoop(Cpu& waker);
  sim::Task VcpuThread();  // in the guest: its host code runs inside the guest's exits

  sim::Simulator* sim_;
  Virtqueue* vq_;
  Scheduler* host_;
  std::vector<Cpu*> host_cpus_;
  int vcpus_;
  bool pooled_;
  std::vector<std::unique_ptr<Task>> threads_;  // the vCPU threads, the main loop, the pool's workers
  Mutex bql_;
  QemuCosts costs_;
  QemuAio aio_;
  QemuHostCosts host_costs_;
  sim::Distribution disk_spread_;  // Exp(disk_latency_exp_mean)
  sim::Rng disk_rng_;
  VirtioBus* bus_ = nullptr;
  std::deque<VirtQueueElement> done_;  // completed by the backend, not yet seen by the main loop
  std::deque<VirtQueueElement> em_bh_;  // bdrv_co_em_bh scheduled, not yet run
  // aio=threads: the pool's request_list, its semaphore's count and the
  // workers asleep on it (futex order: the first to sleep is woken first).
  std::deque<VirtQueueElement> pool_requests_;
  int sem_count_ = 0;
  std::deque<Task*> sem_sleepers_;
  std::vector<VirtQueueElement> worker_req_;  // the request each worker runs
  int in_flight_ = 0;
  bool notify_pending_ = false;  // ioeventfd signalled, main loop not yet run
  QemuDeviceStats stats_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_QEMU_VIRTIO_BLK_DEVICE_H_
