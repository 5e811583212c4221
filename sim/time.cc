#include "sim/time.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace sim {

Time Time::FromSecondsDouble(double s) {
  return Time(static_cast<int64_t>(std::llround(s * 1e12)));
}

std::string FormatTime(Time t) {
  const int64_t ps = t.ps();
  const int64_t mag = ps < 0 ? -ps : ps;
  struct Unit { int64_t ps; const char* name; };
  static constexpr Unit kUnits[] = {{1000000000000, "s"}, {1000000000, "ms"},
                                    {1000000, "us"},      {1000, "ns"},
                                    {1, "ps"}};
  for (const Unit& u : kUnits) {
    if (mag >= u.ps || u.ps == 1) {
      if (ps % u.ps == 0) return absl::StrFormat("%d%s", ps / u.ps, u.name);
      std::string s = absl::StrFormat("%.4f", static_cast<double>(ps) / u.ps);
      while (s.back() == '0') s.pop_back();
      if (s.back() == '.') s.pop_back();
      return s + u.name;
    }
  }
  return "0ps";
}

}  // namespace sim
