// A contended 64-byte cache line: the line holding a shared counter
// (raid10's conf->nr_pending), a list head, the fields several CPUs read and
// write. Models name a field (struct_layout.h); the field's line is what
// moves.
//
// The line's coherence state, per access on `cpu`:
//
//   - a read is a transaction when another CPU wrote the line since this
//     CPU's last copy (its copy is stale or it has none); it leaves a
//     shared copy here, and further reads hit until the next write;
//   - a write or atomic read-modify-write (atomic_inc, cmpxchg) is a
//     transaction unless this CPU wrote the line last, no other CPU has
//     read it since (the line is exclusive here) and no other CPU's
//     transaction of it is on its way; after it this CPU is the
//     line's last writer and every other copy is stale. A read followed by
//     an RMW on a line another CPU wrote is two transactions.
//
// A hit costs the table's same-CPU figure. A transaction is served by the
// line (LineCosts): it moves the line from the CPU of the line's previous
// transaction -- for a write that this CPU's own read made shared, from the
// last writer -- and occupies the line for `service_ratio` times the idle
// one-way hand-off between those two CPUs, by their distance
// (LockHandoffCosts, with the home socket's HomedDistance). Its state
// change lands when it is done: until then the CPUs that had the line go on
// reading their copies. The policy says what happens when it is busy:
//
//   - kUnqueued: no line waits; every transaction pays its own hand-off at
//     once (ratio 1), however many are in flight (the simplification of a
//     line under light load);
//   - kFifo: a transaction waits for the one in flight and those queued
//     before it: the line is a single FIFO server;
//   - kNearestFirst: when the line comes free it goes to the waiting CPU
//     nearest the CPU that holds it (same LLC, then the same socket where
//     that is cheaper than another socket; the oldest waiter among equals),
//     unless the oldest waiter has been passed over `max_bypass` times,
//     which then gets it: the measured unfairness of contended lines on AMD
//     Zen (a line stays in the CCX that has it), with the starvation bound
//     every coherent fabric has.
//
// The requesting CPU waits for its transaction as kernel time (a stalled
// load or locked instruction is not a spin on a lock): `co_await
// line.AtomicRmw(cpu, then)` resumes once the transaction is done and `then`
// of the caller's own work after it has run. A transaction on a free line
// is one charge of CPU time; a queued one waits for the line to pick it.
//
// Not modeled: the cost of invalidating the readers' copies beyond the
// transaction itself, prefetching, and SMT siblings' preference within an
// LLC.
#ifndef VIOSIM_MODELS_SYNC_CACHE_LINE_H_
#define VIOSIM_MODELS_SYNC_CACHE_LINE_H_

#include <array>
#include <coroutine>
#include <cstdint>
#include <string>
#include <vector>

#include "models/cpu/callback.h"
#include "models/cpu/cpu.h"
#include "models/sync/handoff_costs.h"
#include "sim/rng.h"
#include "sim/time.h"

namespace models {

enum class LineArbitration : uint8_t { kUnqueued, kFifo, kNearestFirst, kRandom };
const char* LineArbitrationName(LineArbitration a);

// How a machine's contended lines behave.
struct LineCosts {
  // Idle one-way hand-off of a line by distance (same_cpu: a hit).
  LockHandoffCosts handoff;
  // A queued transaction's occupancy of the line, as a share of the idle
  // hand-off between its CPU and the line's previous holder (kFifo,
  // kNearestFirst; kUnqueued charges the hand-off itself).
  double service_ratio = 1.0;
  LineArbitration arbitration = LineArbitration::kUnqueued;
  // kNearestFirst: how many times the oldest waiter may be passed over.
  int max_bypass = 1;
  // The socket the lines' memory is on (HomedDistance); -1: not modeled.
  int home_socket = -1;
  // kRandom: the seed of each line's stream (mixed with the line's name).
  uint64_t seed = 1;
};

class CacheLine {
 public:
  CacheLine(sim::Simulator& sim, std::string name, const LineCosts& costs);
  // An unqueued line over `handoff` (the policy of a line under light load).
  CacheLine(sim::Simulator& sim, std::string name, const LockHandoffCosts& handoff);
  CacheLine(const CacheLine&) = delete;
  CacheLine& operator=(const CacheLine&) = delete;

