// sim::Task: a simulated process written as a C++20 coroutine.
//
// A Task is lazy: it runs when it is awaited by another Task (a child call,
// which also joins it) or when it is handed to Simulator::Spawn (a detached
// root process). A model therefore reads as the kernel function it stands
// for, step by step:
//
//   sim::Task Thread(Cpu& cpu) {
//     co_await cpu.Run(cost);      // one event
//     co_await lock.Lock(cpu);     // no event when uncontended
//     ...
//   }
//
// Frames come from FramePool, so steady-state simulation allocates nothing.
// A Task object owns its frame until it completes or is spawned; destroying
// an un-started or suspended Task destroys its frame (and, through it, the
// frames of the children it awaits).
#ifndef VIOSIM_SIM_TASK_H_
#define VIOSIM_SIM_TASK_H_

#include <coroutine>
#include <cstddef>
#include <exception>
#include <utility>

#include "sim/frame_pool.h"

namespace sim {

class Task;

namespace internal {

// Intrusive list of the root processes a Simulator owns.
struct RootLink {
  RootLink* prev = nullptr;
  RootLink* next = nullptr;
  void Unlink() {
    if (prev != nullptr) prev->next = next;
    if (next != nullptr) next->prev = prev;
    prev = next = nullptr;
  }
};

struct TaskPromise : RootLink {
  std::coroutine_handle<> continuation;  // the awaiting parent, if any
  bool detached = false;                 // a root owned by a Simulator

  Task get_return_object() noexcept;
  std::suspend_always initial_suspend() noexcept { return {}; }

  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    std::coroutine_handle<> await_suspend(
        std::coroutine_handle<TaskPromise> h) noexcept {
      TaskPromise& p = h.promise();
      if (p.detached) {
        p.Unlink();
        h.destroy();
        return std::noop_coroutine();
      }
      if (p.continuation) return p.continuation;
      return std::noop_coroutine();
    }
    void await_resume() noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
  void return_void() noexcept {}
  // Models do not throw; an escaping exception is a bug.
  void unhandled_exception() noexcept { std::terminate(); }

  static void* operator new(std::size_t n) { return FramePool::Allocate(n); }
  static void operator delete(void* p, std::size_t n) { FramePool::Free(p, n); }
};

}  // namespace internal

class [[nodiscard]] Task {
 public:
  using promise_type = internal::TaskPromise;
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle h) : h_(h) {}
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      Reset();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { Reset(); }

  bool valid() const { return static_cast<bool>(h_); }
  bool done() const { return h_ && h_.done(); }

  // Awaiting a Task starts it and resumes the awaiter when it finishes
  // (symmetric transfer: no event, no recursion on the host stack).
  bool await_ready() const noexcept { return !h_ || h_.done(); }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> parent) noexcept {
    h_.promise().continuation = parent;
    return h_;
  }
  void await_resume() const noexcept {}

  // Gives up ownership; for Simulator::Spawn.
  Handle Release() { return std::exchange(h_, {}); }

 private:
  void Reset() {
    if (h_) std::exchange(h_, {}).destroy();
  }
  Handle h_;
};

inline Task internal::TaskPromise::get_return_object() noexcept {
  return Task(std::coroutine_handle<TaskPromise>::from_promise(*this));
}

}  // namespace sim

#endif  // VIOSIM_SIM_TASK_H_
