// The eager steps both mean-pooling baselines launch (sentence-transformers' code and its autograd
// backward): the mask expanded to [b, s, d] in the dtype, sums over the sequence dim, and the
// clamped token count, each one launch of kernels/common/eager_ops.cuh.
#pragma once

#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/mean_pooling.hpp"

namespace kwb {
namespace step {
struct expand_mask_to_dtype;
struct mask_sum_over_seq;
struct clamp_count_min_1;
}  // namespace step

namespace pooling {

// mask.unsqueeze(-1).expand(b, s, d).to(dtype): the [b, s, d] tensor of 0 and 1, materialised.
template <class T>
void expand_mask(const bool* mask, T* mask_e, const PoolingAxes& p, cudaStream_t stream) {
  const std::int64_t hidden = p.hidden;
  eager_map<step::expand_mask_to_dtype>(p.batch * p.seq * hidden, stream, [=] __device__(std::int64_t i) {
    mask_e[i] = from_float<T>(mask[i / hidden] ? 1.0f : 0.0f);
  });
}

// out[b, c] = sum_s in[b, s, c], fp32 accumulation, stored in T: PyTorch's reduction over a middle
// dim (adjacent threads take adjacent c, so each step over s is one coalesced row).
template <class Step, class T>
void sum_over_seq(const T* in, T* out, const PoolingAxes& p, cudaStream_t stream) {
  const std::int64_t seq = p.seq, hidden = p.hidden;
  eager_map<Step>(p.batch * hidden, stream, [=] __device__(std::int64_t i) {
    const std::int64_t b = i / hidden, c = i - b * hidden;
    float sum = 0;
    for (std::int64_t s = 0; s < seq; ++s) sum += to_float(in[(b * seq + s) * hidden + c]);
    out[i] = from_float<T>(sum);
  });
}

// count = clamp(mask_e.sum(1), min=1) in T: two launches. clamp(min=1) in place of the library's
// 1e-9, which fp16 rounds to 0 (an empty sequence would give 0 / 0).
template <class T>
void clamped_count(const T* mask_e, T* count, const PoolingAxes& p, cudaStream_t stream) {
  sum_over_seq<step::mask_sum_over_seq>(mask_e, count, p, stream);
  eager_map<step::clamp_count_min_1>(p.batch * p.hidden, stream, [=] __device__(std::int64_t i) {
    count[i] = from_float<T>(fmaxf(to_float(count[i]), 1.0f));
  });
}

}  // namespace pooling
}  // namespace kwb
