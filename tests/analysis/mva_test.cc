#include "analysis/mva.h"

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

}  // namespace
}  // namespace analysis
