// rmsnorm_bwd: the gradients of y = x * rstd * w (rstd = rsqrt(mean(x^2) + eps), per row) for a
// cotangent dy:
//   xhat = x * rstd,  g = w * dy
//   dx      = rstd * (g - xhat * mean_c(g * xhat))           per row
//   dweight = sum over rows of dy * xhat                      fp32, a reduction over every row
// rstd is recomputed from x (no saved statistics), so every input is an independent random
// tensor and the finite-difference test applies directly.
//
// Napkin math: x and dy are read once, dx written once, weight read once and dweight (fp32)
// written once: bytes = 3 * rows * cols * sizeof(dtype) + cols * (sizeof(dtype) + 4), which
// tensor_bytes() counts from the tensor list. FLOPs per element: x^2 + acc (2), g = w*dy (1),
// g*x + acc (2), dx (3: xhat*m, subtract, * rstd), dweight dy*x*rstd + acc (3) = 11.
//
// dweight sums over the rows (sample_dim -1). Where a device may serve the oracles, it comes from
// the fp64 device oracle over every row (reference/norm_weight_grad_fp64_gpu.hpp) and a large
// case samples its dx rows; elsewhere the case is verified in full on the CPU: the default shapes
// stay at or under 2^27 elements per tensor, and the oracle splits the rows over threads (each
// with its own dweight partial, summed in a fixed order).
#include <algorithm>
#include <cmath>
#include <thread>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/rmsnorm.hpp"
#include "reference/norm_grad_sources.hpp"
#include "reference/rmsnorm_layernorm_grad_bound.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

Shape rmsnorm_bwd_shape(std::int64_t rows, std::int64_t cols) {
  return Shape{{{"rows", rows}, {"cols", cols}}};
}

std::vector<Shape> rmsnorm_bwd_default_shapes() {
  std::vector<Shape> shapes;
  for (std::int64_t cols : {512, 1024, 2048, 4096, 4100, 8192}) shapes.push_back(rmsnorm_bwd_shape(16384, cols));
  shapes.push_back(rmsnorm_bwd_shape(4096, 16384));  // widest hidden size, 2^26 elements
  shapes.push_back(rmsnorm_bwd_shape(4096, 5124));   // 5120 + 4: not a multiple of 16 bytes
  shapes.push_back(rmsnorm_bwd_shape(65536, 1024));  // many short rows: the dweight partials matter
  shapes.push_back(rmsnorm_bwd_shape(1024, 4096));   // under one wave of the GPU
  return shapes;
}

// 16385 is one past the fused kernel's reach for odd bf16/fp16 rows (1024 threads x 16 scalars).
std::vector<Shape> rmsnorm_bwd_edge_shapes() {
  std::vector<Shape> shapes;
  // cols = 1 and 2: dx = r g (1 - xhat^2) (cols = 1) is a cancellation of terms of size r |g|,
  // with r up to 1/sqrt(eps) = 1000 as x -> 0, so fp32 leaves a residue of its roundings of the
  // terms (and of rsqrtf's 2 ulp): dx's error bound scales with the terms (norm_grad_bound).
  // 5000 x 1 holds the rows with x near 0 (|x| < 0.01 in ~40 of them) where every variant's
  // residue is largest.
  for (std::int64_t rows : {1, 7, 300})
    for (std::int64_t cols : {1, 2, 17, 33, 512, 1000, 4100, 16384}) shapes.push_back(rmsnorm_bwd_shape(rows, cols));
  shapes.push_back(rmsnorm_bwd_shape(5000, 1));
  shapes.push_back(rmsnorm_bwd_shape(5, 16385));
  shapes.push_back(rmsnorm_bwd_shape(1031, 66));  // a prime count of rows over many blocks
  return shapes;
}

std::vector<TensorSpec> rmsnorm_bwd_tensors(const Shape& s, DType dtype) {
  const auto [rows, cols] = RowsCols::of(s);
  const ElemType out = elem_type_of(dtype);
  // Error bounds from the terms' magnitudes (reference/rmsnorm_layernorm_grad_bound.hpp). The
  // eager baseline rounds g = w dy to the case dtype before its row sums (PyTorch's
  // MulBackward in the storage dtype), so dx's bound carries R at the dtype's unit roundoff.
  const Tolerance dx_tol = fp32_error_bound(out, /*rounds_to_storage=*/true, out);
  const Tolerance dw_tol = fp32_row_sum_error_bound();
  return {
      {.name = "x", .dims = {rows, cols}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "weight", .dims = {cols}, .init = Distribution::uniform(0.5, 1.5)},
      {.name = "dy", .dims = {rows, cols}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "dx", .dims = {rows, cols}, .is_output = true, .sample_dim = 0, .tolerance = dx_tol},
      {.name = "dweight",
       .dims = {cols},
       .is_output = true,
       .sample_dim = -1,
       .elem = ElemType::fp32,
       .tolerance = dw_tol},
  };
}

