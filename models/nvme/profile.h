// What an NVMe SSD model is built from: internal parallelism, latency per
// operation (a mean and its exponential spread), bandwidth ceilings, and
// how many commands the device works on at once. Every field carries its
// source.
#ifndef VIOSIM_MODELS_NVME_PROFILE_H_
#define VIOSIM_MODELS_NVME_PROFILE_H_

#include <string>

#include "models/cpu/param.h"
#include "sim/time.h"

namespace models {

struct NvmeProfile {
  std::string name;
  // Internal units (media channels) working on commands in parallel. A
  // command holds one unit for its access latency.
  Param<int> units;
  // Mean device time per command, excluding the data transfer: fetch,
  // media access, completion posting. Reads: before the transfer to the
  // host; writes: after the transfer from the host.
  Param<sim::Time> read_latency;
  Param<sim::Time> write_latency;
  // The random part of both latencies: a command's access takes
  // (latency - latency_exp_mean) + Exp(mean latency_exp_mean), so its mean
  // stays read_latency / write_latency. Zero: every command takes exactly
  // the latency. REQUIRES: <= read_latency and <= write_latency.
  Param<sim::Time> latency_exp_mean;
  // Bytes per second through the device, one FIFO ceiling per direction
  // shared by all units: a command's data takes bytes / bandwidth of it.
  Param<double> read_bandwidth;
  Param<double> write_bandwidth;
  // Commands the device works on at once; later doorbells leave commands
  // in their submission queues until one completes.
  Param<int> max_queue_depth;
};

// Intel Optane SSD DC P4800X (375 GB, PCIe 3.0 x4, 3D XPoint). Sources and
// derivations in profiles.cc.
NvmeProfile OptaneP4800X();

}  // namespace models

#endif  // VIOSIM_MODELS_NVME_PROFILE_H_
