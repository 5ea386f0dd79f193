// Student's t distribution, for intervals and tests over a handful of paired measurements (the
// rounds of `kwb compare --confirm`), where the normal approximation would be too narrow: with 6
// rounds the 95% quantile is 2.571, not 1.960.
#pragma once

namespace kwb {

// Two-sided tail probability P(|T| >= |t|) for T with `df` degrees of freedom (df > 0).
double student_t_two_sided_p(double t, double df);

// The t with P(|T| <= t) = confidence (0 < confidence < 1): 2.571 for df 5 at 0.95.
double student_t_quantile(double confidence, double df);

}  // namespace kwb
