#include "models/sync/cache_line.h"

#include <algorithm>
#include <utility>

namespace models {

CacheLine::CacheLine(std::string name, const LockHandoffCosts& costs) : name_(std::move(name)), costs_(costs) {}

void CacheLine::ResetStats() {
  accesses_ = transfers_ = 0;
  transfers_by_.fill(0);
}

bool CacheLine::HasCopy(const Cpu& cpu) const {
  return writer_ == nullptr || writer_ == &cpu || std::find(readers_.begin(), readers_.end(), &cpu) != readers_.end();
}

sim::Time CacheLine::Access(Cpu& cpu, bool write) {
  ++accesses_;
  // A write needs the line exclusive: a copy read since the last write is
  // not enough.
  const bool here = write ? (writer_ == nullptr || writer_ == &cpu) : HasCopy(cpu);
  sim::Time cost = costs_.same_cpu.value;
  if (!here) {
    const CpuDistance d = HomedDistance(writer_->place(), cpu.place(), home_);
    cost = costs_.Of(d);
    if (serialized_) {
      const sim::Time now = cpu.sim().Now();
      const sim::Time start = std::max(now, free_at_);
      free_at_ = start + cost;
      cost = free_at_ - now;
    }
    ++transfers_;
    ++transfers_by_[static_cast<int>(d)];
  }
  if (write) {
    writer_ = &cpu;
    readers_.clear();
  } else if (!here) {
    readers_.push_back(&cpu);
  }
  return cost;
}

}  // namespace models
