// How a variant launches flash_fwd_v1.cuh's kernel with its tunables (q_tile, k_tile, stages):
// attention_fwd's fused_v1 on dense sequences, attention_varlen_fwd's on packed ones (the params'
// cu_seqlens set) and block_sparse_attention_fwd's under a block mask (the params' block_mask set),
// one grid of ceil(seq / q_tile) x heads x batch blocks every way.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/registry.hpp"
#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_fwd_v1.cuh"

namespace kwb {
namespace flash {

template <class T, int D, int BM, int BN>
void launch_config(const LaunchArgs& a, const AttentionParams& p, int stages) {
  auto* kernel = &flash_fwd_v1<T, D, BM, BN>;
  // Once per instantiation: allow the largest ring any `stages` asks for (at most 224 KiB) and the
  // longest key-tile list of a block mask (3 KiB).
  static const cudaError_t attribute =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           smem_bytes<D, BM, BN>(kMaxStages) + 3 * kMaxListedTiles);
  cuda_check(attribute, "cudaFuncSetAttribute (flash_fwd_v1 shared memory)");
  int list_bytes = 0;
  if (p.block_mask) {
    if ((p.seq + BN - 1) / BN > kMaxListedTiles)
      throw std::invalid_argument("fused_v1: a block-masked sequence may span at most 1024 key tiles");
    if (p.block % BM != 0 || p.block % BN != 0)
      throw std::invalid_argument("fused_v1: q_tile and k_tile must divide the mask's block");
    list_bytes = tile_list_bytes<BN>(p.seq);
  }
  const dim3 grid(static_cast<unsigned>((p.seq + BM - 1) / BM), static_cast<unsigned>(p.heads),
                  static_cast<unsigned>(p.batch));
  kernel<<<grid, BM / 16 * 32, smem_bytes<D, BM, BN>(stages) + list_bytes, a.stream>>>(
      a.tensor<const T>("q"), a.tensor<const T>("k"), a.tensor<const T>("v"), a.tensor<T>("o"),
      a.tensor<float>("lse"), p, stages);
}

template <class T, int D>
void launch_tiles(const LaunchArgs& a, const AttentionParams& p) {
  const std::int64_t bm = a.tunable("q_tile"), bn = a.tunable("k_tile");
  const int stages = static_cast<int>(a.tunable("stages"));
  if (stages < 2 || stages > kMaxStages) throw std::invalid_argument("fused_v1: stages must be 2 or 3");
  if (bm == 128 && bn == 64) return launch_config<T, D, 128, 64>(a, p, stages);
  if (bm == 128 && bn == 128) return launch_config<T, D, 128, 128>(a, p, stages);
  if (bm == 64 && bn == 64) return launch_config<T, D, 64, 64>(a, p, stages);
  if (bm == 64 && bn == 128) return launch_config<T, D, 64, 128>(a, p, stages);
  throw std::invalid_argument("fused_v1: q_tile and k_tile must be 64 or 128");
}

template <class T>
void launch_flash_fwd_v1(const LaunchArgs& a, const AttentionParams& p) {
  if (p.head_dim == 64) launch_tiles<T, 64>(a, p);
  else launch_tiles<T, 128>(a, p);
}

// The tunables both variants declare.
inline std::vector<Tunable> flash_fwd_v1_tunables() {
  return {{"q_tile", {128, 64}, "query rows per block (16 per warp: 8 or 4 warps)"},
          {"k_tile", {64, 128}, "keys per shared-memory tile"},
          {"stages", {2, 3}, "K/V tiles in flight in the cp.async ring"}};
}

}  // namespace flash
}  // namespace kwb
