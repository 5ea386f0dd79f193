// test_colsum (TEST ONLY): an fp32 reduction over the sample axis, the shape of a weight gradient.
//
//   rowsum[r] = sum_c x[r, c]   (fp32, aligned with rows: may be sampled)
//   colsum[c] = sum_r x[r, c]   (fp32, NOT aligned with rows: it needs every row)
//
// Proves that an output not aligned with the sample axis turns sampling off (the case is
// verified in full, and the record says why), that fixed fp32 outputs of a bf16 case are
// stored, decoded and counted at 4 bytes, and that tolerances scale with the reduction length.
#include <cmath>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/rows_cols_op.hpp"
#include "reference/testing/test_ops.hpp"

namespace kwb {
namespace {

std::vector<TensorSpec> colsum_tensors(const Shape& s, DType) {
  const auto [rows, cols] = RowsCols::of(s);
  return {
      {.name = "x", .dims = {rows, cols}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "rowsum", .dims = {rows}, .is_output = true, .sample_dim = 0, .elem = ElemType::fp32,
       .tolerance = reduction_tolerance(ElemType::fp32, cols)},
      {.name = "colsum", .dims = {cols}, .is_output = true, .sample_dim = -1, .elem = ElemType::fp32,
       .tolerance = reduction_tolerance(ElemType::fp32, rows)},
  };
}

void colsum_oracle(const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto [rows, cols] = RowsCols::of(shape);
  const auto& x = in[0].values;
  auto& rowsum = out[0].values;
  auto& colsum = out[1].values;
  std::fill(colsum.begin(), colsum.end(), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    double acc = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      acc += x[r * cols + c];
      colsum[c] += x[r * cols + c];
    }
    rowsum[r] = acc;
  }
}

KWB_REGISTER_OP(Op{
    .name = testing_ops::kColsum,
    .description = "TEST ONLY: fp32 row sums and column sums of x (column sums reduce over rows)",
    .axes = {{"rows", 1024, {}, "rows, summed over by colsum"}, {"cols", 512, {}, "columns"}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = colsum_tensors,
    .work =
        [](const Shape& s, DType dtype) {
          const auto [rows, cols] = RowsCols::of(s);
          return WorkModel{tensor_bytes(colsum_tensors(s, dtype), dtype),
                           2.0 * static_cast<double>(rows) * static_cast<double>(cols)};
        },
    .oracle = colsum_oracle,
    .sample_axis = "rows",
    .invalid = invalid_rows_cols,
    .test_only = true,
});

}  // namespace
}  // namespace kwb
