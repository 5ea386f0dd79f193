// rope_fwd fused_v1_vec16_shared_table: q and k rotated in one launch, one pass over memory.
//
// The eager chain (baseline_eager_16_launches) makes ~16 trips through memory with fp32
// intermediates; this kernel reads each element of q and k once and writes it once, with
// 16-byte accesses to both halves of a head (x[i..i+8) and x[i+D/2..i+D/2+8) in bf16), and
// reads each token's cos and sin rows once into shared memory for all its heads
// (kernels/rope_fwd/rope_rotate.cuh has the layout).
//
// Napkin math at 1 x 8192 x 32 heads (8 kv) x 128, bf16: q and k are 8192 * 40 * 128 * 2 B =
// 80 MiB each way, the tables 2 * 8192 * 64 * 4 B = 4 MiB: 164 MiB, 57 us at the H100's
// ~3000 GB/s copy ceiling. Each block moves ~40 KB of q and k per 1.5 KB of table, with no
// reduction and a single barrier, so it should stream like a copy: expected >= 90% of the copy
// ceiling at the default shapes in bf16, at least torch.compile's figure (TARGETS.md), which
// rotates q alone with bf16 tables. Measured: docs/results.md.
// Evict-first (.cs) loads and stores of q and k were tried and were slower. The item split
// (token, head, chunk) is a multiply-high and a shift (FastDiv) instead of two software divisions.
// Software pipelined (the next items' loads are issued before this round's math and stores):
// Nsight Compute had shown 0.4 eligible warps per scheduler short of the DRAM peak. The Triton
// kernel stays a few percent faster kernel for kernel, and fused_v2_vec16_direct_table (no
// staging) is faster too.
#include "harness/catalogue/registry.hpp"
#include "kernels/rope_fwd/rope_rotate.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = "rope_fwd",
    .name = "fused_v1_vec16_shared_table",
    .role = Role::fused,
    .description = "q and k in one launch, 16-byte loads of both halves, cos/sin rows staged once per token in shared",
    .launch = [](const LaunchArgs& a) { rope::launch_rotate(a, rope::kForwardRotation); },
    .refuse = rope::refuse_rotate,
    .tunables = rope::rotate_tunables(),
});

}  // namespace
}  // namespace kwb
