// layernorm_bwd fused_v5_cp_async_dynamic_rows: fused_v4 (the same kernel, norm_backward.cuh)
// with rows handed out by an atomic counter after the first wave instead of statically.
// Why: at 16384 columns one 512-thread group holds an SM (a 64 KB row ring), each takes 31 or 32
// of 4096 rows, and a per-CTA timeline of v4 put the last row of the slowest CTA about two rows
// after the fastest's (~10% of the kernel): the static share leaves SMs idle at the end. Taking
// the next row from a counter, one row ahead, lets fast groups take more.
// Expected (bf16, H100): 4096 x 16384 from ~74% of copy to ~80%; no change where a CTA holds
// many short-row groups (16384 x 4096 and below). Measured: docs/results.md. It gained below
// 16384 columns too, where a CTA holds several groups (the static share was losing there as
// well), and with rows by demand one row ahead (stages 2) is the best ring at every width.
// Price: which rows a CTA sums into its partial column sums depends on timing, so dweight's and
// dbias' last bits vary from run to run (fp32 sums of the same terms in another order; dx is
// bit-identical). v4 stays the deterministic choice.
// Sizes as v4 (rows of a multiple of 4 bytes, up to 16384 columns), and at most 2^30 rows.
#include "harness/catalogue/registry.hpp"
#include "kernels/common/norm_backward_launch.cuh"
#include "reference/layernorm.hpp"
#include "reference/rows_cols_op.hpp"

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
    .varies_run_to_run = true,
    .tunables = nb::tunables(kDynamic),
    .prepare = nb::prepare<nb::LayerNormGrad, kDynamic>,
});

}  // namespace
}  // namespace kwb
