// The multi-queue block layer on a bare-metal host with an NVMe drive
// (block/blk-mq.c, drivers/nvme/host/pci.c, Linux 5.13), as a BlockStack.
//
// Submission, on the submitting CPU:
//   BlkMq::Submit        blk_mq_submit_bio(): this CPU's software context
//                        maps to its own hardware queue (NVMe gives every
//                        CPU one); a tag from that queue, sleeping for one
//                        when all are taken (after pushing out the requests
//                        already queued: commit_rqs).
//   NvmeQueue::QueueRq   nvme_queue_rq(): the command into the submission
//                        queue; the doorbell on the last request of a batch
//                        (plugging: `last` false defers it), which hands
//                        every command queued since to the device.
// Completion, by interrupt, on the same CPU (the queue's MSI-X vector is
// affine to it):
//   NvmeQueue::Irq       common_interrupt -> nvme_irq() -> per entry
//                        nvme_handle_cqe -> BlkMq::CompleteRequest
//                        (blk_mq_complete_request / blk_mq_end_request):
//                        the CompletionSink runs, then the tag is freed.
// or by polling (REQ_HIPRI): polled requests go to a second hardware queue
// per CPU that has no interrupt vector (nvme.poll_queues), and
//   BlkMq::Poll          blk_poll() -> NvmeQueue::Poll (nvme_poll()): the
//                        CPU spins until the request completes, reaping
//                        every completion it finds.
//
// Requests are preallocated per tag (blk-mq's static_rqs), so a submission
// allocates nothing but coroutine frames from the pool. The only virtual
// call per I/O is the CompletionSink.
#ifndef VIOSIM_MODELS_BLOCK_BLK_MQ_H_
#define VIOSIM_MODELS_BLOCK_BLK_MQ_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "models/block/block_stack.h"
#include "models/block/host_costs.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "models/nvme/nvme_device.h"
#include "sim/simulator.h"
#include "sim/task.h"

namespace models {

class NvmeQueue;
struct BlkMqHwCtx;

struct BlkMqParams {
  // Tags per hardware queue: the NVMe driver's io_queue_depth (1024) less
  // the one slot a full ring keeps empty.
  int queue_depth = 1023;
  // One polled hardware queue per CPU (nvme.poll_queues). Without them a
  // polled request goes to the interrupt-driven queue and Poll spins until
  // the interrupt handler has completed it.
  bool poll_queues = true;
};

struct BlkMqStats {
  uint64_t submitted = 0;
  uint64_t completed = 0;
  uint64_t irqs = 0;                // interrupts taken
  uint64_t irq_completions = 0;     // requests completed by an interrupt handler
  uint64_t polled_completions = 0;  // requests completed by a poller
  uint64_t tag_waits = 0;           // submitters that found no tag
  uint64_t doorbells = 0;           // SQ doorbell writes
  int max_in_flight = 0;            // requests holding a tag, largest seen
};

// struct request with the NVMe driver's per-request data (struct
// nvme_iod), one per tag.
struct NvmeRequest {
  BlockRequest* bio = nullptr;  // the issuer's request while the tag is held
  NvmeCommand cmd;
  int tag = -1;
  BlkMqHwCtx* hctx = nullptr;
};

// struct blk_mq_hw_ctx with its tags (struct blk_mq_tags).
struct BlkMqHwCtx {
  BlkMqHwCtx(sim::Simulator& sim, int index, Cpu& cpu, bool poll, int depth);
  ~BlkMqHwCtx();

  int index;
  Cpu* cpu;
  bool poll;                       // HCTX_TYPE_POLL: no interrupt vector
  std::vector<NvmeRequest> rqs;    // by tag
  std::vector<int> free_tags;      // a stack
  int in_flight = 0;
  std::deque<Task*> tag_waiters;   // submitters asleep for a tag, FIFO
  sim::Signal completed;           // pollers of an interrupt-driven queue
  std::unique_ptr<NvmeQueue> nvmeq;
};

class BlkMq final : public BlockStack {
 public:
  // One interrupt-driven hardware queue per CPU of `cpus` (its vector on
  // that CPU) and, with params.poll_queues, one polled queue per CPU.
  // REQUIRES: `cpus`, `device` outlive the stack; CPU ids distinct and >= 0.
  BlkMq(sim::Simulator& sim, std::vector<Cpu*> cpus, NvmeDevice& device, const HostCosts& costs,
        const BlkMqParams& params = BlkMqParams());
  ~BlkMq() override;

  // blk_mq_submit_bio(). REQUIRES: `cpu` is one of the stack's CPUs.
  sim::Task Submit(Cpu& cpu, BlockRequest& rq, bool last) override;
  // blk_poll(). REQUIRES: called on the CPU that submitted `rq`.
  sim::Task Poll(Cpu& cpu, BlockRequest& rq) override;
  // Restarts the stack's counters and the device's.
  void ResetStats() override;

  // blk_mq_complete_request() -> blk_mq_end_request() for a request whose
  // completion entry the driver has handled (its cost already charged):
  // fills rq's device times, runs the sink on `cpu`, frees the tag.
  sim::Task CompleteRequest(Cpu& cpu, NvmeRequest& req, bool polled);

  const BlkMqStats& stats() const { return stats_; }
  // Requests holding a tag now.
  int in_flight() const { return in_flight_; }
  const HostCosts& costs() const { return costs_; }
  const BlkMqParams& params() const { return params_; }
  NvmeDevice& device() const { return *device_; }
  // The hardware queue a request from `cpu` goes to (blk_mq_map_queue).
  BlkMqHwCtx& MapQueue(const Cpu& cpu, bool polled);

 private:
  friend class NvmeQueue;  // counts interrupts and doorbells
  sim::Task SpinForInterrupt(Cpu& cpu, BlockRequest& rq, BlkMqHwCtx& h);

  sim::Simulator* sim_;
  NvmeDevice* device_;
  HostCosts costs_;
  BlkMqParams params_;
  std::vector<int> hctx_of_cpu_;  // by Cpu::id(): index of its default queue
  std::vector<std::unique_ptr<BlkMqHwCtx>> hctxs_;  // default queues, then poll queues
  int ncpus_ = 0;
  int in_flight_ = 0;
  BlkMqStats stats_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_BLOCK_BLK_MQ_H_
