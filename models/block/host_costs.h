// CPU costs of the bare-metal Linux I/O path on an x86 host, per step, each
// with its source. The block stack (BlkMq, NvmeQueue) charges the block and
// driver steps; issuers (fio's engines) charge `syscall`; the scheduler
// charges its steps (sched(), models/cpu/sched.h).
#ifndef VIOSIM_MODELS_BLOCK_HOST_COSTS_H_
#define VIOSIM_MODELS_BLOCK_HOST_COSTS_H_

#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "sim/time.h"

namespace models {

struct HostCosts {
  // One system call's entry and exit (the call's own work not included).
  Param<sim::Time> syscall;
  // blk_mq_submit_bio(): bio to request, tag, plug bookkeeping.
  Param<sim::Time> blk_mq_submit_bio;
  // nvme_queue_rq(): nvme_setup_cmd, nvme_map_data for one 4 KiB page,
  // copying the command into the submission queue.
  Param<sim::Time> nvme_queue_rq;
  // nvme_map_data(): each further 4 KiB page (PRP list entries).
  Param<sim::Time> nvme_map_data_per_page;
  // nvme_write_sq_db(): the MMIO write of the submission queue doorbell.
  Param<sim::Time> doorbell_write;
  // Taking an interrupt: delivery of the MSI-X message, common_interrupt
  // entry, irq_exit; charged once per interrupt.
  Param<sim::Time> irq_entry_exit;
  // nvme_irq(): once per interrupt, CQ phase checks and the CQ head
  // doorbell write.
  Param<sim::Time> nvme_irq;
  // Per completion entry: nvme_handle_cqe -> blk_mq_complete_request ->
  // nvme_pci_complete_rq (DMA unmap) -> blk_mq_end_request (bio_endio, tag
  // freed). The issuer's own end_io work is the issuer's.
  Param<sim::Time> complete_request;
  // nvme_poll() finding completions: cq_poll_lock, phase checks, the CQ
  // head doorbell; once per poll that reaps (each entry also pays
  // complete_request).
  Param<sim::Time> poll_reap;
  // The scheduler (SchedCosts).
  Param<sim::Time> context_switch;
  Param<sim::Time> try_to_wake_up;
  Param<sim::Time> try_to_wake_up_fast;
  Param<sim::Time> wakeup_latency;

  SchedCosts sched() const {
    return SchedCosts{context_switch.value, try_to_wake_up.value, try_to_wake_up_fast.value, wakeup_latency.value};
  }
};

// A 2017-2021 two-socket Xeon server, Linux 5.x, no virtualization. Sources
// in host_costs.cc; most figures are estimates bracketed by sourced totals.
HostCosts XeonHostCosts();

}  // namespace models

#endif  // VIOSIM_MODELS_BLOCK_HOST_COSTS_H_
