// block_sparse_attention_fwd fused_v2_wgmma_tma_block_sparse: attention_fwd's FlashAttention-3-style
// kernel (flash_fwd_v2.cuh: a TMA producer warpgroup, two wgmma consumer warpgroups in ping-pong)
// over the kept blocks only. Before the roles part, all 384 threads list the key tiles the block's
// mask row keeps (block_mask_tiles.cuh); the producer then copies only those tiles into the ring
// and the consumers run their GEMMs and softmax over the same list, so a dropped block costs
// neither its copies nor its MMAs. A row block that keeps nothing writes O = 0 and lse = -inf.
//
// Why: fused_v1's block-sparse kernel (mma.sync) holds ~95% of its own dense throughput per kept
// block, but that is ~180 TFLOP/s, where FlexAttention reaches ~320 at density 50 (measured
// 2026-11-27); this kernel's dense form runs ~340-390. Napkin math (b4 s4096 h32/8 d128 causal,
// density 50): 2.8e11 FLOPs of kept pairs at ~330 TFLOP/s, ~0.84 ms. The query tile is 128 rows:
// blocks must be multiples of 128 (FlexAttention's default block is 128).
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_fwd_v2_launch.cuh"
#include "kernels/block_sparse_attention_fwd/block_sparse_params.cuh"
#include "reference/block_sparse_attention.hpp"

namespace kwb {
namespace {

using block_sparse::BlockSparseAxes;

std::optional<std::string> refuse(const Shape& shape, DType) {
  const auto s = BlockSparseAxes::of(shape);
  if (s.block % 128 != 0) return "its query tile is 128 rows: block must be a multiple of 128";
  if (s.attention.seq > 64 * flash::kMaxListedTiles) return "the key-tile list lives in shared memory: seq must be at most 65536";
  if (s.attention.seq > (std::int64_t{1} << 31) - 256) return "seq must fit a 32-bit TMA coordinate";
  return std::nullopt;
}

KWB_REGISTER_VARIANT(Variant{
    .op = block_sparse::kOp,
    .name = "fused_v2_wgmma_tma_block_sparse",
    .role = Role::fused,
    .description = "attention_fwd's FlashAttention-3-style kernel (TMA producer, wgmma consumers in ping-pong) over "
                   "the kept blocks only: the producer copies, and the consumers compute, just the listed key tiles",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) {
      flash::launch_flash_fwd_v2<T>(a, block_sparse::params_of(a));
    }),
    .refuse = refuse,
    .tunables = flash::flash_fwd_v2_tunables(),
    .prepare = [](const LaunchArgs& a) { return flash::prepare_flash_fwd_v2(a, block_sparse::params_of(a)); },
});

}  // namespace
}  // namespace kwb
