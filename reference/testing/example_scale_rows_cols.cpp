// example_scale_rows_cols (TEST ONLY): the contract and fp64 oracle of docs/adding-an-op.md's
// worked example. Each row of x is scaled by its own scale and each column by its own weight:
//
//   y[r, c] = x[r, c] * scale[r] * weight[c]
//
// Napkin math: x read once, y written once, scale and weight read once each:
// bytes = (2 * rows * cols + rows + cols) * sizeof(dtype), which tensor_bytes() counts from the
// tensor list. FLOPs: two multiplies per element. About 0.5 FLOP per byte in bf16: memory-bound.
#include "reference/testing/example_scale_rows_cols.hpp"

#include "harness/catalogue/registry.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

// The tensors in the order the oracle receives them; variants look them up by name.
// x, scale and y run along rows (sample_dim 0), so verification may check a sample of rows;
// weight belongs to every row (-1) and is handed to the oracle whole.
std::vector<TensorSpec> example_tensors(const Shape& s, DType) {
  const auto [rows, cols] = RowsCols::of(s);
  return {
      {.name = "x", .dims = {rows, cols}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "scale", .dims = {rows}, .sample_dim = 0, .init = Distribution::uniform(0.5, 2.0)},
      {.name = "weight", .dims = {cols}, .init = Distribution::uniform(0.5, 1.5)},
      // No .tolerance: the default table of the dtype allows the baseline's two roundings.
      {.name = "y", .dims = {rows, cols}, .is_output = true, .sample_dim = 0},
  };
}

// in: the inputs in the order of the tensor list (x, scale, weight), as the device holds them,
// in fp64; out: the outputs (y), preallocated. On a sampled case `shape` holds only the sampled
// rows and the row-aligned inputs only their slabs: the oracle does not need to know.
void example_oracle(const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto [rows, cols] = RowsCols::of(shape);
  const auto& x = in[0].values;
  const auto& scale = in[1].values;
  const auto& weight = in[2].values;
  auto& y = out[0].values;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) y[r * cols + c] = x[r * cols + c] * scale[r] * weight[c];
}

KWB_REGISTER_OP(Op{
    .name = example_scale_rows_cols::kOp,
    .description = "TEST ONLY: docs/adding-an-op.md's worked example: y[r, c] = x[r, c] * scale[r] * weight[c]",
    .axes = {{"rows", 16384, {}, "independent rows, each with its own scale"},
             {"cols", 4096, {}, "columns, each with its own weight"}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = example_tensors,
    .work = rows_cols_work(example_tensors, 2),
    .oracle = example_oracle,
    .sample_axis = "rows",
    .compute_unit = "fp32",
    // x alone is 128 MiB in bf16, beyond the 50 MiB L2; 1024 rows (8 MiB a tensor) fit in it.
    .default_shapes = {rows_cols_shape(16384, 4096), rows_cols_shape(1024, 4096)},
    // Edges: one row, one column, widths that no block size divides, and more rows than the
    // fused variant's grid (its blocks then loop over rows).
    .edge_shapes = {rows_cols_shape(1, 1), rows_cols_shape(1, 4100), rows_cols_shape(7, 33),
                    rows_cols_shape(300, 1000), rows_cols_shape(65537, 3)},
    .invalid = invalid_rows_cols,
    .test_only = true,
});

}  // namespace
}  // namespace kwb
