// Exact results of two open queues, for validating the fair scheduler.
//
// M/M/c (Erlang's delay system): Poisson arrivals at rate lambda, c servers,
// exponential service of mean S, offered load a = lambda * S < c. The
// probability that an arrival waits is Erlang's C formula,
//   C(c, a) = c B(c, a) / (c - a (1 - B(c, a))),
// with Erlang's B from its recursion B(0) = 1,
//   B(k) = a B(k-1) / (k + a B(k-1)),
// which stays exact in floating point for any c. The mean wait is
//   Wq = C(c, a) S / (c - a).
//
// M/G/1 FCFS: the mean wait is lambda E[S^2] / (2 (1 - rho)), rho =
// lambda E[S] (Pollaczek-Khinchine).
//
// M/G/1 processor sharing: the mean response time is S / (1 - rho),
// whatever the service time distribution beyond its mean (Kleinrock,
// "Queueing Systems, Vol. 2", 1976, section 4.4).
#ifndef VIOSIM_ANALYSIS_QUEUEING_H_
#define VIOSIM_ANALYSIS_QUEUEING_H_

namespace analysis {

struct ErlangCResult {
  double p_wait;    // C(c, a): the chance an arrival finds every server busy
  double wait;      // mean time queueing before service
  double response;  // wait + service
};

// REQUIRES: servers >= 1, 0 < arrival_rate * service < servers. Times in any
// one unit, the rate per that unit.
ErlangCResult ErlangC(int servers, double arrival_rate, double service);

// The mean wait of an M/G/1 FCFS queue whose service time has mean `service`
// and second moment `service_second_moment`. REQUIRES: arrival_rate *
// service < 1.
double PollaczekKhinchineWait(double arrival_rate, double service, double service_second_moment);

// The mean response time of an M/G/1 processor-sharing queue.
// REQUIRES: 0 <= arrival_rate * service < 1.
double ProcessorSharingResponse(double arrival_rate, double service);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_QUEUEING_H_
