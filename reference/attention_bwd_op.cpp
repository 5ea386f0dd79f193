// attention_bwd: flash attention's backward. From Q, K, V, the forward's O and lse, and dO, the
// gradients dQ, dK and dV, with the forward's causal mask, sliding window, logit soft-cap and
// grouped-query heads (dK and dV summed over the query heads of a group). reference/attention_bwd.hpp
// holds the formulas; here they read lse and O as inputs, as every FlashAttention backward does:
//   p_ij  = exp(l_ij - lse_i)           (lse given: the forward's, not recomputed)
//   D_i   = do_i . o_i                  (FlashAttention's preprocessing: part of the op)
//   dp_ij = do_i . v_j,  ds_ij = p_ij (dp_ij - D_i) l'(s_ij)
//   dq_i  = scale sum_j ds_ij k_j,  dk_j = scale sum_i ds_ij q_i,  dv_j = sum_i p_ij do_i
// With O and lse those of Q, K and V these are the gradients of attention_fwd (the CPU test
// checks them against finite differences of its oracle); as inputs, their own roundings are no
// one's error: the oracle and every variant read the same O and lse.
//
// Inputs. Q and K ~ N(0, 1.5) and V ~ N(0, 1) as attention_fwd's (peaky attention); dO ~ N(0, 1).
// O and lse are derived (Distribution::derived): the case's forward, computed on the device from
// its Q, K and V in fp32 (reference/attention_bwd_inputs_gpu.hpp), O rounded to the dtype.
//
// Layout (bshd, as attention_fwd): q, o, do, dq [b, s, h, d]; k, v, dk, dv [b, s, kv_heads, d];
// lse [b, h, s] in fp32. bf16 and fp16.
//
// Work model. FLOPs = 10 * b * h * d * (visible pairs): five GEMM-shaped products per visible
// pair (S = Q K^T recomputed, dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q), 2 FLOPs each:
// FlashAttention's convention, 2.5x the forward's. Bytes: every tensor once.
//
// Verification samples along `seq`, every output at the sampled positions: dq at sampled query
// rows (which need every key), dk and dv at sampled key rows (which need every query). So every
// input is read whole (no input has a sample_dim) and the oracle is positional: it computes each
// sampled row from the whole inputs. Cost: per sampled row and head, (visible keys) x d x ~10
// multiply-adds for dq and as many for dk and dv; the queries (keys) of one tile of sampled keys
// (queries) are streamed once per tile.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/attention.hpp"
#include "reference/attention_bwd_inputs_gpu.hpp"
#include "reference/attention_bwd_oracle.hpp"
#include "reference/attention_catalogue.hpp"

