// The fp64 oracle of linear_cross_entropy (formulas in linear_cross_entropy.hpp) and its
// tolerances.
//
// Cost: three products of N x V x D multiply-adds (the logits, dh, dW): the full oracle, since dW
// sums over every token and the verifier then checks the whole case (harness/worker/verify/sampling.hpp). It
// walks the tokens in chunks as the fused kernel does, so that memory stays at one chunk of
// logits beside the inputs, and feeds ref::matmul_fp64 blocks of the reduction dim (k) small
// enough that its streamed B block stays in a core's L2 (1 MB): without that, dh's k = V reduction
// streams V x 1024 doubles (1 GB) from DRAM for every row.
#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "harness/catalogue/tolerance.hpp"
#include "reference/cross_entropy.hpp"
#include "reference/linear_cross_entropy.hpp"
#include "reference/matmul_fp64.hpp"

namespace kwb {

double lce_token_grad(const double* z, std::int64_t vocab, long long label, double* dl) {
  if (!cross_entropy_label_counts(label, vocab)) {
    std::fill(dl, dl + vocab, 0.0);
    return 0.0;
  }
  const double max = *std::max_element(z, z + vocab);
  double sum = 0;
  for (std::int64_t v = 0; v < vocab; ++v) sum += std::exp(z[v] - max);
  const double lse = max + std::log(sum);
  const double loss = lse - z[label];
  for (std::int64_t v = 0; v < vocab; ++v) dl[v] = std::exp(z[v] - lse);
  dl[label] -= 1.0;
  return loss;
}

namespace {

// C (m x n) = beta C + A (m x k, ld lda) B (k x n, ld ldb), both plain row-major, summed over
// blocks of k so that each matmul_fp64 call streams a B block of kBlock x 1024 doubles.
void matmul_k_blocks(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, std::int64_t lda,
                     const double* b, std::int64_t ldb, double* c, std::int64_t ldc, double beta) {
  constexpr std::int64_t kBlock = 128;  // 1 MB of B per 1024 columns: stays in a core's L2
  if (k == 0) {
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) c[i * ldc + j] *= beta;
    return;
  }
  for (std::int64_t k0 = 0; k0 < k; k0 += kBlock) {
    const std::int64_t kn = std::min(kBlock, k - k0);
    ref::matmul_fp64(m, n, kn, {a + k0, lda}, {b + k0 * ldb, ldb}, c, ldc, 1.0, k0 == 0 ? beta : 1.0);
  }
}

// Rows [0, rows) of a logits chunk replaced by their gradient rows, losses written; threaded by
// rows (each thread owns whole rows: the result does not depend on the thread count).
void chunk_grads(double* z, std::int64_t rows, std::int64_t vocab, const double* labels, double* loss) {
  auto work = [=](std::int64_t first, std::int64_t last) {
    std::vector<double> row(static_cast<std::size_t>(vocab));
    for (std::int64_t r = first; r < last; ++r) {
      double* zr = z + r * vocab;
      loss[r] = lce_token_grad(zr, vocab, static_cast<long long>(labels[r]), row.data());
      std::copy(row.begin(), row.end(), zr);
    }
  };
  const std::int64_t threads =
      std::clamp<std::int64_t>(rows * vocab / (1 << 18), 1, std::min<std::int64_t>(ref::oracle_threads(), rows));
  std::vector<std::thread> pool;
  const std::int64_t per = (rows + threads - 1) / threads;
  for (std::int64_t t = 1; t < threads; ++t)
    pool.emplace_back(work, std::min(rows, t * per), std::min(rows, (t + 1) * per));
  work(0, std::min(rows, per));
  for (auto& th : pool) th.join();
}

}  // namespace

void lce_reference(std::int64_t tokens, std::int64_t hidden, std::int64_t vocab, const double* h,
                   const double* w, const double* labels, double* loss, double* dh, double* dw,
                   std::int64_t chunk_tokens) {
  if (chunk_tokens <= 0) chunk_tokens = std::max<std::int64_t>(1, (std::int64_t{1} << 25) / vocab);
  chunk_tokens = std::min(chunk_tokens, tokens);
  // W^T [D, V], once: the logits' B operand, row-major so that no call re-transposes it.
  std::vector<double> wt(static_cast<std::size_t>(hidden * vocab));
  for (std::int64_t v = 0; v < vocab; ++v)
    for (std::int64_t d = 0; d < hidden; ++d) wt[d * vocab + v] = w[v * hidden + d];
  std::vector<double> z(static_cast<std::size_t>(chunk_tokens * vocab));
  std::vector<double> zt(z.size());  // dl^T [V, chunk]: dW's A operand
  for (std::int64_t n0 = 0; n0 < tokens; n0 += chunk_tokens) {
    const std::int64_t rows = std::min(chunk_tokens, tokens - n0);
    const double* hc = h + n0 * hidden;
    matmul_k_blocks(rows, vocab, hidden, hc, hidden, wt.data(), vocab, z.data(), vocab, 0.0);  // logits
    chunk_grads(z.data(), rows, vocab, labels + n0, loss + n0);                                  // z := dl
    matmul_k_blocks(rows, hidden, vocab, z.data(), vocab, w, hidden, dh + n0 * hidden, hidden, 0.0);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t v = 0; v < vocab; ++v) zt[v * rows + r] = z[r * vocab + v];
    matmul_k_blocks(vocab, hidden, rows, zt.data(), rows, hc, hidden, dw, hidden, n0 == 0 ? 0.0 : 1.0);
  }
  if (tokens == 0) std::fill(dw, dw + vocab * hidden, 0.0);
}