  const std::string& name() const { return name_; }
  // The fields it holds, for reports ("nr_pending, barrier").
  const std::string& fields() const { return fields_; }
  void set_fields(std::string f) { fields_ = std::move(f); }
  const LineCosts& costs() const { return costs_; }
  // Ideal (the what-if of a resource made ideal): every access costs what
  // it costs on a line already in this CPU's cache, and never waits.
  void set_ideal(bool on) { ideal_ = on; }
  bool ideal() const { return ideal_; }
  // The CPU that wrote the line last; null if nobody has.
  const Cpu* last_writer() const { return writer_; }

  class Access {
   public:
    Access(CacheLine* line, Cpu* cpu, bool write, sim::Time then)
        : line_(line), cpu_(cpu), then_(then), write_(write) {}
    bool await_ready() { return line_->Start(*this); }
    void await_suspend(std::coroutine_handle<> h) { line_->Suspend(*this, h); }
    void await_resume() const noexcept {
      if (queued_) cpu_->EndSpinWait(was_irq_);
    }

   private:
    friend class CacheLine;
    CacheLine* line_;
    Cpu* cpu_;
    sim::Time then_;
    bool write_;
    bool queued_ = false;
    bool was_irq_ = false;
    sim::Time run_;  // not queued: what the CPU is charged now
    // Queued: the waiter's place in the line's lists and its wait.
    std::coroutine_handle<> h_;
    Access* prev_ = nullptr;
    Access* next_ = nullptr;
    // Its place among the waiters of its LLC, and of its socket.
    struct Link {
      Access* prev = nullptr;
      Access* next = nullptr;
    };
    Link in_llc_;
    Link in_socket_;
    sim::Time since_;
    // Younger waiters that got the line first, kept as marks (see
    // passed_marks_): each such bypass marks the waiter just before the
    // chosen one, standing for every waiter from the oldest up to it.
    int mark_ = 0;
  };

  // The accesses, by code running on `cpu`, each followed by `then` of the
  // caller's work (zero: none).
  Access Read(Cpu& cpu, sim::Time then = sim::Time::Zero()) { return Access(this, &cpu, false, then); }
  Access Write(Cpu& cpu, sim::Time then = sim::Time::Zero()) { return Access(this, &cpu, true, then); }
  Access AtomicRmw(Cpu& cpu, sim::Time then = sim::Time::Zero()) { return Access(this, &cpu, true, then); }

  // A write whose cost its caller charges itself (a lock word's hand-off,
  // charged by the lock): the line's state changes as a write's does, and
  // nothing is served or counted as a transaction.
  void Touch(const Cpu& cpu);

  // Counters since the last ResetStats.
  uint64_t accesses() const { return accesses_; }
  // Transactions, in all and by distance (indexed by CpuDistance; kSame
  // counts upgrades of a copy this CPU read).
  uint64_t transfers() const { return transfers_; }
  uint64_t transfers_at(CpuDistance d) const { return transfers_by_[static_cast<int>(d)]; }
  // Transactions that waited for the line, and the waits' and services' sums.
  uint64_t queued() const { return queued_; }
  sim::Time wait_sum() const { return wait_sum_; }
  // The time the line was serving a transaction within the window (a
  // transaction in flight at either end counts for its part inside).
  sim::Time BusyTime() const;
  // Transactions that went to a waiter other than the oldest.
  uint64_t bypasses() const { return bypasses_; }
  void ResetStats();

