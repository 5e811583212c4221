// One queue pair of the NVMe PCI driver, struct nvme_queue
// (drivers/nvme/host/pci.c, Linux 5.13): a submission queue the host fills
// and rings, a completion queue the device fills, and, unless it is a poll
// queue, an MSI-X vector whose handler runs on the queue's CPU.
#ifndef VIOSIM_MODELS_BLOCK_NVME_QUEUE_H_
#define VIOSIM_MODELS_BLOCK_NVME_QUEUE_H_

#include <cstdint>

#include "models/block/block_stack.h"
#include "models/cpu/cpu.h"
#include "models/nvme/nvme_device.h"
#include "sim/simulator.h"
#include "sim/task.h"

namespace models {

class BlkMq;
struct NvmeRequest;

class NvmeQueue {
 public:
  // Starts the interrupt vector's process unless `polled`.
  NvmeQueue(sim::Simulator& sim, BlkMq& blk_mq, NvmeDevice& device, Cpu& cpu, int qid, bool polled);
  NvmeQueue(const NvmeQueue&) = delete;
  NvmeQueue& operator=(const NvmeQueue&) = delete;

  int qid() const { return qid_; }
  bool polled() const { return polled_; }
  Cpu& cpu() const { return *cpu_; }
  NvmeCompletionQueue& cq() { return cq_; }
  // Commands in the submission queue whose doorbell has not rung yet.
  int unsubmitted() const { return unsubmitted_; }

  // nvme_queue_rq(): builds the command for `req` on `cpu` and queues it;
  // rings the doorbell if `last`.
  sim::Task QueueRq(Cpu& cpu, NvmeRequest& req, bool last);
  // nvme_commit_rqs(): rings the doorbell for commands queued without one.
  sim::Task CommitRqs(Cpu& cpu);
  // blk_poll() -> nvme_poll(): spins on `cpu` until `rq` is done, reaping
  // whatever completions it finds. REQUIRES: a poll queue.
  sim::Task Poll(Cpu& cpu, BlockRequest& rq);

 private:
  // The MSI-X vector (a process for the queue's lifetime) and its handler.
  sim::Task Msi();
  sim::Task NvmeIrq();
  // nvme_write_sq_db(): the device sees the new submission queue tail.
  void WriteSqDb();

  BlkMq* blk_mq_;
  NvmeDevice* device_;
  Cpu* cpu_;
  int qid_;
  bool polled_;
  NvmeCommand* sq_head_ = nullptr;  // queued, doorbell not yet rung
  NvmeCommand* sq_tail_ = nullptr;
  int unsubmitted_ = 0;
  NvmeCompletionQueue cq_;
  bool in_irq_ = false;  // the vector is raised and its handler not done
  sim::Signal irq_done_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_BLOCK_NVME_QUEUE_H_
