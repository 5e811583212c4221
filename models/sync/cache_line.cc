#include "models/sync/cache_line.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace models {

CacheLine::CacheLine(std::string name, const LockHandoffCosts& costs)
    : name_(std::move(name)), costs_(costs.Table()) {}

void CacheLine::set_serialized(bool on, double scale) {
  serialized_ = on;
  serialized_scale_ = scale;
}

void CacheLine::ResetStats() {
  accesses_ = transfers_ = 0;
  transfers_by_.fill(0);
}

sim::Time CacheLine::Access(Cpu& cpu, bool write) {
  ++accesses_;
  if (ideal_) return costs_[static_cast<int>(CpuDistance::kSame)];
  // A write needs the line exclusive: a copy read since the last write is
  // not enough.
  const bool here = write ? (writer_ == nullptr || writer_ == &cpu) : HasCopy(cpu);
  sim::Time cost = costs_[static_cast<int>(CpuDistance::kSame)];
  if (!here) {
    const CpuDistance d = HomedDistance(writer_->place(), cpu.place(), home_);
    cost = costs_[static_cast<int>(d)];
    if (serialized_) {
      cost = sim::Time::Picos(std::llround(static_cast<double>(cost.ps()) * serialized_scale_));
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
    ++writes_;
  } else if (!here) {
    const auto id = static_cast<size_t>(cpu.id());
    if (id >= copy_at_.size()) copy_at_.resize(id + 1, 0);
    copy_at_[id] = writes_;
  }
  return cost;
}

}  // namespace models
