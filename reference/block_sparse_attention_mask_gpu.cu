#include "reference/block_sparse_attention_mask_gpu.hpp"

#include <cstdint>

#include "harness/catalogue/cuda_check.hpp"
#include "reference/block_sparse_attention.hpp"

namespace kwb::ref {
namespace {

// One thread per mask element of [batch, heads, blocks, blocks].
__global__ void block_mask(std::uint8_t* mask, std::int64_t count, std::int64_t heads, std::int64_t blocks,
                           std::int64_t density, bool causal) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const std::int64_t kb = i % blocks, qb = (i / blocks) % blocks, h = (i / (blocks * blocks)) % heads,
                     b = i / (blocks * blocks * heads);
  mask[i] = block_sparse::block_kept(b, h, qb, kb, heads, blocks, density, causal) ? 1 : 0;
}

}  // namespace

void block_sparse_derive_mask(const LaunchArgs& args) {
  const auto s = block_sparse::BlockSparseAxes::of(args.shape);
  const std::int64_t n = s.blocks(), count = s.attention.batch * s.attention.heads * n * n;
  block_mask<<<static_cast<unsigned>((count + 255) / 256), 256, 0, args.stream>>>(
      args.tensor<std::uint8_t>("block_mask"), count, s.attention.heads, n, s.density, s.attention.causal);
  cuda_check(cudaGetLastError(), "block_sparse_attention_fwd: derive block_mask");
}

}  // namespace kwb::ref
