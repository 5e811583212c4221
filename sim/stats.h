// Statistics collected during a run: counters, log-linear histograms,
// time-weighted state occupancy, and batch-means confidence intervals.
//
// Recording (Counter::Add, Histogram::Record, StateOccupancy::Set) is on the
// simulator's hot path: inline, O(1), no allocation, no floating point.
// Everything is deterministic; none of it is thread-safe.
#ifndef VIOSIM_SIM_STATS_H_
#define VIOSIM_SIM_STATS_H_

#include <array>
#include <cassert>
#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace sim {

// A count of events.
class Counter {
 public:
  void Add(int64_t n = 1) { value_ += n; }
  int64_t value() const { return value_; }
  void Reset() { value_ = 0; }

 private:
  int64_t value_ = 0;
};

// Count, exact sum, minimum and maximum of non-negative int64 values: the
// cheaper sibling of Histogram when no percentile is needed (the kernel's
// own lock_stat keeps just these, in struct lock_time).
class Summary {
 public:
  void Record(int64_t value) {
    if (value < 0) value = 0;
    ++count_;
    sum_ += value;
    if (value < min_) min_ = value;
    if (value > max_) max_ = value;
  }
  int64_t count() const { return count_; }
  double sum() const { return static_cast<double>(sum_); }
  int64_t min() const { return count_ == 0 ? 0 : min_; }
  int64_t max() const { return count_ == 0 ? 0 : max_; }
  double Mean() const { return count_ == 0 ? 0 : sum() / count_; }
  void Reset() { *this = Summary(); }

 private:
  int64_t count_ = 0;
  __int128 sum_ = 0;
  int64_t min_ = INT64_MAX;
  int64_t max_ = 0;
};


// Distribution of non-negative int64 values (typically picoseconds) in
// log-linear buckets, with fixed memory.
//
// With S = sub_bits and M = 2^S: values below 2M each have their own bucket
// (exact); every further power-of-two range [2^e, 2^(e+1)), e >= S + 1, is
// split into M equal sub-buckets of width 2^(e-S). A bucket holding more
// than one value is thus never wider than 2^-S of the values in it (S = 7:
// 0.78%). Memory is
// (64 - S) * 2^S counts: 57 KiB for S = 7.
//
// count, sum, min and max are exact; percentiles are exact to within a
// bucket.
class Histogram {
 public:
  static constexpr int kDefaultSubBits = 7;

  // Requires 1 <= sub_bits <= 12.
  explicit Histogram(int sub_bits = kDefaultSubBits);

  // Records `value`; negative values are recorded as 0.
  void Record(int64_t value) { RecordN(value, 1); }

  // Records `value` `n` times; n <= 0 records nothing.
  void RecordN(int64_t value, int64_t n) {
    if (n <= 0) return;
    if (value < 0) value = 0;
    counts_[BucketOf(value)] += n;
    count_ += n;
    sum_ += static_cast<__int128>(value) * n;
    if (value < min_) min_ = value;
    if (value > max_) max_ = value;
  }
  void Record(Time t) { Record(t.ps()); }

  int64_t count() const { return count_; }
  // Exact sums are kept in 128 bits; returned rounded to double.
  double sum() const { return static_cast<double>(sum_); }
  // Smallest and largest recorded values; 0 when empty.
  int64_t min() const { return count_ == 0 ? 0 : min_; }
  int64_t max() const { return count_ == 0 ? 0 : max_; }
  // sum / count, or 0 when empty.
  double Mean() const;

  // The p-th percentile, p in [0, 100] (clamped), 0 when empty.
  //
  // Rank rule (nearest rank): the rank is r = ceil(p / 100 * count), at least
  // 1; the result is the midpoint of the bucket holding the r-th smallest
  // value, clamped to [min(), max()]. Percentile(0) is min() and
  // Percentile(100) is max() exactly.
  int64_t Percentile(double p) const;

  // Adds the values recorded in `other`. With the same sub_bits this is
  // exact; otherwise each of other's buckets is re-recorded at its midpoint
  // (count, sum, min, max stay exact either way).
  void Merge(const Histogram& other);

  void Reset();

  int sub_bits() const { return sub_bits_; }

  // Bucket layout, exposed for tests and exporters.
  int num_buckets() const { return static_cast<int>(counts_.size()); }
  int64_t bucket_count(int bucket) const { return counts_[bucket]; }
  // The index of the bucket holding `value` (value >= 0).
  int BucketOf(int64_t value) const {
    const uint64_t u = static_cast<uint64_t>(value);
    // Position of the highest set bit, at least S (for values below 2^S).
    const int e = 63 - __builtin_clzll(u | (uint64_t{1} << sub_bits_));
    const int shift = e - sub_bits_;
    return (shift << sub_bits_) + static_cast<int>(u >> shift);
  }
  // The smallest value in `bucket`, and the bucket's width.
  int64_t BucketLow(int bucket) const;
  int64_t BucketWidth(int bucket) const;

 private:
  int sub_bits_;
  std::vector<int64_t> counts_;
  int64_t count_ = 0;
  __int128 sum_ = 0;
  int64_t min_;
  int64_t max_;
};

// The time a component spends in each of a small number of states (e.g.
// idle/busy/blocked), weighted by simulated time.
class StateOccupancy {
 public:
  static constexpr int kMaxStates = 16;

