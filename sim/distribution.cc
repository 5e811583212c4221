#include "sim/distribution.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace sim {
namespace internal {
namespace {

// ln 2 split so that k * kLn2Hi is exact for |k| < 2^21 (kLn2Hi has only 32
// significant bits), with kLn2Lo = ln 2 - kLn2Hi.
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;
constexpr double kSqrt2 = 1.41421356237309504880;

// 2^k for -1022 <= k <= 1023, by building the bit pattern.
constexpr double Pow2(int k) {
  return std::bit_cast<double>(static_cast<uint64_t>(k + 1023) << 52);
}

// Sum of c[j] w^j, j = 0..15, by Estrin's scheme: pairs, then pairs of
// pairs, ..., so the dependency chain is 4 multiply-adds deep instead of 15.
constexpr double Estrin16(const double (&c)[16], double w) {
  const double w2 = w * w;
  const double w4 = w2 * w2;
  const double w8 = w4 * w4;
  double q[8] = {};
  for (int j = 0; j < 8; ++j) q[j] = c[2 * j] + c[2 * j + 1] * w;
  double r[4] = {};
  for (int j = 0; j < 4; ++j) r[j] = q[2 * j] + q[2 * j + 1] * w2;
  const double lo = r[0] + r[1] * w4;
  const double hi = r[2] + r[3] * w4;
  return lo + hi * w8;
}

// Coefficients of the series tails evaluated with Estrin16 (zero-padded):
// exp: 1 / j! for j = 2..17, so e^r = 1 + r + r^2 sum c[j] r^j;
// log: 1 / (2j + 3) for j = 0..10, so that
//      ln m = 2 atanh z = 2z + 2z z^2 sum c[j] z^(2j).
// The leading terms are added last, in order of increasing size, which keeps
// the rounding error near one ulp.
struct SeriesCoefficients {
  double exp[16];
  double log[16];
  constexpr SeriesCoefficients() : exp(), log() {
    double factorial = 2.0;
    for (int j = 0; j < 16; ++j) {
      exp[j] = 1.0 / factorial;
      factorial *= j + 3;  // exact: 17! < 2^53
    }
    for (int j = 0; j < 11; ++j) log[j] = 1.0 / (2 * j + 3);
  }
};
constexpr SeriesCoefficients kSeries;

// e^x: x = k ln2 + r with |r| <= ln2 / 2, e^r from its Taylor series to
// r^17 / 17!, then scaled by 2^k.
constexpr double ExpImpl(double x) {
  if (x != x) return x;  // NaN
  if (x > 709.782712893383973) return std::numeric_limits<double>::infinity();
  if (x < -745.133219101941108) return 0.0;
  const double kd = x * kInvLn2;
  const int k = static_cast<int>(kd < 0 ? kd - 0.5 : kd + 0.5);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  const double p = 1.0 + (r + r * r * Estrin16(kSeries.exp, r));
  if (k > 1023) return p * Pow2(1023) * Pow2(k - 1023);
  if (k < -1022) return p * Pow2(k + 1000) * Pow2(-1000);
  return p * Pow2(k);
}

// ln x: x = m 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(z) with
// z = (m - 1) / (m + 1), |z| <= 0.1716, from its series to z^23 (the first
// omitted term is below 2^-58 relative).
constexpr double LogImpl(double x) {
  if (x != x || x < 0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return x;
  int e = 0;
  if (x < std::numeric_limits<double>::min()) {  // subnormal: normalize
    x *= 0x1.0p54;
    e = -54;
  }
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  e += static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  double m = std::bit_cast<double>((bits & 0x000fffffffffffffULL) |
                                   0x3ff0000000000000ULL);  // [1, 2)
  if (m > kSqrt2) {
    m *= 0.5;
    ++e;
  }
  const double z = (m - 1.0) / (m + 1.0);
  const double z2 = z * z;
  const double two_z = 2.0 * z;
  const double log_m = two_z + two_z * z2 * Estrin16(kSeries.log, z2);
  return e * kLn2Hi + (log_m + e * kLn2Lo);
}

constexpr ExpZigguratTable BuildExpZiggurat() {
  ExpZigguratTable t{};
  const double r = kExpZigR;
  const double fr = ExpImpl(-r);
  const double v = fr * (r + 1.0);  // base box r*f(r) plus tail f(r)
  t.x[0] = v / fr;
  t.f[0] = 0.0;
  t.x[1] = r;
  t.f[1] = fr;
  // Box i spans heights [f[i], f[i+1]) with area v: x[i] (f[i+1] - f[i]) = v.
  for (int i = 1; i < 255; ++i) {
    t.f[i + 1] = t.f[i] + v / t.x[i];
    t.x[i + 1] = -LogImpl(t.f[i + 1]);
  }
  t.x[256] = 0.0;
  t.f[256] = 1.0;
  return t;
}

}  // namespace

double Exp(double x) { return ExpImpl(x); }
double Log(double x) { return LogImpl(x); }

// Constant-initialized: usable from any static initializer.
constinit const ExpZigguratTable kExpZiggurat = BuildExpZiggurat();

// Since e^-x is convex it lies below the chord through the box corners and
// above its tangents at x[i] and x[i+1]; these bounds settle most points
// without computing e^-x.
bool ExpWedgeAccepts(int i, double x, double u) {
  const ExpZigguratTable& z = kExpZiggurat;
  // y >= chord(x)  <=>  u (x[i] - x[i+1]) >= x[i] - x.
  if (u * (z.x[i] - z.x[i + 1]) >= z.x[i] - x) return false;
  const double y = z.f[i] + (z.f[i + 1] - z.f[i]) * u;
  if (y <= z.f[i] * (1.0 + (z.x[i] - x))) return true;
  if (y <= z.f[i + 1] * (1.0 + (z.x[i + 1] - x))) return true;
  return y < Exp(-x);
}

double StandardExponentialSlow(Rng& rng, int layer, double x) {
  const ExpZigguratTable& z = kExpZiggurat;
  for (;;) {
    if (layer == 0) {
      // Tail beyond r: by memorylessness, r + Exp(1).
      return kExpZigR - Log(rng.UniformOpen01());
    }
    if (ExpWedgeAccepts(layer, x, rng.Uniform01())) return x;
    // Rejected: start over.
    const uint64_t bits = rng.Next();
    layer = static_cast<int>(bits & 0xff);
    x = static_cast<double>(bits >> 11) * 0x1.0p-53 * z.x[layer];
    if (x < z.x[layer + 1]) return x;
  }
}

double StandardNormal(Rng& rng) {
  for (;;) {
    const double u = 2.0 * rng.Uniform01() - 1.0;
    const double v = 2.0 * rng.Uniform01() - 1.0;
    const double s = u * u + v * v;
    if (s < 1.0 && s > 0.0) return u * std::sqrt(-2.0 * Log(s) / s);
  }
}

}  // namespace internal

namespace {

Time NonNegative(Time t) { return t < Time::Zero() ? Time::Zero() : t; }

}  // namespace

Distribution Distribution::Constant(Time t) {
  Distribution d;
  d.kind_ = Kind::kConstant;
  d.p1_ = NonNegative(t);
  return d;
}

Distribution Distribution::Exponential(Time mean) {
  Distribution d;
  d.kind_ = Kind::kExponential;
  d.p1_ = NonNegative(mean);
  d.a_ = static_cast<double>(d.p1_.ps());
  return d;
}

absl::StatusOr<Distribution> Distribution::Uniform(Time low, Time high) {
  if (low < Time::Zero() || high < low) {
    return absl::InvalidArgumentError(
        absl::StrFormat("Uniform: need 0 <= low <= high, got low %s, high %s",
                        FormatTime(low), FormatTime(high)));
  }
  Distribution d;
  d.kind_ = Kind::kUniform;
  d.p1_ = low;
  d.p2_ = high;
  d.a_ = static_cast<double>(low.ps());
  d.b_ = static_cast<double>(high.ps() - low.ps());
  return d;
}

absl::StatusOr<Distribution> Distribution::Normal(Time mean, Time stddev) {
  if (mean <= Time::Zero() || stddev < Time::Zero()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Normal: need mean > 0 and stddev >= 0, got mean %s, stddev %s",
        FormatTime(mean), FormatTime(stddev)));
  }
  Distribution d;
  d.kind_ = Kind::kNormal;
  d.p1_ = mean;
  d.p2_ = stddev;
  d.a_ = static_cast<double>(mean.ps());
  d.b_ = static_cast<double>(stddev.ps());
  return d;
}

