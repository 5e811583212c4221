// Exact mean value analysis of the machine-repairman model (M/M/1//N): N
// customers alternate between a delay station (think time Z, infinite
// servers) and one FIFO exponential server (service time S).
//
//   R(n) = S * (1 + Q(n-1)),  X(n) = n / (Z + R(n)),  Q(n) = X(n) * R(n)
//
// from Q(0) = 0 (Reiser and Lavenberg, "Mean-value analysis of closed
// multichain queuing networks", JACM 27(2), 1980).
#ifndef VIOSIM_ANALYSIS_MVA_H_
#define VIOSIM_ANALYSIS_MVA_H_

namespace analysis {

struct RepairmanResult {
  double throughput;  // completions per unit of time
  double response;    // mean time at the server, queueing plus service
  double wait;        // mean time queueing before service (response - S)
  double queue;       // mean number at the server, waiting or in service
  double utilization; // share of time the server is busy
};

// REQUIRES: n >= 1, think >= 0, service > 0. Times in any one unit; the
// throughput comes out per that unit.
RepairmanResult MachineRepairman(int n, double think, double service);

// The elasticities of the throughput X(N) to the think and service times,
// d ln X / d ln Z and d ln X / d ln S, exact: the derivative of the
// recursion above carried along with it (forward differentiation), not a
// difference quotient.
struct RepairmanElasticity {
  double think;
  double service;
};

// REQUIRES: n >= 1, think >= 0, service > 0.
RepairmanElasticity MachineRepairmanElasticity(int n, double think, double service);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_MVA_H_
