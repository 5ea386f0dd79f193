// Which part of each output the verifier compares with the oracle, and how to gather it.
//
// The op names a sample axis (Op::sample_axis) and each tensor the dim that runs along it
// (TensorSpec::sample_dim). At large shapes the verifier checks blocks of indices of that axis,
// gathering the matching slabs of every aligned tensor (strided when the dim is not the
// outermost: [batch, heads, seq, dim] sampled on seq copies `batch * heads` slabs per block).
//
// Rule for outputs not aligned with the axis (sample_dim = -1, e.g. a weight gradient summed
// over every row): such an output depends on every index of the axis, so the oracle must see
// all of them. The case is then verified in full, nothing is sampled, and the record says why;
// unless the op computes those outputs on the device (Op::device_unaligned_oracle) and the
// calling thread may use it: then the aligned outputs are sampled as usual and the unaligned
// ones come, whole, from the device oracle (SamplePlan::unaligned_on_device); or unless the op
// declares that its positional oracle reads every input whole and computes those outputs itself
// (Op::unaligned_from_whole_inputs: linear_cross_entropy samples dW's vocabulary rows so, and
// gives the loss and dh whole).
// The device scan (device_scan.hpp) covers every element of every output either way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/catalogue/registry.hpp"

namespace kwb {

struct SamplePlan {
  bool sampled = false;          // false: every element of every tensor is checked
  std::string axis;              // the op's sample axis, "" when it has none
  std::int64_t axis_size = 1;
  std::vector<std::int64_t> indices;  // sorted indices of the axis to check (all when not sampled)
  std::vector<std::int64_t> block_starts;  // the sampled blocks' first indices (empty: not sampled)
  std::string note;              // VerifyResult::sampling
  // Sampled, and the outputs not aligned with the axis are the device oracle's (whole).
  bool unaligned_on_device = false;

  // Whether verification reads only the sampled slabs of this tensor.
  bool gathers(const TensorSpec& t) const { return sampled && t.sample_dim >= 0; }
  // Elements of the tensor that verification reads.
  std::int64_t elements(const TensorSpec& t) const;
  // Dims of the tensor as the oracle sees it.
  std::vector<std::int64_t> dims(const TensorSpec& t) const;
};

// Throws std::invalid_argument (naming the op and tensor) for a sample_dim out of range or a
// tensor whose size along it is not the axis's, and for an op with unaligned_from_whole_inputs
// that has an aligned input or no aligned output.
// The sampled indices are drawn from `seed` (rows_to_verify). `device_oracle_usable`: whether the
// op's device_unaligned_oracle may run here (oracle_device_usable() on the worker's thread).
SamplePlan plan_sample(const Op& op, const Shape& shape, const std::vector<TensorSpec>& specs, std::uint64_t seed,
                       bool device_oracle_usable = false);

// Runs the op's oracle on what `plan` gathered: the shape with its sample axis shrunk to the
// number of sampled indices, and, for an op with a positional_oracle, those indices themselves.
// `expected` holds one preallocated tensor per output, at the plan's dims.
// When the plan takes the unaligned outputs from the device (unaligned_on_device), the op's
// device_unaligned_oracle then replaces them, from `device` (every tensor as the device holds it).
void run_sampled_oracle(const Op& op, const Shape& shape, const SamplePlan& plan,
                        const std::vector<HostTensor>& inputs, std::vector<HostTensor>& expected,
                        const DeviceOracleArgs* device = nullptr);

// The op's oracle on the whole shape: `oracle`, or `positional_oracle` with every index of the
// sample axis (what the tests and a full verification call).
void run_full_oracle(const Op& op, const Shape& shape, const std::vector<HostTensor>& inputs,
                     std::vector<HostTensor>& expected);

// One strided copy, in bytes: `height` blocks of `width` bytes, the i-th from
// src + src_offset + i * src_pitch to dst + dst_offset + i * dst_pitch (cudaMemcpy2D's form).
struct SlabCopy {
  std::int64_t src_offset = 0, src_pitch = 0;
  std::int64_t dst_offset = 0, dst_pitch = 0;
  std::int64_t width = 0, height = 0;
};

// The copies that gather `indices` (sorted) of dim `sample_dim` of a row-major tensor of
// `dims` into a packed tensor whose dim `sample_dim` has indices.size() entries: one copy per
// run of consecutive indices.
std::vector<SlabCopy> slab_copies(const std::vector<std::int64_t>& dims, int sample_dim,
                                  const std::vector<std::int64_t>& indices, std::size_t elem_bytes);

}  // namespace kwb