absl::StatusOr<Distribution> Distribution::Lognormal(Time mean, Time stddev) {
  if (mean <= Time::Zero() || stddev < Time::Zero()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Lognormal: need mean > 0 and stddev >= 0, got mean %s, stddev %s",
        FormatTime(mean), FormatTime(stddev)));
  }
  const double m = static_cast<double>(mean.ps());
  const double s = static_cast<double>(stddev.ps());
  const double sigma2 = internal::Log(1.0 + (s / m) * (s / m));
  Distribution d;
  d.kind_ = Kind::kLognormal;
  d.p1_ = mean;
  d.p2_ = stddev;
  d.a_ = internal::Log(m) - 0.5 * sigma2;
  d.b_ = std::sqrt(sigma2);
  return d;
}

absl::StatusOr<Distribution> Distribution::Empirical(std::vector<Point> points) {
  if (points.size() < 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Empirical: need at least 2 points, got %d", points.size()));
  }
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& pt = points[i];
    if (!(pt.p >= 0.0 && pt.p <= 1.0)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "Empirical: point %d has p = %g, outside [0, 1]", i, pt.p));
    }
    if (pt.value < Time::Zero()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "Empirical: point %d has negative value %s", i,
          FormatTime(pt.value)));
    }
    if (i > 0 && pt.p < points[i - 1].p) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "Empirical: p must be nondecreasing, but point %d has p = %g after "
          "%g",
          i, pt.p, points[i - 1].p));
    }
    if (i > 0 && pt.value < points[i - 1].value) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "Empirical: values must be nondecreasing, but point %d has %s after "
          "%s",
          i, FormatTime(pt.value), FormatTime(points[i - 1].value)));
    }
  }
  if (points.front().p != 0.0 || points.back().p != 1.0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Empirical: p must start at 0 and end at 1, got %g .. %g",
        points.front().p, points.back().p));
  }
  Distribution d;
  d.kind_ = Kind::kEmpirical;
  d.p1_ = points.front().value;
  d.p2_ = points.back().value;
  d.points_ = std::make_shared<const std::vector<Point>>(std::move(points));
  return d;
}

