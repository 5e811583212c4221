// The blk-poll case's host NVMe device (link_device.h): the SSD's access
// and its link, below the host kernel's NVMe driver.
#include "models/nvme/link_device.h"

#include <algorithm>
#include <string>

namespace models {

NvmeLinkDevice::NvmeLinkDevice(sim::Simulator& sim, const NvmeLinkCosts& costs, int streams, uint64_t seed,
                               std::string_view stream_prefix)
    : sim_(&sim), costs_(costs), spread_(sim::Distribution::Exponential(costs.latency_exp_mean.value)) {
  for (int i = 0; i < streams; ++i) {
    rngs_.push_back(sim::Rng::ForStream(seed, std::string(stream_prefix) + std::to_string(i)));
  }
}

sim::Time NvmeLinkDevice::Access(int stream, bool write) {
  const sim::Time mean = write ? costs_.write_latency.value : costs_.read_latency.value;
  return sim::MeanKeptExponential(mean, costs_.latency_exp_mean.value, spread_, rngs_[static_cast<size_t>(stream)]);
}

sim::Task NvmeLinkDevice::Io(int stream, bool write, uint32_t bytes) {
  co_await sim_->Delay(Access(stream, write));
  const double bw = write ? costs_.write_bandwidth.value : costs_.read_bandwidth.value;
  const sim::Time xfer = sim::Time::FromSecondsDouble(static_cast<double>(bytes) / bw);
  const sim::Time start = std::max(sim_->Now(), link_free_);
  link_free_ = start + xfer;
  link_busy_.Book(start, link_free_);
  co_await sim_->Delay(link_free_ - sim_->Now());
}

}  // namespace models
