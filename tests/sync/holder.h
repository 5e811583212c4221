// A task that takes a spinlock once: the lock tests' building block.
#ifndef VIOSIM_TESTS_SYNC_HOLDER_H_
#define VIOSIM_TESTS_SYNC_HOLDER_H_

#include <utility>
#include <vector>

#include "models/cpu/cpu.h"
#include "models/cpu/task.h"
#include "models/sync/spinlock.h"
#include "sim/task.h"
#include "sim/time.h"
#include "tests/sync/machine.h"

namespace models {

// Where (CPU id) and when each holder got the lock, in order.
using Got = std::vector<std::pair<int, sim::Time>>;

// Runs in user mode until `start`, takes `lock` (unless it is null), holds
// it for `hold`, and records where and when it got it.
inline sim::Task HoldOnce(Task& t, Spinlock* lock, sim::Time start, sim::Time hold, Got* got) {
  Cpu& cpu = *t.cpu();
  co_await cpu.RunUser(start);
  if (lock != nullptr) co_await lock->Lock(cpu);
  got->push_back({cpu.id(), cpu.sim().Now()});
  co_await cpu.Run(hold);
  if (lock != nullptr) lock->Unlock(cpu);
}

// A new task on CPU `cpu` of `m` running HoldOnce.
inline void StartHolder(Machine& m, Spinlock* lock, int cpu, sim::Time start, sim::Time hold, Got* got) {
  Task& t = m.NewTask(cpu);
  m.sched.Start(t, HoldOnce(t, lock, start, hold, got));
}

}  // namespace models

#endif  // VIOSIM_TESTS_SYNC_HOLDER_H_
