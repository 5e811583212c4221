#include "sim/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sim {

// ---------------------------------------------------------------- Histogram

Histogram::Histogram(int sub_bits)
    : sub_bits_(std::clamp(sub_bits, 1, 12)),
      counts_(static_cast<size_t>(64 - sub_bits_) << sub_bits_, 0),
      min_(std::numeric_limits<int64_t>::max()),
      max_(std::numeric_limits<int64_t>::min()) {
  assert(sub_bits == sub_bits_);
}

int64_t Histogram::BucketLow(int bucket) const {
  const int shift = std::max((bucket >> sub_bits_) - 1, 0);
  return static_cast<int64_t>(bucket - (shift << sub_bits_)) << shift;
}

int64_t Histogram::BucketWidth(int bucket) const {
  const int shift = std::max((bucket >> sub_bits_) - 1, 0);
  return int64_t{1} << shift;
}

double Histogram::Mean() const {
  if (count_ == 0) return 0.0;
  return static_cast<double>(sum_) / static_cast<double>(count_);
}

int64_t Histogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  if (!(p > 0.0)) return min_;  // also NaN
  if (p >= 100.0) return max_;
  // Multiply before dividing: p * count / 100 is exact whenever the true
  // rank is an integer of moderate size (e.g. p = 57 of 100 values), while
  // (p / 100) * count can land just above it and bump the rank by one.
  int64_t rank = static_cast<int64_t>(
      std::ceil(p * static_cast<double>(count_) / 100.0));
  rank = std::clamp<int64_t>(rank, 1, count_);
  int64_t seen = 0;
  for (int b = 0; b < num_buckets(); ++b) {
    seen += counts_[b];
    if (seen >= rank) {
      const int64_t mid = BucketLow(b) + (BucketWidth(b) - 1) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;  // not reached: the counts sum to count_
}

void Histogram::Merge(const Histogram& other) {
  if (other.count_ == 0) return;
  if (other.sub_bits_ == sub_bits_) {
    for (size_t b = 0; b < counts_.size(); ++b) counts_[b] += other.counts_[b];
  } else {
    for (int b = 0; b < other.num_buckets(); ++b) {
      if (other.counts_[b] == 0) continue;
      const int64_t mid = other.BucketLow(b) + (other.BucketWidth(b) - 1) / 2;
      counts_[BucketOf(std::clamp(mid, other.min_, other.max_))] +=
          other.counts_[b];
    }
  }
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::Reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  sum_ = 0;
  min_ = std::numeric_limits<int64_t>::max();
  max_ = std::numeric_limits<int64_t>::min();
}

// ----------------------------------------------------------- StateOccupancy

StateOccupancy::StateOccupancy(int states, Time now, int initial)
    : states_(std::clamp(states, 1, kMaxStates)),
      current_(initial),
      since_(now),
      reset_at_(now) {
  assert(states == states_);
  assert(initial >= 0 && initial < states_);
}

void StateOccupancy::Reset(Time now) {
  in_state_.fill(Time::Zero());
  since_ = now;
  reset_at_ = now;
}

double StateOccupancy::Share(int state, Time now) const {
  const Time elapsed = now - reset_at_;
  if (elapsed <= Time::Zero()) return 0.0;
  return static_cast<double>(TimeIn(state, now).ps()) /
         static_cast<double>(elapsed.ps());
}

double PercentOf(Time part, Time whole) {
  assert(part >= Time::Zero() && part <= whole);
  if (whole <= Time::Zero()) return 0.0;
  return 100.0 * (static_cast<double>(part.ps()) / static_cast<double>(whole.ps()));
}

void BusyTime::Reset(Time now) {
  from_ = now;
  settled_ = Time::Zero();
  // Spans wholly before the window go; one across its start keeps its part
  // inside.
  while (head_ < pending_.size() && pending_[head_].end <= now) ++head_;
  if (head_ < pending_.size() && pending_[head_].start < now) pending_[head_].start = now;
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(head_));
  head_ = 0;
}

Time BusyTime::BusyUntil(Time now) const {
  while (head_ < pending_.size() && pending_[head_].end <= now) {
    settled_ += pending_[head_].end - std::max(pending_[head_].start, from_);
    ++head_;
  }
  if (head_ > 1024 && head_ * 2 > pending_.size()) {
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
  Time busy = settled_;
  if (head_ < pending_.size() && pending_[head_].start < now) {
    busy += now - std::max(pending_[head_].start, from_);
  }
  return busy;
}

// ------------------------------------------------------------- Student's t

double StudentT975(int64_t dof) {
  // t(0.975, dof) for dof = 1..30, to 9 significant digits.
  static constexpr double kTable[31] = {
      0.0,         12.7062047,  4.30265273,  3.18244631,  2.77644511,
      2.57058184,  2.44691185,  2.36462425,  2.30600414,  2.26215716,
      2.22813885,  2.20098516,  2.17881283,  2.16036866,  2.14478669,
      2.13144955,  2.11990530,  2.10981558,  2.10092204,  2.09302405,
      2.08596345,  2.07961384,  2.07387307,  2.06865761,  2.06389856,
      2.05953855,  2.05552944,  2.05183052,  2.04840714,  2.04522964,
      2.04227246,
  };
  if (dof < 1) return std::numeric_limits<double>::infinity();
  if (dof <= 30) return kTable[dof];
  // Cornish-Fisher expansion of the t quantile around the normal quantile
  // z = Phi^-1(0.975), to fourth order in 1/dof.
  const double z = 1.9599639845400538;
  const double z2 = z * z;
  const double g1 = z * (z2 + 1.0) / 4.0;
  const double g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0;
  const double g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0;
  const double g4 =
      z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) /
      92160.0;
  const double x = 1.0 / static_cast<double>(dof);
  return z + x * (g1 + x * (g2 + x * (g3 + x * g4)));
}

// ------------------------------------------------------------- BatchMeans

void BatchMeans::Add(double batch_value) {
  ++n_;
  const double delta = batch_value - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (batch_value - mean_);
}

double BatchMeans::StdDev() const {
  if (n_ < 2) return 0.0;
  return std::sqrt(m2_ / static_cast<double>(n_ - 1));
}

double BatchMeans::HalfWidth95() const {
  if (n_ < 2) return std::numeric_limits<double>::infinity();
  return StudentT975(n_ - 1) * StdDev() / std::sqrt(static_cast<double>(n_));
}

// --------------------------------------------------------- RatioBatchMeans

void RatioBatchMeans::Add(double a, double b) {
  a_.push_back(a);
  b_.push_back(b);
  sum_a_ += a;
  sum_b_ += b;
}

double RatioBatchMeans::Ratio() const {
  return sum_b_ == 0.0 ? 0.0 : sum_a_ / sum_b_;
}

double RatioBatchMeans::HalfWidth95() const {
  const int64_t k = count();
  if (k < 2 || sum_b_ == 0.0) return std::numeric_limits<double>::infinity();
  const double r = Ratio();
  double ss = 0.0;
  for (int64_t i = 0; i < k; ++i) {
    const double d = a_[i] - r * b_[i];
    ss += d * d;
  }
  const double kd = static_cast<double>(k);
  const double mean_b = sum_b_ / kd;
  return StudentT975(k - 1) * std::sqrt(ss / (kd - 1.0) / kd) /
         std::fabs(mean_b);
}

void RatioBatchMeans::Reset() {
  a_.clear();
  b_.clear();
  sum_a_ = 0;
  sum_b_ = 0;
}

}  // namespace sim
