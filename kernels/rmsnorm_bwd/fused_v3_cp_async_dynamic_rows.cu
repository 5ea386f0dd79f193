// rmsnorm_bwd fused_v3_cp_async_dynamic_rows: fused_v2 (the same kernel, norm_backward.cuh) with
// rows handed out by an atomic counter after the first wave instead of statically, as
// layernorm_bwd fused_v5. Why: a static share leaves the fast groups idle while the slowest
// finish theirs; taking the next row from a counter, one row ahead, lets fast groups take more.
// Expected (bf16, H100): v2 is at ~85-87% of copy at 4096-16384 columns; layernorm_bwd's same
// change gained about a tenth at 16384 rows, so ~93-95% here. Measured: docs/results.md.
// Price: which rows a CTA sums into its partial column sums depends on timing, so dweight's last
// bits vary from run to run (dx is bit-identical); v2 stays the deterministic choice.
// Sizes as v2 (rows of a multiple of 4 bytes, up to 16384 columns), and at most 2^30 rows.
#include "harness/catalogue/registry.hpp"
#include "kernels/common/norm_backward_launch.cuh"
#include "reference/rmsnorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

namespace nb = norm_backward;
constexpr auto kDynamic = nb::Schedule::kDynamic;

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_bwd",
    .name = "fused_v3_cp_async_dynamic_rows",
    .role = Role::fused,
    .description = "fused_v2 with rows handed out by an atomic counter after the first wave: groups end "
                   "together; dweight bits vary from run to run (sum order)",
    .launch = [](const LaunchArgs& a) { nb::launch<nb::RmsNormGrad, kDynamic>(a, kRmsNormEps); },
    .refuse = [](const Shape& s, DType dtype) { return nb::refuse<nb::RmsNormGrad, kDynamic>(
                     s, dtype,
                     "cp.async needs rows of a multiple of 4 bytes (not odd cols in fp16/bf16) and cols <= 16384; "
                     "use fused_v1_persistent_vec16"); },
    .workspace_bytes = [](const Shape& s, DType) {
      return nb::workspace_bytes(RowsCols::of(s), 1, kDynamic);
    },
    .varies_run_to_run = true,
    .tunables = nb::tunables(kDynamic),
    .prepare = nb::prepare<nb::RmsNormGrad, kDynamic>,
});

}  // namespace
}  // namespace kwb
