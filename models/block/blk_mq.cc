#include "models/block/blk_mq.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "models/block/nvme_queue.h"
#include "sim/check.h"

namespace models {

BlkMqHwCtx::BlkMqHwCtx(sim::Simulator& sim, int index, Cpu& cpu, bool poll, int depth)
    : index(index), cpu(&cpu), poll(poll), rqs(static_cast<size_t>(depth)), completed(sim) {
  free_tags.reserve(rqs.size());
  for (int tag = depth; tag-- > 0;) free_tags.push_back(tag);  // tag 0 on top
  for (int tag = 0; tag < depth; ++tag) {
    rqs[tag].tag = tag;
    rqs[tag].hctx = this;
    rqs[tag].cmd.host = &rqs[tag];
  }
}

BlkMqHwCtx::~BlkMqHwCtx() = default;

BlkMq::BlkMq(sim::Simulator& sim, std::vector<Cpu*> cpus, NvmeDevice& device, const HostCosts& costs,
             const BlkMqParams& params)
    : sim_(&sim), device_(&device), costs_(costs), params_(params), ncpus_(static_cast<int>(cpus.size())) {
  params_.queue_depth = std::max(1, params_.queue_depth);
  const int types = params_.poll_queues ? 2 : 1;
  for (int type = 0; type < types; ++type) {
    for (int i = 0; i < ncpus_; ++i) {
      Cpu& cpu = *cpus[i];
      const int index = static_cast<int>(hctxs_.size());
      auto h = std::make_unique<BlkMqHwCtx>(sim, index, cpu, type == 1, params_.queue_depth);
      // qid 0 is the admin queue; I/O queues count from 1.
      h->nvmeq = std::make_unique<NvmeQueue>(sim, *this, device, cpu, index + 1, type == 1);
      hctxs_.push_back(std::move(h));
    }
  }
  for (int i = 0; i < ncpus_; ++i) {
    const int id = cpus[i]->id();
    if (id >= static_cast<int>(hctx_of_cpu_.size())) hctx_of_cpu_.resize(id + 1, -1);
    hctx_of_cpu_[id] = i;
  }
}

BlkMq::~BlkMq() = default;

// blk_mq_map_queue(): the software context of `cpu` (struct blk_mq_ctx)
// maps to the CPU's own hardware queue of the request's type.
BlkMqHwCtx& BlkMq::MapQueue(const Cpu& cpu, bool polled) {
  const int id = cpu.id();
  VIOSIM_CHECK(id >= 0 && id < static_cast<int>(hctx_of_cpu_.size()) && hctx_of_cpu_[id] >= 0,
               "the submitting CPU is mapped to a hardware queue");
  int index = hctx_of_cpu_[id];
  if (polled && params_.poll_queues) index += ncpus_;
  return *hctxs_[index];
}

// blk_mq_submit_bio(), block/blk-mq.c, Linux 5.13, with no I/O scheduler:
// blk_mq_get_request (a tag, the preallocated request), then straight to
// the driver; `last` carries the plug's batch boundary to queue_rq.
sim::Task BlkMq::Submit(Cpu& cpu, BlockRequest& rq, bool last) {
  rq.done = false;
  BlkMqHwCtx& h = MapQueue(cpu, rq.polled);
  Task& current = *cpu.current();
  co_await cpu.Run(costs_.blk_mq_submit_bio.value);
  // blk_mq_get_tag(): with every tag taken, run the queue (so requests held
  // back by the plug reach the device) and sleep until one is freed.
  while (h.free_tags.empty()) {
    ++stats_.tag_waits;
    co_await h.nvmeq->CommitRqs(*current.cpu());
    current.SetState(Task::State::kUninterruptible);
    if (!h.free_tags.empty()) break;
    h.tag_waiters.push_back(&current);
    co_await current.Schedule();
  }
  current.SetState(Task::State::kRunning);
  NvmeRequest& req = h.rqs[h.free_tags.back()];
  h.free_tags.pop_back();
  req.bio = &rq;
  ++h.in_flight;
  ++in_flight_;
  stats_.max_in_flight = std::max(stats_.max_in_flight, in_flight_);
  ++stats_.submitted;
  co_await h.nvmeq->QueueRq(*current.cpu(), req, last);
}

sim::Task BlkMq::Poll(Cpu& cpu, BlockRequest& rq) {
  BlkMqHwCtx& h = MapQueue(cpu, rq.polled);
  if (h.poll) return h.nvmeq->Poll(cpu, rq);
  return SpinForInterrupt(cpu, rq, h);
}

// blk_poll() on a queue without poll support: modeled as spinning until
// the interrupt handler (on this same CPU, preempting the spin) has
// completed the request.
sim::Task BlkMq::SpinForInterrupt(Cpu& cpu, BlockRequest& rq, BlkMqHwCtx& h) {
  while (!rq.done) co_await cpu.SpinUntil(h.completed.Wait(), CpuTime::kPoll);
}

// blk_mq_complete_request() -> blk_mq_end_request(), block/blk-mq.c, Linux
// 5.13: blk_update_request() ends the bio (the issuer's end_io, here its
// CompletionSink), then blk_mq_free_request() puts the tag back and wakes a
// submitter waiting for one.
sim::Task BlkMq::CompleteRequest(Cpu& cpu, NvmeRequest& req, bool polled) {
  BlkMqHwCtx& h = *req.hctx;
  BlockRequest& rq = *req.bio;
  rq.device_start = req.cmd.started;
  rq.device_end = req.cmd.completed;
  rq.done = true;
  ++stats_.completed;
  if (polled) {
    ++stats_.polled_completions;
  } else {
    ++stats_.irq_completions;
  }
  req.bio = nullptr;
  --h.in_flight;
  --in_flight_;
  co_await rq.sink->Complete(rq, cpu);
  h.free_tags.push_back(req.tag);
  if (!h.tag_waiters.empty()) {
    Task* waiter = h.tag_waiters.front();
    h.tag_waiters.pop_front();
    co_await cpu.scheduler()->TryToWakeUp(*waiter, cpu);
  }
  if (h.completed.has_waiters()) h.completed.NotifyAll();
}

void BlkMq::ResetStats() {
  stats_ = BlkMqStats();
  stats_.max_in_flight = in_flight_;
  device_->ResetStats();
}

}  // namespace models
