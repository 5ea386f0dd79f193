// The newton_schulz variants' cuBLASLt plans (kernels/newton_schulz/ns_plans.hpp) replayed on the
// host: each plan's column-major GEMM (op(A) op(B), leading dimensions, alpha, beta and C, as
// cuBLASLt defines them) evaluated in fp64 on the same buffers and submatrix offsets as the
// variant's launch, in the launch's order, must give the oracle's X. No GPU needed: this checks
// the transposes, leading dimensions and block pointers of every GEMM, wide and tall, where a
// mistake would otherwise only show on the device. Each replay below mirrors its launch_typed().
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/newton_schulz/ns_plans.hpp"
#include "reference/newton_schulz.hpp"

namespace kwb {
namespace {

using Buf = std::vector<double>;

// D (m x n, ld ldd) = alpha op(A) op(B) + beta C, C in D's layout (null: D itself).
void lt_gemm(const LtMatmulSpec& s, const double* a, const double* b, double* d, double alpha = 1, double beta = 0,
             const double* c = nullptr) {
  if (!c) c = d;
  Buf out(static_cast<std::size_t>(s.m * s.n));
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t j = 0; j < s.n; ++j) {
      double acc = 0;
      for (std::int64_t k = 0; k < s.k; ++k)
        acc += (s.trans_a ? a[k + i * s.lda] : a[i + k * s.lda]) * (s.trans_b ? b[j + k * s.ldb] : b[k + j * s.ldb]);
      out[i + j * s.m] = alpha * acc + (beta != 0 ? beta * c[i + j * s.ldd] : 0);
    }
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t j = 0; j < s.n; ++j) d[i + j * s.ldd] = out[i + j * s.m];
}

Buf normalised(const Buf& g) {
  double sum = 0;
  for (double v : g) sum += v * v;
  Buf x(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) x[i] = g[i] / (std::sqrt(sum) + kNsEps);
  return x;
}

// baseline_eager_cublaslt: step 1 of the tall case on the view, then contiguous Y, then Y^T out.
Buf baseline(const Buf& g, const ns::Dims& d) {
  const DType t = DType::bf16;
  const auto gram = ns::gram_contig(d, t, false), gram_view = ns::gram_view(d, t, false);
  const auto square = ns::square(d, t, false);
  const auto update = ns::update_contig(d, t, false), update_view = ns::update_view(d, t, false);
  const std::int64_t r = d.r, c = d.c;
  Buf x = normalised(g), next(x.size()), a(r * r), aa(a.size()), b(a.size()), ax(x.size()), bx(x.size());
  for (int step = 0; step < kNsSteps; ++step) {
    const bool view = d.tall && step == 0;
    lt_gemm(view ? gram_view : gram, x.data(), x.data(), a.data());
    lt_gemm(square, a.data(), a.data(), aa.data());
    for (std::size_t e = 0; e < a.size(); ++e) b[e] = kNsB * a[e] + kNsC * aa[e];
    for (std::size_t e = 0; e < x.size(); ++e) ax[e] = kNsA * x[e];
    lt_gemm(view ? update_view : update, x.data(), b.data(), bx.data());
    for (std::int64_t e = 0; e < r * c; ++e) next[e] = (view ? ax[(e % c) * r + e / c] : ax[e]) + bx[e];
    x = next;
  }
  if (!d.tall) return x;
  Buf out(x.size());
  for (std::int64_t e = 0; e < d.m * d.n; ++e) out[e] = x[(e % d.n) * c + e / d.n];
  return out;
}

// fused_v1: three GEMMs a step in X's own layout, the scalars in alpha/beta.
Buf fused_v1(const Buf& g, const ns::Dims& d) {
  const DType t = DType::bf16;
  const auto gram = d.tall ? ns::gram_view(d, t, false) : ns::gram_contig(d, t, false);
  const auto poly = ns::square(d, t, false);
  const auto update = d.tall ? ns::update_tall_in_place_layout(d, t, false) : ns::update_contig(d, t, false);
  Buf x = normalised(g), next(x.size()), a(d.r * d.r), b(a.size());
  for (int step = 0; step < kNsSteps; ++step) {
    lt_gemm(gram, x.data(), x.data(), a.data());
    lt_gemm(poly, a.data(), a.data(), b.data(), kNsC, kNsB, a.data());
    if (d.tall)
      lt_gemm(update, b.data(), x.data(), next.data(), 1, kNsA, x.data());
    else
      lt_gemm(update, x.data(), b.data(), next.data(), 1, kNsA, x.data());
    x.swap(next);
  }
  return x;
}

