#include "models/block/nvme_queue.h"

#include "models/block/blk_mq.h"

namespace models {

NvmeQueue::NvmeQueue(sim::Simulator& sim, BlkMq& blk_mq, NvmeDevice& device, Cpu& cpu, int qid,
                     bool polled)
    : blk_mq_(&blk_mq), device_(&device), cpu_(&cpu), qid_(qid), polled_(polled), cq_(sim), irq_done_(sim) {
  if (!polled_) sim.Spawn(Msi());
}

// nvme_queue_rq(), drivers/nvme/host/pci.c, Linux 5.13: nvme_setup_cmd(),
// nvme_map_data() (PRPs for each 4 KiB page), then nvme_submit_cmd(nvmeq,
// &cmnd, bd->last): the command is copied to the SQ tail and the doorbell
// written only when `last`.
sim::Task NvmeQueue::QueueRq(Cpu& cpu, NvmeRequest& req, bool last) {
  const HostCosts& costs = blk_mq_->costs();
  const BlockRequest& rq = *req.bio;
  const int64_t pages = rq.bytes == 0 ? 1 : (static_cast<int64_t>(rq.bytes) + 4095) / 4096;
  co_await cpu.Run(costs.nvme_queue_rq.value + costs.nvme_map_data_per_page.value * (pages - 1));
  NvmeCommand& cmd = req.cmd;
  cmd.write = rq.write;
  cmd.bytes = rq.bytes;
  cmd.offset = rq.offset;
  cmd.sq = qid_;
  cmd.cq = &cq_;
  cmd.next = nullptr;
  if (sq_tail_ != nullptr) {
    sq_tail_->next = &cmd;
  } else {
    sq_head_ = &cmd;
  }
  sq_tail_ = &cmd;
  ++unsubmitted_;
  if (last) {
    co_await cpu.Run(costs.doorbell_write.value);
    WriteSqDb();
  }
}

// nvme_commit_rqs(): blk-mq's hook for a batch that ended without `last`.
sim::Task NvmeQueue::CommitRqs(Cpu& cpu) {
  if (sq_head_ == nullptr) co_return;
  co_await cpu.Run(blk_mq_->costs().doorbell_write.value);
  WriteSqDb();
}

// nvme_write_sq_db(): the new tail reaches the controller, which fetches
// every command up to it.
void NvmeQueue::WriteSqDb() {
  ++blk_mq_->stats_.doorbells;
  NvmeCommand* c = sq_head_;
  sq_head_ = sq_tail_ = nullptr;
  unsubmitted_ = 0;
  while (c != nullptr) {
    NvmeCommand* next = c->next;
    device_->Submit(*c);
    c = next;
  }
}

// The queue's MSI-X vector, affine to its CPU: an entry posted to an idle
// completion queue raises the interrupt. The handler takes every entry it
// finds, including those posted while it runs; an MSI that arrives
// meanwhile finds them handled (its spurious second entry is not charged).
sim::Task NvmeQueue::Msi() {
  for (;;) {
    while (cq_.empty()) co_await cq_.WaitForEntry();
    in_irq_ = true;
    cpu_->RaiseIrq(NvmeIrq());
    while (in_irq_) co_await irq_done_.Wait();
  }
}

// common_interrupt() -> nvme_irq() -> nvme_process_cq()
// (drivers/nvme/host/pci.c, Linux 5.13), on the queue's CPU.
sim::Task NvmeQueue::NvmeIrq() {
  const HostCosts& costs = blk_mq_->costs();
  Cpu& cpu = *cpu_;
  // Entry, and the irq_exit() that follows the handler.
  co_await cpu.Run(costs.irq_entry_exit.value);
  ++blk_mq_->stats_.irqs;
  // nvme_irq(): phase checks and the CQ head doorbell.
  co_await cpu.Run(costs.nvme_irq.value);
  while (NvmeCommand* c = cq_.Pop()) {
    // nvme_handle_cqe() -> blk_mq_complete_request() on this CPU (the
    // submitting one: no IPI) -> nvme_pci_complete_rq().
    co_await cpu.Run(costs.complete_request.value);
    co_await blk_mq_->CompleteRequest(cpu, *static_cast<NvmeRequest*>(c->host), /*polled=*/false);
  }
  in_irq_ = false;
  irq_done_.NotifyAll();
}

// blk_poll() with classic polling (io_poll_delay -1), block/blk-mq.c, Linux
// 5.13: loop on q->mq_ops->poll, i.e. nvme_poll(), until the request is
// done. The CPU spins between checks; a check that finds completion entries
// reaps them all.
sim::Task NvmeQueue::Poll(Cpu& cpu, BlockRequest& rq) {
  const HostCosts& costs = blk_mq_->costs();
  while (!rq.done) {
    if (cq_.empty()) {
      co_await cpu.SpinUntil(cq_.WaitForEntry(), CpuTime::kPoll);
      continue;
    }
    // nvme_poll(): cq_poll_lock, nvme_process_cq(), CQ head doorbell.
    co_await cpu.Run(costs.poll_reap.value);
    while (NvmeCommand* c = cq_.Pop()) {
      co_await cpu.Run(costs.complete_request.value);
      co_await blk_mq_->CompleteRequest(cpu, *static_cast<NvmeRequest*>(c->host), /*polled=*/true);
    }
  }
}

}  // namespace models
