// Callback: a member function the simulator can call at a chosen time.
//
// The event loop resumes coroutine handles only. A model that computes its
// own event times (a CPU ending a chunk of work, a device unit finishing a
// command) would otherwise need a process per pending event. A Callback is
// one coroutine frame, made once, that calls `obj->*F()` every time it is
// resumed and then suspends again; the model schedules it with
// `sim.ScheduleAt(t, cb.handle())`. The call is direct (F is a template
// argument), not through a pointer.
//
// F may instead return a coroutine handle: the coroutine to run next, at
// once, when the call returns (a symmetric transfer from the callback's
// frame, no event of its own), or a null handle for none. It is for an
// event whose last act would wake a coroutine that nothing else precedes
// (Simulator::WakeLast).
//
// REQUIRES: at most one pending resumption at a time per Callback.
#ifndef VIOSIM_MODELS_CPU_CALLBACK_H_
#define VIOSIM_MODELS_CPU_CALLBACK_H_

#include <coroutine>
#include <type_traits>
#include <utility>

#include "sim/task.h"

namespace models {

namespace internal {
// Suspends, then runs `next` (if any) in place of returning to the loop.
struct TransferTo {
  std::coroutine_handle<> next;
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<>) const noexcept {
    return next ? next : std::noop_coroutine();
  }
  void await_resume() const noexcept {}
};

template <class T, auto F>
sim::Task CallbackLoop(T* obj) {
  for (;;) {
    if constexpr (std::is_void_v<decltype((obj->*F)())>) {
      (obj->*F)();
      co_await std::suspend_always{};
    } else {
      co_await TransferTo{(obj->*F)()};
    }
  }
}
}  // namespace internal

class Callback {
 public:
  Callback() = default;
  // A callback calling obj->F(); F is a `void (T::*)()` or a
  // `std::coroutine_handle<> (T::*)()` (the coroutine to run next).
  template <auto F, class T>
  static Callback Bind(T* obj) {
    Callback c;
    c.h_ = internal::CallbackLoop<T, F>(obj).Release();
    return c;
  }
  Callback(Callback&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Callback& operator=(Callback&& o) noexcept {
    if (this != &o) {
      Reset();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Callback(const Callback&) = delete;
  Callback& operator=(const Callback&) = delete;
  ~Callback() { Reset(); }

  std::coroutine_handle<> handle() const { return h_; }
  bool valid() const { return static_cast<bool>(h_); }

 private:
  void Reset() {
    if (h_) std::exchange(h_, {}).destroy();
  }
  sim::Task::Handle h_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_CPU_CALLBACK_H_
