// rmsnorm_fwd: y = x / sqrt(mean(x^2) + eps) * weight, row by row.
//
// Napkin math: each row reads x once and writes y once; weight is read once for the whole
// tensor (it stays in L2 across rows). bytes = (2 * rows * cols + cols) * sizeof(dtype), which
// tensor_bytes() counts from the tensor list, each tensor at its own element size.
// FLOPs per element: square + accumulate, scale by 1/rms, scale by weight = 4; the per-row
// rsqrt is negligible. At about 0.5-1 FLOP per byte the op is deep in memory-bound land.
#include <cmath>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/rmsnorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

std::vector<Shape> rmsnorm_smoke_shapes() {
  std::vector<Shape> shapes;
  for (std::int64_t cols : {512, 1024, 2048, 4096, 4100, 8192, 16384})
    shapes.push_back(rows_cols_shape(16384, cols));
  shapes.push_back(rows_cols_shape(1024, 4096));   // few rows: under one wave of the GPU
  shapes.push_back(rows_cols_shape(65536, 4096));  // many rows
  shapes.push_back(rows_cols_shape(4096, 5120));
  return shapes;
}

std::vector<Shape> rmsnorm_edge_shapes() {
  std::vector<Shape> shapes;
  for (std::int64_t rows : {1, 7, 300})
    for (std::int64_t cols : {1, 33, 512, 1000, 4100, 16384}) shapes.push_back(rows_cols_shape(rows, cols));
  return shapes;
}

// y = x * rstd * w carries relative errors only (fp32_error_bound, A and R from the oracle):
//   A = |y| (sqrt(K) + 3): rstd from a sum of K positive terms (relative error ~ sqrt(K) u32)
//       and rsqrtf's 2 ulp, then two products;
//   R = |w| stored_magnitude(x rstd): the eager baseline stores t = x * rstd in the case dtype
//       before the weight (as PyTorch's t.to(dtype) * weight): one rounding, at the store's half
//       share (scale 2 u_out).
std::vector<TensorSpec> rmsnorm_tensors(const Shape& s, DType dtype) {
  const auto [rows, cols] = RowsCols::of(s);
  const ElemType out = elem_type_of(dtype);
  Tolerance y_tol = fp32_error_bound(out);
  if (out != ElemType::fp32) y_tol.root_sum_sq_scale = 2 * unit_roundoff(out);
  return {
      {.name = "x", .dims = {rows, cols}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "weight", .dims = {cols}, .init = Distribution::uniform(0.5, 1.5)},
      {.name = "y", .dims = {rows, cols}, .is_output = true, .sample_dim = 0, .tolerance = y_tol},
  };
}

void rmsnorm_oracle(const Shape& shape, const std::vector<HostTensor>& in,
                    std::vector<HostTensor>& out) {
  const auto [rows, cols] = RowsCols::of(shape);
  const auto& x = in[0].values;
  const auto& w = in[1].values;
  auto& y = out[0].values;
  out[0].abs_sum.resize(y.size());
  out[0].root_sum_sq.resize(y.size());
  const double sqrt_k = std::sqrt(static_cast<double>(cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* xr = x.data() + r * cols;
    double sum_sq = 0;
    for (std::int64_t c = 0; c < cols; ++c) sum_sq += xr[c] * xr[c];
    const double inv_rms = 1.0 / std::sqrt(sum_sq / static_cast<double>(cols) + kRmsNormEps);
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r * cols + c);
      y[i] = xr[c] * inv_rms * w[c];
      out[0].abs_sum[i] = std::fabs(y[i]) * (sqrt_k + 3);
      out[0].root_sum_sq[i] = std::fabs(w[c]) * stored_magnitude(xr[c] * inv_rms);
    }
  }
}

KWB_REGISTER_OP(Op{
    .name = "rmsnorm_fwd",
    .description = "RMSNorm forward: y = x * rsqrt(mean(x^2) + 1e-6) * weight, per row",
    .axes = {{"rows", 16384, {}, "independent rows (tokens)"},
             {"cols", 4096, {}, "hidden size, reduced over"}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = rmsnorm_tensors,
    .work = rows_cols_work(rmsnorm_tensors, 4),
    .oracle = rmsnorm_oracle,
    .sample_axis = "rows",
    .compute_unit = "fp32",
    .default_shapes = rmsnorm_smoke_shapes(),
    .edge_shapes = rmsnorm_edge_shapes(),
    .invalid = invalid_rows_cols,
});

}  // namespace
}  // namespace kwb