  // Requires 1 <= states <= kMaxStates and 0 <= initial < states. The
  // measurement interval starts at `now` in state `initial`.
  StateOccupancy(int states, Time now, int initial);

  // Enters `state` (0 <= state < states()) at `now` (>= the previous call's
  // time), charging the time since the last change to the previous state.
  // Setting the current state again is harmless.
  void Set(int state, Time now) {
    assert(state >= 0 && state < states_);
    assert(now >= since_);
    in_state_[current_] += now - since_;
    current_ = state;
    since_ = now;
  }

  // Starts a new measurement interval at `now` (e.g. after warm-up): clears
  // the accumulated times, keeps the current state.
  void Reset(Time now);

  // Time spent in `state` since the last reset, including the still-open
  // interval up to `now` if `state` is current.
  Time TimeIn(int state, Time now) const {
    return in_state_[state] + (state == current_ ? now - since_ : Time::Zero());
  }

  // TimeIn(state, now) as a fraction of the time since the last reset; 0 if
  // no time has passed.
  double Share(int state, Time now) const;

  int current() const { return current_; }
  int states() const { return states_; }
  Time interval_start() const { return reset_at_; }

 private:
  int states_;
  int current_;
  Time since_;     // when current_ was entered (or the last reset)
  Time reset_at_;  // start of the measurement interval
  std::array<Time, kMaxStates> in_state_{};
};

// `part` as a percentage of `whole`, for a part counted inside the whole
// (0 <= part <= whole, integer picoseconds): at most 100 by construction,
// as the ratio is taken before the scaling. 0 when the whole is empty.
double PercentOf(Time part, Time whole);

// The busy time of one server (a link, a thread) whose busy spans are
// known when they are booked, possibly ahead of time (a transfer queued
// behind others), and never overlap: each span starts at or after the end
// of the one booked before it. What it reports is the part of the spans
// inside the measured window, [the last Reset, now]: a span begun before
// the window or ending after `now` counts only its part inside, so the busy
// time never exceeds the window.
class BusyTime {
 public:
  // Books [start, end). REQUIRES: start >= the end of the span booked
  // before, end >= start.
  void Book(Time start, Time end) {
    assert(start >= last_end_ && end >= start);
    last_end_ = end;
    if (end > start) pending_.push_back({start, end});
  }

  // Starts the window at `now`.
  void Reset(Time now);

  // Busy time in [the last Reset, now]. `now` never goes back.
  Time BusyUntil(Time now) const;

 private:
  struct Span {
    Time start, end;
  };
  Time from_;                          // the window's start
  Time last_end_;                      // end of the last span booked
  mutable Time settled_;               // busy time of the spans settled so far
  mutable std::vector<Span> pending_;  // spans booked, in order, from head_ on not yet settled
  mutable size_t head_ = 0;
};

// The two-sided 97.5% quantile of Student's t distribution with `dof`
// degrees of freedom (the factor of a 95% confidence interval). Exact
// table values (9 digits) for dof <= 30, a Cornish-Fisher expansion in
// 1/dof around the normal quantile beyond (relative error < 1e-6). Returns
// +inf for dof < 1.
double StudentT975(int64_t dof);

// The batch-means method for the steady-state mean of a quantity: the run
// (after warm-up) is cut into k batches, each batch contributes one value
// (e.g. its throughput or mean latency), and the batch values are treated
// as approximately i.i.d. normal. Batches must be long enough for their
// values to be nearly uncorrelated.
class BatchMeans {
 public:
  void Add(double batch_value);

  int64_t count() const { return n_; }
  // Mean of the batch values; 0 when empty.
  double Mean() const { return mean_; }
  // Sample standard deviation of the batch values (divisor k - 1); 0 when
  // k < 2.
  double StdDev() const;
  // Half-width of the 95% confidence interval for the mean:
  // t(0.975, k-1) * s / sqrt(k). +inf when k < 2.
  double HalfWidth95() const;
  void Reset() { *this = BatchMeans(); }

 private:
  // Welford's running mean and sum of squared deviations.
  int64_t n_ = 0;
  double mean_ = 0;
  double m2_ = 0;
};

// Batch means for a ratio metric sum(a) / sum(b), such as the mean latency
// sum(latency) / count or a utilisation busy_time / elapsed, where batches
// may have different denominators.
//
// The estimate is the ratio of the totals, R = sum(a_i) / sum(b_i) (not the
// mean of per-batch ratios, which over-weights small batches). Its 95%
// half-width uses the classical ratio-estimator (delta method) variance:
// with residuals d_i = a_i - R b_i,
//   HalfWidth95 = t(0.975, k-1) * sqrt(sum(d_i^2) / (k-1) / k) / mean(b).
// When every b_i is equal this is exactly BatchMeans on the values a_i / b_i.
class RatioBatchMeans {
 public:
  // One batch's numerator and denominator.
  void Add(double a, double b);

  int64_t count() const { return static_cast<int64_t>(a_.size()); }
  // sum(a) / sum(b); 0 when sum(b) is 0.
  double Ratio() const;
  // +inf when k < 2 or sum(b) is 0.
  double HalfWidth95() const;
  void Reset();

 private:
  std::vector<double> a_;
  std::vector<double> b_;
  double sum_a_ = 0;
  double sum_b_ = 0;
};

}  // namespace sim

#endif  // VIOSIM_SIM_STATS_H_
