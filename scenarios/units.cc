#include "scenarios/units.h"

#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace viosim {

const char kDurationUnits[] = "ps, ns, us, ms, s";

namespace {

struct UnitInfo {
  const char* name;
  int exponent;  // one unit is 10^exponent picoseconds
};

// Largest first, which is the order FormatDurationForInput tries them in.
constexpr UnitInfo kUnitTable[] = {
    {"s", 12}, {"ms", 9}, {"us", 6}, {"ns", 3}, {"ps", 0}};

uint64_t PowerOfTen(int exponent) {
  uint64_t p = 1;
  for (int i = 0; i < exponent; ++i) p *= 10;
  return p;
}

const UnitInfo* FindUnit(absl::string_view name) {
  for (const UnitInfo& u : kUnitTable) {
    if (name == u.name) return &u;
  }
  return nullptr;
}

// Length of the run of ASCII digits at the start of `s`.
size_t DigitRun(absl::string_view s) {
  size_t n = 0;
  while (n < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(s[n]))) {
    ++n;
  }
  return n;
}

}  // namespace

absl::StatusOr<sim::Time> ParseDuration(absl::string_view text) {
  auto invalid = [text](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid duration \"", text, "\": ", why));
  };
  absl::string_view rest = absl::StripAsciiWhitespace(text);
  if (rest.empty()) {
    return invalid(absl::StrCat("empty; expected a number and a unit such as ",
                                "\"35us\" (units: ", kDurationUnits, ")"));
  }

  const bool negative = rest.front() == '-';
  if (negative) rest.remove_prefix(1);

  const size_t int_len = DigitRun(rest);
  const absl::string_view int_digits = rest.substr(0, int_len);
  rest.remove_prefix(int_len);
  absl::string_view frac_digits;
  bool has_point = false;
  if (!rest.empty() && rest.front() == '.') {
    has_point = true;
    rest.remove_prefix(1);
    const size_t frac_len = DigitRun(rest);
    frac_digits = rest.substr(0, frac_len);
    rest.remove_prefix(frac_len);
  }
  if (int_digits.empty()) {
    return invalid(has_point && !frac_digits.empty()
                       ? "expected a digit before the decimal point"
                       : absl::StrCat("expected a number followed by a unit (",
                                      kDurationUnits, ")"));
  }
  if (has_point && frac_digits.empty()) {
    return invalid("expected digits after the decimal point");
  }

  const absl::string_view unit_name = absl::StripLeadingAsciiWhitespace(rest);
  if (unit_name.empty()) {
    return invalid(absl::StrCat("missing unit; expected one of ", kDurationUnits));
  }
  const UnitInfo* unit = FindUnit(unit_name);
  if (unit == nullptr) {
    const bool looks_like_exponent =
        (unit_name[0] == 'e' || unit_name[0] == 'E') && unit_name.size() > 1 &&
        (absl::ascii_isdigit(static_cast<unsigned char>(unit_name[1])) ||
         unit_name[1] == '-' || unit_name[1] == '+');
    if (looks_like_exponent) {
      return invalid(absl::StrCat(
          "exponent notation is not supported; write the digits out and use "
          "one of the units ",
          kDurationUnits));
    }
    return invalid(absl::StrCat("unknown unit '", unit_name,
                                "'; expected one of ", kDurationUnits));
  }

  // Trailing zeros of the fraction carry no precision ("2.50ns" is fine).
  while (!frac_digits.empty() && frac_digits.back() == '0') {
    frac_digits.remove_suffix(1);
  }
  if (static_cast<int>(frac_digits.size()) > unit->exponent) {
    return invalid("finer than the resolution of 1ps");
  }

  // The most negative int64 has a magnitude one larger than the most
  // positive, so negative values get one more picosecond of room.
  const unsigned __int128 limit =
      static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max()) +
      (negative ? 1 : 0);
  auto too_large = [&invalid]() {
    return invalid(
        "out of range; the magnitude must be at most 9223372.036854775807s");
  };

  unsigned __int128 magnitude = 0;
  for (char c : int_digits) {
    magnitude = magnitude * 10 + static_cast<unsigned>(c - '0');
    if (magnitude > limit) return too_large();
  }
  magnitude *= PowerOfTen(unit->exponent);
  if (magnitude > limit) return too_large();

  unsigned __int128 fraction = 0;
  for (char c : frac_digits) fraction = fraction * 10 + static_cast<unsigned>(c - '0');
  fraction *= PowerOfTen(unit->exponent - static_cast<int>(frac_digits.size()));
  magnitude += fraction;
  if (magnitude > limit) return too_large();

  if (negative) {
    // Computed in unsigned arithmetic so that -2^63 does not overflow.
    const uint64_t m = static_cast<uint64_t>(magnitude);
    return sim::Time::Picos(static_cast<int64_t>(~m + 1));
  }
  return sim::Time::Picos(static_cast<int64_t>(magnitude));
}

absl::StatusOr<sim::Time> TimeOf(absl::string_view text) {
  absl::StatusOr<sim::Time> t = ParseDuration(text);
  if (!t.ok()) return t.status();
  if (*t < sim::Time::Zero()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid duration \"", text, "\": must not be negative"));
  }
  return t;
}

std::string FormatDurationForInput(sim::Time t) {
  const int64_t ps = t.ps();
  if (ps == 0) return "0s";
  const uint64_t magnitude =
      ps < 0 ? ~static_cast<uint64_t>(ps) + 1 : static_cast<uint64_t>(ps);
  const char* sign = ps < 0 ? "-" : "";
  for (const UnitInfo& u : kUnitTable) {
    const uint64_t scale = PowerOfTen(u.exponent);
    if (magnitude < scale && u.exponent > 0) continue;
    const uint64_t whole = magnitude / scale;
    const uint64_t rem = magnitude % scale;
    if (rem == 0) return absl::StrCat(sign, whole, u.name);
    std::string digits = absl::StrCat(rem);
    digits.insert(0, static_cast<size_t>(u.exponent) - digits.size(), '0');
    while (digits.back() == '0') digits.pop_back();
    return absl::StrCat(sign, whole, ".", digits, u.name);
  }
  return "0s";  // not reached: the ps unit always matches
}

}  // namespace viosim
