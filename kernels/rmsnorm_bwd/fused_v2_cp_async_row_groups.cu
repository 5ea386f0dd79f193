// rmsnorm_bwd fused_v2_cp_async_row_groups: row groups persistent over rows, each keeping
// `stages - 1` rows of x and dy in flight (cp.async into a shared-memory ring) while it reduces
// one; dweight in registers per column, one fp32 partial row per CTA, then a deterministic
// column sum: 2 launches. The kernel, its synchronisation and the napkin math are in
// kernels/common/norm_backward.cuh (shared with layernorm_bwd fused_v4).
// Why over v1: v1's bytes in flight are bounded by registers and drop to zero while a row is
// reduced; here the ring, not registers, holds the loads, and short rows use a warp per row with
// no barrier. Expected (bf16, H100): ~85-90% of copy at 4096-16384 columns (v1 73.9% / 81.0%
// at 4096 / 8192), ~75-80% at 1024 (v1 46.7%).
// Sizes: rows of a multiple of 4 bytes up to 16384 columns; odd bf16/fp16 rows are refused
// (fused_v1_persistent_vec16 runs them).
#include "harness/catalogue/registry.hpp"
#include "kernels/common/norm_backward_launch.cuh"
#include "reference/rmsnorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

namespace nb = norm_backward;

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_bwd",
    .name = "fused_v2_cp_async_row_groups",
    .role = Role::fused,
    .description = "row groups (a warp or more per row) persistent over rows, rows prefetched by cp.async into "
                   "a shared-memory ring, no block-wide barrier per row; dweight from per-CTA partials: 2 launches",
    .launch = [](const LaunchArgs& a) { nb::launch<nb::RmsNormGrad>(a, kRmsNormEps); },
    .refuse = [](const Shape& s, DType dtype) { return nb::refuse<nb::RmsNormGrad>(
                     s, dtype,
                     "cp.async needs rows of a multiple of 4 bytes (not odd cols in fp16/bf16) and cols <= 16384; "
                     "use fused_v1_persistent_vec16"); },
    .workspace_bytes = [](const Shape& s, DType) { return nb::workspace_bytes(RowsCols::of(s), 1); },
    .tunables = nb::tunables(),
    .prepare = nb::prepare<nb::RmsNormGrad>,
});

}  // namespace
}  // namespace kwb
