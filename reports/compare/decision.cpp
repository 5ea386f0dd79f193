// The verdict from two sample sets: bootstrap interval of the ratio of medians, U test, band.
#include "reports/compare/decision.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include <fmt/format.h>

#include "harness/record/stats.hpp"

namespace kwb {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// splitmix64 and hand-written samplers rather than <random>'s distributions, whose output the
// standard leaves to each library: the same reports must give the same interval on any build.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }  // in (0, 1)
  double normal() {  // Box-Muller, one value per call
    return std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * std::numbers::pi * uniform());
  }
  double gamma(double shape) {  // Marsaglia and Tsang (2000); shape >= 1 here
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x = normal(), v = 1.0 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      const double u = uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }
  double beta(double a, double b) {
    const double x = gamma(a);
    return x / (x + gamma(b));
  }

 private:
  std::uint64_t state_;
};

// The index into `sorted` that a uniform draw u lands on when resampling n values.
std::size_t index_of(double u, std::size_t n) {
  return std::min(n - 1, static_cast<std::size_t>(u * static_cast<double>(n)));
}

// The median of one resample (with replacement) of `sorted`, drawn from its exact distribution.
double resampled_median(std::span<const double> sorted, Rng& rng) {
  const std::size_t n = sorted.size();
  const std::size_t k = (n + 1) / 2;  // 1-based rank of the (lower) middle value
  const double uk = rng.beta(static_cast<double>(k), static_cast<double>(n + 1 - k));
  if (n % 2 == 1) return sorted[index_of(uk, n)];
  // Even n: the next order statistic is the smallest of the n-k draws above uk.
  const double uk1 = uk + (1 - uk) * (1 - std::pow(rng.uniform(), 1.0 / static_cast<double>(n - k)));
  return 0.5 * (sorted[index_of(uk, n)] + sorted[index_of(uk1, n)]);
}

std::vector<double> sorted_copy(std::span<const double> v) {
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  return s;
}

bool all_finite(std::span<const double> v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

std::string percent(double fraction) { return fmt::format("{:.3g}%", fraction * 100); }

}  // namespace

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::same: return "same";
    case Verdict::ambiguous: return "ambiguous";
  }
  return "?";
}

double median_of(std::span<const double> samples) {
  if (samples.empty()) return kNaN;
  const std::vector<double> s = sorted_copy(samples);
  return quantile_sorted(s, 0.5);
}

RatioInterval bootstrap_ratio_of_medians(std::span<const double> base, std::span<const double> next,
                                         int resamples, double confidence, std::uint64_t seed) {
  RatioInterval r{kNaN, kNaN, kNaN};
  if (base.empty() || next.empty()) return r;
  const std::vector<double> b = sorted_copy(base), n = sorted_copy(next);
  r.ratio = quantile_sorted(n, 0.5) / quantile_sorted(b, 0.5);
  if (resamples < 1) return r;
  Rng rng(seed);
  std::vector<double> ratios(static_cast<std::size_t>(resamples));
  for (double& x : ratios) {
    const double mb = resampled_median(b, rng);  // one draw each, always in this order
    x = resampled_median(n, rng) / mb;
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - confidence) / 2;
  r.lo = quantile_sorted(ratios, tail);
  r.hi = quantile_sorted(ratios, 1 - tail);
  return r;
}

double mann_whitney_p(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty()) return kNaN;
  struct Item {
    double value;
    bool from_a;
  };
  std::vector<Item> all;
  all.reserve(a.size() + b.size());
  for (double x : a) all.push_back({x, true});
  for (double x : b) all.push_back({x, false});
  std::sort(all.begin(), all.end(), [](const Item& x, const Item& y) { return x.value < y.value; });
  const double N = static_cast<double>(all.size());
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].value == all[i].value) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;  // ties share the mean rank
    for (std::size_t k = i; k < j; ++k)
      if (all[k].from_a) rank_sum_a += mid_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  const double u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double mean = n1 * n2 / 2;
  const double variance = n1 * n2 / 12 * ((N + 1) - tie_term / (N * (N - 1)));
  if (!(variance > 0)) return 1.0;  // every value equal: no evidence of any difference
  const double z = std::max(0.0, std::abs(u - mean) - 0.5) / std::sqrt(variance);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

Decision decide(std::span<const double> base, std::span<const double> next, const DecisionSettings& s) {
  Decision d;
  d.base_count = base.size();
  d.new_count = next.size();
  d.base_median_us = median_of(base);
  d.new_median_us = median_of(next);
  d.ratio = {d.new_median_us / d.base_median_us, kNaN, kNaN};
  d.p_value = kNaN;
  d.tolerance = s.threshold;
  if (base.size() < s.min_samples || next.size() < s.min_samples) {
    d.reason = fmt::format("too few samples: BASE has {}, NEW has {} (at least {} each are needed{})", base.size(),
                           next.size(), s.min_samples,
                           base.empty() || next.empty() ? "; a report without per-sample times cannot be judged" : "");
    return d;
  }
  if (!all_finite(base) || !all_finite(next) || !(d.base_median_us > 0)) {
    d.reason = "a sample is not a finite positive time (NaN, Inf or a zero median)";
    return d;
  }
  d.ratio = bootstrap_ratio_of_medians(base, next, s.resamples, s.confidence, s.seed);
  d.p_value = mann_whitney_p(base, next);
  const double min_effect = s.min_effect_us / d.base_median_us;
  d.tolerance = std::max({s.threshold, min_effect, s.run_spread});
  std::string band = fmt::format("+-{}", percent(d.tolerance));
  d.band_from_spread = s.run_spread > std::max(s.threshold, min_effect);
  if (d.band_from_spread)
    band += fmt::format(" (the run-to-run spread of BASE's median over {} other run{}, wider than the {} threshold)",
                        s.spread_runs, s.spread_runs == 1 ? "" : "s", percent(s.threshold));
  else if (min_effect > s.threshold)
    band += fmt::format(" (the {} us minimum effect at a {:.4g} us median)", s.min_effect_us, d.base_median_us);
  const std::string interval = fmt::format("{:.0f}% interval [{:.4f}, {:.4f}]", s.confidence * 100, d.ratio.lo, d.ratio.hi);
  const bool above = d.ratio.lo > 1 + d.tolerance, below = d.ratio.hi < 1 - d.tolerance;
  if (above || below) {
    if (d.p_value < s.alpha) {
      d.verdict = above ? Verdict::slower : Verdict::faster;
      d.reason = fmt::format("the {} lies {} the {} band; U test p = {:.2g}", interval, above ? "above" : "below",
                             band, d.p_value);
    } else {
      d.reason = fmt::format("the {} lies {} the {} band, but the U test's p = {:.2g} is not below {}", interval,
                             above ? "above" : "below", band, d.p_value, s.alpha);
    }
  } else if (d.ratio.lo >= 1 - d.tolerance && d.ratio.hi <= 1 + d.tolerance) {
    d.verdict = Verdict::same;
    d.reason = fmt::format("the {} lies inside the {} band", interval, band);
  } else {
    d.reason = fmt::format("the {} crosses an edge of the {} band: the samples cannot tell", interval, band);
  }
  return d;
}

}  // namespace kwb
