// softmax_fwd: y[r, c] = exp(x[r, c] - max_r) / sum_c' exp(x[r, c'] - max_r), row by row.
//
// Napkin math: each row reads x once and writes y once, so bytes = 2 * rows * cols *
// sizeof(dtype) (tensor_bytes() counts it from the tensor list). FLOPs per element: compare
// for the max, subtract, exp, accumulate, scale by 1/sum = 5 (an exp counted as one). At
// about 1 FLOP per byte in bf16 the op is memory-bound; the roof is the copy ceiling.
//
// Inputs are N(0, 2) logits: a row of 256K such values spans about +-10, so exp(x - max)
// ranges over ~9 decades, as real logits do, without under- or overflowing anything.
#include <cmath>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/rows_cols_op.hpp"
#include "reference/softmax.hpp"

namespace kwb {
namespace {

// Tensors of 64 MiB .. 1 GiB in bf16 (twice that in fp32, at most 1 GiB + 1 GiB).
std::vector<Shape> softmax_default_shapes() {
  return {
      rows_cols_shape(32768, 1024),    // short rows: many small blocks
      rows_cols_shape(16384, 4096),    // the peers' shape (TARGETS.md)
      rows_cols_shape(16384, 4100),    // not a multiple of the 16-byte vector
      rows_cols_shape(8192, 16384),    // attention-score-sized rows
      rows_cols_shape(8192, 32000),    // Llama-2 vocabulary (fp32: past one block's registers)
      rows_cols_shape(4096, 32768),    // the longest bf16 row one block keeps in registers
      rows_cols_shape(2048, 128256),   // Llama-3 vocabulary
      rows_cols_shape(2048, 131072),
      rows_cols_shape(1024, kSoftmaxLongestRow),  // 256K vocabulary
  };
}

// Small and odd rows, and rows one past each per-warp, per-block or per-cluster limit of the
// kernels (1025 and 2049: a warp's registers in fp32 and bf16/fp16; 16385 and 32769: a
// block's; 131073: an fp32 cluster's; 262147: past 256K and no multiple of any vector width).
std::vector<Shape> softmax_edge_shapes() {
  std::vector<Shape> shapes;
  for (std::int64_t rows : {1, 7})
    for (std::int64_t cols : {1, 7, 33, 1000, 4100}) shapes.push_back(rows_cols_shape(rows, cols));
  shapes.push_back(rows_cols_shape(7, 1025));
  shapes.push_back(rows_cols_shape(7, 2049));
  shapes.push_back(rows_cols_shape(33, 16385));
  shapes.push_back(rows_cols_shape(5, 32769));
  shapes.push_back(rows_cols_shape(3, 131073));
  shapes.push_back(rows_cols_shape(2, kSoftmaxLongestRow + 3));
  return shapes;
}

// Every element of y = e_i / S (e_i = exp(x_i - max), S = sum_k e_k) carries relative errors
// only, all terms being positive; the bound (fp32_error_bound: 2 u_out |y| + c u32 A) takes
// them from the element's own magnitudes, A_i = y_i (sqrt(K) + |x_i - max| + sum_k y_k |x_k - max| + 2):
//   - sqrt(K): the normaliser, a sum of K positive terms in fp32 (and the online softmax's
//     rescalings of its partial sums as the max moves), whose relative error grows like sqrt(K);
//   - |x_i - max|: exp's argument rounded in fp32 (x - max, then times log2 e for ex2.approx), an
//     absolute error ~1.5 u32 |x - max| in the exponent, relative in e_i;
//   - sum_k y_k |x_k - max|: the same error in each of S's terms, weighted by its share of S;
//   - 2: ex2.approx's (or expf's) 2 ulp = 4 u32 and the reciprocal or division by S.
// atol covers what the output format cannot hold relatively (fp16 subnormals below 2^-14;
// ex2.approx.ftz flushing exp below 2^-126 in fp32 and bf16), never the typical output 1/cols
// of a long row.
std::vector<TensorSpec> softmax_tensors(const Shape& s, DType dtype) {
  const auto [rows, cols] = RowsCols::of(s);
  return {
      {.name = "x", .dims = {rows, cols}, .sample_dim = 0, .init = Distribution::normal(0.0, 2.0)},
      {.name = "y",
       .dims = {rows, cols},
       .is_output = true,
       .sample_dim = 0,
       .tolerance = fp32_error_bound(resolve(ElemType::case_dtype, dtype))},
  };
}

// In fp64 with the max subtracted first, so logits of any size (1e4, -1e300) neither
// overflow nor lose the row: exp(x - max) is in (0, 1] and the sum in [1, cols]. The bound's
// magnitudes (softmax_tensors) come from the same pass.
void softmax_oracle(const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto [rows, cols] = RowsCols::of(shape);
  const auto& x = in[0].values;
  auto& y = out[0].values;
  auto& magnitude = out[0].abs_sum;
  magnitude.assign(y.size(), 0.0);
  const double sqrt_k = std::sqrt(static_cast<double>(cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* xr = x.data() + r * cols;
    double* yr = y.data() + r * cols;
    double max = xr[0];
    for (std::int64_t c = 1; c < cols; ++c) max = std::max(max, xr[c]);
    double sum = 0, weighted_distance = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      yr[c] = std::exp(xr[c] - max);
      sum += yr[c];
      weighted_distance += yr[c] * (max - xr[c]);
    }
    weighted_distance /= sum;
    for (std::int64_t c = 0; c < cols; ++c) {
      yr[c] /= sum;
      magnitude[r * cols + c] = yr[c] * (sqrt_k + (max - xr[c]) + weighted_distance + 2);
    }
  }
}

KWB_REGISTER_OP(Op{
    .name = "softmax_fwd",
    .description = "softmax over the last dim: y = exp(x - max(x)) / sum(exp(x - max(x))), per row",
    .axes = {{"rows", 16384, {}, "independent rows (tokens, or attention rows)"},
             {"cols", 4096, {}, "row length (vocabulary, key length), reduced over"}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = softmax_tensors,
    .work = rows_cols_work(softmax_tensors, 5),
    .oracle = softmax_oracle,
    .sample_axis = "rows",
    .compute_unit = "fp32",
    .default_shapes = softmax_default_shapes(),
    .edge_shapes = softmax_edge_shapes(),
    .invalid = invalid_rows_cols,
});

}  // namespace
}  // namespace kwb
