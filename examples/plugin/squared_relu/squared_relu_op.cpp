// squared_relu_fwd: the op's contract, its work model and its fp64 oracle.
//
// Napkin math: x read once, y written once: bytes = 2 * rows * cols * sizeof(dtype) (counted by
// tensor_bytes from the tensor list). FLOPs per element: the max and one multiply = 2. Memory
// bound everywhere: the roof is the copy ceiling.
#include "squared_relu/squared_relu.hpp"

#include <algorithm>

#include "reference/rows_cols_op.hpp"

namespace kwb_example {

using namespace kwb;

// N(0, 1) inputs: half of them negative (y = 0 there, which a variant must still write: the
// output is poisoned before each check), the rest spanning a few units.
std::vector<TensorSpec> squared_relu_tensors(const Shape& s, DType) {
  const auto [rows, cols] = RowsCols::of(s);
  return {
      {.name = "x", .dims = {rows, cols}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "y", .dims = {rows, cols}, .is_output = true, .sample_dim = 0},  // the default tolerance table
  };
}

namespace {

// In fp64 on the inputs as the device holds them: exact up to the one rounding of the output.
void squared_relu_oracle(const Shape&, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto& x = in[0].values;
  auto& y = out[0].values;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r = std::max(x[i], 0.0);
    y[i] = r * r;
  }
}

KWB_REGISTER_OP(Op{
    .name = "squared_relu_fwd",
    .description = "squared ReLU: y = max(x, 0)^2, element by element (an example plugin's op)",
    .axes = {{"rows", 16384, {}, "independent rows (tokens)"}, {"cols", 4096, {}, "row length (hidden size)"}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = squared_relu_tensors,
    .work = rows_cols_work(squared_relu_tensors, 2),
    .oracle = squared_relu_oracle,
    .sample_axis = "rows",
    .compute_unit = "fp32",
    .default_shapes = {rows_cols_shape(16384, 4096), rows_cols_shape(8192, 14336)},
    .edge_shapes = {rows_cols_shape(1, 1), rows_cols_shape(7, 33), rows_cols_shape(3, 4101)},
    .invalid = invalid_rows_cols,
});

}  // namespace
}  // namespace kwb_example
