// The oracles' fp64 GEMM against the textbook triple loop: every transpose combination, alpha
// and beta, leading dimensions wider than the matrix, and a product big enough to be threaded;
// its k-blocked form against the calls it stands for, bit for bit.
#include "reference/matmul_fp64.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace kwb::ref {
namespace {

std::vector<double> normal_values(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist;
  std::vector<double> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

void check(std::int64_t m, std::int64_t n, std::int64_t k, bool ta, bool tb, double alpha, double beta) {
  const std::int64_t pad = 3;  // leading dimensions wider than the stored rows
  const std::int64_t a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
  const auto a = normal_values(a_rows * (a_cols + pad), 1);
  const auto b = normal_values(b_rows * (b_cols + pad), 2);
  auto c = normal_values(m * (n + pad), 3);
  const auto c0 = c;
  matmul_fp64(m, n, k, {a.data(), a_cols + pad, ta}, {b.data(), b_cols + pad, tb}, c.data(), n + pad, alpha, beta);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t p = 0; p < k; ++p)
        s += (ta ? a[p * (a_cols + pad) + i] : a[i * (a_cols + pad) + p]) *
             (tb ? b[j * (b_cols + pad) + p] : b[p * (b_cols + pad) + j]);
      const double want = alpha * s + beta * c0[i * (n + pad) + j];
      ASSERT_NEAR(c[i * (n + pad) + j], want, 1e-9 * (1 + std::abs(want))) << i << "," << j;
    }
  // The padding is never written.
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = n; j < n + pad; ++j) ASSERT_EQ(c[i * (n + pad) + j], c0[i * (n + pad) + j]);
}

TEST(MatmulFp64, MatchesTheTripleLoopForEveryTransposeAlphaAndBeta) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      check(7, 5, 3, ta, tb, 1.0, 0.0);
      check(1, 1, 1, ta, tb, -2.0, 0.5);
      check(33, 17, 300, ta, tb, 0.25, 1.0);  // k spans two blocks of 256
    }
}

TEST(MatmulFp64, ThreadedProductMatchesToo) {
  check(260, 1100, 70, false, true, 1.5, -1.0);  // n spans two column blocks; above the thread cut-off
  EXPECT_GE(oracle_threads(), 1);
}

// The magnitudes pass: C as the plain product, and per element sum |a b| and sum (a b)^2 of the
// triple loop; beta 1 adds a second block of k to all three (how the oracles sum k in blocks).
void check_magnitudes(std::int64_t m, std::int64_t n, std::int64_t k, bool tb) {
  const auto a = normal_values(m * k, 4);
  const auto b = normal_values(k * n, 5);
  std::vector<double> c(m * n), abs_sum(m * n), sum_sq(m * n);
  const std::int64_t k1 = k / 2;  // two calls: k1 terms, then the rest with beta 1
  const std::int64_t ldb = tb ? k : n;
  auto b_at = [&](std::int64_t p, std::int64_t j) { return tb ? b[j * k + p] : b[p * n + j]; };
  matmul_fp64(m, n, k1, {a.data(), k}, {b.data(), ldb, tb}, c.data(), n, 0.0, {abs_sum.data(), sum_sq.data()});
  matmul_fp64(m, n, k - k1, {a.data() + k1, k}, {tb ? b.data() + k1 : b.data() + k1 * n, ldb, tb}, c.data(), n, 1.0,
              {abs_sum.data(), sum_sq.data()});
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0, sa = 0, sq = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double t = a[i * k + p] * b_at(p, j);
        s += t, sa += std::abs(t), sq += t * t;
      }
      ASSERT_NEAR(c[i * n + j], s, 1e-9 * (1 + sa)) << i << "," << j;
      ASSERT_NEAR(abs_sum[i * n + j], sa, 1e-9 * sa) << i << "," << j;
      ASSERT_NEAR(sum_sq[i * n + j], sq, 1e-9 * sq) << i << "," << j;
      ASSERT_GE(abs_sum[i * n + j] + 1e-12, std::abs(c[i * n + j]));  // |sum| <= sum |.|
    }
}

TEST(MatmulFp64, TermMagnitudesMatchTheTripleLoopAndSumOverBlocksOfK) {
  check_magnitudes(5, 7, 9, false);
  check_magnitudes(3, 1100, 40, true);   // two column blocks
  check_magnitudes(300, 90, 600, true);  // threaded, k over two blocks of 256
}

