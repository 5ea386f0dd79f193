// The fp64 oracle of linear_cross_entropy (formulas in linear_cross_entropy.hpp) and its
// tolerances.
//
// Cost: three products of N x V x D multiply-adds (the logits, dh, dW), the last one only over the
// vocabulary rows of dW the verifier checks (it samples them at large shapes: the loss and dh need
// every logit, dW's rows do not need each other). It walks the tokens in chunks as the fused
// kernel does, so that memory stays at one chunk of logits beside the inputs, and feeds
// ref::matmul_fp64 blocks of the reduction dim (k) small enough that its streamed B block stays in
// a core's L2 (1 MB): without that, dh's k = V reduction streams V x 1024 doubles (1 GB) from DRAM
// for every row.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "harness/catalogue/parallel_chunks.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/cross_entropy.hpp"
#include "reference/gemm_tolerance.hpp"
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

// C (m x n) = beta C + op(A) (m x k) B (k x n, ld ldb), summed over blocks of k so that each
// block's CPU pass streams a B block of kBlock x 1024 doubles (ref::matmul_fp64_k_blocks; on the
// GPU one launch makes the same roundings). With magnitudes (ld ldc too), their sums of |term|
// and term^2 follow the same beta.
void matmul_k_blocks(std::int64_t m, std::int64_t n, std::int64_t k, ref::MatrixView a, const double* b,
                     std::int64_t ldb, double* c, std::int64_t ldc, double beta, ref::TermMagnitudes mag = {}) {
  constexpr std::int64_t kBlock = 128;  // 1 MB of B per 1024 columns: stays in a core's L2
  ref::matmul_fp64_k_blocks(m, n, k, kBlock, a, {b, ldb}, c, ldc, beta, mag);
}

// Rows [0, rows) of a logits chunk replaced by their gradient rows, losses written; over the
// host's cores by blocks of whole rows (each row's result depends on that row alone, so not on the
// thread count). With z_sq (the logits' sums of squared terms), the loss's magnitudes too.
void chunk_grads(double* z, const double* z_sq, std::int64_t rows, std::int64_t vocab, const double* labels,
                 double* loss, double* loss_abs, double* loss_rss) {
  const std::int64_t rows_per_block = std::max<std::int64_t>(1, (std::int64_t{1} << 18) / std::max<std::int64_t>(vocab, 1));
  parallel_chunks(
      rows,
      [=](std::int64_t, std::int64_t first, std::int64_t last) {
        std::vector<double> row(static_cast<std::size_t>(vocab));
        for (std::int64_t r = first; r < last; ++r) {
          double* zr = z + r * vocab;
          loss[r] = lce_token_grad(zr, vocab, static_cast<long long>(labels[r]), row.data());
          if (z_sq) {
            double sa = 0, sq = 0;
            for (std::int64_t v = 0; v < vocab; ++v) {
              sa += std::fabs(row[v] * zr[v]);
              sq += row[v] * row[v] * z_sq[r * vocab + v];
            }
            loss_abs[r] = sa;
            loss_rss[r] = std::sqrt(sq);
          }
          std::copy(row.begin(), row.end(), zr);
        }
      },
      rows_per_block);
}

// W^T [D, V] from W [V, D], in 64 x 64 tiles over the host's cores: walking W's rows and writing
// W^T's columns one element at a time (a stride of V doubles each) took 11.5 s at D 4096,
// V 128256 on one core, most of the oracle's host time; tiles keep both sides in cache (1.5 s).
// The buffer is left uninitialised (a std::vector would zero its 4.2 GB on one thread first), so
// the tiles' threads are the first to touch its pages.
std::unique_ptr<double[]> transposed(const double* w, std::int64_t vocab, std::int64_t hidden) {
  auto wt = std::make_unique_for_overwrite<double[]>(static_cast<std::size_t>(hidden * vocab));
  constexpr std::int64_t kTile = 64;
  parallel_chunks(
      vocab,
      [&](std::int64_t, std::int64_t v_begin, std::int64_t v_end) {
        for (std::int64_t d0 = 0; d0 < hidden; d0 += kTile) {
          const std::int64_t d_end = std::min(hidden, d0 + kTile);
          for (std::int64_t v = v_begin; v < v_end; ++v)
            for (std::int64_t d = d0; d < d_end; ++d) wt[d * vocab + v] = w[v * hidden + d];
        }
      },
      kTile);
  return wt;
}

// Square roots in place, over the host's cores.
void square_roots(double* values, std::int64_t n) {
  parallel_chunks(n, [&](std::int64_t, std::int64_t begin, std::int64_t end) {
    for (std::int64_t e = begin; e < end; ++e) values[e] = std::sqrt(values[e]);
  });
}

}  // namespace

