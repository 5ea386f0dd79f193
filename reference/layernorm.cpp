// layernorm_fwd and layernorm_bwd: LayerNorm over the last dim, as torch.nn.LayerNorm computes it
// (biased variance, eps = 1e-5), and its gradients for x, weight and bias.
//
//   forward:  mean = mean(x), rstd = 1 / sqrt(mean((x - mean)^2) + eps), xhat = (x - mean) * rstd,
//             y = xhat * weight + bias
//   backward: g = weight * dy
//             dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
//             dweight = sum over rows of dy * xhat,  dbias = sum over rows of dy
//
// The backward recomputes mean and rstd from x instead of taking the forward's saved stats: its
// inputs (x, weight, dy) are then independent random tensors, and the CPU test checks it against
// finite differences of the forward oracle directly. bias does not change any gradient, so the
// backward does not take it.
//
// Napkin math (bytes = each input read once, each output written once, tensor_bytes()):
//   forward  (2 * rows * cols + 2 * cols) * sizeof(dtype)
//   backward (3 * rows * cols + cols) * sizeof(dtype) + 2 * cols * 4   (dweight, dbias in fp32)
// FLOPs per element: forward 7 (mean: add; variance: sub, fma; y: sub, mul, fma), backward 16
// (the forward's statistics 3, xhat 2, g 1, the two row sums 3, dx 4, dweight 2, dbias 1). At
// about one FLOP per byte both are memory-bound by two orders of magnitude.
#include <algorithm>
#include <cmath>
#include <thread>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/layernorm.hpp"
#include "reference/norm_grad_sources.hpp"
#include "reference/rmsnorm_layernorm_grad_bound.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

Shape layernorm_shape(std::int64_t rows, std::int64_t cols) {
  return Shape{{{"rows", rows}, {"cols", cols}}};
}

std::vector<AxisSpec> layernorm_axes() {
  return {{"rows", 16384, {}, "independent rows (tokens)"}, {"cols", 4096, {}, "hidden size, normalised over"}};
}

std::optional<std::string> layernorm_invalid(const Shape& s) {
  if (s.at("rows") < 1 || s.at("cols") < 1) return "rows and cols must be at least 1";
  return std::nullopt;
}

// Realistic hidden sizes at 16K tokens (16384 x 4096 is the F.layer_norm peer's shape), a size
// that is not a multiple of the 16-byte vector (4100, 5124), one wave and many waves of rows.
std::vector<Shape> forward_default_shapes() {
  std::vector<Shape> shapes;
  for (std::int64_t cols : {768, 1024, 2048, 4096, 4100, 8192, 16384}) shapes.push_back(layernorm_shape(16384, cols));
  shapes.push_back(layernorm_shape(1024, 4096));   // under one wave of the GPU
  shapes.push_back(layernorm_shape(65536, 4096));  // many rows
  shapes.push_back(layernorm_shape(4096, 5124));
  return shapes;
}

// Where no device serves the oracles the backward is verified in full (dweight and dbias sum over
// every row), so its shapes stay at or under 128M elements per tensor.
std::vector<Shape> backward_default_shapes() {
  std::vector<Shape> shapes;
  for (std::int64_t cols : {768, 1024, 2048, 4096, 4100, 8192}) shapes.push_back(layernorm_shape(16384, cols));
  shapes.push_back(layernorm_shape(1024, 4096));
  shapes.push_back(layernorm_shape(4096, 16384));
  shapes.push_back(layernorm_shape(4096, 5124));
  return shapes;
}