// Tolerances. The device differs from the oracle (which sees the inputs as the device holds them)
// by the roundings of its intermediates, with eps the unit roundoff of the narrowest one: the
// dtype's (bf16 2^-8, fp16 2^-11: the baseline stores the logits in the dtype, every variant
// feeds dlogits to the backward GEMMs in the dtype) or, for fp32 cases, whose GEMMs may take tf32
// operands, a whole tf32 ulp (2^-10): tensor cores may truncate the fp32 bits they ignore rather
// than round them (the CPU test simulates truncation). The inputs: h ~ N(0, 1), W ~ N(0, 1/sqrt(D)), so the logits are
// ~N(0, 1), |z| <= 8 at any size we run, and an error of at most 8 eps each.
//  - loss = lse - z_label: z_label's error plus a softmax-weighted mean of the others: 16 eps;
//    plus the fp32 sums: over D in each logit (terms 1/sqrt(D)) and over V in the lse (a sum of
//    positive terms: relative, sqrt(V) u).
//  - dh[n] = sum over V of dl[n, v] W[v]: dominated by the label's term -(1 - p) W[label]
//    (|W| ~ 1/sqrt(D) = s_h): relative error 2 eps (dl's rounding, tf32's on W) + the fp32 sum
//    over V; near zero, the probabilities' errors (eps of their own rounding + 16 eps through the
//    logits) times W: (17 eps + the format's atol) s_h.
//  - dW[v] = sum over N tokens of dl[n, v] h[n]: the tokens labelled v add terms -(1 - p) h[n]
//    of size ~1, each with an error up to eps (dl's rounding near -1, tf32's on h): relative
//    (2 eps) unless two of them cancel, so an absolute c eps per term over the ~N/V labelled
//    tokens of a row, a random walk: 2 c eps sqrt(1 + N/V) (found by the CPU test simulating the
//    roundings: two labelled tokens of one row summing to -0.04 from terms of 1.00 and 0.96).
//    The other terms are N values p h with p ~ 2/V: a random walk of size sqrt(N) 2/V whose
//    terms carry 17 eps each: c (17 eps + the format's atol) that size. In bf16 the first part
//    (0.03) exceeds the size of rows no token is labelled with (~1e-3 at 4096 x 32000): those
//    are then checked for their order of magnitude only; the labelled rows, dh and the loss are
//    where a wrong chunk, label or normalisation shows.
LceTolerances lce_tolerances(const Shape& s, DType dtype) {
  const auto [n, d, v] = LceAxes::of(s);
  const ElemType out = resolve(ElemType::case_dtype, dtype);
  const double eps = std::ldexp(1.0, dtype == DType::bf16 ? -8 : dtype == DType::fp16 ? -11 : -10);
  const double s_h = 1.0 / std::sqrt(static_cast<double>(d));
  const double s_p = std::min(1.0, 2.0 / static_cast<double>(v));
  const double walk = std::sqrt(static_cast<double>(n)) * s_p;
  constexpr double c = 4.0;  // reduction_tolerance's safety factor

  LceTolerances t;
  const Tolerance logit_sum = reduction_tolerance(ElemType::fp32, d, ElemType::fp32, s_h);
  t.loss = reduction_tolerance(ElemType::fp32, v, ElemType::fp32, 0.0);
  t.loss.atol += 16 * eps + 2 * logit_sum.atol;

  const Tolerance over_v = reduction_tolerance(out, v, ElemType::fp32, s_h / static_cast<double>(v));
  t.dh = {(default_tolerance(out).atol + 17 * eps) * s_h + over_v.atol - default_tolerance(out).atol,
          over_v.rtol + 2 * eps};

  const Tolerance over_n = reduction_tolerance(out, n, ElemType::fp32, s_p);
  const double labelled = 2 * c * eps * std::sqrt(1.0 + static_cast<double>(n) / static_cast<double>(v));
  t.dw = {(default_tolerance(out).atol + c * 17 * eps) * walk + labelled + over_n.atol - default_tolerance(out).atol,
          over_n.rtol + 2 * eps};
  return t;
}

}  // namespace kwb
