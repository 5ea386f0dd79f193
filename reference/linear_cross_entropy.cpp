// linear_cross_entropy: hidden states times the vocabulary projection, then the per-token
// cross-entropy, forward and backward in one op (formulas in linear_cross_entropy.hpp):
// loss [N] fp32, dh [N, D] and dW [V, D] in the case dtype, gradients of the sum of the losses.
//
// Napkin math (bf16, N 8192, D 4096, V 128256, Llama 3 8B's head): three GEMMs of 2 N V D =
// 8.6 TFLOP each, 25.8 TFLOP, ~33 ms at 790 TFLOP/s; the tensors once (h 67 MB, W 1.05 GB,
// dW 1.05 GB, dh 67 MB): ~2.2 GB, under 1 ms at 3000 GB/s: compute-bound, by 40x. The softmax's
// ~8 FLOP per logit (~8.4 GFLOP) is not counted: it runs on CUDA cores, under 0.1% of the
// tensor work. The eager baseline also materialises the [N, V] logits and their gradient
// (~14 bytes per logit across its buffers: 14.7 GB here); the chunked form keeps one chunk.
//
// Verification: sampled along the vocabulary. dW's rows are independent of each other, so the
// verifier checks blocks of them (sample_dim 0 along vocab); every input is read whole and the
// loss and dh, which need every logit, are checked whole (harness/worker/verify/sampling.hpp).
// The fp64 oracle makes the logits and dh in full and dW at the checked rows (chunked and
// threaded, its products on the worker's GPU when large; each also sums |term| and term^2 for the
// outputs' error bounds, linear_cross_entropy_oracle.cpp). Before, dW was checked whole: 525 M
// elements and their bound magnitudes (12.6 GB of fp64) a case at 256 x 4096 x 128256.
//
// Inputs: h ~ N(0, 1) (a normalised hidden state); W ~ N(0, 1/sqrt(D)) so the logits are ~N(0, 1)
// (a trained head's logits are of that order); labels uniform in [0, V) with 5% set to -100
// (padding and prompt tokens), which exercises the zero rows of ignored tokens.
#include <cmath>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/cross_entropy.hpp"
#include "reference/linear_cross_entropy.hpp"