// Rows [begin, end): dx and its magnitudes in place, their dweight terms and magnitudes added
// to `dw`, `dw_abs` and `dw_sq` (cols long each).
void rmsnorm_bwd_rows(std::int64_t begin, std::int64_t end, std::int64_t cols, const double* x, const double* w,
                      const double* dy, HostTensor* dx, double* dw, double* dw_abs, double* dw_sq) {
  const double n = static_cast<double>(cols);
  for (std::int64_t r = begin; r < end; ++r) {
    const double* xr = x + r * cols;
    const double* dyr = dy + r * cols;
    double sum_sq = 0, sum_gx = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      sum_sq += xr[c] * xr[c];
      sum_gx += w[c] * dyr[c] * xr[c];
    }
    const double rstd = 1.0 / std::sqrt(sum_sq / n + kRmsNormEps);
    const double mean_gxhat = sum_gx * rstd / n;  // mean_c(g * xhat)
    const auto m = norm_grad_bound::row_magnitudes(xr, w, dyr, cols, 0.0, rstd, /*centred=*/false);
    for (std::int64_t c = 0; c < cols; ++c) {
      const double xhat = xr[c] * rstd;
      const std::size_t i = static_cast<std::size_t>(r * cols + c);
      dx->values[i] = rstd * (w[c] * dyr[c] - xhat * mean_gxhat);
      const auto mag = norm_grad_bound::dx_magnitude(m, xr[c], w[c], dyr[c], cols);
      dx->abs_sum[i] = mag.abs_sum;
      dx->root_sum_sq[i] = mag.root_sum_sq;
      dw[c] += dyr[c] * xhat;
      norm_grad_bound::add_dweight_terms(m, xr[c], dyr[c], cols, dw_abs[c], dw_sq[c]);
    }
  }
}

// One chunk of rows' dweight sums and their bound's magnitudes.
struct DweightSums {
  explicit DweightSums(std::int64_t cols) : sum(cols), abs_sum(cols), sum_sq(cols) {}
  std::vector<double> sum, abs_sum, sum_sq;
};

void rmsnorm_bwd_oracle(const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto [rows, cols] = RowsCols::of(shape);
  const double* x = in[0].values.data();
  const double* w = in[1].values.data();
  const double* dy = in[2].values.data();
  HostTensor* dx = &out[0];
  HostTensor& dweight = out[1];
  for (HostTensor& o : out) {
    o.abs_sum.assign(o.values.size(), 0.0);
    o.root_sum_sq.assign(o.values.size(), 0.0);
  }

  // Threads over row chunks for big cases (~1M elements per chunk at least).
  const std::int64_t by_size = std::max<std::int64_t>(1, rows * cols / (1 << 20));
  const std::int64_t hw = std::max<unsigned>(1, std::thread::hardware_concurrency());
  const std::int64_t chunks = std::min({by_size, hw, rows});
  std::vector<DweightSums> partial(static_cast<std::size_t>(chunks), DweightSums(cols));
  std::vector<std::thread> pool;
  const std::int64_t per = (rows + chunks - 1) / chunks;
  for (std::int64_t k = 0; k < chunks; ++k) {
    const std::int64_t begin = k * per, end = std::min(rows, begin + per);
    DweightSums& p = partial[static_cast<std::size_t>(k)];
    if (chunks == 1) {
      rmsnorm_bwd_rows(begin, end, cols, x, w, dy, dx, p.sum.data(), p.abs_sum.data(), p.sum_sq.data());
    } else {
      pool.emplace_back(rmsnorm_bwd_rows, begin, end, cols, x, w, dy, dx, p.sum.data(), p.abs_sum.data(),
                        p.sum_sq.data());
    }
  }
  for (auto& t : pool) t.join();
  std::fill(dweight.values.begin(), dweight.values.end(), 0.0);
  for (const auto& p : partial)  // fixed order: the same bits whatever the thread count's timing
    for (std::int64_t c = 0; c < cols; ++c) {
      const auto i = static_cast<std::size_t>(c);
      dweight.values[i] += p.sum[i];
      dweight.abs_sum[i] += p.abs_sum[i];
      dweight.root_sum_sq[i] += p.sum_sq[i];  // summed squares: the root is taken below
    }
  for (double& v : dweight.root_sum_sq) v = std::sqrt(v);
}

// dweight over every row, on the device, with its bound's magnitudes as the host oracle gives them.
void rmsnorm_bwd_device_dweight(const DeviceOracleArgs& a, std::vector<HostTensor>& expected) {
  ref::fill_norm_grads_on_device(a, ref::rmsnorm_bwd_grad_sources(a.shape), expected);
}

KWB_REGISTER_OP(Op{
    .name = "rmsnorm_bwd",
    .description = "RMSNorm backward: xhat = x * rsqrt(mean(x^2) + 1e-6) per row; "
                   "dx = rstd * (w*dy - xhat * mean(w*dy*xhat)), dweight (fp32) = sum over rows of dy * xhat",
    .axes = {{"rows", 16384, {}, "independent rows (tokens); dweight sums over them"},
             {"cols", 4096, {}, "hidden size, reduced over per row"}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = rmsnorm_bwd_tensors,
    .work =
        [](const Shape& s, DType dtype) {
          const double rows = static_cast<double>(s.at("rows"));
          const double cols = static_cast<double>(s.at("cols"));
          return WorkModel{tensor_bytes(rmsnorm_bwd_tensors(s, dtype), dtype), 11 * rows * cols};
        },
    .oracle = rmsnorm_bwd_oracle,
    .device_unaligned_oracle = rmsnorm_bwd_device_dweight,
    .sample_axis = "rows",
    .compute_unit = "fp32",
    .default_shapes = rmsnorm_bwd_default_shapes(),
    .edge_shapes = rmsnorm_bwd_edge_shapes(),
    .invalid =
        [](const Shape& s) -> std::optional<std::string> {
          if (s.at("rows") < 1 || s.at("cols") < 1) return "rows and cols must be at least 1";
          if (s.at("cols") > 2147483647) return "cols above 2^31-1 do not fit the kernels' int column index";
          return std::nullopt;
        },
});

}  // namespace
}  // namespace kwb
