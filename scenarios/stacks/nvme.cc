// stack.nvme: blk-mq with one hardware queue per CPU (and poll queues)
// over the NVMe driver and a device profile (models/block, models/nvme).
#include <algorithm>
#include <memory>
#include <tuple>

#include "models/block/blk_mq.h"
#include "models/nvme/nvme_device.h"
#include "models/nvme/profile.h"
#include "scenarios/stacks/parts.h"
#include "sim/check.h"

namespace viosim::stacks {
namespace {

absl::StatusOr<models::NvmeProfile> NvmeOf(const Params& n) {
  VIOSIM_CHECK(n.Str("profile") == "optane_p4800x", "the NVMe profile is known (the loader's checks refuse others)");
  models::NvmeProfile p = models::OptaneP4800X();
  const models::Source set{models::SourceKind::kEstimated, "set by the scenario"};
  if (n.Has("units")) p.units = {static_cast<int>(n.Int("units")), set};
  if (n.Has("read_bandwidth")) p.read_bandwidth = {n.Real("read_bandwidth"), set};
  if (n.Has("write_bandwidth")) p.write_bandwidth = {n.Real("write_bandwidth"), set};
  if (n.Has("max_queue_depth")) p.max_queue_depth = {static_cast<int>(n.Int("max_queue_depth")), set};
  for (auto [name, param] : {std::pair{"read_latency", &p.read_latency}, std::pair{"write_latency", &p.write_latency},
                             std::pair{"latency_exp_mean", &p.latency_exp_mean}}) {
    if (absl::Status s = n.OptionalCost(name, param); !s.ok()) return s;
  }
  VIOSIM_CHECK(p.latency_exp_mean.value <= std::min(p.read_latency.value, p.write_latency.value),
               "the exponential part is at most the read and the write latency (the loader's checks refuse more)");
  return p;
}

class NvmeStack final : public BuiltStack {
 public:
  NvmeStack(Machine& m, const models::NvmeProfile& profile, const models::HostCosts& host,
            const models::BlkMqParams& params, uint64_t seed)
      : machine_(&m), device_(m.sim(), profile, seed), blk_(m.sim(), m.cpus(), device_, host, params) {}

  models::BlockStack& block() override { return blk_; }
  std::vector<sim::RatioMetric> Metrics() override { return BindMetrics(Declared(), *this); }
  std::vector<std::pair<std::string, models::LockStat>> Locks() override { return {}; }
  void ResetStats() override { blk_.ResetStats(); }

  // Its metrics beyond fio's, declared once (scenarios/stack.h).
  static MetricDecls<NvmeStack> Declared() {
    auto n = [](uint64_t v) { return static_cast<double>(v); };
    auto done = [n](NvmeStack& s) { return n(s.blk_.stats().completed); };
    return {
        {"interrupts_per_request", [n](NvmeStack& s) { return n(s.blk_.stats().irqs); }, done, 1},
        {"polled_pct", [n](NvmeStack& s) { return n(s.blk_.stats().polled_completions); }, done, 100},
        {"doorbells_per_request", [n](NvmeStack& s) { return n(s.blk_.stats().doorbells); }, done, 1},
        {"cpu_busy_pct",
         [](NvmeStack& s) {
           return s.machine_->ElapsedS() * s.machine_->ncpus() - s.machine_->TimeInS(models::CpuTime::kIdle);
         },
         [](NvmeStack& s) { return s.machine_->ElapsedS() * s.machine_->ncpus(); }, 100},
    };
  }

 private:
  Machine* machine_;
  models::NvmeDevice device_;
  models::BlkMq blk_;
};

std::vector<std::string> Names() { return DeclaredNames<NvmeStack>(); }

absl::StatusOr<std::unique_ptr<BuiltStack>> Build(const Params& s, Machine& m, const models::HostCosts& host) {
  const Params n = s["stack"]["nvme"];
  absl::StatusOr<models::NvmeProfile> profile = NvmeOf(n);
  if (!profile.ok()) return profile.status();
  models::BlkMqParams params;
  if (n.Has("queue_depth")) params.queue_depth = static_cast<int>(n.Int("queue_depth"));
  params.poll_queues = n.Bool("poll_queues");
  return std::make_unique<NvmeStack>(m, *profile, host, params, static_cast<uint64_t>(s["run"].Int("seed")));
}

}  // namespace

StackPart NvmePart() {
  StackPart p = {"nvme", "bare-metal blk-mq and NVMe driver (Linux 5.13) over an SSD profile", false, &Names, &Build,
                 /*host_block=*/true};
  p.linux_version = 513;
  return p;
}

}  // namespace viosim::stacks
