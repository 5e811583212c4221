// An NVMe SSD: commands arrive by doorbell, are worked on by a fixed number
// of internal units with a random latency per operation, move their data
// through one bandwidth ceiling per direction, and come back as entries in
// a completion queue.
//
// Service of one command (NvmeProfile):
//   read:  unit (read access), then transfer to the host (bytes / read_bandwidth)
//   write: transfer from the host (bytes / write_bandwidth), then unit (write access)
// An access takes (latency - latency_exp_mean) + Exp(latency_exp_mean), drawn
// when the doorbell rings from the stream of the command's submission queue
// (Rng::ForStream(seed, "nvme.sq<N>")), so a queue's draws do not depend on
// how other queues' commands interleave with its own; the mean is the
// profile's latency, and latency_exp_mean 0 gives exactly the latency.
// Units serve waiting commands in arrival order; each direction's transfer
// is a FIFO server shared by all units. At most max_queue_depth commands
// are in the device; later ones wait, in doorbell order, in their
// submission queues. On an idle device a command takes ServiceTime() on
// average (exactly, without the spread). The structure follows NVMeVirt's
// simple models (fixed delay + size/bandwidth over parallel units; Kim et
// al., FAST 2023; the exponential spread is viosim's); no
// FTL, no garbage collection, no seq/random asymmetry (3D XPoint has none
// to speak of: in the virtio-blk poll table, seed 003, the random and
// sequential 64k/128k rows agree within 1%).
//
// The device costs two events per command and allocates nothing: commands
// are the host's (NvmeCommand is embedded in the driver's request), units
// and transfer servers are Callbacks.
#ifndef VIOSIM_MODELS_NVME_NVME_DEVICE_H_
#define VIOSIM_MODELS_NVME_NVME_DEVICE_H_

#include <cstdint>
#include <vector>

#include "models/cpu/callback.h"
#include "models/nvme/profile.h"
#include "sim/distribution.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace models {

class NvmeCompletionQueue;

// A submission queue entry and, once done, its completion queue entry.
struct NvmeCommand {
  bool write = false;
  uint32_t bytes = 0;
  uint64_t offset = 0;
  int sq = 0;                         // submission queue id (its latency stream)
  NvmeCompletionQueue* cq = nullptr;  // where the CQE goes
  void* host = nullptr;               // the driver's request

  // Filled by the device.
  sim::Time submitted;  // its doorbell rang
  sim::Time started;    // taken into the device (under max_queue_depth)
  sim::Time completed;  // CQE posted

  // Intrusive link: device queues, then the completion queue.
  NvmeCommand* next = nullptr;
  sim::Time ready_at;  // end of the current transfer (device internal)
  sim::Time access;    // this command's unit time, drawn at its doorbell (device internal)
};

// A completion queue in host memory with its interrupt vector, as the host
// sees it: the device posts entries; the host pops them, either from an
// interrupt handler or from a polling loop. Both wait with WaitForEntry().
class NvmeCompletionQueue {
 public:
  explicit NvmeCompletionQueue(sim::Simulator& sim) : posted_signal_(sim) {}
  NvmeCompletionQueue(const NvmeCompletionQueue&) = delete;
  NvmeCompletionQueue& operator=(const NvmeCompletionQueue&) = delete;

  bool empty() const { return head_ == nullptr; }
  // The oldest entry, or null.
  NvmeCommand* Pop() {
    NvmeCommand* c = head_;
    if (c != nullptr) {
      head_ = c->next;
      if (head_ == nullptr) tail_ = nullptr;
      c->next = nullptr;
    }
    return c;
  }
  // Resumes (through one wakeup event) after the next entry is posted: the
  // MSI-X message of an interrupt-driven queue, or the phase bit a poller
  // watches.
  sim::Signal::Awaiter WaitForEntry() { return posted_signal_.Wait(); }

