// Student's t through the regularized incomplete beta function, I_x(df/2, 1/2) = P(|T| >= t) at
// x = df / (df + t^2), evaluated by its continued fraction (modified Lentz method).
#include "reports/compare/student_t.hpp"

#include <cmath>

namespace kwb {
namespace {

// The continued fraction of I_x(a, b), converging fast for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEpsilon = 1e-15;
  auto guard = [](double v) { return std::abs(v) < kTiny ? kTiny : v; };
  double c = 1, d = 1 / guard(1 - (a + b) * x / (a + 1));
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    double term = m * (b - m) * x / ((a + m2 - 1) * (a + m2));  // even step
    d = 1 / guard(1 + term * d);
    c = guard(1 + term / c);
    h *= d * c;
    term = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));  // odd step
    d = 1 / guard(1 + term * d);
    c = guard(1 + term / c);
    const double step = d * c;
    h *= step;
    if (std::abs(step - 1) < kEpsilon) break;
  }
  return h;
}

// The regularized incomplete beta function I_x(a, b), 0 <= x <= 1.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;  // the symmetry I_x(a,b) = 1 - I_{1-x}(b,a)
}

}  // namespace

double student_t_two_sided_p(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return std::nan("");
  if (std::isinf(t)) return 0;
  return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

double student_t_quantile(double confidence, double df) {
  if (!(confidence > 0 && confidence < 1) || !(df > 0)) return std::nan("");
  // Bisection on the tail probability, which falls monotonically in t; in log(t), as the
  // quantile spans 1.96 (large df) to 636 (df 1 at 99.9%).
  const double tail = 1 - confidence;
  double lo = -30, hi = 30;  // log(t)
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_two_sided_p(std::exp(mid), df) > tail ? lo : hi) = mid;
  }
  return std::exp(0.5 * (lo + hi));
}

}  // namespace kwb
