// Student's t tail probabilities against closed forms (df = 1, 2, 3) and the normal limit;
// the incomplete beta function against its elementary special cases.
#include <kcla/error.hpp>
#include <kcla/student_t.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

constexpr double pi = 3.14159265358979323846;

TEST(StudentT, ClosedFormsForOneTwoAndThreeDegreesOfFreedom) {
  for (double t : {0.0, 1e-3, 0.1, 0.5, 1.0, 1.7, 2.5, 4.0, 10.0, 100.0, 1e4, 1e7}) {
    for (double sign : {1.0, -1.0}) {
      const double ts = sign * t;
      // df = 1 (Cauchy): P = (2/pi) atan(1/|t|), written to stay exact in the tail.
      const double p1 = t == 0 ? 1.0 : 2 / pi * std::atan(1 / t);
      EXPECT_NEAR(kcla::student_t_two_sided_p(ts, 1), p1, 1e-12 * p1) << "t " << ts;
      // df = 2: P = 1 - |t| / sqrt(2 + t^2) = 2 / (r (r + |t|)), r = sqrt(2 + t^2).
      const double r = std::sqrt(2 + t * t);
      const double p2 = 2 / (r * (r + t));
      EXPECT_NEAR(kcla::student_t_two_sided_p(ts, 2), p2, 1e-12 * p2) << "t " << ts;
      // df = 3: P = 1 - (2/pi) (atan(u) + u / (1 + u^2)), u = |t| / sqrt(3).
      if (t < 1e3) {  // the closed form itself cancels further out
        const double u = t / std::sqrt(3.0);
        const double p3 = 1 - 2 / pi * (std::atan(u) + u / (1 + u * u));
        EXPECT_NEAR(kcla::student_t_two_sided_p(ts, 3), p3, 1e-11 * std::max(p3, 1e-3))
            << "t " << ts;
      }
    }
  }
}

TEST(StudentT, LargeDegreesOfFreedomFollowTheNormalExpansion) {
  // P(|T| > t) = erfc(t / sqrt 2) + 2 phi(t) (t^3 + t) / (4 df) + O(t^8 / df^2): at
  // biobank scale (df 1e7) the last term is below 1e-9 relative for t up to 6.
  const double df = 1e7;
  for (double t : {0.5, 1.959963984540054, 5.730728868, 12.0}) {
    const double phi = std::exp(-t * t / 2) / std::sqrt(2 * pi);
    const double want = std::erfc(t / std::sqrt(2.0)) + 2 * phi * (t * t * t + t) / (4 * df);
    EXPECT_NEAR(kcla::student_t_two_sided_p(t, df), want, (t < 6 ? 1e-8 : 1e-6) * want) << t;
  }
}

TEST(StudentT, SpecialValuesAndErrors) {
  EXPECT_EQ(kcla::student_t_two_sided_p(INFINITY, 5), 0.0);
  EXPECT_TRUE(std::isnan(kcla::student_t_two_sided_p(NAN, 5)));
  EXPECT_THROW(kcla::student_t_two_sided_p(1.0, 0), kcla::InvalidArgument);
  EXPECT_THROW(kcla::regularized_incomplete_beta(1.5, -0.5, 1, 1), kcla::InvalidArgument);
}

TEST(IncompleteBeta, ElementaryCases) {
  for (double x : {1e-9, 0.01, 0.3, 0.5, 0.77, 0.999}) {
    for (double a : {0.5, 1.0, 3.0, 40.0}) {
      // I_x(a, 1) = x^a and I_x(1, b) = 1 - (1 - x)^b.
      const double want_a = std::pow(x, a);
      EXPECT_NEAR(kcla::regularized_incomplete_beta(x, 1 - x, a, 1), want_a, 1e-12 * want_a)
          << x << " " << a;
      const double want_b = -std::expm1(a * std::log1p(-x));
      EXPECT_NEAR(kcla::regularized_incomplete_beta(x, 1 - x, 1, a), want_b, 1e-12 * want_b)
          << x << " " << a;
      // Symmetry: I_x(a, b) + I_{1-x}(b, a) = 1.
      EXPECT_NEAR(kcla::regularized_incomplete_beta(x, 1 - x, a, 2.5) +
                      kcla::regularized_incomplete_beta(1 - x, x, 2.5, a),
                  1.0, 1e-12);
    }
  }
}

}  // namespace
