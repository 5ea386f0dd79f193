// The host loop over the norm weight gradients' formulas (reference/norm_weight_grad_fp64.hpp).
#include "reference/norm_weight_grad_fp64.hpp"

namespace kwb::ref {

NormWeightGrads norm_weight_grads_fp64_host(const double* x, const double* dy, std::int64_t rows,
                                            std::int64_t cols, NormStats kind, double eps) {
  std::vector<NormRowStats> stats(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r)
    stats[static_cast<std::size_t>(r)] =
        norm_row_stats([&](std::int64_t c) { return x[r * cols + c]; }, cols, kind, eps);
  const auto at = [cols](const double* m) {
    return [m, cols](std::int64_t r, std::int64_t c) { return m[r * cols + c]; };
  };
  NormWeightGrads g;
  for (std::int64_t c = 0; c < cols; ++c) {
    append_column(g, norm_column_sums(at(x), at(dy), stats.data(), 0, rows, cols, c));
  }
  return g;
}

}  // namespace kwb::ref