 private:
  // Whether `a` needs no wait (a hit, or a free line: run_ set).
  bool Start(Access& a);
  void Suspend(Access& a, std::coroutine_handle<> h);
  // A transaction by `cpu` from the line's previous place: counted, its
  // state change due when it is done (at once when unqueued); returns its
  // service time.
  sim::Time Serve(const Cpu& cpu, bool write);
  // The line's state after a transaction or write by `cpu`.
  void Apply(const Cpu& cpu, bool write);
  // Applies the transaction in flight once it is done.
  void Settle() {
    if (pending_.cpu != nullptr && sim_->Now() >= pending_.at) {
      Apply(*pending_.cpu, pending_.write);
      pending_.cpu = nullptr;
    }
  }
  bool Needs(const Cpu& cpu, bool write) const;
  bool HasCopy(const Cpu& cpu) const {
    if (writer_ == nullptr || writer_ == &cpu) return true;
    const auto id = static_cast<size_t>(cpu.id());
    return id < copy_at_.size() && copy_at_[id] == writes_;
  }
  CpuDistance Distance(const Cpu& from, const Cpu& to) const {
    return &from == &to ? CpuDistance::kSame : HomedDistance(from.place(), to.place(), costs_.home_socket);
  }
  // The line comes free: the next waiter's transaction starts.
  void Pick();
  Access* Choose();
  void Unlink(Access* a);

  sim::Simulator* sim_;
  std::string name_;
  std::string fields_;
  LineCosts costs_;
  std::array<sim::Time, kCpuDistances> handoff_;  // LockHandoffCosts::Table()
  std::array<sim::Time, kCpuDistances> service_;  // handoff_ x service_ratio
  bool ideal_ = false;
  sim::Rng rng_;  // kRandom's choice of the next owner
  const Cpu* writer_ = nullptr;
  const Cpu* holder_ = nullptr;  // the CPU of the last transaction
  // Another CPU read the line since its last write.
  bool shared_ = false;
  // Writes so far, and per CPU id the value it had when that CPU took its
  // copy: a CPU has a copy since the last write when the two are equal.
  uint64_t writes_ = 1;
  std::vector<uint64_t> copy_at_;
  // The server: when the transaction in flight ends; the waiters in
  // arrival order, and per LLC; whether a Pick is due.
  sim::Time busy_until_;
  Access* head_ = nullptr;
  Access* tail_ = nullptr;
  struct Group {
    Access* head = nullptr;
    Access* tail = nullptr;
  };
  std::vector<Group> llc_;
  std::vector<Group> socket_;
  // A waiter onto the end of group `g` (its link `l`), or out of it.
  static void Append(Group& g, Access& a, Access::Link Access::*l);
  static void Remove(Group& g, Access& a, Access::Link Access::*l);
  // The marks of every waiter: how often the oldest waiter has been passed
  // over (a waiter leaving hands its marks to the one before it, since they
  // count for every waiter up to it; the oldest's own marks count for no
  // one else and go with it).
  int passed_marks_ = 0;
  int waiters_ = 0;
  bool pick_due_ = false;
  // The CPU of the waiter whose transaction the pick due next ends, when
  // that pick also ends its wait (Cpu::ArmWaitEnd), and the place in the
  // order its own event would have had: the pick and the resumption, two
  // events queued one after the other for one instant, are one. The CPU,
  // not the waiter's Access: that event was the CPU's task timer, and
  // another of that CPU's timer events due at the same instant may end the
  // wait first (the Access is gone then; the CPU's timer finds no wait due).
  Cpu* resume_cpu_at_pick_ = nullptr;
  uint64_t resume_seq_ = 0;
  // The transaction in flight: its CPU, kind, and when it is done.
  struct Pending {
    const Cpu* cpu = nullptr;
    bool write = false;
    sim::Time at;
  } pending_;
  InlineCallback<CacheLine, &CacheLine::Pick> pick_{this};
  uint64_t accesses_ = 0;
  uint64_t transfers_ = 0;
  std::array<uint64_t, kCpuDistances> transfers_by_{};
  uint64_t queued_ = 0;
  uint64_t bypasses_ = 0;
  sim::Time wait_sum_;
  sim::Time busy_sum_;
};

}  // namespace models

#endif  // VIOSIM_MODELS_SYNC_CACHE_LINE_H_
