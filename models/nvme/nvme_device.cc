#include "models/nvme/nvme_device.h"

#include <algorithm>
#include <string>

namespace models {

namespace {

void Append(NvmeCommand*& head, NvmeCommand*& tail, NvmeCommand& c) {
  c.next = nullptr;
  if (tail != nullptr) {
    tail->next = &c;
  } else {
    head = &c;
  }
  tail = &c;
}

NvmeCommand* PopFront(NvmeCommand*& head, NvmeCommand*& tail) {
  NvmeCommand* c = head;
  head = c->next;
  if (head == nullptr) tail = nullptr;
  c->next = nullptr;
  return c;
}

}  // namespace

NvmeDevice::NvmeDevice(sim::Simulator& sim, const NvmeProfile& profile, uint64_t seed)
    : sim_(&sim),
      profile_(profile),
      spread_(sim::Distribution::Exponential(profile.latency_exp_mean.value)),
      seed_(seed),
      read_ps_per_byte_(1e12 / profile.read_bandwidth.value),
      write_ps_per_byte_(1e12 / profile.write_bandwidth.value),
      max_queue_depth_(std::max(1, profile.max_queue_depth.value)),
      units_(static_cast<size_t>(std::max(1, profile.units.value))) {
  // Units and channels are fixed in place before their callbacks bind.
  for (Unit& u : units_) {
    u.dev = this;
    u.done = Callback::Bind<&Unit::Done>(&u);
  }
  free_units_.reserve(units_.size());
  for (size_t i = units_.size(); i-- > 0;) free_units_.push_back(&units_[i]);
  for (int d = 0; d < 2; ++d) {
    channels_[d].dev = this;
    channels_[d].write = d == 1;
    channels_[d].done = Callback::Bind<&Channel::Done>(&channels_[d]);
  }
}

sim::Time NvmeDevice::TransferTime(bool write, uint32_t bytes) const {
  const double ps = static_cast<double>(bytes) * (write ? write_ps_per_byte_ : read_ps_per_byte_);
  return sim::Time::Picos(static_cast<int64_t>(ps + 0.5));
}

sim::Time NvmeDevice::DrawAccess(bool write, int sq) {
  const sim::Time mean = write ? profile_.write_latency.value : profile_.read_latency.value;
  const sim::Time exp_mean = profile_.latency_exp_mean.value;
  if (exp_mean <= sim::Time::Zero()) return mean;
  const size_t i = static_cast<size_t>(std::max(0, sq));
  while (sq_rngs_.size() <= i) {
    sq_rngs_.push_back(sim::Rng::ForStream(seed_, "nvme.sq" + std::to_string(sq_rngs_.size())));
  }
  return sim::MeanKeptExponential(mean, exp_mean, spread_, sq_rngs_[i]);
}

void NvmeDevice::ResetStats() {
  stats_ = NvmeDeviceStats();
  stats_.max_outstanding = outstanding_;
  stats_.max_in_device = in_device_;
}

void NvmeDevice::Submit(NvmeCommand& c) {
  c.submitted = sim_->Now();
  c.access = DrawAccess(c.write, c.sq);
  ++outstanding_;
  stats_.max_outstanding = std::max(stats_.max_outstanding, outstanding_);
  if (in_device_ < max_queue_depth_) {
    Admit(c);
  } else {
    Append(sq_wait_head_, sq_wait_tail_, c);
  }
}

void NvmeDevice::Admit(NvmeCommand& c) {
  ++in_device_;
  stats_.max_in_device = std::max(stats_.max_in_device, in_device_);
  c.started = sim_->Now();
  if (c.write) {
    ToChannel(channels_[1], c);  // data from the host first
  } else {
    ToUnit(c);
  }
}

void NvmeDevice::ToUnit(NvmeCommand& c) {
  if (!free_units_.empty()) {
    Unit* u = free_units_.back();
    free_units_.pop_back();
    StartUnit(*u, c);
  } else {
    Append(unit_wait_head_, unit_wait_tail_, c);
  }
}

void NvmeDevice::StartUnit(Unit& u, NvmeCommand& c) {
  u.cmd = &c;
  sim_->ScheduleAt(sim_->Now() + c.access, u.done.handle());
}

void NvmeDevice::UnitDone(Unit& u) {
  NvmeCommand& c = *u.cmd;
  u.cmd = nullptr;
  if (unit_wait_head_ != nullptr) {
    StartUnit(u, *PopFront(unit_wait_head_, unit_wait_tail_));
  } else {
    free_units_.push_back(&u);
  }
  if (c.write) {
    Complete(c);
  } else {
    ToChannel(channels_[0], c);  // data to the host
  }
}

void NvmeDevice::ToChannel(Channel& ch, NvmeCommand& c) {
  const sim::Time now = sim_->Now();
  ch.free_at = std::max(ch.free_at, now) + TransferTime(ch.write, c.bytes);
  c.ready_at = ch.free_at;
  const bool idle = ch.head == nullptr;
  Append(ch.head, ch.tail, c);
  // FIFO: transfers end in queue order, so only the head has an event.
  if (idle) sim_->ScheduleAt(c.ready_at, ch.done.handle());
}

void NvmeDevice::ChannelDone(Channel& ch) {
  NvmeCommand& c = *PopFront(ch.head, ch.tail);
  if (ch.head != nullptr) sim_->ScheduleAt(ch.head->ready_at, ch.done.handle());
  if (c.write) {
    ToUnit(c);
  } else {
    Complete(c);
  }
}

void NvmeDevice::Complete(NvmeCommand& c) {
  c.completed = sim_->Now();
  --in_device_;
  --outstanding_;
  if (c.write) {
    ++stats_.writes;
    stats_.bytes_written += c.bytes;
  } else {
    ++stats_.reads;
    stats_.bytes_read += c.bytes;
  }
  if (sq_wait_head_ != nullptr) Admit(*PopFront(sq_wait_head_, sq_wait_tail_));
  c.cq->Post(c);
}

}  // namespace models
