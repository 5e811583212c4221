// The host's NVMe device behind QEMU's aio=native in the blk-poll case (an
// Optane-class SSD, models/qemu/iothread_blk.h), as simply as that case
// needs it: every command's access in parallel, then its data over one link
// shared by both directions (random == sequential). The fuller SSD is
// nvme_device.h.
//
// A command's access takes (latency - latency_exp_mean) +
// Exp(latency_exp_mean) by direction, drawn from the stream its caller names
// (one per guest queue in the blk-poll case), so a stream's draws follow its
// own commands whatever the others do; the mean stays the latency, and
// latency_exp_mean 0 gives exactly the latency. The transfer then waits for
// the link (FIFO in the order accesses end) and takes bytes / bandwidth of
// the command's direction.
#ifndef VIOSIM_MODELS_NVME_LINK_DEVICE_H_
#define VIOSIM_MODELS_NVME_LINK_DEVICE_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "models/cpu/param.h"
#include "sim/distribution.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/stats.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

struct NvmeLinkCosts {
  Param<sim::Time> read_latency;      // mean access time, without the transfer
  Param<sim::Time> write_latency;
  Param<sim::Time> latency_exp_mean;  // exponential part of both (0: fixed latency)
  Param<double> read_bandwidth;       // bytes/s
  Param<double> write_bandwidth;
};

class NvmeLinkDevice {
 public:
  // Stream k draws from Rng::ForStream(seed, stream_prefix + k), k <
  // `streams`. REQUIRES: costs.latency_exp_mean <= read_latency and <=
  // write_latency.
  NvmeLinkDevice(sim::Simulator& sim, const NvmeLinkCosts& costs, int streams, uint64_t seed,
                 std::string_view stream_prefix);

  // One command of stream `stream`: its access, then its transfer; returns
  // when the device is done with the data.
  sim::Task Io(int stream, bool write, uint32_t bytes);
  // The access latency of one command of stream `stream` (before its
  // transfer): the fixed part, plus a draw from the stream when
  // latency_exp_mean > 0. Public for tests.
  sim::Time Access(int stream, bool write);

  // The link's busy time since the last ResetStats, the parts inside the
  // window only (transfers are booked when queued).
  sim::Time LinkBusy() const { return link_busy_.BusyUntil(sim_->Now()); }
  void ResetStats() { link_busy_.Reset(sim_->Now()); }

 private:
  sim::Simulator* sim_;
  NvmeLinkCosts costs_;
  sim::Distribution spread_;  // Exp(latency_exp_mean)
  std::vector<sim::Rng> rngs_;
  sim::Time link_free_;
  sim::BusyTime link_busy_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_NVME_LINK_DEVICE_H_
