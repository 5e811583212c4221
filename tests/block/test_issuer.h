// A trivial I/O issuer for the block stack tests: one task pinned to one
// CPU.
//
// Sync mode (depth 1, as psync/pvsync2): syscall, Submit, then sleep until
// the completion wakes the task (or Poll when polled).
// Async mode (as libaio): keep `depth` I/Os in flight; submit them in one
// batch (one syscall, `last` on the final one), sleep (or poll the oldest)
// until completions arrive, then resubmit every completed I/O as the next
// batch.
//
// It measures, over the window since ResetStats(): completions, the sum of
// latencies (from the start of an I/O's submission to its CompletionSink)
// and the time integral of the number of I/Os in flight, for Little's law.
#ifndef VIOSIM_TESTS_BLOCK_TEST_ISSUER_H_
#define VIOSIM_TESTS_BLOCK_TEST_ISSUER_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "models/block/block_stack.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "tests/cpu/machine.h"

namespace models {
namespace testing_issuer {

struct IssuerConfig {
  int depth = 1;
  bool sync = true;  // REQUIRES depth == 1 when set
  uint32_t bytes = 4096;
  bool write = false;
  bool polled = false;
  uint64_t region = uint64_t{1} << 30;  // random offsets within
  uint64_t seed = 1;
};

class Issuer final : public CompletionSink {
 public:
  // The issuer's task runs on `cpu` under `sched`.
  Issuer(sim::Simulator& sim, Scheduler& sched, const Cpu& cpu, BlockStack& stack, sim::Time syscall,
         const IssuerConfig& cfg, const std::string& name)
      : sim_(&sim),
        sched_(&sched),
        stack_(&stack),
        syscall_(syscall),
        cfg_(cfg),
        task_(name, {cpu.id()}),
        rng_(sim::Rng::ForStream(cfg.seed, name)),
        ios_(static_cast<size_t>(cfg.depth)) {
    for (Io& io : ios_) {
      io.rq.write = cfg.write;
      io.rq.bytes = cfg.bytes;
      io.rq.polled = cfg.polled;
      io.rq.sink = this;
      io.rq.issuer = &io;
    }
  }

  void Start() { sched_->Start(task_, cfg_.sync ? RunSync() : RunAsync()); }

  sim::Task Complete(BlockRequest& rq, Cpu& cpu) override {
    Io& io = *static_cast<Io*>(rq.issuer);
    const sim::Time now = sim_->Now();
    Advance(now);
    --in_flight_;
    ++completions_;
    latency_sum_ += static_cast<double>((now - io.start).ps());
    io.next_done = nullptr;
    if (done_tail_ != nullptr) {
      done_tail_->next_done = &io;
    } else {
      done_head_ = &io;
    }
    done_tail_ = &io;
    // bio_endio -> the waiter's wake-up. A poller is the current task
    // (blk_wake_io_task: only a state change, nothing charged).
    if (sleeping_) co_await cpu.scheduler()->TryToWakeUp(task_, cpu);
  }

  void ResetStats() {
    const sim::Time now = sim_->Now();
    Advance(now);
    since_ = now;
    completions_ = 0;
    latency_sum_ = 0;
    inflight_integral_ = 0;
    max_in_flight_ = in_flight_;
    task_.ResetStats();
  }

  uint64_t completions() const { return completions_; }
  double Iops() const { return completions_ / Elapsed(); }
  double MeanLatencySeconds() const { return latency_sum_ * 1e-12 / completions_; }
  double MeanInFlight() {
    Advance(sim_->Now());
    return inflight_integral_ * 1e-12 / Elapsed();
  }
  double latency_sum_ps() const { return latency_sum_; }
  int max_in_flight() const { return max_in_flight_; }
  Task& task() { return task_; }

 private:
  struct Io {
    BlockRequest rq;
    sim::Time start;
    Io* next_done = nullptr;
  };

  double Elapsed() const { return (sim_->Now() - since_).ToSeconds(); }
  void Advance(sim::Time now) {
    inflight_integral_ += static_cast<double>(in_flight_) * static_cast<double>((now - last_).ps());
    last_ = now;
  }
  void Begin(Io& io) {
    io.rq.offset = (rng_.Next() % (cfg_.region / cfg_.bytes)) * cfg_.bytes;
    const sim::Time now = sim_->Now();
    Advance(now);
    io.start = now;
    ++in_flight_;
    max_in_flight_ = std::max(max_in_flight_, in_flight_);
  }

  // Sleeps until `done()`, woken by Complete.
  template <class Cond>
  sim::Task Sleep(Cond done) {
    sleeping_ = true;
    co_await testbed::SleepUntil(task_, done);
    sleeping_ = false;
  }

  // pread(2) / preadv2(RWF_HIPRI) at depth 1.
  sim::Task RunSync() {
    Io& io = ios_[0];
    for (;;) {
      co_await task_.Run(syscall_);
      Begin(io);
      co_await stack_->Submit(*task_.cpu(), io.rq, /*last=*/true);
      if (cfg_.polled) {
        co_await stack_->Poll(*task_.cpu(), io.rq);
      } else {
        co_await Sleep([&io] { return io.rq.done; });
      }
      done_head_ = done_tail_ = nullptr;
    }
  }

  // io_submit(2) of every free I/O as one batch, io_getevents(2) for at
  // least one completion.
  sim::Task RunAsync() {
    co_await task_.Run(syscall_);
    for (int i = 0; i < cfg_.depth; ++i) {
      Begin(ios_[i]);
      co_await stack_->Submit(*task_.cpu(), ios_[i].rq, /*last=*/i + 1 == cfg_.depth);
    }
    for (;;) {
      while (done_head_ == nullptr) {
        if (cfg_.polled) {
          Io* oldest = nullptr;
          for (Io& io : ios_) {
            if (!io.rq.done && (oldest == nullptr || io.start < oldest->start)) oldest = &io;
          }
          co_await stack_->Poll(*task_.cpu(), oldest->rq);
        } else {
          co_await Sleep([this] { return done_head_ != nullptr; });
        }
      }
      Io* batch = done_head_;
      done_head_ = done_tail_ = nullptr;
      co_await task_.Run(syscall_);
      while (batch != nullptr) {
        Io* next = batch->next_done;
        Begin(*batch);
        co_await stack_->Submit(*task_.cpu(), batch->rq, /*last=*/next == nullptr);
        batch = next;
      }
    }
  }

  sim::Simulator* sim_;
  Scheduler* sched_;
  BlockStack* stack_;
  sim::Time syscall_;
  IssuerConfig cfg_;
  Task task_;
  bool sleeping_ = false;  // in Sleep: completions wake it
  sim::Rng rng_;
  std::vector<Io> ios_;
  Io* done_head_ = nullptr;
  Io* done_tail_ = nullptr;

  int in_flight_ = 0;
  int max_in_flight_ = 0;
  uint64_t completions_ = 0;
  double latency_sum_ = 0;
  double inflight_integral_ = 0;  // count x picoseconds
  sim::Time since_;
  sim::Time last_;
};

}  // namespace testing_issuer
}  // namespace models

#endif  // VIOSIM_TESTS_BLOCK_TEST_ISSUER_H_
