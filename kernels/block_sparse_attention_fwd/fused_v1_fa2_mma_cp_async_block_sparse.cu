// block_sparse_attention_fwd fused_v1_fa2_mma_cp_async_block_sparse: attention_fwd's
// FlashAttention-2 kernel (flash_fwd_v1.cuh) visiting only the key tiles of kept blocks. Each block
// (one query tile, inside one query block of the mask) first reads its row of the block mask, flags
// its key tiles in shared memory and lists the kept ones with warp ballots; the cp.async ring and
// the loop then run over that list instead of every tile in the causal range, so a dropped block
// costs neither its loads nor its GEMMs. A row block that keeps nothing writes O = 0 and lse = -inf
// (the online softmax's sum stays 0). A query tile lies in one query block: q_tile defaults to 128
// where the block is a multiple of 128, else 64; a q_tile or k_tile that does not divide the block
// is skipped with that reason.
//
// Napkin math (b4 s4096 h32/8 d128 causal, density 50, bf16): 2.8e11 FLOPs of kept pairs; at
// attention_fwd fused_v1's ~210 TFLOP/s on dense causal shapes, ~1.3 ms. What is lost to sparsity:
// the mask row (32 bytes) and the list (a ballot round per 32 key tiles) per block, and fewer
// tiles per block to hide the ring's fill behind: near 1 - 1 / tiles of dense throughput.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_fwd_v1_launch.cuh"
#include "kernels/block_sparse_attention_fwd/block_sparse_params.cuh"
#include "reference/block_sparse_attention.hpp"

namespace kwb {
namespace {

using block_sparse::BlockSparseAxes;

// flash_fwd_v1's tunables, as a block mask takes them: a query tile lies in one query block and a
// key tile in one key block, so q_tile and k_tile must divide the block (a case asking otherwise is
// skipped with that reason), and q_tile defaults to 128 where it divides the block, else 64.
std::vector<Tunable> tunables() {
  std::vector<Tunable> t = flash::flash_fwd_v1_tunables();
  for (Tunable& tunable : t) {
    if (tunable.name != "q_tile" && tunable.name != "k_tile") continue;
    tunable.refuse_value = [name = tunable.name](const Shape& shape, DType, std::int64_t value)
        -> std::optional<std::string> {
      const std::int64_t block = BlockSparseAxes::of(shape).block;
      if (block % value == 0) return std::nullopt;
      return name + " " + std::to_string(value) + " does not divide the mask's block of " + std::to_string(block);
    };
    if (tunable.name == "q_tile") {
      tunable.shape_default = [](const Shape& shape, DType) -> std::int64_t {
        return BlockSparseAxes::of(shape).block % 128 == 0 ? 128 : 64;
      };
      tunable.default_rule = "128 where it divides the block, else 64";
    }
  }
  return t;
}

std::optional<std::string> refuse(const Shape& shape, DType) {
  if (BlockSparseAxes::of(shape).attention.seq > 64 * flash::kMaxListedTiles)
    return "the key-tile list lives in shared memory: seq must be at most 65536";
  return std::nullopt;
}

KWB_REGISTER_VARIANT(Variant{
    .op = block_sparse::kOp,
    .name = "fused_v1_fa2_mma_cp_async_block_sparse",
    .role = Role::fused,
    .description = "attention_fwd's FlashAttention-2 kernel over the kept blocks only: each block lists the key "
                   "tiles its mask row keeps (ballots in shared memory), then streams just those",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) {
      flash::launch_flash_fwd_v1<T>(a, block_sparse::params_of(a));
    }),
    .refuse = refuse,
    .tunables = tunables(),
});

}  // namespace
}  // namespace kwb
