// Simulated time: an integer count of picoseconds.
//
// One strong type serves as both an instant (time since the start of the
// run) and a span, in the manner of absl::Duration. There is no floating-point
// clock anywhere in the engine; conversions to double exist only for reports.
#ifndef VIOSIM_SIM_TIME_H_
#define VIOSIM_SIM_TIME_H_

#include <compare>
#include <cstdint>
#include <limits>
#include <string>

namespace sim {

class Time {
 public:
  constexpr Time() = default;

  static constexpr Time Picos(int64_t ps) { return Time(ps); }
  static constexpr Time Nanos(int64_t ns) { return Time(ns * 1000); }
  static constexpr Time Micros(int64_t us) { return Time(us * 1000000); }
  static constexpr Time Millis(int64_t ms) { return Time(ms * 1000000000); }
  static constexpr Time Seconds(int64_t s) { return Time(s * 1000000000000); }
  // Rounds to the nearest picosecond; for values read from input and for
  // samples of continuous distributions.
  static Time FromSecondsDouble(double s);
  static Time FromMicrosDouble(double us) { return FromSecondsDouble(us * 1e-6); }
  static constexpr Time Zero() { return Time(0); }
  static constexpr Time Max() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ps() const { return ps_; }
  constexpr double ToSeconds() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr double ToMicros() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double ToNanos() const { return static_cast<double>(ps_) * 1e-3; }

  // Sums and multiples saturate at Max() (or at the most negative time)
  // instead of overflowing: a delay too long to count is one that never
  // ends, and a total too large to count stays at the largest one.
  constexpr Time operator+(Time o) const { return Time(Sum(ps_, o.ps_)); }
  constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
  constexpr Time& operator+=(Time o) { ps_ = Sum(ps_, o.ps_); return *this; }
  constexpr Time& operator-=(Time o) { ps_ -= o.ps_; return *this; }
  constexpr Time operator*(int64_t k) const {
    int64_t p = 0;
    if (__builtin_mul_overflow(ps_, k, &p)) return (ps_ < 0) == (k < 0) ? Max() : Time(kMin);
    return Time(p);
  }
  constexpr Time operator/(int64_t k) const { return Time(ps_ / k); }
  constexpr int64_t operator/(Time o) const { return ps_ / o.ps_; }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  static constexpr int64_t Sum(int64_t a, int64_t b) {
    int64_t s = 0;
    if (__builtin_add_overflow(a, b, &s)) return b > 0 ? std::numeric_limits<int64_t>::max() : kMin;
    return s;
  }

  constexpr explicit Time(int64_t ps) : ps_(ps) {}
  int64_t ps_ = 0;
};

// `n` cycles of a clock at `hz`, rounded to the nearest picosecond.
constexpr Time Cycles(int64_t n, int64_t hz) {
  const __int128 num = static_cast<__int128>(n) * 1000000000000 + hz / 2;
  return Time::Picos(static_cast<int64_t>(num / hz));
}

// "1.5us", "35us", "6.648s", "2ms", "100ps", "0ps". Human readable, with the
// largest unit that keeps the value >= 1 and up to 4 decimals.
std::string FormatTime(Time t);

namespace literals {
constexpr Time operator""_ps(unsigned long long v) { return Time::Picos(static_cast<int64_t>(v)); }
constexpr Time operator""_ns(unsigned long long v) { return Time::Nanos(static_cast<int64_t>(v)); }
constexpr Time operator""_us(unsigned long long v) { return Time::Micros(static_cast<int64_t>(v)); }
constexpr Time operator""_ms(unsigned long long v) { return Time::Millis(static_cast<int64_t>(v)); }
constexpr Time operator""_s(unsigned long long v) { return Time::Seconds(static_cast<int64_t>(v)); }
}  // namespace literals

}  // namespace sim

#endif  // VIOSIM_SIM_TIME_H_
