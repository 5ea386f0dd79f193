// Sample statistics and the stopping rule that decides when a case has been measured enough.
//
// The median is the headline; noise is the relative interquartile range (IQR / median), which
// one outlier cannot inflate the way it inflates a standard deviation. A case has converged when
// either its noise is under target, or its median is known precisely enough (the 95% confidence
// interval of the median, from order statistics, under a relative half-width): the IQR is a
// property of the kernel and does not fall with more samples, the median's interval does.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kwb {

struct SummaryStats {
  std::int64_t count = 0;
  double median = 0, p10 = 0, p90 = 0, min = 0, max = 0, mean = 0, stdev = 0;
  double noise = 0;  // (p75 - p25) / median; 0 when median is 0
};

// Linear-interpolated quantile (the "type 7" definition numpy and R use by default).
// q in [0, 1]; `sorted` must be sorted ascending and non-empty.
double quantile_sorted(std::span<const double> sorted, double q);

// Summary of any sample set; an empty input gives count 0 and zeros.
SummaryStats summarize(std::span<const double> samples);

// Half-width of the distribution-free 95% confidence interval of the median, relative to the
// median: the order statistics at ranks n/2 -/+ 0.98 sqrt(n) bound it (the normal approximation
// of the binomial count below the median). `sorted` ascending; infinity under 8 samples (too few
// for the approximation) and for a zero median.
double median_ci_relative_half_width(std::span<const double> sorted);

enum class StopReason {
  converged,   // minimum samples and time reached, noise or the median's interval under target
  time_limit,  // per-case limit hit before either target: the case is "noisy"
  max_samples, // sample cap reached before either target
};
std::string_view to_string(StopReason r);
std::optional<StopReason> parse_stop_reason(std::string_view text);

struct StoppingRule {
  std::string preset = "default";
  std::int64_t min_samples = 10;
  double min_time_ms = 100;      // wall time spent measuring, not summed kernel time
  double target_noise = 0.02;    // relative IQR
  // Or: the median is known to within this fraction (half-width of its 95% confidence
  // interval, relative). A spread that does not shrink with more samples (a cold, short kernel's
  // 3% IQR) no longer runs a case to its caps once its median is pinned down.
  double target_precision = 0.005;
  double max_time_ms = 1500;     // per case, measuring only
  std::int64_t max_samples = 10000;
  // Warm-up before the first sample (clocks up, lazy module loading done): at most warmup_ms; it
  // ends sooner, but never before warmup_min_ms, once it has settled (warmup_done). Equal values
  // give a warm-up of fixed length.
  double warmup_ms = 100;
  double warmup_min_ms = 10;
};

// The fewest samples any case gets: a kernel too long for min_samples within max_time_ms (a naive
// GEMM of seconds a launch) still gets this many, enough for its spread and for compare (which
// judges from 5 samples a side).
inline constexpr std::int64_t kFewestSamples = 5;

// The minimum sample count for a kernel of `ms_per_launch`: min_samples, or as many as fit in 90%
// of max_time_ms when fewer, never under kFewestSamples.
std::int64_t min_samples_for(const StoppingRule& rule, double ms_per_launch);

// Two warm-up rounds whose time per launch differs by at most this share have settled.
inline constexpr double kWarmupSettledShare = 0.02;

// Whether the warm-up may end: `round_ms_per_launch` holds each round's wall time per launch so far,
// `launches` their count, `elapsed_ms` the warm-up's wall time, `clock_up` whether the SM clock
// read after the last round was not held down (clocks.hpp: reading_throttled). Done at warmup_ms
// whatever the rest says (a launch longer than that is warm-up enough alone); before that, once it
// is at least warmup_min_ms long with two launches and two rounds, the last two rounds agree within kWarmupSettledShare and the clock is up. A GPU
// that stays throttled or keeps speeding up is warmed for the whole warmup_ms, as before.
bool warmup_done(const StoppingRule& rule, std::span<const double> round_ms_per_launch, std::int64_t launches,
                 double elapsed_ms, bool clock_up);

// Samples to queue in the next batch, `taken` so far in `elapsed_ms` of measuring. Until
// min_samples are taken, the rest of them; then, until min_time_ms is reached, just the samples
// that reach it; then a quarter of those taken, so the rule is asked again before the case runs
// far past where it converged, and never more than a quarter of what the time limit leaves. At
// least 1, at most 64 (one output check per batch).
std::size_t next_batch(const StoppingRule& rule, std::size_t taken, double elapsed_ms);

// quick | default | precise; nullopt for an unknown name.
std::optional<StoppingRule> stopping_preset(std::string_view name);

// `--preset verify`: each case is verified and not timed (correctness sweeps, and runs under
// compute-sanitizer, where times mean nothing). Such a case passes with no timing.
inline constexpr std::string_view kVerifyOnlyPreset = "verify";

// nullopt while more samples are needed; otherwise why measuring stops.
// `samples` are the sample times so far, `elapsed_ms` the wall time spent measuring.
std::optional<StopReason> should_stop(const StoppingRule& rule, std::span<const double> samples,
                                      double elapsed_ms);

}  // namespace kwb
