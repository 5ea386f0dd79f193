// paged_attention_decode fused_v1_flash_decode_one_split: flash_decode.cuh's kernel with one block
// per (sequence, kv head, 16 query rows) walking all of the sequence's keys: no split, no combine.
// Q in registers, K and V rows gathered from their pages by cp.async into a swizzled ring, the
// warps dividing each 64-key tile, mma.sync for both products, the four warps merged at the end.
//
// Napkin math (b32 ctx4096 h32/8 d128 bf16): 537 MB of K and V, 256 blocks of 2 MB each, two
// resident per SM (100 KiB of ring at 3 stages): one wave on an H100's 132 SMs with 8 SMs idle,
// ~170 us at 3.2 TB/s if each SM's two blocks keep ~100 KB in flight. Where batch * kv_heads is
// small (b8: 64 blocks) most SMs idle and the bandwidth falls with them: fused_v2's splits.
// Past 16 query rows a kv head (speculative decoding's q_len times the group) two row tiles share
// a block and its ring of K and V.
#include "kernels/paged_attention_decode/flash_decode_launch.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = paged_decode::kOp,
    .name = "fused_v1_flash_decode_one_split",
    .role = Role::fused,
    .description = "one block per (sequence, kv head, up to 32 query rows): K/V rows gathered from pages by cp.async, warps dividing "
                   "each 64-key tile, mma.sync, per-warp online softmax merged at the end",
    .launch = by_dtype_of<DType::fp16, DType::bf16>(
        []<class T>(const LaunchArgs& a) { flash_decode::launch<flash_decode::Schedule::one_split>(a); }),
    .refuse = flash_decode::refuse,
    .workspace_bytes = [](const Shape& s, DType) {
      return flash_decode::decode_workspace_bytes(paged_decode::PagedDecodeAxes::of(s), false);
    },
    .tunables = {{"stages", {3, 2, 4}, "64-key K/V tiles in flight in the cp.async ring"},
                 flash_decode::kv_l2_hint()},
    .prepare = [](const LaunchArgs& a) { return flash_decode::prepare<flash_decode::Schedule::one_split>(a); },
});

}  // namespace
}  // namespace kwb
