// The CPU loop of the oracles' fp64 GEMM, and the dispatch to its GPU twin
// (reference/matmul_fp64_gpu.cu) for the products where that pays. Built with -ffp-contract=off
// (CMakeLists.txt): the compiler must not fuse a product and a sum into an FMA here, whatever
// -march a build adds, or the GPU path (which never fuses) would differ in the last bit.
#include "reference/matmul_fp64.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "harness/catalogue/oracle_device.hpp"
#include "reference/matmul_fp64_gpu.hpp"

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

// Whether a product goes to the GPU first: big enough to pay for its copies, on a thread that
// named a device for the oracles (the worker's), the GPU not switched off. On a background oracle
// thread such a product throws OracleNeedsDevice: the worker's thread makes it on the GPU.
bool gpu_first(std::int64_t m, std::int64_t n, std::int64_t k) {
  const double multiply_adds = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (multiply_adds < kGpuMinMultiplyAdds) return false;  // before naming it: most products are small
  const std::string what = "an fp64 product of " + std::to_string(m) + " x " + std::to_string(n) + " x " +
                           std::to_string(k);
  return oracle_step_on_gpu(multiply_adds, what.c_str());
}

}  // namespace

void matmul_fp64(std::int64_t m, std::int64_t n, std::int64_t k, MatrixView a, MatrixView b, double* c,
                 std::int64_t ldc, double alpha, double beta) {
  if (gpu_first(m, n, k) && matmul_fp64_gpu(m, n, k, a, b, c, ldc, alpha, beta)) return;
  matmul_impl(m, n, k, a, b, c, ldc, alpha, beta, {});
}

void matmul_fp64(std::int64_t m, std::int64_t n, std::int64_t k, MatrixView a, MatrixView b, double* c,
                 std::int64_t ldc, double beta, TermMagnitudes magnitudes) {
  if (magnitudes.abs_sum == nullptr || magnitudes.sum_sq == nullptr)
    throw std::invalid_argument("matmul_fp64: both magnitude outputs (abs_sum, sum_sq) are needed");
  if (gpu_first(m, n, k) && matmul_fp64_gpu(m, n, k, a, b, c, ldc, 1.0, beta, magnitudes)) return;
  matmul_impl(m, n, k, a, b, c, ldc, 1.0, beta, magnitudes);
}

void matmul_fp64_k_blocks(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t k_block, MatrixView a,
                          MatrixView b, double* c, std::int64_t ldc, double beta, TermMagnitudes magnitudes) {
  if (k_block <= 0) throw std::invalid_argument("matmul_fp64_k_blocks: k_block must be positive");
  if ((magnitudes.abs_sum == nullptr) != (magnitudes.sum_sq == nullptr))
    throw std::invalid_argument("matmul_fp64_k_blocks: give both magnitude outputs (abs_sum, sum_sq) or neither");
  const bool with_mag = magnitudes.abs_sum != nullptr;
  if (k == 0) {
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        c[i * ldc + j] *= beta;
        if (with_mag) magnitudes.abs_sum[i * ldc + j] *= beta, magnitudes.sum_sq[i * ldc + j] *= beta;
      }
    return;
  }
  // All blocks in one GPU call (one upload of A and B), or block by block on the CPU.
  if (gpu_first(m, n, k) && matmul_fp64_gpu(m, n, k, a, b, c, ldc, 1.0, beta, magnitudes, k_block)) return;
  for (std::int64_t k0 = 0; k0 < k; k0 += k_block) {
    const std::int64_t kn = std::min(k_block, k - k0);
    // Columns k0.. of op(A) and rows k0.. of op(B), as stored.
    const MatrixView a_block{a.transposed ? a.data + k0 * a.ld : a.data + k0, a.ld, a.transposed};
    const MatrixView b_block{b.transposed ? b.data + k0 : b.data + k0 * b.ld, b.ld, b.transposed};
    matmul_impl(m, n, kn, a_block, b_block, c, ldc, 1.0, k0 == 0 ? beta : 1.0, magnitudes);
  }
}

}  // namespace kwb::ref
