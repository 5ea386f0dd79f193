// example_scale_rows_cols: the worked example of docs/adding-an-op.md, a hidden test-only op.
//
//   y[r, c] = x[r, c] * scale[r] * weight[c]
//
// What the op (example_scale_rows_cols.cpp), its two variants
// (kernels/testing/example_scale_rows_cols_*.cu) and its tests share. Its axes are a
// [rows, cols] case, read once with RowsCols (reference/rows_cols_op.hpp); an op with other
// axes declares its own struct here (docs/adding-an-op.md, step 1).
#pragma once

namespace kwb::example_scale_rows_cols {

inline constexpr const char* kOp = "example_scale_rows_cols";

}  // namespace kwb::example_scale_rows_cols
