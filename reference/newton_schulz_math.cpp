// The Newton-Schulz iteration in fp64 and its rounded emulation (reference/newton_schulz.hpp).
// One loop serves both: the oracle is the emulation with nothing rounded. The GEMMs go through
// the threaded fp64 GEMM, so the 4096^2 oracle (~2e12 FLOP) takes seconds per core-second budget
// of the worker, not minutes.
#include <cmath>
#include <cstring>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"
#include "reference/matmul_fp64.hpp"
#include "reference/newton_schulz.hpp"

namespace kwb {
namespace {

// tf32 keeps fp32's exponent and 10 mantissa bits; round to nearest even on the 13 dropped bits.
double round_tf32(double v) {
  float f = static_cast<float>(v);
  if (!std::isfinite(f)) return f;
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits += 0x0FFFu + ((bits >> 13) & 1u);
  bits &= ~0x1FFFu;
  std::memcpy(&f, &bits, sizeof bits);
  return f;
}

// GEMM operands as the tensor cores see them: tf32 rounds fp32 inputs, the others are already
// stored in the type the GEMM reads.
std::vector<double> operand(const std::vector<double>& v, NsPrecision p) {
  if (p != NsPrecision::tf32) return v;
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = round_tf32(v[i]);
  return out;
}

void store_all(std::vector<double>& v, NsPrecision p) {
  if (p == NsPrecision::fp64) return;
  for (double& x : v) x = ns_store(x, p);
}

void run(const double* g, std::int64_t m, std::int64_t n, double* out, const NsParams& prm, NsPrecision prec,
         NsChain chain) {
  const bool tall = prm.transpose_tall && m > n;
  const std::int64_t r = tall ? n : m, c = tall ? m : n;  // Y = X or X^T: r x c, r <= c when transposing
  const bool eager = chain == NsChain::eager;
  auto st = [&](double v) { return ns_store(v, prec); };

  // X0 = G / (||G||_F + eps). Eager PyTorch keeps the norm as a 0-d tensor of the dtype and
  // adds eps in the dtype; a fused kernel multiplies by the fp32 reciprocal.
  double sum_sq = 0;
  for (std::int64_t e = 0; e < m * n; ++e) sum_sq += g[e] * g[e];
  double denom = std::sqrt(sum_sq) + kNsEps;
  if (prec != NsPrecision::fp64 && eager) denom = st(st(std::sqrt(sum_sq)) + kNsEps);
  const double inv = static_cast<float>(1.0 / denom);
  std::vector<double> y(static_cast<std::size_t>(r * c));
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) {
      const double gij = tall ? g[j * n + i] : g[i * n + j];
      y[i * c + j] = prec == NsPrecision::fp64 ? gij / denom : st(eager ? gij / denom : gij * inv);
    }

  std::vector<double> a(static_cast<std::size_t>(r * r)), aa(a.size()), b(a.size()), by(y.size());
  for (int step = 0; step < prm.steps; ++step) {
    const auto yo = operand(y, prec);
    ref::matmul_fp64(r, r, c, {yo.data(), c}, {yo.data(), c, true}, a.data(), r);  // A = Y Y^T
    store_all(a, prec);
    const auto ao = operand(a, prec);
    ref::matmul_fp64(r, r, r, {ao.data(), r}, {ao.data(), r}, aa.data(), r);  // A A
    for (std::size_t e = 0; e < a.size(); ++e)
      b[e] = prec == NsPrecision::fp64 ? prm.b * a[e] + prm.c * aa[e]
             : eager                   ? st(st(prm.b * a[e]) + st(prm.c * st(aa[e])))
                                       : st(prm.c * aa[e] + prm.b * a[e]);
    const auto bo = operand(b, prec);
    ref::matmul_fp64(r, c, r, {bo.data(), r}, {yo.data(), c}, by.data(), c);  // B Y
    for (std::size_t e = 0; e < y.size(); ++e)
      y[e] = prec == NsPrecision::fp64 ? prm.a * y[e] + by[e]
             : eager                   ? st(st(prm.a * y[e]) + st(by[e]))
                                       : st(by[e] + prm.a * y[e]);
  }

  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) (tall ? out[j * n + i] : out[i * n + j]) = y[i * c + j];
}

}  // namespace

double ns_store(double v, NsPrecision p) {
  switch (p) {
    case NsPrecision::fp64: return v;
    case NsPrecision::fp32:
    case NsPrecision::tf32: return static_cast<float>(v);
    case NsPrecision::fp16: return round_to_dtype(v, DType::fp16);
    case NsPrecision::bf16: return round_to_dtype(v, DType::bf16);
  }
  return v;
}

void newton_schulz_fp64(const double* g, std::int64_t m, std::int64_t n, double* out, const NsParams& p) {
  run(g, m, n, out, p, NsPrecision::fp64, NsChain::fused);
}

void newton_schulz_emulated(const double* g, std::int64_t m, std::int64_t n, double* out, NsPrecision precision,
                            NsChain chain) {
  run(g, m, n, out, NsParams{}, precision, chain);
}

}  // namespace kwb
