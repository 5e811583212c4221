// Distributions of non-negative durations, sampled from an Rng.
//
// Distribution is a small value type (no virtual calls, no allocation per
// sample) holding one of a fixed set of kinds. Samples are rounded to the
// nearest picosecond and are never negative.
//
// Determinism: sampling uses only the Rng, IEEE double arithmetic, sqrt, and
// the project's own exp/log (sim::internal::Exp/Log below) -- never libm's
// exp/log, whose last bits differ between C libraries, and never std::
// distributions. A given Rng state therefore yields the same samples
// everywhere.
//
// Exponential sampling is the hot path of the simulator: it uses a
// 256-layer ziggurat (Marsaglia & Tsang, 2000) whose common case (~98% of
// draws) is one Next(), one multiply and one compare, inlined here.
#ifndef VIOSIM_SIM_DISTRIBUTION_H_
#define VIOSIM_SIM_DISTRIBUTION_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/rng.h"
#include "sim/time.h"

namespace sim {

namespace internal {

// e^x and ln(x), written here so that results do not depend on the C
// library. Relative error within a few ulp over the whole double range.
// Exp overflows to +inf above ~709.78 and underflows to 0 below ~-745.13;
// Log(0) = -inf, Log(x<0) = NaN, Log(+inf) = +inf.
double Exp(double x);
double Log(double x);

// Ziggurat for the standard exponential density f(x) = e^-x with 256 layers
// of equal area kExpZigV. Layer i (1..255) is the box [0, x[i]) x [f[i],
// f[i+1]); layer 0 is the base box [0, r) x [0, f(r)) plus the tail x >= r,
// stretched to width x[0] = V / f(r). x decreases from x[1] = r to x[256] = 0
// and f[i] = e^-x[i] (f[0] = 0, f[256] = 1). Built at compile time.
inline constexpr double kExpZigR = 7.697117470131049714;
struct ExpZigguratTable {
  double x[257];
  double f[257];
};
extern const ExpZigguratTable kExpZiggurat;

// The wedge test of box `layer` (1..255): whether the point at `x` (in
// [x[layer+1], x[layer])) and height f[layer] + (f[layer+1] - f[layer]) u,
// u in [0, 1), lies under e^-x. Exposed for tests.
bool ExpWedgeAccepts(int layer, double x, double u);

// The rare ziggurat cases: wedge test (layers 1..255) or tail (layer 0),
// then redraw as needed. `x` was drawn in `layer` and missed its inner box.
double StandardExponentialSlow(Rng& rng, int layer, double x);

// A sample of Exp(1): exact up to the rounding of the tables and of the
// uniform variates (53-bit).
inline double StandardExponential(Rng& rng) {
  const uint64_t bits = rng.Next();
  const int layer = static_cast<int>(bits & 0xff);  // low 8 bits
  // The top 53 bits (disjoint from the layer bits) give the position.
  const double x =
      static_cast<double>(bits >> 11) * 0x1.0p-53 * kExpZiggurat.x[layer];
  if (x < kExpZiggurat.x[layer + 1]) return x;
  return StandardExponentialSlow(rng, layer, x);
}

// A sample of N(0, 1) by Marsaglia's polar method (one of the pair is
// discarded, so that sampling stays a const operation).
double StandardNormal(Rng& rng);

// Rounds a non-negative picosecond count to Time: negatives and NaN give 0,
// values beyond the int64 range give Time::Max().
inline Time RoundPicos(double ps) {
  if (ps < 9.2e18) {
    if (ps > 0) return Time::Picos(static_cast<int64_t>(ps + 0.5));
    return Time::Zero();
  }
  return ps == ps ? Time::Max() : Time::Zero();
}

}  // namespace internal

class Distribution {
 public:
  enum class Kind : uint8_t {
    kConstant,
    kExponential,
    kUniform,
    kNormal,
    kLognormal,
    kEmpirical,
  };

  // One point (p, value) of an empirical inverse CDF: a fraction p of the
  // samples are <= value.
  struct Point {
    double p;
    Time value;
  };

