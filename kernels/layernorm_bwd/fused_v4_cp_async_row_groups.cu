// layernorm_bwd fused_v4_cp_async_row_groups: row groups persistent over rows, each keeping
// `stages - 1` rows of x and dy in flight (cp.async into a shared-memory ring) while it reduces
// one (one group reduction of the sums of d = x - x[row][0], d^2, g and g d: the shifted one-pass
// statistics); dweight and dbias in registers per column, one fp32 partial pair per CTA, then a
// deterministic column sum: 2 launches. The kernel, its synchronisation and the napkin math are
// in kernels/common/norm_backward.cuh (shared with rmsnorm_bwd fused_v2).
// Why over v1-v3: their bytes in flight are bounded by registers (v2 refuses 8192+ columns for
// that, v3 16384) and block-wide barriers stall every row of the block; here the ring holds the
// loads, groups never wait for each other, and rows of 768-2048 columns run a warp or a few per
// row. Expected (bf16, H100): ~85-90% of copy at 4096-16384 columns, ~75-80% at 768-2048 (above
// v1-v3 at every width they run). Measured: docs/results.md (two-pass statistics were clearly
// slower than the shifted one-pass sums; v2 stays faster at 16384 x 4096).
// Numerics: the shift x0 lies within the row, so mean(d^2) - mean(d)^2 loses about
// log2((x0 - mean)^2 / var) bits: a few for ordinary rows; a row whose first element sits 100
// standard deviations from its mean loses ~13 of fp32's 24 (still 3 more than bf16 carries).
// Sizes: rows of a multiple of 4 bytes up to 16384 columns; odd bf16/fp16 rows (4099) and wider
// rows are refused (fused_v1_vec16_partials runs them).
#include "harness/catalogue/registry.hpp"
#include "kernels/common/norm_backward_launch.cuh"
#include "reference/layernorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

namespace nb = norm_backward;

KWB_REGISTER_VARIANT(Variant{
    .op = "layernorm_bwd",
    .name = "fused_v4_cp_async_row_groups",
    .role = Role::fused,
    .description = "row groups (a warp or more per row) persistent over rows, rows prefetched by cp.async into "
                   "a shared-memory ring, no block-wide barrier per row; dweight, dbias from per-CTA partials",
    .launch = [](const LaunchArgs& a) { nb::launch<nb::LayerNormGrad>(a, kLayerNormEps); },
    .refuse = [](const Shape& s, DType dtype) { return nb::refuse<nb::LayerNormGrad>(
                     s, dtype,
                     "cp.async needs rows of a multiple of 4 bytes (not odd cols in fp16/bf16) and cols <= 16384, fp32 8192; "
                     "use fused_v1_vec16_partials"); },
    .workspace_bytes = [](const Shape& s, DType) { return nb::workspace_bytes(RowsCols::of(s), 2); },
    .tunables = nb::tunables(),
    .prepare = nb::prepare<nb::LayerNormGrad>,
});

}  // namespace
}  // namespace kwb