namespace kwb {
namespace {

// The shapes (b4 h32 s4096 and b1 h32 s16384 d128, causal and not), d 64, GQA, a sliding
// window and a soft-cap: attention_fwd's set, less the ones its oracle cost would not repay.
std::vector<Shape> attention_bwd_default_shapes() {
  return {
      attention_shape(16, 1024, 32, 8, 128, "1"),
      attention_shape(4, 4096, 32, 32, 128, "1"),
      attention_shape(4, 4096, 32, 32, 128, "0"),
      attention_shape(4, 4096, 32, 8, 64, "1"),
      attention_shape(1, 16384, 32, 8, 128, "1"),
      attention_shape(1, 16384, 32, 8, 128, "0"),
      attention_shape(4, 4096, 32, 8, 128, "1", 1024),
      attention_shape(4, 4096, 32, 16, 128, "1", 0, "50"),
  };
}

// Error bounds (harness/catalogue/tolerance.hpp). The oracle reports, per element of dq (query i,
// dim e; sums over the n_i keys j it sees; c_ij = l'(s_ij), L_ij = scale sum_e |q_ie k_je| the
// logit's magnitude, M_ij = sum_e |do_ie v_je| + sum_e |do_ie o_ie| that of dp_ij - D_i):
//   A = (2 ceil(d / 16) + 6) sum_j scale p_ij |c_ij| (M_ij + |dp_ij - D_i| L_ij) |k_je|
//       + (2 (ceil(n_i / 16) + 1) + 2) sum_j |scale ds_ij k_je|               (abs_sum, times u32)
//   R = sqrt(sum_j (scale ds_ij k_je)^2)
// dk likewise with q_ie for k_je, over the n_j queries of each of the group's g heads that see key
// j (the accumulation's count 2 g (ceil(n_j / 16) + 1) + 2), and dv
//   A = (2 ceil(d / 16) + 6) sum_i p_ij (1 + L_ij) |do_ie|
//       + (2 g (ceil(n_j / 16) + 1) + 2) sum_i |p_ij do_ie|,      R = sqrt(sum_i (p_ij do_ie)^2).
// What each variant rounds:
//   - P and dS to the dtype, as the A operands of the dV, dQ and dK products (every flash backward,
//     and the materialised baseline's stored P and dS): term j off by up to u of itself,
//     independently per term: R, at rounded_terms_scale (3 u).
//   - fp32, the first part of A: the logit (d products in d / 16 MMA steps: off by 2 u32 d/16 L
//     relative, which moves p by as much), dp and D (2 u32 d/16 M each), the scale, exp and the
//     soft-cap: each term's weight is the magnitudes its dot products round.
//   - fp32, the second part: the accumulation of the output's sum over its n terms (two units of the
//     running sum per 16-key MMA step, the atomics' adds of dQ's key blocks, and the sum over a
//     group's heads) moves it by at most 2 u32 steps sum |term|: weighed by the terms themselves, not
//     by their dot products' magnitudes (those were about 20x larger at 16k keys, and would let a
//     1% error of dq pass in bf16 at long sequences), and by the element's own count of terms.
//   - the output's own rounding to the dtype: rtol 1.25 u. fp16 values of P and dS under 6e-5 are
//     subnormal and keep 2^-25 absolute: atol 4 sqrt(terms) 2^-25 times the largest factor they
//     multiply (|do| or scale |k| and scale |q|: under 6 at these inputs).
constexpr double kLargestFactor = 6.0;

}  // namespace

Tolerance attention_bwd_gradient_tolerance(const AttentionAxes& a, DType dtype, double terms) {
  const ElemType out = elem_type_of(dtype);
  Tolerance t;
  t.atol = 4 * std::sqrt(terms) * subnormal_rounding(out) * kLargestFactor;
  t.rtol = rounding_rtol(out);
  t.abs_sum_scale = unit_roundoff(ElemType::fp32);  // the oracle's abs_sum counts the roundings per term
  t.root_sum_sq_scale = rounded_terms_scale(out);
  return t;
}

namespace {

std::vector<TensorSpec> attention_bwd_tensors(const Shape& s, DType dtype) {
  const auto a = AttentionAxes::of(s);
  const auto qk_init = Distribution::normal(0.0, 1.5);
  // A key is seen by at most as many queries as a query sees keys (the masks are symmetric in
  // count), for each of the group's query heads.
  const double keys = static_cast<double>(a.max_keys());
  const double queries = keys * static_cast<double>(a.heads / a.kv_heads);
  const std::vector<std::int64_t> q_dims{a.batch, a.seq, a.heads, a.head_dim};
  const std::vector<std::int64_t> kv_dims{a.batch, a.seq, a.kv_heads, a.head_dim};
  return {
      {.name = "q", .dims = q_dims, .init = qk_init},
      {.name = "k", .dims = kv_dims, .init = qk_init},
      {.name = "v", .dims = kv_dims, .init = Distribution::normal(0.0, 1.0)},
      {.name = "o", .dims = q_dims, .init = Distribution::derived()},
      {.name = "lse", .dims = {a.batch, a.heads, a.seq}, .init = Distribution::derived(), .elem = ElemType::fp32},
      {.name = "do", .dims = q_dims, .init = Distribution::normal(0.0, 1.0)},
      {.name = "dq", .dims = q_dims, .is_output = true, .sample_dim = 1,
       .tolerance = attention_bwd_gradient_tolerance(a, dtype, keys)},
      {.name = "dk", .dims = kv_dims, .is_output = true, .sample_dim = 1,
       .tolerance = attention_bwd_gradient_tolerance(a, dtype, queries)},
      {.name = "dv", .dims = kv_dims, .is_output = true, .sample_dim = 1,
       .tolerance = attention_bwd_gradient_tolerance(a, dtype, queries)},
  };
}

// The whole inputs, fp64, and the case's constants.
struct Inputs {
  const double *q, *k, *v, *o, *lse, *dout;
  std::vector<double> big_d, big_d_abs;  // D_i and sum_e |do_ie o_ie|, [b, s, h]
  std::int64_t batch, seq, heads, kv_heads, d, group;
  AttentionMask mask;
  double softcap, scale;

