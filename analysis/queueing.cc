#include "analysis/queueing.h"

namespace analysis {

ErlangCResult ErlangC(int servers, double arrival_rate, double service) {
  const double a = arrival_rate * service;
  double b = 1;
  for (int k = 1; k <= servers; ++k) b = a * b / (k + a * b);
  ErlangCResult r{};
  r.p_wait = servers * b / (servers - a * (1 - b));
  r.wait = r.p_wait * service / (servers - a);
  r.response = r.wait + service;
  return r;
}

double PollaczekKhinchineWait(double arrival_rate, double service, double service_second_moment) {
  return arrival_rate * service_second_moment / (2 * (1 - arrival_rate * service));
}

double ProcessorSharingResponse(double arrival_rate, double service) {
  return service / (1 - arrival_rate * service);
}

}  // namespace analysis
