// md's personality thread (drivers/md/md.c, Linux 6.4): the kthread that
// md_register_thread() starts for an array ("md0_raid10"), running
// md_thread(), which sleeps on thread->wqueue until THREAD_WAKEUP is set
// and then calls the personality's daemon (raid10d, raid1d) once:
//
//   while (!kthread_should_stop()) {
//     wait_event_interruptible_timeout(thread->wqueue,
//         test_bit(THREAD_WAKEUP, &thread->flags) || ..., thread->timeout);
//     clear_bit(THREAD_WAKEUP, &thread->flags);
//     thread->run(thread);
//   }
//
// md_wakeup_thread() is set_bit(THREAD_WAKEUP) and wake_up(&thread->wqueue):
// the queue's lock on every call, whether the thread sleeps or runs.
// raid1 and raid10 set no timeout (MAX_SCHEDULE_TIMEOUT), so the thread
// runs only when woken.
//
// The kthread exists from assembly and sleeps until its first wake-up;
// sleeping costs nothing, so its task is started at that first wake-up
// (wake_up_new_task where the kernel would try_to_wake_up it): an array
// whose thread is never woken runs exactly as if it had none.
#ifndef VIOSIM_MODELS_MD_MD_THREAD_H_
#define VIOSIM_MODELS_MD_MD_THREAD_H_

#include <cstdint>
#include <string>

#include "absl/functional/any_invocable.h"
#include "models/cpu/cpu.h"
#include "models/cpu/sched.h"
#include "models/cpu/task.h"
#include "models/sync/handoff_costs.h"
#include "models/sync/wait_queue.h"
#include "sim/simulator.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

class MdThread {
 public:
  // `run` is the personality's daemon, called with the thread's task each
  // time the thread wakes; `loop` is md_thread()'s own work per round
  // (the wait's checks, clear_bit, md_check_recovery with nothing to do),
  // charged before `run`. `handoff` makes thread->wqueue's lock.
  MdThread(sim::Simulator& sim, std::string name, const LockHandoffCosts& handoff, sim::Time loop,
           absl::AnyInvocable<sim::Task(Task&)> run);
  MdThread(const MdThread&) = delete;
  MdThread& operator=(const MdThread&) = delete;

  // The scheduler the thread runs under. REQUIRES: set before the first
  // Wakeup.
  void set_scheduler(Scheduler& sched) { sched_ = &sched; }

  // md_wakeup_thread() by code running on `cpu`.
  sim::Task Wakeup(Cpu& cpu);

  Task& task() { return task_; }
  const WaitQueue& wqueue() const { return wqueue_; }
  // Counters since the last ResetStats.
  uint64_t wakeups() const { return wakeups_; }  // md_wakeup_thread calls
  uint64_t runs() const { return runs_; }        // thread->run calls
  void ResetStats() {
    wakeups_ = runs_ = 0;
    wqueue_.ResetStats();
  }

 private:
  sim::Task Body();

  Scheduler* sched_ = nullptr;
  Task task_;
  WaitQueue wqueue_;
  sim::Time loop_;
  absl::AnyInvocable<sim::Task(Task&)> run_;
  bool wakeup_ = false;  // THREAD_WAKEUP in thread->flags
  bool started_ = false;
  uint64_t wakeups_ = 0, runs_ = 0;
};

}  // namespace models

#endif  // VIOSIM_MODELS_MD_MD_THREAD_H_
