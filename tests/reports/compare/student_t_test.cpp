// Student's t against published table values: the quantiles the confirm interval uses and the
// two-sided p-values of the paired test.
#include <gtest/gtest.h>

#include <cmath>

#include "reports/compare/student_t.hpp"

namespace kwb {
namespace {

TEST(StudentT, QuantilesMatchTheTables) {
  EXPECT_NEAR(student_t_quantile(0.95, 1), 12.7062, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.95, 5), 2.570582, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.95, 30), 2.042272, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.99, 10), 3.169273, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.95, 1e6), 1.959966, 1e-4) << "large df: the normal quantile";
}

TEST(StudentT, TwoSidedPValuesMatchTheTables) {
  EXPECT_NEAR(student_t_two_sided_p(2.228139, 10), 0.05, 1e-5);
  EXPECT_NEAR(student_t_two_sided_p(-2.228139, 10), 0.05, 1e-5) << "two-sided: the sign does not matter";
  EXPECT_NEAR(student_t_two_sided_p(4.032143, 5), 0.01, 1e-5);
  EXPECT_NEAR(student_t_two_sided_p(1.0, 1), 0.5, 1e-9) << "Cauchy: P(|T| >= 1) = 1/2";
  EXPECT_DOUBLE_EQ(student_t_two_sided_p(0, 4), 1.0);
  EXPECT_LT(student_t_two_sided_p(60, 5), 1e-7);
}

TEST(StudentT, QuantileInvertsThePValue) {
  for (double df : {1.0, 2.0, 3.0, 5.0, 7.0, 20.0})
    for (double confidence : {0.9, 0.95, 0.99}) {
      const double t = student_t_quantile(confidence, df);
      EXPECT_NEAR(student_t_two_sided_p(t, df), 1 - confidence, 1e-9) << "df " << df << " at " << confidence;
    }
}

TEST(StudentT, InvalidArgumentsGiveNaN) {
  EXPECT_TRUE(std::isnan(student_t_quantile(1.0, 5)));
  EXPECT_TRUE(std::isnan(student_t_quantile(0.95, 0)));
  EXPECT_TRUE(std::isnan(student_t_two_sided_p(1.0, -1)));
}

}  // namespace
}  // namespace kwb