void lce_reference(std::int64_t tokens, std::int64_t hidden, std::int64_t vocab, const double* h,
                   const double* w, const double* labels, double* loss, double* dh, double* dw,
                   std::int64_t chunk_tokens, const LceMagnitudes* mags,
                   const std::vector<std::int64_t>* dw_rows) {
  const std::int64_t dw_row_count = dw_rows ? static_cast<std::int64_t>(dw_rows->size()) : vocab;
  std::vector<double> dl_columns;  // with dw_rows: dl's columns at those rows, one chunk's
  if (chunk_tokens <= 0) chunk_tokens = std::max<std::int64_t>(1, (std::int64_t{1} << 25) / vocab);
  chunk_tokens = std::min(chunk_tokens, tokens);
  // W^T [D, V], once: the logits' B operand, row-major so that no call re-transposes it.
  const std::unique_ptr<double[]> wt = transposed(w, vocab, hidden);
  std::vector<double> z(static_cast<std::size_t>(chunk_tokens * vocab));
  std::vector<double> z_abs(mags ? z.size() : 0), z_sq(mags ? z.size() : 0);  // the logits' magnitudes
  for (std::int64_t n0 = 0; n0 < tokens; n0 += chunk_tokens) {
    const std::int64_t rows = std::min(chunk_tokens, tokens - n0);
    const double* hc = h + n0 * hidden;
    if (mags) {
      matmul_k_blocks(rows, vocab, hidden, {hc, hidden}, wt.get(), vocab, z.data(), vocab, 0.0,
                      {z_abs.data(), z_sq.data()});
      chunk_grads(z.data(), z_sq.data(), rows, vocab, labels + n0, loss + n0, mags->loss_abs + n0,
                  mags->loss_rss + n0);
      matmul_k_blocks(rows, hidden, vocab, {z.data(), vocab}, w, hidden, dh + n0 * hidden, hidden, 0.0,
                      {mags->dh_abs + n0 * hidden, mags->dh_rss + n0 * hidden});
    } else {
      matmul_k_blocks(rows, vocab, hidden, {hc, hidden}, wt.get(), vocab, z.data(), vocab, 0.0);  // logits
      chunk_grads(z.data(), nullptr, rows, vocab, labels + n0, loss + n0, nullptr, nullptr);       // z := dl
      matmul_k_blocks(rows, hidden, vocab, {z.data(), vocab}, w, hidden, dh + n0 * hidden, hidden, 0.0);
    }
    // dW += dl^T h: dl^T [V, rows] read through the transposed view of z (the CPU copies it plain);
    // with dw_rows, only those rows of dW, from dl's columns at them (each element the same sum, in
    // the same order, as the whole product gives it).
    const double* dl = z.data();
    std::int64_t dl_ld = vocab;
    if (dw_rows) {
      dl_columns.resize(static_cast<std::size_t>(rows * dw_row_count));
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t i = 0; i < dw_row_count; ++i)
          dl_columns[static_cast<std::size_t>(r * dw_row_count + i)] =
              z[static_cast<std::size_t>(r * vocab + (*dw_rows)[static_cast<std::size_t>(i)])];
      dl = dl_columns.data();
      dl_ld = dw_row_count;
    }
    const ref::MatrixView dl_t{dl, dl_ld, true};
    const double beta = n0 == 0 ? 0.0 : 1.0;
    if (mags)
      matmul_k_blocks(dw_row_count, hidden, rows, dl_t, hc, hidden, dw, hidden, beta, {mags->dw_abs, mags->dw_rss});
    else
      matmul_k_blocks(dw_row_count, hidden, rows, dl_t, hc, hidden, dw, hidden, beta);
  }
  const std::int64_t dw_elements = dw_row_count * hidden;
  if (tokens == 0) std::fill(dw, dw + dw_elements, 0.0);
  if (!mags) return;
  if (tokens == 0) std::fill(mags->dw_abs, mags->dw_abs + dw_elements, 0.0);
  if (tokens == 0) std::fill(mags->dw_rss, mags->dw_rss + dw_elements, 0.0);
  square_roots(mags->dh_rss, tokens * hidden);
  square_roots(mags->dw_rss, dw_elements);
}