  // Device side: appends `c` and signals the waiters.
  void Post(NvmeCommand& c) {
    c.next = nullptr;
    if (tail_ != nullptr) {
      tail_->next = &c;
    } else {
      head_ = &c;
    }
    tail_ = &c;
    ++posted_;
    posted_signal_.NotifyAll();
  }
  uint64_t posted() const { return posted_; }

 private:
  NvmeCommand* head_ = nullptr;
  NvmeCommand* tail_ = nullptr;
  uint64_t posted_ = 0;
  sim::Signal posted_signal_;
};

struct NvmeDeviceStats {
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  // Commands submitted and not yet completed (in the device or waiting for
  // room in it): the largest seen.
  int max_outstanding = 0;
  // Commands in the device at once: the largest seen.
  int max_in_device = 0;
};

class NvmeDevice {
 public:
  // `seed` seeds the access-latency streams (the run's seed).
  NvmeDevice(sim::Simulator& sim, const NvmeProfile& profile, uint64_t seed = 1);
  NvmeDevice(const NvmeDevice&) = delete;
  NvmeDevice& operator=(const NvmeDevice&) = delete;

  const NvmeProfile& profile() const { return profile_; }

  // A submission queue doorbell covering `cmd` rang now. REQUIRES: cmd.cq
  // set; cmd stays alive until its CQE has been popped.
  void Submit(NvmeCommand& cmd);

  // The mean time one command takes on an otherwise idle device.
  sim::Time ServiceTime(bool write, uint32_t bytes) const {
    return (write ? profile_.write_latency.value : profile_.read_latency.value) + TransferTime(write, bytes);
  }
  // One access latency (the unit's time) for a command of queue `sq`: the
  // fixed part plus a draw from that queue's stream.
  sim::Time DrawAccess(bool write, int sq);
  sim::Time TransferTime(bool write, uint32_t bytes) const;

  // Commands submitted and not completed.
  int outstanding() const { return outstanding_; }
  const NvmeDeviceStats& stats() const { return stats_; }
  // Restarts the counters; the high-water marks restart from the present.
  void ResetStats();

 private:
  struct Unit {
    NvmeDevice* dev = nullptr;
    NvmeCommand* cmd = nullptr;
    Callback done;
    void Done() { dev->UnitDone(*this); }
  };
  struct Channel {  // one direction's transfer server
    NvmeDevice* dev = nullptr;
    bool write = false;
    NvmeCommand* head = nullptr;  // FIFO of commands, ready_at increasing
    NvmeCommand* tail = nullptr;
    sim::Time free_at;            // when the last queued transfer ends
    Callback done;
    void Done() { dev->ChannelDone(*this); }
  };

  void Admit(NvmeCommand& c);
  void ToUnit(NvmeCommand& c);
  void StartUnit(Unit& u, NvmeCommand& c);
  void UnitDone(Unit& u);
  void ToChannel(Channel& ch, NvmeCommand& c);
  void ChannelDone(Channel& ch);
  void Complete(NvmeCommand& c);

  sim::Simulator* sim_;
  NvmeProfile profile_;
  sim::Distribution spread_;     // Exp(latency_exp_mean); unused when zero
  uint64_t seed_;
  std::vector<sim::Rng> sq_rngs_;  // by submission queue id, made on first use
  double read_ps_per_byte_;
  double write_ps_per_byte_;
  int max_queue_depth_;

  std::vector<Unit> units_;
  std::vector<Unit*> free_units_;  // a stack; the lowest index on top first
  NvmeCommand* unit_wait_head_ = nullptr;
  NvmeCommand* unit_wait_tail_ = nullptr;
  Channel channels_[2];  // [0] read, [1] write
  NvmeCommand* sq_wait_head_ = nullptr;  // beyond max_queue_depth
  NvmeCommand* sq_wait_tail_ = nullptr;
  int in_device_ = 0;
  int outstanding_ = 0;
  NvmeDeviceStats stats_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_NVME_NVME_DEVICE_H_
