// paged_attention_decode fused_v3_flash_decode_stream_k: fused_v2's kernel under a stream-K
// schedule. A kv head's key tiles, every sequence's laid end to end, are cut into one run per
// resident block (waves x the GPU's slots / (kv heads x row blocks)), equal within one tile; a
// run that crosses a sequence's end goes on into the next sequence as a new piece, and each piece
// is a split of its sequence, merged by the last of them to finish as fused_v2 merges its splits.
// The plan (split_plan.hpp stream_k_plan) is made once per case from the context lengths read
// back from the device.
//
// Why: fused_v2's splits all have one length, so a ragged batch in one wave ends with its longest
// sequence's splits while the other slots idle. b16 q4 ctx8192 h32/8 (lengths uniform over 2k-8k,
// 358 MB of K and V): 1370 key tiles a kv head for 33 slots is 41.5 a block, but fused_v2's longest
// block carries 53. Stream-K gives every block 41 or 42; the cost is a piece's start (Q and the ring
// refilled) where a run crosses into the next sequence, about one per block. Measured (2026-11-27
// notebook, stream-K section): 146.6 us at that shape, where fused_v2 ran 147.0 in the sample
// before (151.2 in the same call, from a build that has since given it its own kernel again):
// the imbalance cost less than its tile count says. Slower than fused_v2 where fused_v2 balances
// already (longest first over two waves, d64's 512 equal blocks).
#include "kernels/paged_attention_decode/flash_decode_launch.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = paged_decode::kOp,
    .name = "fused_v3_flash_decode_stream_k",
    .role = Role::fused,
    .description = "flash-decoding under a stream-K schedule: each block the same number of key tiles, runs "
                   "crossing sequence ends as new pieces, merged by the last piece to finish in the same launch",
    .launch = by_dtype_of<DType::fp16, DType::bf16>(
        []<class T>(const LaunchArgs& a) { flash_decode::launch<flash_decode::Schedule::stream_k>(a); }),
    .refuse = flash_decode::refuse,
    .workspace_bytes = [](const Shape& s, DType) {
      return flash_decode::stream_k_workspace_bytes(paged_decode::PagedDecodeAxes::of(s));
    },
    .tunables = {{"waves", {1, 2}, "waves of the GPU's resident blocks the key tiles are spread over"},
                 {"stages", {3, 2, 4}, "64-key K/V tiles in flight in the cp.async ring"},
                 flash_decode::kv_l2_hint()},
    .prepare = [](const LaunchArgs& a) { return flash_decode::prepare<flash_decode::Schedule::stream_k>(a); },
});

}  // namespace
}  // namespace kwb
