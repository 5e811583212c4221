// stack.nvme: blk-mq with one hardware queue per CPU (and poll queues)
// over the NVMe driver and a device profile (models/block, models/nvme).
#include <memory>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "models/block/blk_mq.h"
#include "models/nvme/nvme_device.h"
#include "models/nvme/profile.h"
#include "scenarios/stacks/parts.h"

namespace viosim::stacks {
namespace {

absl::StatusOr<models::NvmeProfile> NvmeOf(const Stack::Nvme& n) {
  if (n.profile() != "optane_p4800x") {
    return absl::InvalidArgumentError(
        absl::StrCat("field 'stack.nvme.profile': unknown profile '", n.profile(), "' (profiles: optane_p4800x)"));
  }
  models::NvmeProfile p = models::OptaneP4800X();
  const models::Source set{models::SourceKind::kEstimated, "set by the scenario"};
  if (n.has_units()) p.units = {n.units(), set};
  if (n.has_read_bandwidth()) p.read_bandwidth = {n.read_bandwidth(), set};
  if (n.has_write_bandwidth()) p.write_bandwidth = {n.write_bandwidth(), set};
  if (n.has_max_queue_depth()) p.max_queue_depth = {n.max_queue_depth(), set};
  for (auto [cost, has, name, param] :
       {std::tuple{&n.read_latency(), n.has_read_latency(), "read_latency", &p.read_latency},
        std::tuple{&n.write_latency(), n.has_write_latency(), "write_latency", &p.write_latency},
        std::tuple{&n.latency_exp_mean(), n.has_latency_exp_mean(), "latency_exp_mean", &p.latency_exp_mean}}) {
    if (absl::Status s = Override(*cost, has, absl::StrCat("stack.nvme.", name, ".value"), param); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = CheckLatencySpread(p.latency_exp_mean.value, p.read_latency.value, p.write_latency.value,
                                          "stack.nvme");
      !s.ok()) {
    return s;
  }
  return p;
}

class NvmeStack final : public BuiltStack {
 public:
  NvmeStack(Machine& m, const models::NvmeProfile& profile, const models::HostCosts& host,
            const models::BlkMqParams& params, uint64_t seed)
      : machine_(&m), device_(m.sim(), profile, seed), blk_(m.sim(), m.cpus(), device_, host, params) {}

  models::BlockStack& block() override { return blk_; }
  std::vector<sim::RatioMetric> Metrics() override {
    auto n = [](uint64_t v) { return static_cast<double>(v); };
    auto done = [this, n] { return n(blk_.stats().completed); };
    return {
        {"interrupts_per_request", [this, n] { return n(blk_.stats().irqs); }, done, 1},
        {"polled_pct", [this, n] { return n(blk_.stats().polled_completions); }, done, 100},
        {"doorbells_per_request", [this, n] { return n(blk_.stats().doorbells); }, done, 1},
        {"cpu_busy_pct", [this] { return machine_->ElapsedS() * machine_->ncpus() -
                                         machine_->TimeInS(models::CpuTime::kIdle); },
         [this] { return machine_->ElapsedS() * machine_->ncpus(); }, 100},
    };
  }
  std::vector<std::pair<std::string, models::LockStat>> Locks() override { return {}; }
  void ResetStats() override { blk_.ResetStats(); }

 private:
  Machine* machine_;
  models::NvmeDevice device_;
  models::BlkMq blk_;
};

std::vector<std::string> Names() {
  return {"interrupts_per_request", "polled_pct", "doorbells_per_request", "cpu_busy_pct"};
}

absl::StatusOr<std::unique_ptr<BuiltStack>> Build(const Scenario& s, Machine& m, const models::HostCosts& host) {
  absl::StatusOr<models::NvmeProfile> profile = NvmeOf(s.stack().nvme());
  if (!profile.ok()) return profile.status();
  models::BlkMqParams params;
  if (s.stack().nvme().has_queue_depth()) params.queue_depth = s.stack().nvme().queue_depth();
  params.poll_queues = s.stack().nvme().poll_queues();
  return std::make_unique<NvmeStack>(m, *profile, host, params, s.run().seed());
}

}  // namespace

StackPart NvmePart() {
  return {"nvme", "bare-metal blk-mq and NVMe driver (Linux 5.13) over an SSD profile", false, &Names, &Build};
}

}  // namespace viosim::stacks
