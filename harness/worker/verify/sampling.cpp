// The sample plan of a case and the strided copies that gather it.
#include "harness/worker/verify/sampling.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/worker/verify/verify.hpp"

namespace kwb {

std::int64_t SamplePlan::elements(const TensorSpec& t) const {
  if (!gathers(t)) return t.numel();
  std::int64_t n = 1;
  for (auto d : dims(t)) n *= d;
  return n;
}

std::vector<std::int64_t> SamplePlan::dims(const TensorSpec& t) const {
  std::vector<std::int64_t> out = t.dims;
  if (gathers(t)) out[static_cast<std::size_t>(t.sample_dim)] = static_cast<std::int64_t>(indices.size());
  return out;
}

SamplePlan plan_sample(const Op& op, const Shape& shape, const std::vector<TensorSpec>& specs, std::uint64_t seed,
                       bool device_oracle_usable) {
  SamplePlan plan;
  plan.axis = op.sample_axis;
  if (!op.sample_axis.empty()) plan.axis_size = shape.at(op.sample_axis);
  for (const auto& t : specs) {
    if (t.sample_dim < 0) continue;
    if (op.sample_axis.empty())
      throw std::invalid_argument(fmt::format(
          "op '{}': tensor '{}' declares sample_dim {} but the op has no sample_axis; set "
          "Op::sample_axis or make the tensor's sample_dim -1", op.name, t.name, t.sample_dim));
    if (static_cast<std::size_t>(t.sample_dim) >= t.dims.size() ||
        t.dims[static_cast<std::size_t>(t.sample_dim)] != plan.axis_size)
      throw std::invalid_argument(fmt::format(
          "op '{}': tensor '{}' declares sample_dim {}, but its dims [{}] do not hold the sample "
          "axis '{}' ({}) there; fix the tensor's sample_dim", op.name, t.name, t.sample_dim,
          fmt::join(t.dims, ", "), op.sample_axis, plan.axis_size));
  }
  const auto all_indices = [&] {
    plan.indices.resize(static_cast<std::size_t>(std::max<std::int64_t>(plan.axis_size, 0)));
    for (std::int64_t i = 0; i < plan.axis_size; ++i) plan.indices[static_cast<std::size_t>(i)] = i;
  };
  if (op.sample_axis.empty()) {
    all_indices();
    plan.note = "full: the op has no sample axis";
    return plan;
  }
  // An op whose positional oracle reads every input whole computes its unaligned outputs over the
  // whole axis itself (Op::unaligned_from_whole_inputs): they need not make the case full.
  const bool whole_inputs = op.unaligned_from_whole_inputs;
  if (whole_inputs) {
    bool aligned_output = false;
    for (const auto& t : specs) {
      if (t.sample_dim < 0) continue;
      if (t.is_output) aligned_output = true;
      else
        throw std::invalid_argument(fmt::format(
            "op '{}': it sets unaligned_from_whole_inputs, but its input '{}' has sample_dim {} (it would reach "
            "the oracle sampled); make the input's sample_dim -1 or unset the flag",
            op.name, t.name, t.sample_dim));
    }
    if (!aligned_output)
      throw std::invalid_argument(fmt::format(
          "op '{}': it sets unaligned_from_whole_inputs, but none of its outputs has a sample_dim: nothing would be "
          "sampled; give the output that runs along '{}' its sample_dim or unset the flag",
          op.name, op.sample_axis));
  }
  std::vector<std::string> unaligned;  // outputs the device oracle gives whole
  std::vector<std::string> from_whole_inputs;  // outputs the host oracle gives whole
  for (const auto& t : specs) {
    if (!t.is_output || t.sample_dim >= 0) continue;
    if (whole_inputs) {
      from_whole_inputs.push_back("'" + t.name + "'");
      continue;
    }
    if (op.device_unaligned_oracle && device_oracle_usable) {
      unaligned.push_back("'" + t.name + "'");
      continue;
    }
    all_indices();
    plan.note = fmt::format("full: output '{}' is not aligned with the sample axis '{}'", t.name, op.sample_axis);
    return plan;
  }
  // The cost of verifying one index: the largest aligned tensor's slab (the oracle reads the
  // inputs' slabs too: a per-row loss over a [rows, vocab] input costs vocab per row).
  std::int64_t per_index = 1;
  for (const auto& t : specs)
    if (t.sample_dim >= 0) per_index = std::max(per_index, t.numel() / std::max<std::int64_t>(plan.axis_size, 1));
  plan.indices = rows_to_verify(plan.axis_size, per_index, seed);
  plan.block_starts = sampled_block_starts(plan.axis_size, per_index, seed);
  plan.sampled = static_cast<std::int64_t>(plan.indices.size()) < plan.axis_size;
  plan.note = plan.sampled ? fmt::format("sampled {} of {} along {}: {} blocks of {} drawn from the seed, the "
                                         "first and last among them",
                                         plan.indices.size(), plan.axis_size, op.sample_axis,
                                         plan.block_starts.size(), kSampleBlockRows)
                           : "full";
  plan.unaligned_on_device = plan.sampled && !unaligned.empty();
  if (plan.sampled && !from_whole_inputs.empty())
    plan.note += fmt::format("; {} (not aligned with {}) whole, from the whole inputs",
                             fmt::join(from_whole_inputs, ", "), op.sample_axis);
  if (plan.unaligned_on_device)
    plan.note += fmt::format("; {} (not aligned with {}) from the fp64 device oracle over every index",
                             fmt::join(unaligned, ", "), op.sample_axis);
  return plan;
}

void run_sampled_oracle(const Op& op, const Shape& shape, const SamplePlan& plan,
                        const std::vector<HostTensor>& inputs, std::vector<HostTensor>& expected,
                        const DeviceOracleArgs* device) {
  Shape sub = shape;
  if (plan.sampled)
    for (auto& [name, value] : sub.axes)
      if (name == op.sample_axis) value = static_cast<std::int64_t>(plan.indices.size());
  if (op.positional_oracle)
    op.positional_oracle(sub, plan.indices, inputs, expected);
  else
    op.oracle(sub, inputs, expected);
  if (!plan.unaligned_on_device) return;
  if (!device)
    throw std::logic_error(fmt::format("op '{}': the sample plan takes its unaligned outputs from the device, but no "
                                       "device tensors were given",
                                       op.name));
  op.device_unaligned_oracle(*device, expected);
}

void run_full_oracle(const Op& op, const Shape& shape, const std::vector<HostTensor>& inputs,
                     std::vector<HostTensor>& expected) {
  if (op.oracle) {
    op.oracle(shape, inputs, expected);
    return;
  }
  std::vector<std::int64_t> indices(static_cast<std::size_t>(op.sample_axis.empty() ? 1 : shape.at(op.sample_axis)));
  for (std::size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<std::int64_t>(i);
  op.positional_oracle(shape, indices, inputs, expected);
}

std::vector<SlabCopy> slab_copies(const std::vector<std::int64_t>& dims, int sample_dim,
                                  const std::vector<std::int64_t>& indices, std::size_t elem_bytes) {
  const auto k = static_cast<std::size_t>(sample_dim);
  std::int64_t outer = 1, inner = static_cast<std::int64_t>(elem_bytes);
  for (std::size_t d = 0; d < k; ++d) outer *= dims[d];
  for (std::size_t d = k + 1; d < dims.size(); ++d) inner *= dims[d];
  const std::int64_t src_pitch = dims[k] * inner;
  const std::int64_t dst_pitch = static_cast<std::int64_t>(indices.size()) * inner;
  std::vector<SlabCopy> copies;
  std::size_t i = 0;
  while (i < indices.size()) {
    std::size_t j = i + 1;
    while (j < indices.size() && indices[j] == indices[j - 1] + 1) ++j;
    copies.push_back({indices[i] * inner, src_pitch, static_cast<std::int64_t>(i) * inner, dst_pitch,
                      static_cast<std::int64_t>(j - i) * inner, outer});
    i = j;
  }
  return copies;
}

}  // namespace kwb