// Small and odd sizes, and one 16-byte vector past each limit of the fused kernels' registers:
// 8196 (fp32 backward: 2048 vectors), 16392 (fp32 forward: 4096; bf16/fp16 backward: 2048) and
// 32776 (bf16/fp16 forward: 4096), where they switch to their long-row paths.
// cols = 1 and 2 are degenerate for the backward: dx is 0 (cols = 1) or nearly so in real
// arithmetic, a cancellation of terms of size r |g| with r up to 1/sqrt(eps) ~ 316, so what
// fp32 computes is the rounding residue of those terms (the fused kernels' fma of w dy against
// a rounded w dy). dx's error bound scales with the terms (norm_grad_bound), so they are
// checked like any other shape; 5000 x 1 holds thousands of such rows.
std::vector<Shape> layernorm_edge_shapes(bool backward = false) {
  std::vector<Shape> shapes;
  for (std::int64_t rows : {1, 300})
    for (std::int64_t cols : {1, 33, 512, 1000, 4100, 8196}) shapes.push_back(layernorm_shape(rows, cols));
  shapes.push_back(layernorm_shape(300, 2));
  if (backward) shapes.push_back(layernorm_shape(5000, 1));
  // 4099: fp32 rows of exactly 1024 vectors (plus a tail); 8200: one vector past that in bf16/fp16
  // (the longest rows fused_v3_vec16_prefetch_row_groups takes, and the first it refuses).
  for (std::int64_t cols : {1000, 4099, 4100, 8200}) shapes.push_back(layernorm_shape(7, cols));
  for (std::int64_t cols : {16392, 32776}) shapes.push_back(layernorm_shape(3, cols));
  return shapes;
}

// ---- forward -----------------------------------------------------------------------------------

// y = xhat w + b: a sum of two terms that can cancel, so the bound (fp32_error_bound) scales
// with their sizes, from the oracle:
//   A = (sqrt(K) + 3) |xhat w| + sqrt(K) r mean|x| |w| + |b|: rstd's relative error (a sum of
//       K positive terms, rsqrtf's 2 ulp) and the products on the first term; the row mean's
//       error (~ sqrt(K) u32 mean|x|) times r |w|; the sum's rounding;
//   R = |w| stored_magnitude(xhat) + stored_magnitude(xhat w): the eager baseline stores xhat
//       and then xhat w in the case dtype before adding the bias (as PyTorch's
//       xh.to(dtype) * weight + bias): two roundings, at the store's half share (2 u_out).
std::vector<TensorSpec> forward_tensors(const Shape& s, DType dtype) {
  const auto [rows, cols] = RowsCols::of(s);
  const ElemType out = elem_type_of(dtype);
  Tolerance y_tol = fp32_error_bound(out);
  if (out != ElemType::fp32) y_tol.root_sum_sq_scale = 2 * unit_roundoff(out);
  return {
      // A non-zero mean, so that the mean subtraction matters.
      {.name = "x", .dims = {rows, cols}, .sample_dim = 0, .init = Distribution::normal(0.5, 1.0)},
      {.name = "weight", .dims = {cols}, .init = Distribution::uniform(0.5, 1.5)},
      {.name = "bias", .dims = {cols}, .init = Distribution::uniform(-0.5, 0.5)},
      {.name = "y", .dims = {rows, cols}, .is_output = true, .sample_dim = 0, .tolerance = y_tol},
  };
}

// Mean and rstd of one row, two-pass (the squared deviations from the mean, not E[x^2] - E[x]^2).
struct RowStats {
  double mean, rstd;
};
RowStats row_stats(const double* xr, std::int64_t cols) {
  double sum = 0;
  for (std::int64_t c = 0; c < cols; ++c) sum += xr[c];
  const double mean = sum / static_cast<double>(cols);
  double sum_sq = 0;
  for (std::int64_t c = 0; c < cols; ++c) sum_sq += (xr[c] - mean) * (xr[c] - mean);
  return {mean, 1.0 / std::sqrt(sum_sq / static_cast<double>(cols) + kLayerNormEps)};
}

void forward_oracle(const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const std::int64_t rows = shape.at("rows"), cols = shape.at("cols");
  const auto& x = in[0].values;
  const auto& w = in[1].values;
  const auto& b = in[2].values;
  auto& y = out[0].values;
  out[0].abs_sum.resize(y.size());
  out[0].root_sum_sq.resize(y.size());
  const double sqrt_k = std::sqrt(static_cast<double>(cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* xr = x.data() + r * cols;
    const RowStats st = row_stats(xr, cols);
    double mean_abs_x = 0;
    for (std::int64_t c = 0; c < cols; ++c) mean_abs_x += std::fabs(xr[c]);
    mean_abs_x /= static_cast<double>(cols);
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r * cols + c);
      const double xhat_w = (xr[c] - st.mean) * st.rstd * w[c];
      y[i] = xhat_w + b[c];
      out[0].abs_sum[i] =
          (sqrt_k + 3) * std::fabs(xhat_w) + sqrt_k * st.rstd * mean_abs_x * std::fabs(w[c]) + std::fabs(b[c]);
      out[0].root_sum_sq[i] = std::fabs(w[c]) * stored_magnitude((xr[c] - st.mean) * st.rstd) + stored_magnitude(xhat_w);
    }
  }
}

