// paged_attention_decode fused_v2_flash_decode_split_kv: flash-decoding. fused_v1's kernel with
// each sequence's keys cut into splits of whole 64-key tiles, as many as fill `waves` waves of the
// GPU's resident blocks without a partial one (from the SM count and the kernel's occupancy, once
// per case; only the blocks that hold keys count, so ragged batches split finer); each split
// writes its normalised O and log2-sum-exp in fp32, and the last split of each (sequence, kv head,
// row block) to finish (an arrival counter in the workspace) merges them per output row in the
// same launch,
// weighing split s by 2^(lse_s - max lse). Splits past a short sequence's end exit at once and
// are not waited for.
//
// Napkin math (b8 ctx16384 h32/8 d128 bf16): 537 MB of K and V; 64 (sequence, kv head) pairs
// against 264 resident blocks on an H100 (2 per SM at 3 stages), so 4 splits of 4096 keys make
// 256 blocks, one wave, where fused_v1 has 64 (a quarter of the SMs' slots); the partials add
// 4 (d + 1) bytes per split and output row, 1 MB written and read here: 0.2% of the traffic.
#include "kernels/paged_attention_decode/flash_decode_launch.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = paged_decode::kOp,
    .name = "fused_v2_flash_decode_split_kv",
    .role = Role::fused,
    .description = "flash-decoding: fused_v1's kernel over key splits sized to the GPU's SMs, partial O and "
                   "lse in fp32, merged by the last split to finish in the same launch",
    .launch = by_dtype_of<DType::fp16, DType::bf16>(
        []<class T>(const LaunchArgs& a) { flash_decode::launch<flash_decode::Schedule::split_kv>(a); }),
    .refuse = flash_decode::refuse,
    .workspace_bytes = [](const Shape& s, DType) {
      return flash_decode::decode_workspace_bytes(paged_decode::PagedDecodeAxes::of(s), true);
    },
    .tunables = {{"waves", {1, 2}, "waves of the GPU's resident blocks the splits fill (none partial)"},
                 {"stages", {3, 2, 4}, "64-key K/V tiles in flight in the cp.async ring"},
                 flash_decode::kv_l2_hint()},
    .prepare = [](const LaunchArgs& a) { return flash_decode::prepare<flash_decode::Schedule::split_kv>(a); },
});

}  // namespace
}  // namespace kwb
