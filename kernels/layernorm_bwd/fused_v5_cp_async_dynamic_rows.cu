// layernorm_bwd fused_v5_cp_async_dynamic_rows: fused_v4 (the same kernel, norm_backward.cuh)
// with rows handed out by an atomic counter after the first wave instead of statically.
// Why: at 16384 columns one 512-thread group holds an SM (a 64 KB row ring), each takes 31 or 32
// of 4096 rows, and a per-CTA timeline of v4 put the last row of the slowest CTA 19 us after the
// fastest's (~10% of the kernel), while one extra row is ~5 us: the static share leaves SMs idle
// at the end. Taking the next row from a counter, one row ahead, lets fast groups take more.
// Expected (bf16, H100): 4096 x 16384 from 175 us (74% of copy) to ~163 us (~80%); no change
// where a CTA holds many short-row groups (16384 x 4096 and below).
// Measured (H100, bf16, 2026-11-24, % of the DRAM roof, against v4 at its best stages): 4096 x
// 16384 154.7 us, 84.7% (v4 174.1); 16384 x 16384 550.5 us, 95.2% (635.6); 16384 x 8192 276.9 us,
// 94.6% (305.3); 16384 x 4096 144.9 us, 90.4% (158.0); 16384 x 2048 79.7 us, 82.2% (84.7). The
// gain below 16384 columns, where a CTA holds several groups, says the static share was losing
// there too: the column-sum launch took 8 us against v4's 50-100 us of waiting for the last CTA.
// With rows by demand one row ahead (stages 2) is the best ring at every width.
// Price: which rows a CTA sums into its partial column sums depends on timing, so dweight's and
// dbias' last bits vary from run to run (fp32 sums of the same terms in another order; dx is
// bit-identical). v4 stays the deterministic choice.
// Sizes as v4 (rows of a multiple of 4 bytes, up to 16384 columns), and at most 2^30 rows.
#include "harness/catalogue/registry.hpp"
#include "kernels/common/norm_backward_launch.cuh"
#include "reference/layernorm.hpp"

namespace kwb {
namespace {

namespace nb = norm_backward;
constexpr auto kDynamic = nb::Schedule::kDynamic;

KWB_REGISTER_VARIANT(Variant{
    .op = "layernorm_bwd",
    .name = "fused_v5_cp_async_dynamic_rows",
    .role = Role::fused,
    .description = "fused_v4 with rows handed out by an atomic counter after the first wave: groups end "
                   "together; dweight and dbias bits vary from run to run (sum order)",
    .launch = [](const LaunchArgs& a) { nb::launch<nb::LayerNormGrad, kDynamic>(a, kLayerNormEps); },
    .refuse = [](const Shape& s, DType dtype) { return nb::refuse<nb::LayerNormGrad, kDynamic>(
                     s, dtype,
                     "cp.async needs rows of a multiple of 4 bytes (not odd cols in fp16/bf16) and cols <= 16384, fp32 8192; "
                     "use fused_v1_vec16_partials"); },
    .workspace_bytes = [](const Shape& s, DType) {
      return nb::workspace_bytes(RowsCols::of(s), 2, kDynamic);
    },
    .tunables = nb::tunables(kDynamic),
    .prepare = nb::prepare<nb::LayerNormGrad, kDynamic>,
});

}  // namespace
}  // namespace kwb
