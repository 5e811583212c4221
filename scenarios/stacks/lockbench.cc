// workload.lockbench: N threads, one per CPU, each thinking, taking one
// spinlock, holding it and releasing it (models/lockbench), on the machine
// the scenario's platform describes. A part with no stack: it carries its
// own workload.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/cpu/cpu.h"
#include "models/lockbench/lock_bench.h"
#include "models/sync/spinlock.h"
#include "scenarios/stacks/parts.h"
#include "sim/check.h"

namespace viosim::stacks {
namespace {

class LockBenchRun final : public BuiltRun {
 public:
  LockBenchRun(std::unique_ptr<Machine> m, const models::LockBenchParams& p, uint64_t seed)
      : machine_(std::move(m)), bench_(machine_->sim(), p, seed, machine_->sched(), machine_->cpus()) {}

  void Start() override { bench_.Start(); }
  // The threads' CPUs, one each: the machine's first (any more that
  // platform.cpus gives stay idle and are not shown).
  std::vector<models::Cpu*> Cpus() override { return bench_.cpus(); }
  std::vector<sim::RatioMetric> Metrics() override { return BindMetrics(Declared(), *this); }
  std::vector<std::pair<std::string, models::LockStat>> Locks() override {
    return {{bench_.lock().name(), bench_.lock().stat()}};
  }
  void ResetStats() override {
    bench_.ResetStats();
    machine_->ResetStats();
  }

  // Its metrics, declared once (scenarios/stack.h).
  static MetricDecls<LockBenchRun> Declared() {
    using R = LockBenchRun;
    auto stat = [](R& r) -> const models::LockStat& { return r.bench_.lock().stat(); };
    auto elapsed_s = [](R& r) { return r.machine_->ElapsedS(); };
    auto acquisitions = [stat](R& r) { return static_cast<double>(stat(r).acquisitions); };
    auto spin_s = [](R& r) {
      double t = 0;
      for (const models::Cpu* c : r.bench_.cpus()) t += c->TimeIn(models::CpuTime::kSpin).ToSeconds();
      return t;
    };
    return {
        {"lock_acquisitions_per_s", acquisitions, elapsed_s, 1.0},
        // Over every acquisition, uncontended ones waiting zero: the mean
        // queueing delay W of the queueing model. (lock_stat's waittime-avg is
        // over contended acquisitions only; the table shows that one.)
        {"lock_wait_mean_us", [stat](R& r) { return static_cast<double>(stat(r).wait.sum()); }, acquisitions, 1e-6},
        {"lock_hold_mean_us", [stat](R& r) { return static_cast<double>(stat(r).hold.sum()); },
         [stat](R& r) { return static_cast<double>(stat(r).hold.count()); }, 1e-6},
        {"lock_contention_pct", [stat](R& r) { return static_cast<double>(stat(r).contentions); }, acquisitions,
         100.0},
        {"cpu_spin_pct", spin_s,
         [elapsed_s](R& r) { return elapsed_s(r) * static_cast<double>(r.bench_.cpus().size()); }, 100.0},
    };
  }

 private:
  std::unique_ptr<Machine> machine_;
  models::LockBench bench_;
};

std::vector<std::string> Names() { return DeclaredNames<LockBenchRun>(); }

absl::StatusOr<std::unique_ptr<BuiltRun>> Build(sim::Simulator& sim, const Params& root) {
  const Params w = root["workload"]["lockbench"];
  const Params platform = root["platform"];
  models::LockBenchParams p;
  p.threads = static_cast<int>(w.Int("threads"));
  absl::StatusOr<sim::Distribution> think = w.Distribution("think");
  if (!think.ok()) return think.status();
  absl::StatusOr<sim::Distribution> hold = w.Distribution("hold");
  if (!hold.ok()) return hold.status();
  p.think = *think;
  p.hold = *hold;
  absl::StatusOr<sim::Time> handoff = LockHandoff(platform);
  if (!handoff.ok()) return handoff.status();
  p.handoff = *handoff;
  const bool has_cpus = platform.Has("cpus");
  const int cpus_given = has_cpus ? static_cast<int>(platform.Int("cpus")) : 0;
  VIOSIM_CHECK(!has_cpus || cpus_given >= p.threads,
               "each thread has a CPU of its own (the loader's checks refuse fewer CPUs)");
  // The machine the scenario describes (its scheduler and topology), one CPU
  // per task unless platform.cpus gives more.
  const int ncpus = has_cpus ? cpus_given : p.threads;
  absl::StatusOr<std::unique_ptr<Machine>> machine = Machine::Make(sim, platform, ncpus, "cpu", models::SchedCosts{});
  if (!machine.ok()) return machine.status();
  const uint64_t seed = static_cast<const Scenario&>(root.message()).run().seed();
  return std::unique_ptr<BuiltRun>(new LockBenchRun(std::move(*machine), p, seed));
}

}  // namespace

StackPart LockBenchPart() {
  StackPart p = {"lockbench", "no stack, with workload.lockbench: threads taking one spinlock, one CPU each", false,
                 &Names, nullptr};
  p.workload = Workload::kLockbench;
  p.build_run = &Build;
  p.on_stack = false;
  return p;
}

}  // namespace viosim::stacks
