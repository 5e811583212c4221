// Recycles coroutine frames so that steady-state simulation allocates nothing.
//
// Frames are grouped in size classes of 64 bytes up to 4 KiB; each class keeps
// a free list threaded through the freed blocks themselves. Larger frames go
// to the global allocator. The pool is per thread: a simulation runs on one
// thread from start to end, so frames never cross threads.
#ifndef VIOSIM_SIM_FRAME_POOL_H_
#define VIOSIM_SIM_FRAME_POOL_H_

#include <cstddef>
#include <cstdint>
#include <new>

namespace sim {

class FramePool {
 public:
  static constexpr std::size_t kGranule = 64;
  static constexpr std::size_t kClasses = 64;  // up to 4 KiB

  static void* Allocate(std::size_t n) {
    const std::size_t c = (n + kGranule - 1) / kGranule;
    if (c >= kClasses) return ::operator new(n);
    Local& l = local();
    ++l.allocations;
    if (FreeBlock* b = l.free[c]) {
      l.free[c] = b->next;
      ++l.reuses;
      return b;
    }
    return ::operator new(c * kGranule, std::align_val_t{kGranule});
  }

  static void Free(void* p, std::size_t n) {
    const std::size_t c = (n + kGranule - 1) / kGranule;
    if (c >= kClasses) {
      ::operator delete(p);
      return;
    }
    Local& l = local();
    auto* b = static_cast<FreeBlock*>(p);
    b->next = l.free[c];
    l.free[c] = b;
  }

  // Frames handed out by this thread's pool, and how many of those came from
  // its free lists rather than the global allocator.
  static uint64_t allocations() { return local().allocations; }
  static uint64_t reuses() { return local().reuses; }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  struct Local {
    FreeBlock* free[kClasses] = {};
    uint64_t allocations = 0;
    uint64_t reuses = 0;
    ~Local() {
      for (FreeBlock*& head : free) {
        while (head != nullptr) {
          FreeBlock* next = head->next;
          ::operator delete(head, std::align_val_t{kGranule});
          head = next;
        }
      }
    }
  };
  static Local& local() {
    static thread_local Local l;
    return l;
  }
};

}  // namespace sim

#endif  // VIOSIM_SIM_FRAME_POOL_H_
