// Sample statistics and the stopping rule.
//
// Quantiles follow numpy's default (linear interpolation between closest ranks), so a median or
// noise figure printed here can be checked against the same samples in a notebook.
#include "harness/record/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kwb {

namespace {

std::vector<double> sorted_copy(std::span<const double> samples) {
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

double relative_iqr_sorted(std::span<const double> sorted) {
  const double median = quantile_sorted(sorted, 0.5);
  if (median == 0) return 0;  // avoids dividing by zero; an all-zero sample set is not noisy
  return (quantile_sorted(sorted, 0.75) - quantile_sorted(sorted, 0.25)) / median;
}

}  // namespace

double quantile_sorted(std::span<const double> sorted, double q) {
  const double rank = static_cast<double>(sorted.size() - 1) * q;
  const auto lower = static_cast<std::size_t>(std::floor(rank));
  // q == 1 (or a single sample) puts the rank on the last element, which has no upper neighbour.
  if (lower + 1 >= sorted.size()) return sorted.back();
  const double fraction = rank - static_cast<double>(lower);
  return sorted[lower] + fraction * (sorted[lower + 1] - sorted[lower]);
}

SummaryStats summarize(std::span<const double> samples) {
  SummaryStats stats;
  if (samples.empty()) return stats;

  const std::vector<double> sorted = sorted_copy(samples);
  const auto n = static_cast<double>(sorted.size());
  stats.count = static_cast<std::int64_t>(sorted.size());
  stats.median = quantile_sorted(sorted, 0.5);
  stats.p10 = quantile_sorted(sorted, 0.1);
  stats.p90 = quantile_sorted(sorted, 0.9);
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  if (sorted.size() >= 2) {
    // Two passes (deviations from the mean) rather than sum of squares: sample times share a
    // large common value, and the one-pass formula loses the small spread to cancellation.
    double squared_deviations = 0;
    for (double x : sorted) squared_deviations += (x - stats.mean) * (x - stats.mean);
    stats.stdev = std::sqrt(squared_deviations / (n - 1));
  }
  stats.noise = relative_iqr_sorted(sorted);
  return stats;
}

double median_ci_relative_half_width(std::span<const double> sorted) {
  constexpr std::size_t kFewest = 8;
  const std::size_t n = sorted.size();
  if (n < kFewest) return std::numeric_limits<double>::infinity();
  const double median = quantile_sorted(sorted, 0.5);
  if (median == 0) return std::numeric_limits<double>::infinity();
  // 1-based ranks j <= k with P(X(j) <= median <= X(k)) >= 95% for any continuous distribution.
  const double half_span = 0.98 * std::sqrt(static_cast<double>(n));  // 1.96 * sqrt(n) / 2
  const double center = static_cast<double>(n) / 2;
  const auto lower = static_cast<std::size_t>(std::max(1.0, std::floor(center - half_span)));
  const auto upper =
      static_cast<std::size_t>(std::min(static_cast<double>(n), std::ceil(center + 1 + half_span)));
  return (sorted[upper - 1] - sorted[lower - 1]) / (2 * std::abs(median));
}

std::string_view to_string(StopReason r) {
  switch (r) {
    case StopReason::converged: return "converged";
    case StopReason::time_limit: return "time_limit";
    case StopReason::max_samples: return "max_samples";
  }
  return "?";
}

std::optional<StopReason> parse_stop_reason(std::string_view text) {
  if (text == "converged") return StopReason::converged;
  if (text == "time_limit") return StopReason::time_limit;
  if (text == "max_samples") return StopReason::max_samples;
  return std::nullopt;
}

std::optional<StoppingRule> stopping_preset(std::string_view name) {
  StoppingRule rule;
  rule.preset = std::string(name);
  if (name == "quick") {
    rule.min_samples = 10;
    rule.min_time_ms = 20;
    rule.target_noise = 0.05;
    rule.target_precision = 0.01;
    rule.max_time_ms = 400;
    rule.max_samples = 2000;
    rule.warmup_ms = 30;
    rule.warmup_min_ms = 5;
  } else if (name == "default") {
    rule.min_samples = 10;
    rule.min_time_ms = 100;
    rule.target_noise = 0.02;
    rule.target_precision = 0.005;
    rule.max_time_ms = 1500;
    rule.max_samples = 10000;
    rule.warmup_ms = 100;
    rule.warmup_min_ms = 10;
  } else if (name == "precise") {
    rule.min_samples = 100;
    rule.min_time_ms = 500;
    rule.target_noise = 0.005;
    rule.target_precision = 0.002;
    rule.max_time_ms = 10000;
    rule.max_samples = 100000;
    rule.warmup_ms = 300;
    rule.warmup_min_ms = 300;  // the reference preset keeps its fixed warm-up
  } else {
    return std::nullopt;
  }
  return rule;
}

std::optional<StopReason> should_stop(const StoppingRule& rule, std::span<const double> samples,
                                      double elapsed_ms) {
  const auto count = static_cast<std::int64_t>(samples.size());
  // Convergence is checked before the caps: a case that meets its noise target on the very
  // sample that hits a cap was measured well enough, and must not be reported as noisy.
  // Reaching the time limit also satisfies the minimum time, should a rule set it above the limit.
  const bool enough_time = elapsed_ms >= rule.min_time_ms || elapsed_ms >= rule.max_time_ms;
  if (count >= rule.min_samples && enough_time && !samples.empty()) {
    const std::vector<double> sorted = sorted_copy(samples);
    if (relative_iqr_sorted(sorted) <= rule.target_noise ||
        median_ci_relative_half_width(sorted) <= rule.target_precision)
      return StopReason::converged;
  }
  if (count >= rule.max_samples) return StopReason::max_samples;
  if (elapsed_ms >= rule.max_time_ms) return StopReason::time_limit;
  return std::nullopt;
}

bool warmup_done(const StoppingRule& rule, std::span<const double> round_ms_per_launch, std::int64_t launches,
                 double elapsed_ms, bool clock_up) {
  if (elapsed_ms >= rule.warmup_ms && launches >= 1) return true;
  if (elapsed_ms < rule.warmup_min_ms || launches < 2 || round_ms_per_launch.size() < 2 || !clock_up) return false;
  const double last = round_ms_per_launch[round_ms_per_launch.size() - 1];
  const double before = round_ms_per_launch[round_ms_per_launch.size() - 2];
  return before > 0 && std::abs(last / before - 1.0) <= kWarmupSettledShare;
}

std::int64_t min_samples_for(const StoppingRule& rule, double ms_per_launch) {
  if (!(ms_per_launch > 0)) return rule.min_samples;
  // 90% of the limit: the batches' own overheads (synchronise, output check) take the rest.
  const double fit = std::floor(0.9 * rule.max_time_ms / ms_per_launch);
  if (fit >= static_cast<double>(rule.min_samples)) return rule.min_samples;
  return std::max(std::min(kFewestSamples, rule.min_samples), static_cast<std::int64_t>(fit));
}

std::size_t next_batch(const StoppingRule& rule, std::size_t taken, double elapsed_ms) {
  double batch;
  if (static_cast<std::int64_t>(taken) < rule.min_samples) {
    // The minimum count comes first, whole: a kernel given it fits (min_samples_for).
    batch = static_cast<double>(rule.min_samples - static_cast<std::int64_t>(taken));
  } else {
    // What the samples so far took each (batch overheads included) is the better estimate.
    const double per_sample = std::max(elapsed_ms / static_cast<double>(taken), 1e-3);
    const double remaining_ms = std::max(rule.max_time_ms - elapsed_ms, 0.0);
    batch = elapsed_ms < rule.min_time_ms ? std::ceil((rule.min_time_ms - elapsed_ms) / per_sample)
                                          : std::floor(static_cast<double>(taken) / 4);
    batch = std::min(batch, remaining_ms / per_sample / 4);
  }
  const auto room = static_cast<double>(std::max<std::int64_t>(rule.max_samples, 1)) - static_cast<double>(taken);
  return static_cast<std::size_t>(std::max(1.0, std::min({batch, 64.0, room})));
}

}  // namespace kwb
