// linear_bias_relu fused_v3_mma_sync_cp_async (bf16, fp16) and fused_v3_mma_sync_tf32_cp_async
// (fp32 on the tensor cores in tf32): v2's tiling moved onto the tensor cores, with bias + ReLU
// applied to the fp32 accumulators in the epilogue. The mainloop is kernels/common/mma_gemm.cuh.
//
// What changes from v2: mma.sync (m16n8k16 bf16/fp16, m16n8k8 tf32) instead of FMAs (16x the
// math per instruction issue); fragments through ldmatrix from padded, bank-conflict-free shared
// rows; a cp.async ring of `stages` K tiles (stages - 1 in flight) so global loads overlap the
// MMAs without holding registers; 128 x 128 block tiles of 8 warps (64 x 32 each: 16 MMAs per
// 8 ldmatrix.x4 per K step of 16); block tiles grouped 8 tile rows at a time for L2 reuse.
// Edges: zero-filled copies past m, n, k; k not a multiple of 8 (bf16/fp16) or 4 (fp32) makes
// rows unaligned for 16-byte copies and falls back to element-wise gathers (slow, correct).
//
// Napkin math (bf16, 8192^3, tile 1, 3 stages): 1.1 TFLOP; smem 3 x 256 x 80 B = 60 KB per
// block, 3 blocks (24 warps) per SM. Per K step of 32 a block moves 16 KB for 1 MFLOP of MMA:
// 64 FLOP per shared byte. mma.sync tops out near ~60-70% of the H100's dense bf16 peak (wgmma is
// the rest: v4): expect ~350-500 TFLOP/s, ~2.2-3 ms, 45-65% of cuBLASLt. tf32: ~150-200 TFLOP/s.
// Variant names split by dtype because tf32 changes the accuracy contract of the fp32 case.
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/common/mma_gemm.cuh"
#include "kernels/linear_bias_relu/bias_relu.cuh"

namespace kwb {
namespace {

template <class T>
void launch(const LaunchArgs& a) {
  const LinearArgs<T> l = linear_args<T>(a);
  launch_mma_gemm_tuned<T>(a.tunable("tile"), a.tunable("stages"), l.x, l.w, l.m, l.n, l.k,
                           BiasReluEpilogue<T>{l.b, l.y, l.n}, a.stream);
}

std::vector<Tunable> tunables() {
  return {{"tile", {1, 2, 3}, kMmaTileHelp},
          {"stages", {3, 4}, "K tiles in the cp.async ring (stages - 1 in flight); 4 falls back to 3 where "
                             "the ring would exceed 227 KB"}};
}

KWB_REGISTER_VARIANT(Variant{
    .op = "linear_bias_relu",
    .name = "fused_v3_mma_sync_cp_async",
    .role = Role::fused,
    .description = "v3: mma.sync m16n8k16 (bf16/fp16, fp32 accumulate), ldmatrix, cp.async ring, "
                   "bias + ReLU in the epilogue",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = [](const Shape&, DType dtype) -> std::optional<std::string> {
      if (dtype == DType::fp32) return "fp32 runs on the tensor cores in tf32: see fused_v3_mma_sync_tf32_cp_async";
      return std::nullopt;
    },
    .tunables = tunables(),
});

KWB_REGISTER_VARIANT(Variant{
    .op = "linear_bias_relu",
    .name = "fused_v3_mma_sync_tf32_cp_async",
    .role = Role::fused,
    .description = "v3 for fp32: mma.sync m16n8k8 tf32 (operands rounded to tf32, fp32 accumulate), cp.async "
                   "ring, bias + ReLU in the epilogue",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = [](const Shape&, DType dtype) -> std::optional<std::string> {
      if (dtype != DType::fp32) return "the tf32 variant runs fp32 cases only: see fused_v3_mma_sync_cp_async";
      return std::nullopt;
    },
    .tunables = tunables(),
});

}  // namespace
}  // namespace kwb