  const double* q_row(std::int64_t b, std::int64_t i, std::int64_t h) const { return q + ((b * seq + i) * heads + h) * d; }
  const double* do_row(std::int64_t b, std::int64_t i, std::int64_t h) const {
    return dout + ((b * seq + i) * heads + h) * d;
  }
  const double* k_row(std::int64_t b, std::int64_t j, std::int64_t g) const {
    return k + ((b * seq + j) * kv_heads + g) * d;
  }
  const double* v_row(std::int64_t b, std::int64_t j, std::int64_t g) const {
    return v + ((b * seq + j) * kv_heads + g) * d;
  }
  std::size_t row_index(std::int64_t b, std::int64_t i, std::int64_t h) const {
    return static_cast<std::size_t>((b * seq + i) * heads + h);
  }
  double lse_at(std::int64_t b, std::int64_t h, std::int64_t i) const { return lse[(b * heads + h) * seq + i]; }
};

// What one visible (query i, key j) pair gives every output, in fp64.
struct Pair {
  double p, ds, dp_minus_d;
  double grad_weight;  // p |c| (M + |dp - D| L): the A weight of dq's and dk's terms
  double p_weight;     // p (1 + L): the A weight of dv's terms
};

Pair visible_pair(const Inputs& in, const double* q, const double* dout, const double* kj, const double* vj,
                  double lse, std::size_t row) {
  double qk = 0, qk_abs = 0, dp = 0, dp_abs = 0;
  for (std::int64_t e = 0; e < in.d; ++e) {
    qk += q[e] * kj[e];
    qk_abs += std::fabs(q[e] * kj[e]);
    dp += dout[e] * vj[e];
    dp_abs += std::fabs(dout[e] * vj[e]);
  }
  const double score = in.scale * qk, logit_mag = in.scale * qk_abs;
  double c = 1;
  if (in.softcap > 0) {
    const double t = std::tanh(score / in.softcap);
    c = 1 - t * t;
  }
  Pair pr;
  pr.p = std::exp(attention_logit(score, in.softcap) - lse);
  pr.dp_minus_d = dp - in.big_d[row];
  pr.ds = pr.p * pr.dp_minus_d * c;
  pr.grad_weight = pr.p * std::fabs(c) * (dp_abs + in.big_d_abs[row] + std::fabs(pr.dp_minus_d) * logit_mag);
  pr.p_weight = pr.p * (1 + logit_mag);
  return pr;
}

constexpr std::int64_t kTileRows = 16;

// The roundings each term's dot-product magnitudes carry (A's first part: the logit's and dp's d/16
// MMA steps, two units each as tensor-core fp32 accumulation may truncate, and the scale, the lse,
// exp2 and the soft-cap), and those of the running sum over an element's terms (its second part, on
// the terms themselves): `heads` sums of `terms` terms each (dk and dv sum a group's heads one after
// another in registers), each over ceil(terms / 16) + 1 MMA steps (a range that starts inside a
// step touches one more), two units a step. The masks are a contiguous range of keys a query (and of
// queries a key), so the counts are known before the sum, and a term's two parts fold into one
// weight: no more work per element than one magnitude.
double dot_roundings(std::int64_t d) { return 2 * std::ceil(static_cast<double>(d) / 16) + 6; }
double accumulation_roundings(std::int64_t terms, std::int64_t heads = 1) {
  return 2 * static_cast<double>(heads) * (std::ceil(static_cast<double>(terms) / 16) + 1) + 2;
}

// dq at sampled query rows [r0, r1) of head h in batch b: keys outside, rows inside, so each key
// row is fetched once per tile.
void dq_tile(const Inputs& in, const std::vector<std::int64_t>& rows, std::int64_t b, std::int64_t h, std::int64_t r0,
             std::int64_t r1, std::int64_t n, HostTensor& dq) {
  const std::int64_t g = h / in.group, d = in.d;
  std::int64_t lo = in.seq, hi = 0;
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::int64_t i = rows[static_cast<std::size_t>(r)];
    lo = std::min(lo, in.mask.first_key(i));
    hi = std::max(hi, in.mask.end_key(i, in.seq));
    const std::size_t at = static_cast<std::size_t>(((b * n + r) * in.heads + h) * d);
    std::fill_n(dq.values.begin() + static_cast<std::ptrdiff_t>(at), d, 0.0);
    std::fill_n(dq.abs_sum.begin() + static_cast<std::ptrdiff_t>(at), d, 0.0);
    std::fill_n(dq.root_sum_sq.begin() + static_cast<std::ptrdiff_t>(at), d, 0.0);
  }
  const double dots = dot_roundings(d);
  std::vector<double> sums(static_cast<std::size_t>(r1 - r0));  // accumulation roundings of each row
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::int64_t i = rows[static_cast<std::size_t>(r)];
    sums[static_cast<std::size_t>(r - r0)] = accumulation_roundings(in.mask.end_key(i, in.seq) - in.mask.first_key(i));
  }
  for (std::int64_t j = lo; j < hi; ++j) {
    const double* kj = in.k_row(b, j, g);
    const double* vj = in.v_row(b, j, g);
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t i = rows[static_cast<std::size_t>(r)];
      if (!in.mask.visible(i, j, in.seq)) continue;
      const Pair pr = visible_pair(in, in.q_row(b, i, h), in.do_row(b, i, h), kj, vj, in.lse_at(b, h, i),
                                   in.row_index(b, i, h));
      const std::size_t at = static_cast<std::size_t>(((b * n + r) * in.heads + h) * d);
      const double weight = in.scale * (dots * pr.grad_weight + sums[static_cast<std::size_t>(r - r0)] * std::fabs(pr.ds));
      for (std::int64_t e = 0; e < d; ++e) {
        const double term = in.scale * pr.ds * kj[e];
        dq.values[at + e] += term;
        dq.abs_sum[at + e] += weight * std::fabs(kj[e]);
        dq.root_sum_sq[at + e] += term * term;
      }
    }
  }
}

