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

RepairmanElasticity MachineRepairmanElasticity(int n, double think, double service) {
  // Each quantity with its derivatives by Z (_z) and by S (_s).
  double q = 0, q_z = 0, q_s = 0;
  double x = 0, x_z = 0, x_s = 0;
  for (int k = 1; k <= n; ++k) {
    const double r = service * (1 + q);
    const double r_z = service * q_z;
    const double r_s = (1 + q) + service * q_s;
    const double cycle = think + r;
    x = k / cycle;
    x_z = -k / (cycle * cycle) * (1 + r_z);
    x_s = -k / (cycle * cycle) * r_s;
    q = x * r;
    q_z = x_z * r + x * r_z;
    q_s = x_s * r + x * r_s;
  }
  return {think * x_z / x, service * x_s / x};
}

}  // namespace analysis
