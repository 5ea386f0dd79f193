#include "reference/matmul_fp64.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

namespace kwb::ref {

namespace {

// A transposed operand is copied once into its plain row-major form, so the inner loop always
// walks contiguous memory.
std::vector<double> plain(std::int64_t rows, std::int64_t cols, const MatrixView& v) {
  std::vector<double> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      out[r * cols + c] = v.transposed ? v.data[c * v.ld + r] : v.data[r * v.ld + c];
  return out;
}

}  // namespace

int oracle_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

namespace {

// The shared loop: C (and, with magnitudes, |terms| and terms^2) for rows [first, last).
void rows_kernel(std::int64_t first, std::int64_t last, std::int64_t n, std::int64_t k, const double* ap,
                 std::int64_t lda, const double* bp, std::int64_t ldb, double* c, std::int64_t ldc, double alpha,
                 double beta, TermMagnitudes mag) {
  constexpr std::int64_t kBlockK = 256, kBlockN = 1024;
  const bool with_mag = mag.abs_sum != nullptr;
  const std::size_t width = static_cast<std::size_t>(std::min(n, kBlockN));
  std::vector<double> acc(width), abs_acc(with_mag ? width : 0), sq_acc(with_mag ? width : 0);
  for (std::int64_t j0 = 0; j0 < n; j0 += kBlockN) {
    const std::int64_t jn = std::min(kBlockN, n - j0);
    for (std::int64_t i = first; i < last; ++i) {
      std::fill(acc.begin(), acc.begin() + jn, 0.0);
      if (with_mag) {
        std::fill(abs_acc.begin(), abs_acc.begin() + jn, 0.0);
        std::fill(sq_acc.begin(), sq_acc.begin() + jn, 0.0);
      }
      for (std::int64_t k0 = 0; k0 < k; k0 += kBlockK) {
        const std::int64_t kn = std::min(kBlockK, k - k0);
        for (std::int64_t kk = k0; kk < k0 + kn; ++kk) {
          const double aik = ap[i * lda + kk];
          const double* brow = bp + kk * ldb + j0;
          if (!with_mag) {
            for (std::int64_t j = 0; j < jn; ++j) acc[j] += aik * brow[j];
            continue;
          }
          for (std::int64_t j = 0; j < jn; ++j) {
            const double t = aik * brow[j];
            acc[j] += t;
            abs_acc[j] += std::fabs(t);
            sq_acc[j] += t * t;
          }
        }
      }
      double* crow = c + i * ldc + j0;
      for (std::int64_t j = 0; j < jn; ++j) crow[j] = alpha * acc[j] + (beta == 0.0 ? 0.0 : beta * crow[j]);
      if (!with_mag) continue;
      double* arow = mag.abs_sum + i * ldc + j0;
      double* srow = mag.sum_sq + i * ldc + j0;
      for (std::int64_t j = 0; j < jn; ++j) {
        arow[j] = abs_acc[j] + (beta == 0.0 ? 0.0 : beta * arow[j]);
        srow[j] = sq_acc[j] + (beta == 0.0 ? 0.0 : beta * srow[j]);
      }
    }
  }
}

void matmul_impl(std::int64_t m, std::int64_t n, std::int64_t k, MatrixView a, MatrixView b, double* c,
                 std::int64_t ldc, double alpha, double beta, TermMagnitudes mag) {
  if (m <= 0 || n <= 0) return;
  std::vector<double> a_plain, b_plain;
  const double* ap = a.data;
  std::int64_t lda = a.ld;
  if (a.transposed) {
    a_plain = plain(m, k, a);
    ap = a_plain.data();
    lda = k;
  }
  const double* bp = b.data;
  std::int64_t ldb = b.ld;
  if (b.transposed) {
    b_plain = plain(k, n, b);
    bp = b_plain.data();
    ldb = n;
  }
  auto rows = [&](std::int64_t first, std::int64_t last) {
    rows_kernel(first, last, n, k, ap, lda, bp, ldb, c, ldc, alpha, beta, mag);
  };
  // Small products stay on this thread: starting threads would cost more than the work.
  const double work = double(m) * double(n) * double(k);
  const int threads = work < 1e7 ? 1 : static_cast<int>(std::min<std::int64_t>(oracle_threads(), m));
  if (threads == 1) {
    rows(0, m);
    return;
  }
  std::vector<std::thread> pool;
  const std::int64_t per = (m + threads - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    const std::int64_t first = t * per, last = std::min(m, first + per);
    if (first < last) pool.emplace_back(rows, first, last);
  }
  for (auto& th : pool) th.join();
}

}  // namespace

void matmul_fp64(std::int64_t m, std::int64_t n, std::int64_t k, MatrixView a, MatrixView b, double* c,
                 std::int64_t ldc, double alpha, double beta) {
  matmul_impl(m, n, k, a, b, c, ldc, alpha, beta, {});
}

void matmul_fp64(std::int64_t m, std::int64_t n, std::int64_t k, MatrixView a, MatrixView b, double* c,
                 std::int64_t ldc, double beta, TermMagnitudes magnitudes) {
  if (magnitudes.abs_sum == nullptr || magnitudes.sum_sq == nullptr)
    throw std::invalid_argument("matmul_fp64: both magnitude outputs (abs_sum, sum_sq) are needed");
  matmul_impl(m, n, k, a, b, c, ldc, 1.0, beta, magnitudes);
}

}  // namespace kwb::ref