// dk and dv at sampled key rows [r0, r1) of kv head g in batch b, over the group's query heads and
// every query that sees them: queries outside, keys inside.
void dkv_tile(const Inputs& in, const std::vector<std::int64_t>& rows, std::int64_t b, std::int64_t g, std::int64_t r0,
              std::int64_t r1, std::int64_t n, HostTensor& dk, HostTensor& dv) {
  const std::int64_t d = in.d;
  std::int64_t lo = in.seq, hi = 0;
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::int64_t j = rows[static_cast<std::size_t>(r)];
    lo = std::min(lo, in.mask.first_query(j));
    hi = std::max(hi, in.mask.end_query(j, in.seq));
    const std::size_t at = static_cast<std::size_t>(((b * n + r) * in.kv_heads + g) * d);
    for (HostTensor* t : {&dk, &dv}) {
      std::fill_n(t->values.begin() + static_cast<std::ptrdiff_t>(at), d, 0.0);
      std::fill_n(t->abs_sum.begin() + static_cast<std::ptrdiff_t>(at), d, 0.0);
      std::fill_n(t->root_sum_sq.begin() + static_cast<std::ptrdiff_t>(at), d, 0.0);
    }
  }
  const double dots = dot_roundings(d);
  std::vector<double> sums(static_cast<std::size_t>(r1 - r0));  // accumulation roundings of each row
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::int64_t j = rows[static_cast<std::size_t>(r)];
    sums[static_cast<std::size_t>(r - r0)] =
        accumulation_roundings(in.mask.end_query(j, in.seq) - in.mask.first_query(j), in.group);
  }
  for (std::int64_t h = g * in.group; h < (g + 1) * in.group; ++h)
    for (std::int64_t i = lo; i < hi; ++i) {
      const double* q = in.q_row(b, i, h);
      const double* dout = in.do_row(b, i, h);
      const double lse = in.lse_at(b, h, i);
      const std::size_t row = in.row_index(b, i, h);
      for (std::int64_t r = r0; r < r1; ++r) {
        const std::int64_t j = rows[static_cast<std::size_t>(r)];
        if (!in.mask.visible(i, j, in.seq)) continue;
        const Pair pr = visible_pair(in, q, dout, in.k_row(b, j, g), in.v_row(b, j, g), lse, row);
        const std::size_t at = static_cast<std::size_t>(((b * n + r) * in.kv_heads + g) * d);
        const double roundings = sums[static_cast<std::size_t>(r - r0)];
        const double k_weight = in.scale * (dots * pr.grad_weight + roundings * std::fabs(pr.ds));
        const double v_weight = dots * pr.p_weight + roundings * pr.p;
        for (std::int64_t e = 0; e < d; ++e) {
          const double k_term = in.scale * pr.ds * q[e], v_term = pr.p * dout[e];
          dk.values[at + e] += k_term;
          dk.abs_sum[at + e] += k_weight * std::fabs(q[e]);
          dk.root_sum_sq[at + e] += k_term * k_term;
          dv.values[at + e] += v_term;
          dv.abs_sum[at + e] += v_weight * std::fabs(dout[e]);
          dv.root_sum_sq[at + e] += v_term * v_term;
        }
      }
    }
}

}  // namespace

