// Is NEW faster, slower, the same as BASE, or can the samples not tell? Pure statistics on two
// per-sample arrays: no records, no I/O, deterministic for the same inputs.
//
// The verdict reads the bootstrap interval of the ratio NEW/BASE of the medians against a band
// 1 +- tolerance, where tolerance is the largest of the relative threshold (3% by default, or the
// suite's per-op figure), the minimum absolute effect expressed relative to BASE's median (so a
// 0.2 us change of a 2 us kernel, under the timer's resolution, is never called a change) and the
// case's run-to-run spread when other runs of BASE's build measured it (the interval comes from
// the samples of one run each, so by itself it cannot see how far a second run lands):
//   slower     the whole interval lies above 1 + tolerance and the U test says p < alpha;
//   faster     the whole interval lies below 1 - tolerance and p < alpha;
//   same       the whole interval lies inside [1 - tolerance, 1 + tolerance];
//   ambiguous  anything else (a wide or bimodal distribution, an interval across the band's edge,
//              too few samples), always with the reason.
// Unlike nvbench's legacy compare (any difference beyond the noise is FAST/SLOW) this never calls
// noise a change, and unlike its robust compare and gbench's U test the verdict drives an exit code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kwb {

enum class Verdict { faster, slower, same, ambiguous };
std::string_view to_string(Verdict v);

struct DecisionSettings {
  double threshold = 0.03;        // relative: 0.03 = 3%
  double min_effect_us = 0.5;     // absolute changes below this are "same" (event resolution)
  double alpha = 0.01;            // the U test's p-value must be below this for faster/slower
  double confidence = 0.95;       // of the bootstrap interval
  int resamples = 2000;
  std::uint64_t seed = 0x6b77622d636d70ull;  // fixed: the same reports always give the same output
  std::size_t min_samples = 5;    // per side; fewer gives "ambiguous"
  // This case's run-to-run spread: the largest |median(run) / median(BASE) - 1| over other runs
  // of BASE's build (reports/compare/run_spread.hpp); 0 when no other run measured it.
  double run_spread = 0;
  int spread_runs = 0;            // how many runs gave run_spread, for the reason
};

// A ratio NEW/BASE of medians and its bootstrap interval; lo/hi are NaN when not computed.
struct RatioInterval {
  double ratio = 0, lo = 0, hi = 0;
};

struct Decision {
  Verdict verdict = Verdict::ambiguous;
  RatioInterval ratio;
  double p_value = 1;       // two-sided Mann-Whitney U; NaN when not computed
  double tolerance = 0;     // the band's half-width actually used (threshold, min effect or spread)
  bool band_from_spread = false;  // the run-to-run spread set the band (it beat threshold and min effect)
  double base_median_us = 0, new_median_us = 0;
  std::size_t base_count = 0, new_count = 0;
  std::string reason;       // one sentence: why this verdict
};

// Median of an unsorted sample set (mean of the two middle values for an even count); NaN if empty.
double median_of(std::span<const double> samples);

// Percentile bootstrap interval of median(NEW)/median(BASE) over `resamples` resamples of each side.
// Each resample's median is drawn from its exact distribution (the k-th smallest of n uniform
// draws is Beta(k, n+1-k)), which is the same as drawing n values with replacement and taking
// their median, at O(1) per resample instead of O(n): 10,000-sample cases stay instant.
RatioInterval bootstrap_ratio_of_medians(std::span<const double> base, std::span<const double> next,
                                         int resamples, double confidence, std::uint64_t seed);

// Two-sided p-value of the Mann-Whitney U test (normal approximation with tie and continuity
// correction, as scipy's "asymptotic" method). 1 when every value is equal; NaN if a side is empty.
double mann_whitney_p(std::span<const double> a, std::span<const double> b);

Decision decide(std::span<const double> base, std::span<const double> next, const DecisionSettings& settings);

}  // namespace kwb
