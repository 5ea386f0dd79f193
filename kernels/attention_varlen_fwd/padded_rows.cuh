// The padded layout of the packed-sequence baselines (attention_varlen_fwd's and
// attention_varlen_bwd's): what an eager framework does with packed sequences, pad each to the
// longest, [b, heads, s, d], and run the dense materialised ops on the padded batch. PaddedIndex
// maps a padded element to the packed row it comes from; pad_heads is one padding copy, an eager
// step of its own (Step names it in the kernel breakdown).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/eager_ops.cuh"

namespace kwb {
namespace varlen_padding {

// Unit i of a padded [b, heads, s, units] copy (a unit: 16 bytes of a head's d values, or one lse
// value): its sequence bb, head hh, token t and unit e, and the packed row it comes from (-1 past
// the sequence's length). The copies move 16 bytes a thread, as torch's pad and index kernels
// copy whole vectors: per 2-byte element the index arithmetic alone would bound them.
struct PaddedIndex {
  const std::int32_t* cu_seqlens;
  std::int64_t s, heads, units;
  __device__ std::int64_t packed_row(std::int64_t i, std::int64_t& hh, std::int64_t& e) const {
    std::int64_t t;
    return packed_row(i, hh, t, e);
  }
  __device__ std::int64_t packed_row(std::int64_t i, std::int64_t& hh, std::int64_t& t, std::int64_t& e) const {
    e = i % units;
    t = (i / units) % s;
    hh = (i / (units * s)) % heads;
    const std::int64_t bb = i / (units * s * heads);
    const std::int64_t start = cu_seqlens[bb];
    return t < cu_seqlens[bb + 1] - start ? start + t : -1;
  }
};

// dst [b, at.heads, s, d] from the packed src [total, src_heads, d] in 16-byte units (at.units per
// head row): padded head hh reads source head hh / group (group 1: a transpose; heads / kv_heads:
// repeat_kv's expansion), zero past each sequence's length. `count` = b * heads * s * units.
template <class Step>
void pad_heads(const PaddedIndex& at, std::int64_t count, const uint4* src, uint4* dst, std::int64_t src_heads,
               std::int64_t group, cudaStream_t stream) {
  const std::int64_t c = at.units;
  eager_map<Step>(count, stream, [=] __device__(std::int64_t i) {
    std::int64_t hh, e;
    const std::int64_t row = at.packed_row(i, hh, e);
    dst[i] = row >= 0 ? src[(row * src_heads + hh / group) * c + e] : make_uint4(0, 0, 0, 0);
  });
}

}  // namespace varlen_padding
}  // namespace kwb