// in: q, k, v, o, lse, do whole; out: dq [b, n, h, d], dk and dv [b, n, kv_heads, d] at the sampled
// positions rows[0..n). The true seq is K's dim 1. Tasks (a tile of sampled rows of one batch and
// head for dq, of one batch and kv head for dk and dv) are handed to threads one at a time (causal
// rows differ in cost).
void attention_bwd_oracle(const Shape& s, const std::vector<std::int64_t>& rows, const std::vector<HostTensor>& in,
                          std::vector<HostTensor>& out) {
  const auto a = AttentionAxes::of(s);
  const std::int64_t n = a.seq;
  Inputs x{in[0].values.data(), in[1].values.data(), in[2].values.data(), in[3].values.data(),
           in[4].values.data(), in[5].values.data(), {}, {}, a.batch, in[1].dims[1], a.heads, a.kv_heads,
           a.head_dim, a.heads / a.kv_heads, a.mask(), a.softcap, 1.0 / std::sqrt(static_cast<double>(a.head_dim))};
  const std::int64_t all_rows = x.batch * x.seq * x.heads;
  x.big_d.assign(static_cast<std::size_t>(all_rows), 0.0);
  x.big_d_abs.assign(x.big_d.size(), 0.0);
  for (std::int64_t r = 0; r < all_rows; ++r)
    for (std::int64_t e = 0; e < x.d; ++e) {
      const double t = x.dout[r * x.d + e] * x.o[r * x.d + e];
      x.big_d[static_cast<std::size_t>(r)] += t;
      x.big_d_abs[static_cast<std::size_t>(r)] += std::fabs(t);
    }
  for (HostTensor& t : out) {
    t.abs_sum.assign(t.values.size(), 0.0);
    t.root_sum_sq.assign(t.values.size(), 0.0);
  }
  const std::int64_t tiles = (n + kTileRows - 1) / kTileRows;
  const std::int64_t dq_tasks = x.batch * x.heads * tiles, tasks = dq_tasks + x.batch * x.kv_heads * tiles;
  std::atomic<std::int64_t> next{0};
  auto work = [&] {
    for (std::int64_t t = next++; t < tasks; t = next++) {
      const bool for_dq = t < dq_tasks;
      const std::int64_t u = for_dq ? t : t - dq_tasks, heads = for_dq ? x.heads : x.kv_heads;
      const std::int64_t tile = u % tiles, head = (u / tiles) % heads, b = u / (tiles * heads);
      const std::int64_t r0 = tile * kTileRows, r1 = std::min(n, r0 + kTileRows);
      if (for_dq)
        dq_tile(x, rows, b, head, r0, r1, n, out[0]);
      else
        dkv_tile(x, rows, b, head, r0, r1, n, out[1], out[2]);
    }
  };
  const std::int64_t threads = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, std::max<std::int64_t>(tasks, 1));
  std::vector<std::thread> pool;
  for (std::int64_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  for (HostTensor& t : out)
    for (double& r2 : t.root_sum_sq) r2 = std::sqrt(r2);
}

namespace {

KWB_REGISTER_OP(Op{
    .name = "attention_bwd",
    .description = "flash attention backward: dQ, dK, dV from Q, K, V, the forward's O and lse, and dO (D = "
                   "rowsum(dO * O) included), bshd, causal / sliding window / soft-cap, grouped-query heads",
    .axes = attention_axes(),
    .dtypes = {DType::bf16, DType::fp16},
    .tensors = attention_bwd_tensors,
    .work = [](const Shape& s, DType dtype) {
      const auto a = AttentionAxes::of(s);
      const double pairs = a.mask().visible_pairs(a.seq);
      return WorkModel{tensor_bytes(attention_bwd_tensors(s, dtype), dtype),
                       10.0 * static_cast<double>(a.batch * a.heads * a.head_dim) * pairs};
    },
    .positional_oracle = attention_bwd_oracle,
    .derive_inputs = ref::attention_bwd_derive_inputs,
    .sample_axis = "seq",
    .compute_unit = "tensor",
    .default_shapes = attention_bwd_default_shapes(),
    .edge_shapes = attention_edge_shapes(),
    .invalid = attention_invalid,
});

}  // namespace
}  // namespace kwb
