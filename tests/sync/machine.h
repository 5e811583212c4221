// A machine for the sync tests: CPUs at given places in the topology, a
// pinned FIFO scheduler over them (or the fair one), and tasks pinned one
// to a CPU.
#ifndef VIOSIM_TESTS_SYNC_MACHINE_H_
#define VIOSIM_TESTS_SYNC_MACHINE_H_

#include <memory>
#include <string>
#include <vector>

#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/sched_fair.h"
#include "models/cpu/param.h"
#include "models/cpu/task.h"
#include "models/sync/handoff_costs.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace models {

template <class Sched>
class BasicMachine {
 public:
  explicit BasicMachine(const std::vector<CpuPlace>& places, const SchedCosts& costs = {}) : sched(sim) {
    for (const CpuPlace& p : places) {
      const int id = static_cast<int>(cpus_.size());
      cpus_.push_back(std::make_unique<Cpu>(sim, id, "cpu" + std::to_string(id), p));
      cpus_.back()->set_sched_costs(costs);
      sched.AddCpu(*cpus_.back());
    }
  }
  // `n` CPUs at the same place.
  explicit BasicMachine(int n, const SchedCosts& costs = {}) : BasicMachine(std::vector<CpuPlace>(n), costs) {}

  Cpu& cpu(int i) { return *cpus_[static_cast<size_t>(i)]; }
  // A new task pinned to CPU `cpu`; it lives as long as the machine.
  Task& NewTask(int cpu) {
    tasks_.push_back(std::make_unique<Task>("task" + std::to_string(tasks_.size()), std::vector<int>{cpu}));
    return *tasks_.back();
  }

  sim::Simulator sim;
  Sched sched;

 private:
  std::vector<std::unique_ptr<Cpu>> cpus_;
  std::vector<std::unique_ptr<Task>> tasks_;
};

using Machine = BasicMachine<PinnedFifoScheduler>;
// The same machine under the fair scheduler, which may preempt a running
// task: its CPUs never take the direct path (Cpu::direct_).
using FairMachine = BasicMachine<FairScheduler>;

// The places of a two-socket machine with two LLCs per socket and two SMT
// threads per core: CPU 0's SMT sibling (1), a core of its LLC (2), a core
// of its socket's other LLC (4) and a core of the other socket (6).
inline std::vector<CpuPlace> TwoSocketPlaces() {
  return {
      {0, 0, 0}, {0, 0, 0},  // socket 0, LLC 0, core 0
      {0, 0, 1}, {0, 0, 1},  // socket 0, LLC 0, core 1
      {0, 1, 2}, {0, 1, 2},  // socket 0, LLC 1, core 2
      {1, 2, 3}, {1, 2, 3},  // socket 1, LLC 2, core 3
  };
}

// A line-transfer table whose every entry is a distinct odd number of
// picoseconds, so that a test sees exactly which one was charged.
inline LockHandoffCosts OddPicosecondCosts() {
  const Source kTest{SourceKind::kDefined, "test"};
  return LockHandoffCosts{{sim::Time::Picos(1009), kTest},
                          {sim::Time::Picos(7001), kTest},
                          {sim::Time::Picos(25013), kTest},
                          {sim::Time::Picos(132007), kTest},
                          {sim::Time::Picos(233011), kTest}};
}

}  // namespace models

#endif  // VIOSIM_TESTS_SYNC_MACHINE_H_