namespace kwb {
namespace {

constexpr double kIgnoredFraction = 0.05;

std::vector<TensorSpec> lce_tensors(const Shape& s, DType dtype) {
  const auto [n, d, v] = LceAxes::of(s);
  const LceTolerances tol = lce_tolerances(s, dtype);
  return {
      {.name = "h", .dims = {n, d}, .init = Distribution::normal(0.0, kLceHiddenStddev)},
      {.name = "W", .dims = {v, d}, .init = Distribution::normal(0.0, lce_weight_stddev(d))},
      {.name = "labels", .dims = {n}, .init = Distribution::integers(0, v, kIgnoredFraction, kCrossEntropyIgnoreIndex),
       .elem = ElemType::int32},
      {.name = "loss", .dims = {n}, .is_output = true, .elem = ElemType::fp32, .tolerance = tol.loss},
      {.name = "dh", .dims = {n, d}, .is_output = true, .tolerance = tol.dh},
      {.name = "dW", .dims = {v, d}, .is_output = true, .sample_dim = 0, .tolerance = tol.dw},
  };
}

// Useful work: an ignored token (label -100, kIgnoredFraction of them as the labels are drawn)
// has loss 0, a zero dh row and no part in dW, so neither its logits (2 V D FLOPs), its share
// of dh (2 V D) and of dW (2 V D), nor its row of h need be computed or read: the three GEMMs
// count the labelled tokens, 6 (1 - f) N V D, and h its labelled rows; W, the labels and every
// output count in full.
WorkModel lce_work(const Shape& s, DType dtype) {
  const auto [n, d, v] = LceAxes::of(s);
  const double labelled = (1 - kIgnoredFraction) * static_cast<double>(n);
  double bytes = 0;
  for (const TensorSpec& t : lce_tensors(s, dtype))
    bytes += t.name == "h" ? labelled * static_cast<double>(d) * static_cast<double>(t.element_bytes(dtype))
                           : bytes_of(t, dtype);
  return WorkModel{bytes, 6 * labelled * static_cast<double>(v) * static_cast<double>(d)};
}

// `dw_rows`: the vocabulary rows of dW the verifier checks (every row when nothing is sampled; the
// shape's vocab is their count). The inputs are whole, W with every row: the loss and dh come
// whole from every logit.
void lce_oracle(const Shape& s, const std::vector<std::int64_t>& dw_rows, const std::vector<HostTensor>& in,
                std::vector<HostTensor>& out) {
  const std::int64_t tokens = s.at("tokens"), hidden = s.at("hidden"), vocab = in[1].dims.at(0);
  for (HostTensor& o : out) {
    o.abs_sum.resize(o.values.size());
    o.root_sum_sq.resize(o.values.size());
  }
  const LceMagnitudes mags{out[0].abs_sum.data(), out[0].root_sum_sq.data(), out[1].abs_sum.data(),
                           out[1].root_sum_sq.data(), out[2].abs_sum.data(), out[2].root_sum_sq.data()};
  const bool every_row = static_cast<std::int64_t>(dw_rows.size()) == vocab;
  lce_reference(tokens, hidden, vocab, in[0].values.data(), in[1].values.data(), in[2].values.data(),
                out[0].values.data(), out[1].values.data(), out[2].values.data(), 0, &mags,
                every_row ? nullptr : &dw_rows);
}

// Real heads: Llama 2 7B (D 4096, V 32000), GPT-2
// medium (1024, 50257, odd), Llama 3 8B (4096, 128256), and a 4096-token batch over a small head
// where chunking divides the tokens (4 chunks of 1024). Each is N V D ~1.3e11: the oracle's
// 2 N V D ~2.6e11 fp64 multiply-adds (the logits and dh; dW only at the checked rows), on the
// worker's GPU at these sizes, well inside the 120 s case watchdog (three dtypes: three oracle
// runs a shape).
// Llama 3 8B at 8192 tokens (N V D 4.3e12, oracle 1.3e13: ~15 min) is not a default: run it
// with --axis tokens=8192,hidden=4096,vocab=128256 --case-timeout 3600; both workspaces are
// formulas of N (workspace_bytes), exact at any N without running it.
std::vector<Shape> lce_default_shapes() {
  return {lce_shape(1024, 4096, 32000), lce_shape(2048, 1024, 50257), lce_shape(256, 4096, 128256),
          lce_shape(4096, 1024, 32000)};
}

// Odd sizes on every axis: a single token, one class (every loss 0), two classes (the logistic
// case), primes, tokens one past a chunk of 1024 and of 4096 (a tail chunk of 1, with the fp32
// dW accumulator), hidden sizes that are not a multiple of 8 (the 16-byte rows cuBLASLt
// prefers), and vocabularies one past a 128-wide tile.
std::vector<Shape> lce_edge_shapes() {
  return {lce_shape(1, 1, 1),       lce_shape(1, 8, 2),     lce_shape(3, 7, 2),
          lce_shape(7, 33, 3),      lce_shape(65, 64, 129), lce_shape(129, 65, 1000),
          lce_shape(1025, 33, 130), lce_shape(4097, 64, 257), lce_shape(31, 128, 32003)};
}

KWB_REGISTER_OP(Op{
    .name = "linear_cross_entropy",
    .description = "lm head + per-token cross-entropy: loss[n] = logsumexp(h[n] W^T) - (h[n] W^T)[label] (fp32, "
                   "0 for label -100), dh = dl W, dW = dl^T h with dl = softmax - onehot (gradients of the sum)",
    .axes = {{"tokens", 1024, {}, "tokens N (batch x sequence), the rows of h", {}, "t"},
             {"hidden", 4096, {}, "hidden size D, the GEMMs' reduction for the logits", {}, "d"},
             {"vocab", 32000, {}, "vocabulary V, the rows of W and the softmax's length", {}, "v"}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = lce_tensors,
    .work = lce_work,
    .positional_oracle = lce_oracle,
    .unaligned_from_whole_inputs = true,
    .sample_axis = "vocab",
    .compute_unit = "tensor",
    .default_shapes = lce_default_shapes(),
    .edge_shapes = lce_edge_shapes(),
    .invalid =
        [](const Shape& s) -> std::optional<std::string> {
          const auto [tokens, hidden, vocab] = LceAxes::of(s);
          if (tokens < 1 || hidden < 1 || vocab < 1) return "tokens, hidden and vocab must be at least 1";
          if (vocab > 2147483647) return "vocab must fit int32 labels";
          return std::nullopt;
        },
});

}  // namespace
}  // namespace kwb