Time Distribution::SampleOther(Rng& rng) const {
  switch (kind_) {
    case Kind::kConstant:
      return p1_;
    case Kind::kExponential:
      return internal::RoundPicos(a_ * internal::StandardExponential(rng));
    case Kind::kUniform:
      return internal::RoundPicos(a_ + b_ * rng.Uniform01());
    case Kind::kNormal:
      for (;;) {
        const double v = a_ + b_ * internal::StandardNormal(rng);
        if (v >= 0.0) return internal::RoundPicos(v);
      }
    case Kind::kLognormal:
      return internal::RoundPicos(
          internal::Exp(a_ + b_ * internal::StandardNormal(rng)));
    case Kind::kEmpirical: {
      const std::vector<Point>& pts = *points_;
      const double u = rng.Uniform01();
      // First point with p > u; exists (last p is 1 > u) and is not the
      // first (first p is 0 <= u), so pts[j-1].p <= u < pts[j].p.
      const size_t j =
          std::upper_bound(pts.begin(), pts.end(), u,
                           [](double x, const Point& pt) { return x < pt.p; }) -
          pts.begin();
      const Point& lo = pts[j - 1];
      const Point& hi = pts[j];
      const double frac = (u - lo.p) / (hi.p - lo.p);
      const double lo_ps = static_cast<double>(lo.value.ps());
      const double hi_ps = static_cast<double>(hi.value.ps());
      return internal::RoundPicos(lo_ps + frac * (hi_ps - lo_ps));
    }
  }
  return Time::Zero();
}

Time Distribution::Mean() const {
  switch (kind_) {
    case Kind::kConstant:
    case Kind::kExponential:
    case Kind::kLognormal:
      return p1_;
    case Kind::kUniform:
      return internal::RoundPicos(a_ + 0.5 * b_);
    case Kind::kNormal: {
      if (b_ == 0.0) return p1_;
      // E[X | X >= 0] = mu + sigma phi(a) / Phi(a), a = mu / sigma. For
      // reports only, so std::erfc is acceptable here.
      const double a = a_ / b_;
      const double phi = internal::Exp(-0.5 * a * a) * 0.39894228040143267794;
      const double cdf = 0.5 * std::erfc(-a * 0.70710678118654752440);
      return internal::RoundPicos(a_ + b_ * phi / cdf);
    }
    case Kind::kEmpirical: {
      const std::vector<Point>& pts = *points_;
      double sum = 0.0;
      for (size_t j = 1; j < pts.size(); ++j) {
        sum += (pts[j].p - pts[j - 1].p) * 0.5 *
               (static_cast<double>(pts[j - 1].value.ps()) +
                static_cast<double>(pts[j].value.ps()));
      }
      return internal::RoundPicos(sum);
    }
  }
  return Time::Zero();
}

std::string Distribution::Describe() const {
  switch (kind_) {
    case Kind::kConstant:
      return absl::StrFormat("Const(%s)", FormatTime(p1_));
    case Kind::kExponential:
      return absl::StrFormat("Exp(mean %s)", FormatTime(p1_));
    case Kind::kUniform:
      return absl::StrFormat("Uniform(%s, %s)", FormatTime(p1_),
                             FormatTime(p2_));
    case Kind::kNormal:
      return absl::StrFormat("Normal(mean %s, sd %s)", FormatTime(p1_),
                             FormatTime(p2_));
    case Kind::kLognormal:
      return absl::StrFormat("Lognormal(mean %s, sd %s)", FormatTime(p1_),
                             FormatTime(p2_));
    case Kind::kEmpirical:
      return absl::StrFormat("Empirical(%d points, %s..%s)", points_->size(),
                             FormatTime(p1_), FormatTime(p2_));
  }
  return "?";
}

}  // namespace sim
