// mean_pooling_fwd fused_v1_split_seq_vec16: reads only the tokens the mask keeps, once.
//
// Each thread owns a 16-byte pack of columns of one sequence and walks a slice of its tokens,
// skipping a token the mask drops (a whole row: the branch is uniform across the block, and the
// row is never read), adding kept rows into fp32 registers, rows_in_flight rows' loads in flight at
// a time (the next group's mask bytes read meanwhile).
// A batch of a few sequences has too few column packs to fill the GPU, so the tokens are split
// into slices (blocks_per_sm blocks a multiprocessor in all, a tunable); each slice leaves fp32
// partial sums, and a second kernel adds a column's partials in slice order (deterministic: no
// atomics), counts the sequence's real tokens and divides. The partials are batch x slices x
// hidden floats, written and read once: 1.6-12.5% of x's bytes at the default shapes (the most
// where the batch is short and the hidden size small, so slices are many). A hidden size that is
// no multiple of the pack width takes single-element accesses.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/common/vector_pack.cuh"
#include "kernels/mean_pooling_fwd/token_slices.cuh"
#include "reference/mean_pooling.hpp"

namespace kwb {
namespace {

using pooling::kThreads;

// y[b, c] = (sum of the slices' partials, in slice order) / max(n_b, 1); one block per (column
// block, sequence), which counts the sequence's mask itself (seq bytes, from the L2).
template <class T>
__global__ void __launch_bounds__(kThreads)
    combine_slices(const float* __restrict__ partial, const bool* __restrict__ mask, T* __restrict__ y,
                   std::int64_t seq, std::int64_t hidden, int slices) {
  __shared__ float scratch[32];
  const std::int64_t b = blockIdx.y;
  float n = 0;
  for (std::int64_t s = threadIdx.x; s < seq; s += kThreads) n += mask[b * seq + s] ? 1.0f : 0.0f;
  n = block_sum(n, scratch);
  const float inv = 1.0f / fmaxf(n, 1.0f);
  const std::int64_t c = blockIdx.x * std::int64_t{kThreads} + threadIdx.x;
  if (c >= hidden) return;
  float sum = 0;
  for (int p = 0; p < slices; ++p) sum += partial[(b * slices + p) * hidden + c];
  y[b * hidden + c] = from_float<T>(sum * inv);
}

std::int64_t slices_for(const PoolingAxes& p, int pack, int sms, std::int64_t blocks_per_sm) {
  return pooling::slices_for(p, std::int64_t{kThreads} * pack, sms, blocks_per_sm);
}

template <class T, int E, int Rows>
void pool(const LaunchArgs& a, const PoolingAxes& p) {
  const std::int64_t slices =
      slices_for(p, E, std::min(multiprocessor_count(), pooling::kMostMultiprocessors), a.tunable("blocks_per_sm"));
  const std::int64_t rows_per_slice = (p.seq + slices - 1) / slices;
  float* partial = static_cast<float*>(a.workspace);
  const dim3 grid(static_cast<unsigned>((p.hidden + kThreads * E - 1) / (kThreads * E)), static_cast<unsigned>(slices),
                  static_cast<unsigned>(p.batch));
  pooling::pool_slices<T, E, Rows, 1, l2::Hint::kNormal><<<grid, kThreads, 0, a.stream>>>(
      a.tensor<const T>("x"), a.tensor<const bool>("mask"), partial, p.seq, p.hidden, rows_per_slice);
  const dim3 combine(static_cast<unsigned>((p.hidden + kThreads - 1) / kThreads), static_cast<unsigned>(p.batch));
  combine_slices<T><<<combine, kThreads, 0, a.stream>>>(partial, a.tensor<const bool>("mask"), a.tensor<T>("y"),
                                                        p.seq, p.hidden, static_cast<int>(slices));
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  const PoolingAxes p = PoolingAxes::of(a.shape);
  constexpr int kPack = 16 / sizeof(T);
  const bool packed = pooling::pack_for(p.hidden, a.dtype) == kPack;
  if (a.tunable("rows_in_flight") == 16)
    packed ? pool<T, kPack, 16>(a, p) : pool<T, 1, 16>(a, p);
  else
    packed ? pool<T, kPack, 8>(a, p) : pool<T, 1, 8>(a, p);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mean_pooling_fwd",
    .name = "fused_v1_split_seq_vec16",
    .role = Role::fused,
    .description = "reads only kept tokens, 16-byte packs, tokens split into slices to fill the GPU, fp32 "
                   "partials added in order by a second kernel that counts and divides",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = pooling::refuse_batch_beyond_grid,
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const PoolingAxes p = PoolingAxes::of(s);
          return pooling::partial_bytes(p, std::int64_t{kThreads} * pooling::pack_for(p.hidden, dtype));
        },
    .tunables = {{"blocks_per_sm", {std::begin(pooling::kBlocksPerSmValues), std::end(pooling::kBlocksPerSmValues)},
                  "blocks of 128 threads a multiprocessor the token slices aim at"},
                 {"rows_in_flight", {8, 16}, "token rows whose loads a thread has in flight at once"}},
});

}  // namespace
}  // namespace kwb
