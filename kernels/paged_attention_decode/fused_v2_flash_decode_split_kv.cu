// paged_attention_decode fused_v2_flash_decode_split_kv: flash-decoding. fused_v1's kernel with
// each sequence's keys cut into splits of whole 64-key tiles, so that about blocks_per_sm blocks
// per SM run whatever the batch (the split count comes from the GPU's SM count, once per case);
// each split writes its normalised O and log2-sum-exp in fp32, and a second kernel merges them per
// output row, weighing split s by 2^(lse_s - max lse). Splits past a short sequence's end exit at
// once and the combine skips them.
//
// Napkin math (b8 ctx16384 h32/8 d128 bf16): 537 MB of K and V; 64 (sequence, kv head) pairs, so
// 5 splits of 3328 keys bring 320 blocks (2.4 per SM) where fused_v1 has 64; the partials add
// 4 (d + 1) bytes per split and output row, 1.3 MB written and read here: 0.5% of the traffic.
#include "kernels/paged_attention_decode/flash_decode_launch.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = paged_decode::kOp,
    .name = "fused_v2_flash_decode_split_kv",
    .role = Role::fused,
    .description = "flash-decoding: fused_v1's kernel over key splits sized to the GPU's SMs, partial O and "
                   "lse in fp32, a combine kernel weighing the splits",
    .launch = by_dtype_of<DType::fp16, DType::bf16>(
        []<class T>(const LaunchArgs& a) { flash_decode::launch<T>(a); }),
    .refuse = flash_decode::refuse,
    .workspace_bytes = flash_decode::split_workspace_bytes,
    .tunables = {{"blocks_per_sm", {2, 1, 4}, "blocks per SM the split count aims at"},
                 {"stages", {3, 2, 4}, "64-key K/V tiles in flight in the cp.async ring"}},
    .prepare = [](const LaunchArgs& a) { return flash_decode::prepare(a, true); },
});

}  // namespace
}  // namespace kwb
