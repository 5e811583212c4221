// Host cost figures. No per-function measurement of the bare-metal block
// path was found, so most figures here are estimates, chosen to fit inside
// these sourced totals:
//
//   - fio libaio QD32 4 KiB random read on a P4600 (spdk/spdk issue #968,
//     2019): slat 2.0 us mean for the whole io_submit(1) path (syscall,
//     aio, direct-I/O setup, blk-mq, nvme_queue_rq, doorbell); sys CPU
//     43.5% at 300k IOPS = 1.45 us of kernel time per I/O, all steps.
//   - io_uring polled 512 B reads on one core, batched (Jens Axboe,
//     linux-block, August 2020: 2.58M IOPS at QD128 on one Ice Lake-SP
//     core with a P5800X): 0.39 us of CPU per I/O for the whole path.
//   - thread context switch by pipe ping-pong: 1.07 us per switch on an
//     11th-gen Core i7, Linux 6.6, which also pays a pipe write, a read and
//     a wakeup (a low-authority blog measurement).
//   - try_to_wake_up, estimated by counting cache-line transfers (pi_lock,
//     rq lock, the task's state) at ~50-100 ns each.
// Whatever these figures miss of the 8.9 us P4800X QD1 mean goes to the
// device (models/nvme/profiles.cc), so the split is an estimate but the
// total is measured.
#include "models/block/host_costs.h"

namespace models {

HostCosts XeonHostCosts() {
  using sim::Time;
  HostCosts c;
  c.syscall = {Time::Nanos(100),
               {SourceKind::kEstimated,
                "Entry and exit of one syscall on a 2017-2021 Xeon, ~100 ns without page-table "
                "isolation; a syscall with its work (io_submit, io_getevents) is commonly "
                "0.3-0.5 us"}};
  c.blk_mq_submit_bio = {Time::Nanos(350),
                         {SourceKind::kEstimated,
                          "Share of the 2.0 us libaio slat (spdk#968) and of 1.45 us kernel CPU "
                          "per I/O (same run); above the 0.39 us whole-path figure of batched "
                          "io_uring polling (Axboe 2020), which amortizes it"}};
  c.nvme_queue_rq = {Time::Nanos(300),
                     {SourceKind::kEstimated,
                      "Share of the same 2.0 us slat and 1.45 us kernel CPU per I/O (spdk#968): "
                      "command setup, one-segment DMA map, SQ copy"}};
  c.nvme_map_data_per_page = {Time::Nanos(10),
                              {SourceKind::kEstimated,
                               "One PRP entry and its DMA address per further 4 KiB page; a few "
                               "dozen cycles"}};
  c.doorbell_write = {Time::Nanos(50),
                      {SourceKind::kEstimated,
                       "A posted MMIO write after a write barrier: ~100-200 cycles of CPU, the "
                       "write itself travels on without the CPU"}};
  c.irq_entry_exit = {Time::Nanos(300),
                      {SourceKind::kEstimated,
                       "Bare-metal interrupt entry, EOI and exit; below a guest's entry + "
                       "handler + EOI (estimated 0.5-1 us), and below the 0.71 us average host "
                       "EXTERNAL_INTERRUPT exit handling (perf kvm stat on a Skylake server, "
                       "Wanpeng Li's 'KVM: LAPIC: Inject timer interrupt via posted interrupt' "
                       "commit message), which adds a VM exit"}};
  c.nvme_irq = {Time::Nanos(100),
                {SourceKind::kEstimated,
                 "CQE phase checks and one CQ head doorbell MMIO write per interrupt"}};
  c.complete_request = {Time::Nanos(400),
                        {SourceKind::kEstimated,
                         "Completion share of the 1.45 us kernel CPU per I/O (spdk#968, with "
                         "the submission estimates above and one interrupt per I/O)"}};
  c.poll_reap = {Time::Nanos(100),
                 {SourceKind::kEstimated,
                  "nvme_poll's lock, CQE check and head doorbell; the same order as nvme_irq "
                  "without the interrupt"}};
  c.context_switch = {Time::Nanos(500),
                      {SourceKind::kEstimated,
                       "About half the 1.07 us per-switch pipe ping-pong figure (see the file comment), "
                       "which also pays a pipe write, a pipe read and a wakeup per switch"}};
  c.try_to_wake_up = {Time::Nanos(300),
                      {SourceKind::kEstimated,
                       "Waking a sleeping task on the waker's own CPU (no IPI): pi_lock, rq "
                       "lock, enqueue, check_preempt; the remote cases are estimated at "
                       "0.2-0.3 us (rq lock) and 0.5-1.5 us (with an IPI)"}};
  c.try_to_wake_up_fast = {Time::Zero(),
                           {SourceKind::kEstimated,
                            "A state check (and ttwu_runnable's rq lock) of a task already running or "
                            "queued: tens of ns at most, not charged"}};
  c.wakeup_latency = {Time::Zero(),
                      {SourceKind::kEstimated,
                       "Not charged: the cases wake tasks on their own or an already running CPU; a "
                       "reschedule IPI to an idle CPU costs 0.5-1.5 us (see try_to_wake_up)"}};
  return c;
}

}  // namespace models