// fused_v2: the top rows and the corner of A and B, the lower-left block mirrored. A and B start
// as NaN so that any read of a block nobody wrote shows.
Buf fused_v2(const Buf& g, const ns::Dims& d) {
  const DType t = DType::bf16;
  const std::int64_t r = d.r, c = d.c, r1 = ns::symmetric_split(r), r2 = r - r1, corner = r1 * r + r1;
  const bool yt = d.tall;
  const std::int64_t yld = d.tall ? d.r : d.c, y2 = yt ? r1 : r1 * yld;
  const auto gram_top = ns::row_major(r1, r, c, yt, yld, !yt, yld, r, t, false);
  const auto gram_corner = ns::row_major(r2, r2, c, yt, yld, !yt, yld, r, t, false);
  const auto poly_top = ns::row_major(r1, r, r, false, r, false, r, r, t, false);
  const auto poly_corner = ns::row_major(r2, r2, r, false, r, false, r, r, t, false);
  const auto update = d.tall ? ns::update_tall_in_place_layout(d, t, false) : ns::update_contig(d, t, false);
  auto mirror = [&](Buf& m) {
    for (std::int64_t i = 0; i < r2; ++i)
      for (std::int64_t j = 0; j < r1; ++j) m[(r1 + i) * r + j] = m[j * r + r1 + i];
  };
  Buf x = normalised(g), next(x.size()), a(r * r), b(r * r);
  for (int step = 0; step < kNsSteps; ++step) {
    std::fill(a.begin(), a.end(), NAN);
    std::fill(b.begin(), b.end(), NAN);
    lt_gemm(gram_top, x.data(), x.data(), a.data());
    lt_gemm(gram_corner, x.data() + y2, x.data() + y2, a.data() + corner);
    mirror(a);
    lt_gemm(poly_top, a.data(), a.data(), b.data(), kNsC, kNsB, a.data());
    lt_gemm(poly_corner, a.data() + r1, a.data() + r1 * r, b.data() + corner, kNsC, kNsB, a.data() + corner);
    mirror(b);
    if (d.tall)
      lt_gemm(update, b.data(), x.data(), next.data(), 1, kNsA, x.data());
    else
      lt_gemm(update, x.data(), b.data(), next.data(), 1, kNsA, x.data());
    x.swap(next);
  }
  return x;
}

double max_error(std::int64_t m, std::int64_t n, Buf (*variant)(const Buf&, const ns::Dims&)) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(m * 1000 + n));
  std::normal_distribution<double> normal;
  Buf g(static_cast<std::size_t>(m * n));
  for (double& v : g) v = normal(rng);
  Buf ref(g.size());
  newton_schulz_fp64(g.data(), m, n, ref.data());
  const Buf got = variant(g, ns::dims_of(Shape{{{"rows", m}, {"cols", n}}}));
  double worst = 0;
  for (std::size_t e = 0; e < ref.size(); ++e) {
    const double err = std::abs(got[e] - ref[e]);
    if (!(err <= worst)) worst = err;  // NaN sticks
  }
  return worst;
}

TEST(NewtonSchulzPlans, BaselineGemmsReplayedOnTheHostGiveTheOracle) {
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{3, 5}, {5, 3}, {7, 7}, {1, 4}, {9, 2}, {40, 70}, {70, 40}})
    EXPECT_LT(max_error(m, n, baseline), 1e-12) << m << " x " << n;
}

TEST(NewtonSchulzPlans, FusedV1GemmsReplayedOnTheHostGiveTheOracle) {
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{3, 5}, {5, 3}, {7, 7}, {1, 4}, {9, 2}, {40, 70}, {70, 40}})
    EXPECT_LT(max_error(m, n, fused_v1), 1e-12) << m << " x " << n;
}

TEST(NewtonSchulzPlans, FusedV2SymmetricBlocksReplayedOnTheHostGiveTheOracle) {
  // r = 256 (128 + 128), 257 (256 + 1), 300 (256 + 44), wide and tall.
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{256, 256}, {257, 260}, {300, 340}, {340, 300}})
    EXPECT_LT(max_error(m, n, fused_v2), 1e-12) << m << " x " << n;
}

TEST(NewtonSchulzPlans, SymmetricSplitKeepsBlockPointersAlignedAndBothHalvesNonEmpty) {
  for (std::int64_t r : {256, 257, 300, 511, 1024, 4096, 4097, 8192}) {
    const std::int64_t r1 = ns::symmetric_split(r);
    EXPECT_EQ(r1 % ns::kSplitAlign, 0) << r;
    EXPECT_GE(r1, (r + 1) / 2) << r;
    EXPECT_LT(r1, r) << r;
  }
}

}  // namespace
}  // namespace kwb
