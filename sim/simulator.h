// The event loop and the waiting primitives processes use.
//
// Events are coroutine resumptions ordered by (time, insertion sequence), so
// two events at the same simulated time always run in the order they were
// scheduled, on every run. The queue (event_queue.h) is a 4-ary heap of
// 24-byte entries, with a timing wheel in front when many are pending, in
// storage that only grows; in steady state scheduling allocates nothing.
//
// A Simulator, its processes and the models they touch live on one thread.
// Independent simulations may run on different threads at the same time.
#ifndef VIOSIM_SIM_SIMULATOR_H_
#define VIOSIM_SIM_SIMULATOR_H_

#include <coroutine>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/event_queue.h"
#include "sim/task.h"
#include "sim/time.h"

namespace sim {

class TraceWriter;
class Simulator;

// A model that draws slices in the trace over time (a CPU's state, a
// lock's hold) and so may have one open when the run ends. It is known to
// its Simulator for its lifetime (either may be destroyed first), and
// Simulator::CloseTraceSlices() has every source draw what it has open up
// to Now(): a lock still held at the end of a traced run is drawn.
class TraceSource {
 public:
  explicit TraceSource(Simulator& sim);
  virtual ~TraceSource();
  TraceSource(const TraceSource&) = delete;
  TraceSource& operator=(const TraceSource&) = delete;

  // Draws the slice in progress, if any, up to Now(). Called only while a
  // trace writer is attached.
  virtual void CloseTraceSlice() = 0;
  // Draws the state it is in as a trace starts (a counter's value), so a
  // window cut from the middle of a run opens with it. Called by
  // Simulator::OpenTraceSlices() once a writer is attached, with the
  // source's place among the simulator's sources (0 the oldest): sources
  // that share a name can name their tracks apart by it.
  virtual void OpenTraceSlice(int ordinal) {}

 private:
  friend class Simulator;
  Simulator* owner_;
  TraceSource* prev_ = nullptr;
  TraceSource* next_ = nullptr;
};

class Simulator {
 public:
  // `trace` may be null (tracing off); it must outlive the Simulator.
  explicit Simulator(TraceWriter* trace = nullptr);
  // Destroys every root process still suspended (and their children).
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Time Now() const { return now_; }
  TraceWriter* trace() const { return trace_; }
  // Turns tracing on (non-null) or off from now on; models look the writer up
  // on every traced action, so a window of the run can be traced.
  void set_trace(TraceWriter* trace) { trace_ = trace; }
  // The resources a run makes ideal (`viosim explain --ideal`): lock classes
  // and cache lines, by the name their models give them (lock_stat's class
  // name, a line's). A model asks as it is built; set them before.
  void set_ideal(std::vector<std::string> names) { ideal_ = std::move(names); }
  bool IsIdeal(std::string_view name) const {
    for (const std::string& n : ideal_) {
      if (n == name) return true;
    }
    return false;
  }
  // Each lock class and cache line a model builds registers its name and
  // kind ("spinlock", "mutex", "line"); listed once each, in order of first
  // registration: what `explain --ideal` can make ideal.
  struct Resource {
    std::string name;
    std::string kind;
  };
  void RegisterResource(std::string_view name, std::string_view kind) {
    if (name.empty()) return;  // a model's scratch line: nothing to name it by
    for (const Resource& r : resources_) {
      if (r.name == name) return;
    }
    resources_.push_back({std::string(name), std::string(kind)});
  }
  const std::vector<Resource>& resources() const { return resources_; }

  // Every TraceSource draws its slice in progress up to Now(), in the order
  // they were created. Call before the writer is detached or finished.
  void CloseTraceSlices();
  // Every TraceSource draws the state it is in at Now(), in the order they
  // were created. Call right after attaching a writer.
  void OpenTraceSlices();
  // Events run so far.
  uint64_t events() const { return events_; }
  // Of those, the ones that took no place in the timed queue: wakeups
  // (Wake) and events run inline (WakeLast, RanInline).
  uint64_t untimed_events() const { return untimed_events_; }

  // Starts `task` as a root process at Now(), through Wake(). The Simulator
  // owns it from here on.
  void Spawn(Task task);