KWB_REGISTER_OP(Op{
    .name = "layernorm_fwd",
    .description = "LayerNorm forward: y = (x - mean) * rsqrt(var + 1e-5) * weight + bias, per row "
                   "(biased variance)",
    .axes = layernorm_axes(),
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = forward_tensors,
    .work =
        [](const Shape& s, DType dtype) {
          const double n = static_cast<double>(s.at("rows")) * static_cast<double>(s.at("cols"));
          return WorkModel{tensor_bytes(forward_tensors(s, dtype), dtype), 7 * n};
        },
    .oracle = forward_oracle,
    .sample_axis = "rows",
    .compute_unit = "fp32",
    .default_shapes = forward_default_shapes(),
    .edge_shapes = layernorm_edge_shapes(),
    .invalid = layernorm_invalid,
});

// ---- backward ----------------------------------------------------------------------------------

// Error bounds from the terms' magnitudes (reference/rmsnorm_layernorm_grad_bound.hpp): dx
// rounded once to the case dtype after fp32 arithmetic (no variant rounds an intermediate to
// it: the eager baseline casts its inputs up and runs the chain in fp32); dweight and dbias
// are fp32 sums over rows.
std::vector<TensorSpec> backward_tensors(const Shape& s, DType dtype) {
  const auto [rows, cols] = RowsCols::of(s);
  const ElemType dx_type = resolve(ElemType::case_dtype, dtype);
  return {
      {.name = "x", .dims = {rows, cols}, .sample_dim = 0, .init = Distribution::normal(0.5, 1.0)},
      {.name = "weight", .dims = {cols}, .init = Distribution::uniform(0.5, 1.5)},
      {.name = "dy", .dims = {rows, cols}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "dx", .dims = {rows, cols}, .is_output = true, .sample_dim = 0,
       .tolerance = fp32_error_bound(dx_type)},
      {.name = "dweight", .dims = {cols}, .is_output = true, .sample_dim = -1, .elem = ElemType::fp32,
       .tolerance = fp32_row_sum_error_bound()},
      {.name = "dbias", .dims = {cols}, .is_output = true, .sample_dim = -1, .elem = ElemType::fp32,
       .tolerance = fp32_row_sum_error_bound(/*per_term_errors=*/false)},  // dy's terms are exact
  };
}

// One chunk of rows' column sums: dweight and dbias, and their bound's magnitudes.
struct ColumnSums {
  explicit ColumnSums(std::int64_t cols) : dw(cols), db(cols), dw_abs(cols), dw_sq(cols), db_abs(cols) {}
  std::vector<double> dw, db, dw_abs, dw_sq, db_abs;
};

// Rows [begin, end): dx and its magnitudes for those rows, and their contribution to dweight and
// dbias added into `sums` (the caller's per-chunk accumulators).
void backward_rows(std::int64_t begin, std::int64_t end, std::int64_t cols, const std::vector<HostTensor>& in,
                   HostTensor& dx, ColumnSums& sums) {
  const auto& x = in[0].values;
  const auto& w = in[1].values;
  const auto& dy = in[2].values;
  for (std::int64_t r = begin; r < end; ++r) {
    const double* xr = x.data() + r * cols;
    const double* dyr = dy.data() + r * cols;
    const RowStats st = row_stats(xr, cols);
    double sum_g = 0, sum_g_xhat = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      const double xhat = (xr[c] - st.mean) * st.rstd, g = w[c] * dyr[c];
      sum_g += g;
      sum_g_xhat += g * xhat;
      sums.dw[c] += dyr[c] * xhat;
      sums.db[c] += dyr[c];
    }
    const double mean_g = sum_g / static_cast<double>(cols), mean_g_xhat = sum_g_xhat / static_cast<double>(cols);
    const auto m = norm_grad_bound::row_magnitudes(xr, w.data(), dyr, cols, st.mean, st.rstd, /*centred=*/true);
    for (std::int64_t c = 0; c < cols; ++c) {
      const double xhat = (xr[c] - st.mean) * st.rstd;
      const std::size_t i = static_cast<std::size_t>(r * cols + c);
      dx.values[i] = st.rstd * (w[c] * dyr[c] - mean_g - xhat * mean_g_xhat);
      const auto mag = norm_grad_bound::dx_magnitude(m, xr[c], w[c], dyr[c], cols);
      dx.abs_sum[i] = mag.abs_sum;
      norm_grad_bound::add_dweight_terms(m, xr[c], dyr[c], cols, sums.dw_abs[c], sums.dw_sq[c]);
      sums.db_abs[c] += std::fabs(dyr[c]);
    }
  }
}

