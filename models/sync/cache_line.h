// A contended cache line: a shared counter (atomic_t, like raid10's
// conf->nr_pending), a list head, a flag several CPUs read and write.
//
// Each access costs its CPU the line's move when the line is elsewhere --
// the transfer LockHandoffCosts gives for the distance from the CPU that
// wrote it last -- and the same-CPU figure when the line is already here:
//
//   - a write or atomic read-modify-write (atomic_inc, cmpxchg) on a CPU
//     other than the last writer's moves the line to this CPU, which
//     becomes the last writer;
//   - a read on a CPU other than the last writer's moves a shared copy
//     here once; further reads on that CPU hit until the next write.
//
// The accesses are charged as `co_await line.AtomicRmw(cpu)` (one Run on
// the caller's CPU, in its context). A line nobody wrote yet is local
// everywhere.
//
// Not modeled by default: the wait of an access behind another CPU's
// transfer of the same line (concurrent accesses each pay their own
// transfer); set_serialized(true) adds it, as a what-if: a transfer starts
// once the one in flight has ended, and the access pays its wait too. Not
// modeled: the cost of invalidating readers' copies. Where the line's
// memory lives counts only when a home socket is set.
#ifndef VIOSIM_MODELS_SYNC_CACHE_LINE_H_
#define VIOSIM_MODELS_SYNC_CACHE_LINE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/cpu/cpu.h"
#include "models/sync/handoff_costs.h"
#include "sim/time.h"

namespace models {

class CacheLine {
 public:
  CacheLine(std::string name, const LockHandoffCosts& costs);
  CacheLine(const CacheLine&) = delete;
  CacheLine& operator=(const CacheLine&) = delete;

  const std::string& name() const { return name_; }
  // The socket the line's memory is on (HomedDistance); -1, the default:
  // distances as DistanceOf gives them.
  void set_home_socket(int socket) { home_ = socket; }
  // Whether a transfer waits for the one in flight (see the file comment);
  // when it does, a transfer occupies the line for `scale` times its
  // distance's cost (and the access pays that, after its wait).
  void set_serialized(bool on, double scale = 1.0);
  // Ideal (the what-if of `explain --ideal`): every access costs what it
  // costs on a line already in this CPU's cache, and never waits.
  void set_ideal(bool on) { ideal_ = on; }
  bool ideal() const { return ideal_; }
  // The CPU that wrote the line last; null if nobody has.
  const Cpu* last_writer() const { return writer_; }

  // The accesses, by code running on `cpu`.
  Cpu::WorkAwaiter Read(Cpu& cpu) { return cpu.Run(Access(cpu, /*write=*/false)); }
  Cpu::WorkAwaiter Write(Cpu& cpu) { return cpu.Run(Access(cpu, /*write=*/true)); }
  Cpu::WorkAwaiter AtomicRmw(Cpu& cpu) { return cpu.Run(Access(cpu, /*write=*/true)); }

  // The same accesses for a caller that charges them together with its own
  // work in one Run: the line's state changes now and the access's cost is
  // returned (`co_await cpu.Run(work + line.ReadCost(cpu))`).
  sim::Time ReadCost(Cpu& cpu) { return Access(cpu, /*write=*/false); }
  sim::Time WriteCost(Cpu& cpu) { return Access(cpu, /*write=*/true); }

  // Counters since the last ResetStats.
  uint64_t accesses() const { return accesses_; }
  // Accesses that moved the line, in all and by distance (indexed by
  // CpuDistance; kSame stays zero).
  uint64_t transfers() const { return transfers_; }
  uint64_t transfers_at(CpuDistance d) const { return transfers_by_[static_cast<int>(d)]; }
  void ResetStats();

 private:
  // Updates the line's state for an access on `cpu` and returns its cost.
  sim::Time Access(Cpu& cpu, bool write);
  bool HasCopy(const Cpu& cpu) const {
    if (writer_ == nullptr || writer_ == &cpu) return true;
    const auto id = static_cast<size_t>(cpu.id());
    return id < copy_at_.size() && copy_at_[id] == writes_;
  }

  std::string name_;
  std::array<sim::Time, kCpuDistances> costs_;  // LockHandoffCosts::Table()
  int home_ = -1;
  bool ideal_ = false;
  bool serialized_ = false;
  double serialized_scale_ = 1.0;  // serialized: a transfer's share of its cost
  sim::Time free_at_;  // serialized: when the transfer in flight ends
  const Cpu* writer_ = nullptr;
  // Writes so far, and per CPU id (the CPUs of one machine have distinct
  // ids) the value it had when that CPU took its copy: a CPU has a copy
  // since the last write when the two are equal, and a write drops every
  // copy by counting itself.
  uint64_t writes_ = 1;
  std::vector<uint64_t> copy_at_;
  uint64_t accesses_ = 0;
  uint64_t transfers_ = 0;
  std::array<uint64_t, kCpuDistances> transfers_by_{};
};

}  // namespace models

#endif  // VIOSIM_MODELS_SYNC_CACHE_LINE_H_
