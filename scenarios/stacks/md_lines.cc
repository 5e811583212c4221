#include "scenarios/stacks/md_lines.h"

#include <cmath>

#include "scenarios/stack.h"

namespace viosim::stacks {

absl::StatusOr<MdLineCosts> MdLines(const Params& scenario, int home_socket, double k) {
  absl::StatusOr<models::LineCosts> lines = LineCostsOf(scenario["platform"], scenario["run"], home_socket);
  if (!lines.ok()) return lines.status();
  MdLineCosts c{*lines, lines->handoff};
  for (models::Param<sim::Time>* e :
       {&c.wait_lock.same_core, &c.wait_lock.same_llc, &c.wait_lock.same_socket, &c.wait_lock.other_socket}) {
    e->value = sim::Time::Picos(static_cast<int64_t>(std::llround(static_cast<double>(e->value.ps()) * k)));
  }
  return c;
}

}  // namespace viosim::stacks
