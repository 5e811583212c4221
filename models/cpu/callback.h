// Callback: a member function the simulator can call at a chosen time.
//
// The event loop resumes coroutine handles only. A model that computes its
// own event times (a CPU ending a chunk of work, a device unit finishing a
// command) would otherwise need a process per pending event. A Callback is
// a handle the simulator resumes like any other, and resuming it calls
// `obj->*F()`; the model schedules it with `sim.ScheduleAt(t, cb.handle())`.
// The call is direct (F is a template argument), not through a pointer.
//
// F may instead return a coroutine handle: the coroutine to run next, at
// once, when the call returns (no event of its own), or a null handle for
// none. It is for an event whose last act would wake a coroutine that
// nothing else precedes (Simulator::WakeLast).
//
// How: under the coroutine ABI of GCC and Clang, a coroutine frame begins
// with two function pointers, resume and destroy, each taking the frame's
// address, and `handle.resume()` is an indirect call through the first
// (libstdc++'s own noop_coroutine() is such a frame with no coroutine
// behind it). A Callback's frame is three words: a resume pointer that is
// F's trampoline, a destroy pointer, and `obj`. The event loop's indirect
// call lands in the trampoline, which calls F: a coroutine frame's own
// resume function would first dispatch on its suspension point and then
// call F. Another compiler gets that coroutine instead (kCallbackHasFrame
// says which is built); CallbackTest checks both ways.
//
// REQUIRES: at most one pending resumption at a time per Callback.
#ifndef VIOSIM_MODELS_CPU_CALLBACK_H_
#define VIOSIM_MODELS_CPU_CALLBACK_H_

#include <coroutine>
#include <memory>
#include <type_traits>
#include <utility>

#include "sim/task.h"

namespace models {

#if defined(__GNUC__) || defined(__clang__)
inline constexpr bool kCallbackHasFrame = true;
#else
inline constexpr bool kCallbackHasFrame = false;
#endif

namespace internal {

// The head of a coroutine frame as GCC and Clang lay it out, and `obj`.
struct CallbackFrame {
  void (*resume)(CallbackFrame*);
  void (*destroy)(CallbackFrame*);
  void* obj;
};

template <class T, auto F>
void CallbackResume(CallbackFrame* f) {
  T* obj = static_cast<T*>(f->obj);
  if constexpr (std::is_void_v<decltype((obj->*F)())>) {
    (obj->*F)();
  } else {
    if (std::coroutine_handle<> next = (obj->*F)()) next.resume();
  }
}

// Never called: a Callback's frame is freed by its owner, not by a handle.
inline void CallbackDestroy(CallbackFrame*) {}

// Suspends, then runs `next` (if any) in place of returning to the loop.
struct TransferTo {
  std::coroutine_handle<> next;
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<>) const noexcept {
    return next ? next : std::noop_coroutine();
  }
  void await_resume() const noexcept {}
};

// The same as a coroutine, for a compiler whose frames are laid out some
// other way.
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
  // `frame` chooses the three-word frame (where the compiler allows it) or
  // the coroutine; tests build both.
  template <auto F, class T>
  static Callback Bind(T* obj, bool frame = kCallbackHasFrame) {
    Callback c;
    if (frame && kCallbackHasFrame) {
      c.frame_.reset(new internal::CallbackFrame{&internal::CallbackResume<T, F>, &internal::CallbackDestroy, obj});
      c.h_ = std::coroutine_handle<>::from_address(c.frame_.get());
    } else {
      c.loop_ = internal::CallbackLoop<T, F>(obj).Release();
      c.h_ = c.loop_;
    }
    return c;
  }
  Callback(Callback&& o) noexcept
      : frame_(std::move(o.frame_)), loop_(std::exchange(o.loop_, {})), h_(std::exchange(o.h_, {})) {}
  Callback& operator=(Callback&& o) noexcept {
    if (this != &o) {
      Reset();
      frame_ = std::move(o.frame_);
      loop_ = std::exchange(o.loop_, {});
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
    if (loop_) std::exchange(loop_, {}).destroy();
    frame_.reset();
    h_ = {};
  }
  std::unique_ptr<internal::CallbackFrame> frame_;
  sim::Task::Handle loop_;
  std::coroutine_handle<> h_;
};

// A Callback whose frame is a member of its owner, for an owner that never
// moves (a CPU): no allocation of its own, and the event that calls it
// finds the owner's fields on the frame's cache lines. Neither copied nor
// moved. Another compiler gets a Callback.
template <class T, auto F>
class InlineCallback {
  // kCallbackHasFrame, made to depend on T so that the branch not taken
  // is not compiled.
  static constexpr bool kFrame = kCallbackHasFrame && !std::is_void_v<T>;

 public:
  explicit InlineCallback(T* obj) {
    if constexpr (kFrame) {
      s_ = {&internal::CallbackResume<T, F>, &internal::CallbackDestroy, obj};
    } else {
      s_ = Callback::Bind<F>(obj);
    }
  }
  InlineCallback(const InlineCallback&) = delete;
  InlineCallback& operator=(const InlineCallback&) = delete;

  std::coroutine_handle<> handle() {
    if constexpr (kFrame) {
      return std::coroutine_handle<>::from_address(&s_);
    } else {
      return s_.handle();
    }
  }

 private:
  std::conditional_t<kFrame, internal::CallbackFrame, Callback> s_{};
};

}  // namespace models

#endif  // VIOSIM_MODELS_CPU_CALLBACK_H_