// Verified in full at up to 128M elements where no device serves the oracles, so the rows are split over threads; each chunk keeps
// its own dweight and dbias sums, added in chunk order (the result does not depend on timing).
void backward_oracle(const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const std::int64_t rows = shape.at("rows"), cols = shape.at("cols");
  const std::int64_t max_chunks = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, 16);
  const std::int64_t chunks = std::clamp<std::int64_t>(rows * cols / (1 << 20), 1, std::min(rows, max_chunks));
  const std::int64_t per_chunk = (rows + chunks - 1) / chunks;
  // dx's bound has no R (no variant rounds an intermediate to the case dtype), nor has dbias'.
  for (HostTensor& o : out) o.abs_sum.assign(o.values.size(), 0.0);
  out[1].root_sum_sq.assign(out[1].values.size(), 0.0);
  std::vector<ColumnSums> sums(static_cast<std::size_t>(chunks), ColumnSums(cols));
  std::vector<std::thread> workers;
  for (std::int64_t k = 1; k < chunks; ++k)
    workers.emplace_back([&, k] {
      backward_rows(std::min(rows, k * per_chunk), std::min(rows, (k + 1) * per_chunk), cols, in, out[0], sums[k]);
    });
  backward_rows(0, std::min(rows, per_chunk), cols, in, out[0], sums[0]);
  for (auto& t : workers) t.join();
  for (std::int64_t c = 0; c < cols; ++c) {
    double w_sum = 0, b_sum = 0, w_abs = 0, w_sq = 0, b_abs = 0;
    for (const ColumnSums& k : sums) w_sum += k.dw[c], b_sum += k.db[c], w_abs += k.dw_abs[c], w_sq += k.dw_sq[c],
                                     b_abs += k.db_abs[c];
    out[1].values[c] = w_sum;
    out[1].abs_sum[c] = w_abs;
    out[1].root_sum_sq[c] = std::sqrt(w_sq);
    out[2].values[c] = b_sum;
    out[2].abs_sum[c] = b_abs;  // dbias: exact inputs, so only the sum's roundings
  }
}

// dweight and dbias over every row, on the device, with their bounds' magnitudes as the host oracle
// gives them (where a device may serve the oracles, a large case then samples its dx rows).
void backward_device_column_sums(const DeviceOracleArgs& a, std::vector<HostTensor>& expected) {
  ref::fill_norm_grads_on_device(a, ref::layernorm_bwd_grad_sources(a.shape), expected);
}

KWB_REGISTER_OP(Op{
    .name = "layernorm_bwd",
    .description = "LayerNorm backward: g = weight * dy; dx = rstd * (g - mean(g) - xhat * mean(g * xhat)); "
                   "dweight = sum_rows dy * xhat; dbias = sum_rows dy (fp32); mean, rstd recomputed from x",
    .axes = layernorm_axes(),
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = backward_tensors,
    .work =
        [](const Shape& s, DType dtype) {
          const double n = static_cast<double>(s.at("rows")) * static_cast<double>(s.at("cols"));
          return WorkModel{tensor_bytes(backward_tensors(s, dtype), dtype), 16 * n};
        },
    .oracle = backward_oracle,
    .device_unaligned_oracle = backward_device_column_sums,
    .sample_axis = "rows",
    .compute_unit = "fp32",
    .default_shapes = backward_default_shapes(),
    .edge_shapes = layernorm_edge_shapes(/*backward=*/true),
    .invalid = layernorm_invalid,
});

}  // namespace
}  // namespace kwb