// Tolerances: error bounds per element (harness/catalogue/tolerance.hpp), scaled by the
// magnitudes above. The device's roundings, with u the dtype's unit roundoff (bf16 2^-8, fp16
// 2^-11) and, in fp32 cases, tf32 operands (u_tf32 = 2^-11):
//  - dh and dW are fp32-accumulated GEMMs over V and N rounded to the dtype: dot_product_bound.
//    Their terms are dl * W and dl * h, where each dl carries (a) its own rounding to the dtype
//    (every variant feeds the backward GEMMs dl in the dtype), and (b) the error of p = softmax(z):
//    dp / p = dz_v - sum_w p_w dz_w. The baseline stores the logits in the dtype (dz_v <= u |z_v|,
//    uniform); weighted by p^2, as the terms' squares weigh them, z ~ N(2, 1) (p ~ e^z), so
//    E[z^2] = 5: (a) + (b) are ~6 roundings of random sign per term: term_rounding_scale(u, 6)
//    = 11.3 u R. The fused variants keep fp32 logits (less). fp32 cases: tf32 rounds both operands
//    of each backward GEMM (2) and the logits' tf32 error, dz ~ 0.82 u_tf32 R_z with R_z ~ 1,
//    moves p like ~2 more: term_rounding_scale(u_tf32, 4) = 9.2 u_tf32 R.
//  - loss = lse - z_label, first order sum_v dl_v dz_v: the baseline's stored logits give at most
//    u sum |dl z| (abs_sum, tripled: the label's term alone reaches ~u |z| on some token); tf32 and the fp32
//    accumulation of each logit (random across v and d) scale with the logits' terms (rss):
//    tf32_operands_scale() in fp32 cases, and 2 u32 sqrt(D) A_z <= 2 u32 D R_z from accumulation;
//    the fp32 lse itself (V exps summed: 4 sqrt(V) u32; the log and the subtraction: u32 (8 + ln V)
//    with |z| <= 8) is absolute.
//  - fp16 has no relative precision under 2^-14 (6.1e-5): a softmax weight there (at V = 128256
//    most unlabelled p ~ 1 / (1.65 V) ~ 5e-6 are) rounds to a multiple of 2^-24, an absolute error
//    up to 2^-25 of random sign that the R term (relative roundings) does not see: at 256 x 4096 x
//    128256 about 1 dW element in 3,500 read past its bound, in every variant (H100, 2026-11-26).
//    Those errors times the other operand sum like a Gaussian of sigma 2^-25 sqrt(K / 3) s, with s
//    the operand's spread (h's for dW over N tokens, W's for dh over V classes):
//    kBoundSigmas of it in atol (subnormal_terms_atol), plus the output's own rounding under
//    2^-14. bf16 and fp32 share fp32's range, where p never leaves the normal numbers.
// What the bounds catch, at the default shapes in bf16: a backward that feeds -onehot instead of
// softmax - onehot leaves dW's unlabelled rows at 0 where they are sum_n p h (size ~R, the bound
// 11.3 u R = 0.044 R): nearly every element of those rows fails; the old flat atol (~0.03 absolute)
// sat 10-150x above their size (~2e-4 to 3e-3). dh misses sum_v p W (~1.4e-4 at 1024 x 4096 x
// 32000) where its bound, ~0.04 |W[label]|, is smaller: ~15% of its elements.
LceTolerances lce_tolerances(const Shape& s, DType dtype) {
  const auto [n, d, v] = LceAxes::of(s);
  const ElemType out = resolve(ElemType::case_dtype, dtype);
  const bool fp32 = dtype == DType::fp32;
  const double u32 = unit_roundoff(ElemType::fp32);
  const double u_logits = unit_roundoff(out);  // the baseline stores them in the dtype (fp32: fp32)
  const double dl_terms = fp32 ? term_rounding_scale(kTf32UnitRoundoff, 4) : term_rounding_scale(unit_roundoff(out), 6);

  LceTolerances t;
  t.dh = dot_product_bound(out, v);
  t.dh.root_sum_sq_scale += dl_terms;
  t.dw = dot_product_bound(out, n);
  t.dw.root_sum_sq_scale += dl_terms;
  if (out == ElemType::fp16) {
    const double below_normal = subnormal_rounding(ElemType::fp16);
    auto subnormal_terms_atol = [below_normal](std::int64_t terms, double other_operand_stddev) {
      return kBoundSigmas * below_normal * std::sqrt(static_cast<double>(terms) / 3.0) * other_operand_stddev +
             below_normal;
    };
    t.dw.atol += subnormal_terms_atol(n, kLceHiddenStddev);
    t.dh.atol += subnormal_terms_atol(v, lce_weight_stddev(d));
  }
  if (fp32) {
    // cuBLASLt's TF32 mode may truncate each fp32 operand to tf32 (the tensor cores take its top
    // bits) rather than round it: an error in [0, 2u) of the operand's own sign, whose mean u per
    // operand does not average out over the sum. With two operands the bias is 2 u_tf32 times the
    // element itself (a scaled copy of the result), its spread already in the R term. Without it a
    // real tf32 variant read 1.34x its dh bound at 31 x 128 x 32003 on an H200 (2026-11-25).
    const double truncation_bias = 2 * kRoundingMargin * kTf32UnitRoundoff;
    t.dh.rtol += truncation_bias;
    t.dw.rtol += truncation_bias;
  }

  const double dd = static_cast<double>(d), vv = static_cast<double>(v);
  t.loss = dot_product_bound(ElemType::fp32, 1);
  t.loss.abs_sum_scale = 3.0 * u_logits;  // a deterministic sum: among 1000 tokens some label logit rounds by ~u
  t.loss.root_sum_sq_scale = 2.0 * u32 * dd + (fp32 ? tf32_operands_scale() : 0.0);
  t.loss.atol = 4.0 * std::sqrt(vv) * u32 + u32 * (8.0 + std::log(vv));
  return t;
}

}  // namespace kwb