  // Constant(0).
  Distribution() = default;

  // Always `t` (a negative t is treated as zero).
  static Distribution Constant(Time t);

  // Exponential with the given mean (a negative mean is treated as zero).
  static Distribution Exponential(Time mean);

  // Continuous uniform on [low, high]. Requires 0 <= low <= high.
  static absl::StatusOr<Distribution> Uniform(Time low, Time high);

  // Normal(mean, stddev) truncated at zero: negative draws are redrawn, so
  // the distribution is that of X | X >= 0. Requires mean > 0 (so at least
  // half the draws are accepted) and stddev >= 0. Mean() is the mean of the
  // truncated distribution, slightly above `mean` when stddev is not small
  // compared with it.
  static absl::StatusOr<Distribution> Normal(Time mean, Time stddev);

  // Lognormal whose samples have the given mean and standard deviation:
  // sigma^2 = ln(1 + stddev^2 / mean^2), mu = ln(mean) - sigma^2 / 2 (mean in
  // picoseconds). Requires mean > 0 and stddev >= 0.
  static absl::StatusOr<Distribution> Lognormal(Time mean, Time stddev);

  // Piecewise-linear inverse CDF through `points`: a uniform u in [0, 1) is
  // mapped to the linear interpolation between the two points whose p
  // bracket u. Requires at least two points, p finite and nondecreasing from
  // exactly 0 (first point) to exactly 1 (last point), values non-negative
  // and nondecreasing. Repeated p values give a jump (an atom is expressed
  // as two points with the same value and different p).
  static absl::StatusOr<Distribution> Empirical(std::vector<Point> points);

  // A sample, rounded to the nearest picosecond; never negative. Draws one
  // or more numbers from `rng`.
  Time Sample(Rng& rng) const {
    if (kind_ == Kind::kExponential) {
      // a_ >= 0, so the product is >= 0: only the overflow check remains.
      const double ps = a_ * internal::StandardExponential(rng);
      if (ps < 9.2e18) [[likely]] {
        return Time::Picos(static_cast<int64_t>(ps + 0.5));
      }
      return Time::Max();
    }
    if (kind_ == Kind::kConstant) return p1_;
    return SampleOther(rng);
  }

  // The exact mean of the distribution, rounded to the nearest picosecond
  // (for a truncated Normal, the mean after truncation).
  Time Mean() const;

  Kind kind() const { return kind_; }

  // E.g. "Const(10us)", "Exp(mean 10us)", "Uniform(1us, 3us)",
  // "Normal(mean 10us, sd 2us)", "Lognormal(mean 10us, sd 5us)",
  // "Empirical(3 points, 1us..9us)".
  std::string Describe() const;

 private:
  Time SampleOther(Rng& rng) const;

  Kind kind_ = Kind::kConstant;
  // The parameters as given: Constant: p1_ = value. Exponential: p1_ = mean.
  // Uniform: low, high. Normal and Lognormal: mean, stddev.
  Time p1_;
  Time p2_;
  // Derived, in picoseconds: Exponential: a_ = mean. Uniform: a_ = low,
  // b_ = high - low. Normal: a_ = mean, b_ = stddev. Lognormal: a_ = mu,
  // b_ = sigma of the underlying normal.
  double a_ = 0;
  double b_ = 0;
  // Empirical only; shared so that copies stay cheap.
  std::shared_ptr<const std::vector<Point>> points_;
};

// A latency whose mean is `mean`, spread by `exp` (an Exponential with
// mean `exp_mean`, at most `mean`): (mean - exp_mean) + a draw from `exp`.
// With exp_mean zero: `mean` itself, and nothing is drawn.
inline Time MeanKeptExponential(Time mean, Time exp_mean, const Distribution& exp, Rng& rng) {
  if (exp_mean <= Time::Zero()) return mean;
  return std::max(Time::Zero(), mean - exp_mean) + exp.Sample(rng);
}

}  // namespace sim

#endif  // VIOSIM_SIM_DISTRIBUTION_H_
