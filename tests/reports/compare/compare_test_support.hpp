// Shared by the compare tests: seeded synthetic sample distributions and small hand-made reports.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "harness/record/stats.hpp"
#include "harness/record/json_report.hpp"

namespace kwb::test {

// n samples around `median_us` with relative gaussian noise `rel_noise` (stdev / median), seeded.
inline std::vector<double> noisy_samples(std::uint64_t seed, std::size_t n, double median_us, double rel_noise) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> out(n);
  for (double& x : out) x = median_us * std::max(0.05, 1 + rel_noise * normal(rng));
  return out;
}

// Half the samples near `low_us`, half near `high_us`, shuffled: a kernel that alternates between
// two states (clock steps, L2 hits or misses).
inline std::vector<double> bimodal_samples(std::uint64_t seed, std::size_t n, double low_us, double high_us) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 0.005);
  std::bernoulli_distribution coin(0.5);
  std::vector<double> out(n);
  for (double& x : out) x = (coin(rng) ? high_us : low_us) * (1 + normal(rng));
  return out;
}

inline std::vector<double> scaled(std::vector<double> v, double factor) {
  for (double& x : v) x *= factor;
  return v;
}

// A passed, timed case of `op`/`variant` at rows x 4096 with these samples.
inline CaseRecord timed_case(const std::string& op, const std::string& variant, std::int64_t rows,
                             const std::vector<double>& samples, Disposition disposition = Disposition::passed) {
  CaseRecord c;
  c.op = op;
  c.variant = variant;
  c.dtype = DType::bf16;
  c.shape = Shape{{{"rows", rows}, {"cols", 4096}}};
  c.disposition = disposition;
  TimingResult t;
  t.timer = "cupti";
  t.preset = "default";
  t.span = summarize(samples);
  t.busy = t.span;
  t.kernel_sum = t.span;
  t.samples_us = samples;
  c.timing = t;
  c.nvtx_range = op + ":" + variant + ":bf16:" + c.shape.to_compact();
  return c;
}

// A report "measured" on `gpu` under `flush`, without cases.
inline Report empty_report(const std::string& gpu = "NVIDIA H100 80GB HBM3", const std::string& flush = "dirty") {
  Report r;
  r.run.tool_version = "0.1.0";
  r.run.git_sha = "abc";
  r.run.complete = true;
  r.run.settings = {{"mode", "cold"}, {"flush", flush}, {"preset", "default"}, {"timer", "cupti"}};
  DeviceInfo d;
  d.name = gpu;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  d.driver_release = "580.95.05";
  r.run.device = d;
  return r;
}

}  // namespace kwb::test
