// Where each norm backward op's row-summed gradients come from: which of its tensors are x and dy,
// how many rows of how many columns, which row statistics and eps, and which outputs take the sums.
// One table read by the ops' device oracles (fill_norm_grads_on_device) and by the CPU test that
// holds the host twin of those oracles to the ops' host oracles through the same table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "reference/norm_weight_grad_fp64.hpp"

namespace kwb::ref {

struct NormGradSource {
  std::size_t x = 0, dy = 0;  // indices into the op's tensors (its inputs come first)
  std::int64_t rows = 0, cols = 0;
  NormStats kind = NormStats::rms_mean;
  double eps = 0;
  std::size_t dweight = 0;         // index into the op's outputs: dweight, with A and R where kept
  bool dweight_magnitudes = true;  // false: a flat tolerance, values alone (qk_norm_bwd)
  std::optional<std::size_t> dbias;  // layernorm_bwd's dbias, with its A
};

std::vector<NormGradSource> rmsnorm_bwd_grad_sources(const Shape& shape);
std::vector<NormGradSource> layernorm_bwd_grad_sources(const Shape& shape);
std::vector<NormGradSource> qk_norm_bwd_grad_sources(const Shape& shape);

// Each source's sums from `grads`, moved into the op's expected outputs.
void take_norm_grads(const NormGradSource& source, NormWeightGrads& grads,
                     std::vector<HostTensor>& expected);

// An op's device oracle (Op::device_unaligned_oracle) over its sources
// (reference/norm_weight_grad_fp64_gpu.hpp).
void fill_norm_grads_on_device(const DeviceOracleArgs& args,
                               const std::vector<NormGradSource>& sources,
                               std::vector<HostTensor>& expected);

}  // namespace kwb::ref