  // Resumes `h` at time `at`. REQUIRES: at >= Now().
  [[gnu::always_inline]] void ScheduleAt(Time at, std::coroutine_handle<> h) {
    queue_.Push(Entry{at.ps(), seq_++, h.address()}, now_.ps());
  }
  // For an event whose place in the order is taken now but which may never
  // be queued: ReserveSeq() takes the sequence number ScheduleAt would have
  // taken here. Its owner then either runs it inline at its time, as the
  // last act of the event just before it in the order (RanInline() counts
  // it), or queues it with ScheduleAtSeq, in the place it reserved.
  uint64_t ReserveSeq() { return seq_++; }
  void ScheduleAtSeq(Time at, uint64_t seq, std::coroutine_handle<> h) {
    queue_.Push(Entry{at.ps(), seq, h.address()}, now_.ps());
  }
  void RanInline() {
    ++events_;
    ++untimed_events_;
  }
  // Whether no wakeup (Wake) is pending.
  bool ready_empty() const { return ready_head_ == ready_.size(); }
  // Resumes `h` at Now(), as soon as the running event is over and before
  // any other event (wakeups run in the order they were made). One event,
  // but a cheap one: a FIFO append instead of a heap insertion. Use Delay(0)
  // to run after the events already scheduled for Now() instead.
  void Wake(std::coroutine_handle<> h) { ready_.push_back(h.address()); }
  // Wake(h) as the last act of the running event, for an event the loop
  // resumed itself (a Callback, not a coroutine resumed by another) that
  // does nothing after it. With no other wakeup pending, `h` would run
  // next: it is returned, for the event to transfer to at once (counted as
  // an event, as the wakeup would be); the order of everything is Wake's.
  // Otherwise it is queued as Wake queues it, and a null handle returned.
  std::coroutine_handle<> WakeLast(std::coroutine_handle<> h) {
    if (ready_head_ == ready_.size()) {
      ++events_;
      ++untimed_events_;
      return h;
    }
    Wake(h);
    return {};
  }

  struct DelayAwaiter {
    Simulator* sim;
    Time d;
    bool await_ready() const noexcept { return false; }
    [[gnu::always_inline]] void await_suspend(std::coroutine_handle<> h) const {
      sim->ScheduleAt(sim->now_ + d, h);
    }
    void await_resume() const noexcept {}
  };
  // `co_await sim.Delay(d)` resumes the caller d later (one event; a zero
  // delay still yields to the events already due now).
  DelayAwaiter Delay(Time d) { return DelayAwaiter{this, d}; }

  // Makes the pending resumption of `from` at `at` (scheduled with
  // ScheduleAt, or with Wake when `at` is Now()) resume `to` instead, in the
  // same place of the order. Returns whether one was found. Linear in the
  // number of pending events: for rare changes of plan, not the hot path.
  bool Retarget(Time at, std::coroutine_handle<> from, std::coroutine_handle<> to);

  // Runs every event due at or before `until`, then sets Now() to `until`.
  // REQUIRES: until >= Now().
  void RunUntil(Time until);
  // Runs one event (and any its last act runs inline: WakeLast,
  // RanInline). Returns false when none is left.
  bool Step();
  // When the next event is due: Now() while a wakeup is pending, else the
  // earliest scheduled time; Time::Max() when no event is left (an event at
  // Time::Max(), a delay too long to count, never comes either).
  Time NextEventTime() const {
    if (ready_head_ < ready_.size()) return now_;
    return queue_.empty() ? Time::Max() : Time::Picos(queue_.MinTime());
  }
  bool empty() const { return queue_.empty() && ready_head_ == ready_.size(); }

  // The most events one instant of simulated time may hold. More means the
  // run no longer makes progress: a cycle of processes whose every step
  // costs nothing (zero costs, zero delays) runs at one instant for ever.
  // The busiest legal instant (every job of a large fio run submitting at
  // time 0) holds a few million events.
  static constexpr uint64_t kMaxEventsAtOneInstant = uint64_t{50} << 20;
  // Whether max_events_at_one_instant() events ran at one instant; then
  // every pending event was dropped and the run is over.
  bool stalled() const { return stalled_; }
  // The instant the run stalled at (if stalled()).
  Time stalled_at() const { return stalled_at_; }
  uint64_t max_events_at_one_instant() const { return max_events_at_one_instant_; }
  // For tests: a smaller bound. Call before running.
  void set_max_events_at_one_instant(uint64_t n) {
    max_events_at_one_instant_ = n;
    next_progress_check_ = events_ + n;
  }

 private:
  using Entry = EventQueue::Entry;
  void Fire(const Entry& e) {
    now_ = Time::Picos(e.t);
    ++events_;
    std::coroutine_handle<>::from_address(e.h).resume();
  }
  // Runs the wakeups made so far (and those they make in turn).
  void DrainReady() {
    while (ready_head_ < ready_.size()) {
      // Every wakeup of one drain is at one instant.
      if (ready_head_ == max_events_at_one_instant_) [[unlikely]] return Stall();
      void* h = ready_[ready_head_++];
      ++events_;
      ++untimed_events_;
      std::coroutine_handle<>::from_address(h).resume();
    }
    ready_.clear();
    ready_head_ = 0;
  }

