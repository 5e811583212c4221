// The interface between an I/O issuer (fio's engines, models/fio) and the
// storage stack beneath it (blk-mq, a driver, a device; bare metal now, a
// virtio guest later).
//
// A request goes down through Submit() on the submitting CPU and comes back
// through its CompletionSink, called in simulated time on the CPU that
// handles the completion (an interrupt handler's CPU, or the polling CPU).
#ifndef VIOSIM_MODELS_BLOCK_BLOCK_STACK_H_
#define VIOSIM_MODELS_BLOCK_BLOCK_STACK_H_

#include <cstdint>

#include "models/cpu/cpu.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

struct BlockRequest;

// Told when a request has completed. Runs inside the completion path, in
// its context (e.g. blk_mq_complete_request in an interrupt handler, or the
// polling task) and on its CPU: `co_await sink->Complete(rq, cpu)`. What it
// does costs time there, under whatever the caller holds (a wake-up of the
// issuer, typically).
class CompletionSink {
 public:
  virtual ~CompletionSink() = default;
  virtual sim::Task Complete(BlockRequest& rq, Cpu& cpu) = 0;
};

struct BlockRequest {
  bool write = false;
  uint64_t offset = 0;  // bytes
  uint32_t bytes = 0;
  // REQ_HIPRI: the issuer polls for the completion (Poll) instead of
  // sleeping until an interrupt.
  bool polled = false;
  CompletionSink* sink = nullptr;
  void* issuer = nullptr;  // the issuer's own handle (e.g. fio's io_u)

  // Filled by the stack, for latency breakdowns.
  sim::Time device_start;
  sim::Time device_end;
  bool done = false;
};

class BlockStack {
 public:
  virtual ~BlockStack() = default;

  // The submission path, run by the current task of `cpu`: blk_mq_submit_bio and the driver's
  // queue_rq, ending with the request handed to the device. Returns when
  // `cpu` is done with it (the request is then in flight). `last` is false
  // while more requests of the same batch follow (the plug): a driver may
  // defer its doorbell to the last one.
  // REQUIRES: rq.sink set; rq outlives its completion.
  virtual sim::Task Submit(Cpu& cpu, BlockRequest& rq, bool last) = 0;

  // Polled completion (blk_poll / io_uring IOPOLL): spins on `cpu` until
  // `rq` has completed, reaping whatever completes on the way (their sinks
  // are called). REQUIRES: rq was submitted with polled = true.
  virtual sim::Task Poll(Cpu& cpu, BlockRequest& rq) = 0;

  // Statistics reset at the end of ramp/warm-up.
  virtual void ResetStats() {}
};

}  // namespace models

#endif  // VIOSIM_MODELS_BLOCK_BLOCK_STACK_H_
