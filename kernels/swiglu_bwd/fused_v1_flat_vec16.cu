// swiglu_bwd fused_v1_flat_vec16: dgate and dup in one streaming pass (3 reads, 2 writes).
//
// Like swiglu_fwd's v1: the tensors are contiguous [rows, cols], so the kernel streams five
// flat arrays (kernels/common/streaming_map.cuh): 16-byte accesses, 2 packs per tensor per
// thread per step (96 bytes of loads in flight per thread), one wave of resident blocks
// striding over the rest, one checked remainder step and a scalar tail. sigmoid(gate) is
// recomputed from gate (never saved), in fp32 with __expf and the exact reciprocal __frcp_rn
// (kernels/swiglu_fwd/swiglu_streaming.cuh):
//   sig = 1 / (1 + exp(-gate)); dup = dout * gate * sig;
//   dgate = dout * up * sig * (1 + gate * (1 - sig))
// Eager PyTorch needs 4 launches for the same (see baseline_eager_4_launches), two of which
// write an intermediate (silu(gate), dout * up) that a later one reads back: 9 tensor passes.
//
// Napkin math, bf16 16384 x 7168: 5 x 235 MB = 1.17 GB; at an H100's ~3030 GB/s copy ceiling,
// 388 us. ~25 instructions per element against the ~99 an H100 can issue per element at that
// rate. In bf16 the kernel takes 70 registers, so 3 blocks of 256 threads are resident per SM:
// 768 threads x 96 bytes = 72 KB of loads in flight per SM, ~4x what Little's law asks.
// Reads and writes mix 3:2, close to a copy's 1:1, so the copy ceiling is the right roof.
// Expected: >= 90% of copy (95% would match the forward).
#include "kernels/swiglu_fwd/swiglu_streaming.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(swiglu_streaming_variant<PlainAccess, SwigluBackwardMath>(
    "swiglu_bwd", "fused_v1_flat_vec16",
    "one pass over flat arrays (3 reads, 2 writes): 2x16-byte packs per tensor per thread, "
    "one-wave grid-stride grid"));

}  // namespace
}  // namespace kwb