// matmul_fp64_k_blocks against the matmul_fp64 calls it stands for (alpha 1, beta for the first
// block and 1 after), compared bit for bit: every transpose, beta 0 and 1 over a non-zero C, with
// and without magnitudes, k a multiple of the block and not. Small products: the CPU path.
TEST(MatmulFp64, KBlocksAreTheSequenceOfCallsBitForBit) {
  const std::int64_t m = 9, n = 13, pad = 2;
  for (const std::int64_t k : {5, 21, 24})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (double beta : {0.0, 1.0})
          for (bool mag : {false, true}) {
            const std::int64_t block = 8, lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
            const auto a = normal_values((ta ? k : m) * lda, 6);
            const auto b = normal_values((tb ? n : k) * ldb, 7);
            const auto c0 = normal_values(m * ldc, 8), abs0 = normal_values(m * ldc, 9);
            const auto sq0 = normal_values(m * ldc, 10);
            auto c = c0, abs_sum = abs0, sum_sq = sq0;
            matmul_fp64_k_blocks(m, n, k, block, {a.data(), lda, ta}, {b.data(), ldb, tb}, c.data(), ldc, beta,
                                 mag ? TermMagnitudes{abs_sum.data(), sum_sq.data()} : TermMagnitudes{});
            auto want = c0, want_abs = abs0, want_sq = sq0;
            for (std::int64_t k0 = 0; k0 < k; k0 += block) {
              const std::int64_t kn = std::min(block, k - k0);
              const MatrixView av{ta ? a.data() + k0 * lda : a.data() + k0, lda, ta};
              const MatrixView bv{tb ? b.data() + k0 : b.data() + k0 * ldb, ldb, tb};
              const double bb = k0 == 0 ? beta : 1.0;
              if (mag)
                matmul_fp64(m, n, kn, av, bv, want.data(), ldc, bb, {want_abs.data(), want_sq.data()});
              else
                matmul_fp64(m, n, kn, av, bv, want.data(), ldc, 1.0, bb);
            }
            const std::size_t bytes = want.size() * sizeof(double);
            const std::string where = "k " + std::to_string(k) + (ta ? " A^T" : " A") + (tb ? " B^T" : " B") +
                                      " beta " + std::to_string(beta) + (mag ? " magnitudes" : "");
            EXPECT_EQ(std::memcmp(c.data(), want.data(), bytes), 0) << where;
            EXPECT_EQ(std::memcmp(abs_sum.data(), want_abs.data(), bytes), 0) << where;
            EXPECT_EQ(std::memcmp(sum_sq.data(), want_sq.data(), bytes), 0) << where;
          }
}

TEST(MatmulFp64, KBlocksOfAnEmptySumScaleCByBeta) {
  std::vector<double> c{1.0, -2.0, 4.0}, abs_sum{2.0, 3.0, 5.0}, sum_sq{7.0, 11.0, 13.0};
  const std::vector<double> none;
  matmul_fp64_k_blocks(1, 3, 0, 4, {none.data(), 0}, {none.data(), 3}, c.data(), 3, 0.5,
                       {abs_sum.data(), sum_sq.data()});
  EXPECT_EQ(c, (std::vector<double>{0.5, -1.0, 2.0}));
  EXPECT_EQ(abs_sum, (std::vector<double>{1.0, 1.5, 2.5}));
  EXPECT_EQ(sum_sq, (std::vector<double>{3.5, 5.5, 6.5}));
}

TEST(MatmulFp64, KBlocksRefuseABadBlockOrHalfTheMagnitudes) {
  std::vector<double> a(4, 1.0), b(4, 1.0), c(4), abs_sum(4);
  EXPECT_THROW(matmul_fp64_k_blocks(2, 2, 2, 0, {a.data(), 2}, {b.data(), 2}, c.data(), 2, 0.0),
               std::invalid_argument);
  EXPECT_THROW(matmul_fp64_k_blocks(2, 2, 2, 1, {a.data(), 2}, {b.data(), 2}, c.data(), 2, 0.0,
                                    {abs_sum.data(), nullptr}),
               std::invalid_argument);
}

}  // namespace
}  // namespace kwb::ref
