// Durations as they are written in scenario files and on the command line.
//
// A duration is a decimal number and a unit, optionally separated by spaces:
// "35us", "1.5ms", "0ns", "6.648s", "100 ps". The units are ps, ns, us, ms
// and s. The conversion is exact: the digits are turned into an integer count
// of picoseconds without passing through floating point, so "6.648s" is
// exactly 6648000000000ps. A value that is not a whole number of picoseconds
// ("1.2345ps") is rejected rather than rounded. Exponents ("1e3us") are not
// accepted: a duration is always written out in digits.
#ifndef VIOSIM_SCENARIOS_UNITS_H_
#define VIOSIM_SCENARIOS_UNITS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sim/time.h"

namespace viosim {

// The accepted units, for messages: "ps, ns, us, ms, s".
extern const char kDurationUnits[];

// Parses `text` (surrounding ASCII whitespace is ignored) into a time span.
// A leading '-' is accepted and yields a negative span, so that a caller can
// report "must not be negative" in its own words. Returns InvalidArgument,
// with a message that quotes `text`, if the number is malformed, the unit is
// missing or unknown (the message lists the units), the value has a fraction
// finer than one picosecond, or it does not fit in int64 picoseconds.
absl::StatusOr<sim::Time> ParseDuration(absl::string_view text);

// Like ParseDuration, but a negative value is also an error. Meant for
// reading TIME fields of a scenario that has passed validation (where the
// error cannot happen) without crashing if that assumption is ever wrong.
// An empty string (a TIME field without a default that was never set) is an
// error.
absl::StatusOr<sim::Time> TimeOf(absl::string_view text);

// Writes `t` so that ParseDuration reads back exactly the same value, using
// the largest unit in which the value is at least 1 and as many decimals as
// needed: "6.648s", "1.5ns", "35us", "-2ms", "0s".
std::string FormatDurationForInput(sim::Time t);

}  // namespace viosim

#endif  // VIOSIM_SCENARIOS_UNITS_H_
