#include "analysis/mva.h"

#include <cmath>

#include "gtest/gtest.h"

namespace analysis {
namespace {

TEST(MvaTest, OneCustomerNeverQueues) {
  const RepairmanResult r = MachineRepairman(1, 10, 2);
  EXPECT_DOUBLE_EQ(r.throughput, 1.0 / 12);
  EXPECT_DOUBLE_EQ(r.wait, 0);
  EXPECT_DOUBLE_EQ(r.response, 2);
}

TEST(MvaTest, FourThreadsMatchTheDesignFigure) {
  // Think 10us, hold 2us: 300,828.55 acquisitions per second.
  const RepairmanResult r = MachineRepairman(4, 10, 2);
  EXPECT_NEAR(r.throughput * 1e6, 300828.55, 0.01);
  // Little's law at the lock: Q = X * R.
  EXPECT_NEAR(r.queue, r.throughput * r.response, 1e-12);
}

TEST(MvaTest, ManyThreadsSaturateTheLock) {
  const RepairmanResult r = MachineRepairman(64, 10, 2);
  EXPECT_NEAR(r.throughput * 1e6, 500000, 1e-6);
  EXPECT_NEAR(r.utilization, 1.0, 1e-12);
  // Saturated: every thread but the thinkers waits; R = N/X - Z.
  EXPECT_NEAR(r.response, 64 / r.throughput - 10, 1e-9);
}

TEST(MvaTest, MatchesTheClosedFormForTwoCustomers) {
  // With N=2 the embedded Markov chain gives P0 = 1 / (1 + 2 rho + 2 rho^2),
  // rho = S/Z, and X = (1 - P0) / S.
  const double z = 7, s = 3, rho = s / z;
  const double p0 = 1 / (1 + 2 * rho + 2 * rho * rho);
  EXPECT_NEAR(MachineRepairman(2, z, s).throughput, (1 - p0) / s, 1e-12);
}

TEST(MvaTest, ElasticityOfOneCustomerIsEachTimesShareOfTheCycle) {
  // X = 1 / (Z + S): d ln X / d ln Z = -Z / (Z + S).
  const RepairmanElasticity e = MachineRepairmanElasticity(1, 10, 2);
  EXPECT_DOUBLE_EQ(e.think, -10.0 / 12);
  EXPECT_DOUBLE_EQ(e.service, -2.0 / 12);
}

TEST(MvaTest, ElasticityOfASaturatedServerIsAllService) {
  // X = 1 / S once saturated: -1 to the service time, nothing to thinking.
  const RepairmanElasticity e = MachineRepairmanElasticity(64, 10, 2);
  EXPECT_NEAR(e.service, -1, 1e-9);
  EXPECT_NEAR(e.think, 0, 1e-9);
}

TEST(MvaTest, ElasticityIsTheLimitOfTheDifferenceQuotient) {
  for (int n : {2, 4, 6, 8}) {
    const RepairmanElasticity e = MachineRepairmanElasticity(n, 10, 2);
    const double h = 1e-6;
    auto lnx = [n](double z, double s) { return std::log(MachineRepairman(n, z, s).throughput); };
    EXPECT_NEAR(e.think, (lnx(10 * (1 + h), 2) - lnx(10 * (1 - h), 2)) / (std::log1p(h) - std::log1p(-h)), 1e-6)
        << n;
    EXPECT_NEAR(e.service, (lnx(10, 2 * (1 + h)) - lnx(10, 2 * (1 - h))) / (std::log1p(h) - std::log1p(-h)), 1e-6)
        << n;
  }
}

}  // namespace
}  // namespace analysis
