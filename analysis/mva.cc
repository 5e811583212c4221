#include "analysis/mva.h"

namespace analysis {

RepairmanResult MachineRepairman(int n, double think, double service) {
  double q = 0;
  RepairmanResult r{};
  for (int k = 1; k <= n; ++k) {
    r.response = service * (1 + q);
    r.throughput = k / (think + r.response);
    q = r.throughput * r.response;
  }
  r.queue = q;
  r.wait = r.response - service;
  r.utilization = r.throughput * service;
  return r;
}

}  // namespace analysis
