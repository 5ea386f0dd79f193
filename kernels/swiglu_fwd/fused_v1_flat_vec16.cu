// swiglu_fwd fused_v1_flat_vec16: out = silu(gate) * up in one streaming pass.
//
// The op has no reduction and the tensors are contiguous [rows, cols], so the kernel ignores
// rows entirely and streams three flat arrays (kernels/common/streaming_map.cuh): 16-byte
// loads, 2 packs per tensor per thread per step (64 bytes of loads in flight per thread), a
// grid of one wave of resident blocks striding over the rest, one checked remainder step and a
// scalar tail of n % 8 elements. An odd hidden size (7170) costs nothing: rows are not aligned
// to 16 bytes, but the flat array is.
// Math in fp32 with the fast intrinsics (kernels/swiglu_fwd/swiglu_streaming.cuh): about 10
// instructions per element.
//
// Napkin math, bf16 16384 x 7168: 3 x 235 MB = 705 MB; at an H100's ~3030 GB/s copy ceiling,
// 233 us. Work per byte is tiny (an H100 issues ~59 lane-instructions per element at that rate,
// we need ~15). In bf16 the kernel takes 54 registers, so 4 blocks of 256 threads are resident
// per SM: 1024 threads x 64 bytes = 64 KB of loads in flight per SM, ~4x the ~18 KB that
// Little's law asks (3 TB/s x ~800 ns / 132 SMs). Expected: >= 95% of copy (the goal is the
// torch.compile peer at this shape, to within the noise). Measured: docs/results.md.
//
// Tunables: packs (16-byte packs per tensor per thread per step) and waves (at most that many
// waves of resident blocks; 64 gives every thread a single step, the "one block per chunk"
// shape of Triton's pointwise kernels).
#include "kernels/swiglu_fwd/swiglu_streaming.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(swiglu_streaming_variant<PlainAccess, SwigluForwardMath>(
    "swiglu_fwd", "fused_v1_flat_vec16",
    "one pass over flat arrays: 2x16-byte packs per tensor per thread, one-wave grid-stride grid"));

}  // namespace
}  // namespace kwb
