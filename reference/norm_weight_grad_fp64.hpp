// The weight (and bias) gradients of the row normalisations in fp64, from the whole inputs: the
// outputs of rmsnorm_bwd, layernorm_bwd and qk_norm_bwd that sum over every row, so that a large
// case can sample its dx rows and still check these in full (Op::device_unaligned_oracle).
//
// One formula per element, written once for both sides: the GPU kernels
// (reference/norm_weight_grad_fp64_gpu.cu: one thread per row for the statistics, one thread per
// column and chunk of rows for the sums, the chunks added in order) and a host loop
// (norm_weight_grads_fp64_host) that the CPU tests compare with the ops' own oracles, which stay
// the ground truth. The three ops differ only in their row statistics:
//   rms_mean (rmsnorm_bwd):  rstd = 1 / sqrt(sum x^2 / cols + eps)
//   rms_sum  (qk_norm_bwd):  rstd = 1 / sqrt(sum x^2 + eps)            (per head vector)
//   centred  (layernorm_bwd): mean = sum x / cols, rstd = 1 / sqrt(sum (x - mean)^2 / cols + eps)
// Per column c, over rows r (xhat = (x - mean) rstd):
//   dweight_c = sum dy xhat    A = sum |dy| (|xhat| + rstd mean|x|),  R^2 = sum cols (that term)^2
//   dbias_c   = sum dy         A = sum |dy|
// the magnitudes of reference/rmsnorm_layernorm_grad_bound.hpp (mean|x| only when centred).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#if defined(__CUDACC__)
#define KWB_NORM_GRAD_HD __host__ __device__
#else
#define KWB_NORM_GRAD_HD
#endif

namespace kwb::ref {

enum class NormStats { rms_mean, rms_sum, centred };

struct NormRowStats {
  double mean = 0, rstd = 0, mean_abs_x = 0;  // mean and mean_abs_x stay 0 unless centred
};

// One row's statistics; `x(c)` reads element c of the row as a double.
template <class Load>
KWB_NORM_GRAD_HD NormRowStats norm_row_stats(Load x, std::int64_t cols, NormStats kind,
                                             double eps) {
  const double n = static_cast<double>(cols);
  NormRowStats s;
  if (kind == NormStats::centred) {
    double sum = 0, sum_abs = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      sum += x(c);
      sum_abs += fabs(x(c));
    }
    s.mean = sum / n;
    s.mean_abs_x = sum_abs / n;
  }
  double sum_sq = 0;
  for (std::int64_t c = 0; c < cols; ++c) sum_sq += (x(c) - s.mean) * (x(c) - s.mean);
  s.rstd = 1.0 / sqrt((kind == NormStats::rms_sum ? sum_sq : sum_sq / n) + eps);
  return s;
}

// The sums of one column, with their bound's magnitudes (dweight_sq: the sum of squares, the root
// taken by the caller).
struct NormColumnSums {
  double dweight = 0, dweight_abs = 0, dweight_sq = 0, dbias = 0, dbias_abs = 0;
};

// Column c over rows [begin, end), in row order; `x(r, c)` and `dy(r, c)` read elements as doubles.
template <class LoadX, class LoadDy>
KWB_NORM_GRAD_HD NormColumnSums norm_column_sums(LoadX x, LoadDy dy, const NormRowStats* rows,
                                                 std::int64_t begin, std::int64_t end,
                                                 std::int64_t cols, std::int64_t c) {
  NormColumnSums s;
  for (std::int64_t r = begin; r < end; ++r) {
    const NormRowStats& st = rows[r];
    const double g = dy(r, c), xhat = (x(r, c) - st.mean) * st.rstd;
    const double term = fabs(g) * (fabs(xhat) + st.rstd * st.mean_abs_x);
    s.dweight += g * xhat;
    s.dweight_abs += term;
    s.dweight_sq += static_cast<double>(cols) * term * term;
    s.dbias += g;
    s.dbias_abs += fabs(g);
  }
  return s;
}

// `b` added into `a` (the GPU sums chunks of rows apart, then adds them in chunk order).
KWB_NORM_GRAD_HD inline void add_column_sums(NormColumnSums& a, const NormColumnSums& b) {
  a.dweight += b.dweight;
  a.dweight_abs += b.dweight_abs;
  a.dweight_sq += b.dweight_sq;
  a.dbias += b.dbias;
  a.dbias_abs += b.dbias_abs;
}

// What both sides return: per column, dweight with A and R (the root taken), dbias with A.
struct NormWeightGrads {
  std::vector<double> dweight, dweight_abs, dweight_rss, dbias, dbias_abs;
};

// One column's sums appended to `g` (dweight's R is the root of its sum of squares).
inline void append_column(NormWeightGrads& g, const NormColumnSums& s) {
  g.dweight.push_back(s.dweight);
  g.dweight_abs.push_back(s.dweight_abs);
  g.dweight_rss.push_back(std::sqrt(s.dweight_sq));
  g.dbias.push_back(s.dbias);
  g.dbias_abs.push_back(s.dbias_abs);
}

// The host loop over the same formulas, from fp64 values ([rows, cols] row-major each).
NormWeightGrads norm_weight_grads_fp64_host(const double* x, const double* dy, std::int64_t rows,
                                            std::int64_t cols, NormStats kind, double eps);

}  // namespace kwb::ref
