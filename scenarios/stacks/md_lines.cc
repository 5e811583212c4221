#include "scenarios/stacks/md_lines.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace viosim::stacks {

absl::StatusOr<MdLineCosts> MdLines(const std::string& table, double k, const std::string& field) {
  MdLineCosts c;
  if (table == "epyc_rome") {
    c.lines = models::EpycRomeHandoffCosts();
  } else if (table == "none") {
    c.lines = models::LockHandoffCosts::Uniform(sim::Time::Zero(),
                                                {models::SourceKind::kDefined, "what-if: no shared-line cost"});
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("field '", field, ".line_costs': unknown table '", table, "' (tables: epyc_rome, none)"));
  }
  c.wait_lock = c.lines;
  for (models::Param<sim::Time>* e :
       {&c.wait_lock.same_core, &c.wait_lock.same_llc, &c.wait_lock.same_socket, &c.wait_lock.other_socket}) {
    e->value = sim::Time::Picos(static_cast<int64_t>(std::llround(static_cast<double>(e->value.ps()) * k)));
  }
  return c;
}

}  // namespace viosim::stacks