  EventQueue queue_;
  std::vector<void*> ready_;  // wakeups due now, FIFO from ready_head_
  std::size_t ready_head_ = 0;
  Time now_;
  uint64_t seq_ = 0;
  uint64_t events_ = 0;
  uint64_t untimed_events_ = 0;
  TraceWriter* trace_;
  std::vector<std::string> ideal_;
  std::vector<Resource> resources_;
  friend class TraceSource;
  TraceSource* sources_head_ = nullptr;  // oldest first
  TraceSource* sources_tail_ = nullptr;
  // Progress check: every max_events_at_one_instant_ events, simulated time
  // must have moved since the last check.
  uint64_t max_events_at_one_instant_ = kMaxEventsAtOneInstant;
  uint64_t next_progress_check_ = kMaxEventsAtOneInstant;
  Time progress_checked_at_ = Time::Picos(-1);
  bool stalled_ = false;
  Time stalled_at_;
  void CheckProgress();
  void Stall();
  internal::RootLink roots_;  // sentinel of the list of live root processes
};

inline bool Simulator::Step() {
  if (ready_head_ < ready_.size()) {
    void* h = ready_[ready_head_++];
    if (ready_head_ == ready_.size()) {
      ready_.clear();
      ready_head_ = 0;
    }
    ++events_;
    ++untimed_events_;
    std::coroutine_handle<>::from_address(h).resume();
    return true;
  }
  Entry e;
  if (!queue_.PopDue(Time::Max().ps(), &e)) return false;
  Fire(e);
  return true;
}

inline void Simulator::RunUntil(Time until) {
  const int64_t limit = until.ps();
  DrainReady();
  for (;;) {
    if (!queue_.wheel()) [[likely]] {
      if (queue_.heap_empty() || queue_.Top().t > limit) break;
      Fire(queue_.PopTop());
    } else {
      Entry e;
      if (!queue_.PopWheel(limit, &e)) break;
      Fire(e);
    }
    if (!ready_.empty()) DrainReady();
    if (events_ >= next_progress_check_) [[unlikely]] CheckProgress();
  }
  now_ = until;
}

// A condition processes wait on; Notify wakes waiters in FIFO order, each
// through one event at the current time. Waiters recheck their condition.
class Signal {
 public:
  explicit Signal(Simulator& sim) : sim_(&sim) {}
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;

  struct Awaiter {
    Signal* s;
    std::coroutine_handle<> h;
    Awaiter* next = nullptr;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> handle) {
      h = handle;
      if (s->tail_ != nullptr) {
        s->tail_->next = this;
      } else {
        s->head_ = this;
      }
      s->tail_ = this;
    }
    void await_resume() const noexcept {}
  };
  Awaiter Wait() { return Awaiter{this, {}}; }

  bool has_waiters() const { return head_ != nullptr; }
  // Wakes the longest waiter, if any. Returns whether one was woken.
  bool NotifyOne() {
    Awaiter* a = head_;
    if (a == nullptr) return false;
    head_ = a->next;
    if (head_ == nullptr) tail_ = nullptr;
    sim_->Wake(a->h);
    return true;
  }
  // Wakes every waiter; returns how many.
  int NotifyAll() {
    int n = 0;
    while (NotifyOne()) ++n;
    return n;
  }

 private:
  Simulator* sim_;
  Awaiter* head_ = nullptr;
  Awaiter* tail_ = nullptr;
};

// Joins a set of spawned processes: Add before spawning, Done at the end of
// each, and `co_await wg.Wait()` resumes once the count is back to zero.
class WaitGroup {
 public:
  explicit WaitGroup(Simulator& sim) : done_(sim) {}
  void Add(int n = 1) { count_ += n; }
  void Done() {
    if (--count_ == 0) done_.NotifyAll();
  }
  int count() const { return count_; }

  struct Awaiter {
    WaitGroup* wg;
    Signal::Awaiter inner;
    bool await_ready() const noexcept { return wg->count_ == 0; }
    void await_suspend(std::coroutine_handle<> h) { inner.await_suspend(h); }
    void await_resume() const noexcept {}
  };
  Awaiter Wait() { return Awaiter{this, done_.Wait()}; }

 private:
  Signal done_;
  int count_ = 0;
};

}  // namespace sim

#endif  // VIOSIM_SIM_SIMULATOR_H_
