// cross_entropy: the mean token loss of a language model and its logits gradient, together, as
// one training step needs them.
//
//   lse[r]     = log(sum_v exp(logits[r, v]))
//   loss       = (1 / n_valid) * sum over valid r of (lse[r] - logits[r, labels[r]])     (fp32 [1])
//   dlogits[r] = (softmax(logits[r]) - onehot(labels[r])) / n_valid   for a valid row r
//   dlogits[r] = 0                                                    for an ignored row
//
// A row is valid when its label names a class; labels of -100 (PyTorch's ignore_index) are
// ignored, and so is any other label outside [0, vocab) (PyTorch asserts; here no kernel ever
// indexes out of bounds). n_valid counts the valid rows. When every row is ignored the loss is
// defined as 0 and the gradient as 0 (PyTorch returns NaN, 0/0): a batch of padding should not
// poison a training run.
//
// Napkin math: the logits of labelled rows are read once (an ignored row's are not needed: 5% of
// the rows are ignored), dlogits written once, labels read once, the loss written once:
//   bytes = tokens * vocab * (0.95 + 1) * sizeof(dtype) + tokens * 4 + 4     (xent_work)
// FLOPs per labelled logit: max, exp and accumulate for the statistics, then exp again, scale and
// the one-hot subtraction for the gradient: about 8. At ~2 FLOP per byte the op is memory-bound.
//
// The loss sums over every token, so it is not aligned with the tokens axis (sample_dim -1), and
// the gradient's scale 1 / n_valid counts every label. Labels come whole (sample_dim -1: 4 bytes
// a token), so the host oracle is positional: it computes the gradient of whichever rows it is
// given against the whole count. The loss of a large case comes from the device oracle
// (reference/cross_entropy_fp64_gpu.hpp: every row's terms in fp64 on the GPU, summed here in
// row order), so its gradient rows are sampled and its 10^9 logits stay on the device; where no
// GPU may serve the oracles the case is verified in full, the host oracle running on row chunks
// in parallel threads (the 8192 x 128256 peer shape, 1G elements, in seconds).
#include <algorithm>
#include <cmath>
#include <thread>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/cross_entropy.hpp"
#include "reference/cross_entropy_fp64_gpu.hpp"

namespace kwb {
namespace {

// The share of tokens labelled -100 in generated cases (padding and prompt tokens in practice).
constexpr double kIgnoredFraction = 0.05;

Shape xent_shape(std::int64_t tokens, std::int64_t vocab) {
  return Shape{{{"tokens", tokens}, {"vocab", vocab}}};
}

// Vocabularies of real models: Llama 2 / Mistral (32000), GPT-2 (50257, odd), Llama 3 (128256,
// torch.compile's peer shape at 8192 tokens), Qwen 2 (151936), Gemma (262144). The largest
// tensor stays at or under 2 GiB in bf16.
std::vector<Shape> xent_default_shapes() {
  return {xent_shape(4096, 32000),  xent_shape(8192, 32000),  xent_shape(8192, 50257),
          xent_shape(1024, 128256), xent_shape(4096, 128256), xent_shape(8192, 128256),
          xent_shape(4096, 151936), xent_shape(2048, 262144), xent_shape(4096, 262144)};
}

// Tiny vocabularies (everything in the scalar head and tail of a row), odd sizes, 16392 (one
// CTA per row becomes a cluster of two in bf16, four in fp32), an odd vocabulary that needs a
// cluster of four (bf16) or eight (fp32), and 140001, where the fp32 cluster holds 8 vectors
// per thread.
std::vector<Shape> xent_edge_shapes() {
  std::vector<Shape> shapes;
  for (std::int64_t tokens : {1, 7, 129})
    for (std::int64_t vocab : {1, 2, 33, 4100, 16392}) shapes.push_back(xent_shape(tokens, vocab));
  shapes.push_back(xent_shape(7, 50257));
  shapes.push_back(xent_shape(129, 50257));
  shapes.push_back(xent_shape(3, 140001));
  return shapes;
}

// Error bounds from magnitudes (fp32_error_bound: 2 u_out |ref| + c u32 A), per element. With
// lse = max + log S (S = sum_v exp(x_v - max)) and p = exp(x - lse), the kernels compute exp's
// argument from max (or lse) and x in fp32, so an element's probability carries a relative error
// of about u32 (|max| + log S + |x - max|) from it, plus the normaliser's: its sum of V positive
// terms (sqrt(V) u32, the random-walk growth) and each term's own argument error, weighted by its
// share of S. 3 more for exp's and log's few ulp, the reciprocals and the scale:
//   dlogits_i  A = (p_i (sqrt(V) + |max| + log S + |x_i - max| + sum_v p_v |x_v - max| + 3)
//                   + [i = label]) / n_valid
// The label's element p - 1 cancels when the model is sure (p -> 1): its bound keeps the size
// of both terms. An ignored row's gradient is 0 exactly (A = 0).
//   loss       A = sqrt(T) loss + 2                 (the mean's own sum of T positive row losses;
//                                                    a bias of exp's and log's approximations)
//              R = sqrt(sum over valid rows of (|max| + log S + |x_label| + sqrt(V))^2) / n_valid
// loss_r = lse - x_label is a difference (small where the label's logit dominates): its terms'
// sizes stay in the bound, through R, as the rows' errors are independent of each other.
std::vector<TensorSpec> xent_tensors(const Shape& s, DType dtype) {
  const auto [tokens, vocab] = CrossEntropyAxes::of(s);
  return {
      {.name = "logits", .dims = {tokens, vocab}, .sample_dim = 0, .init = Distribution::normal(0.0, 2.0)},
      {.name = "labels", .dims = {tokens}, .sample_dim = -1,
       .init = Distribution::integers(0, vocab, kIgnoredFraction, kCrossEntropyIgnoreIndex),
       .elem = ElemType::int32},
      {.name = "loss", .dims = {1}, .is_output = true, .sample_dim = -1, .elem = ElemType::fp32,
       .tolerance = fp32_row_sum_error_bound()},
      {.name = "dlogits", .dims = {tokens, vocab}, .is_output = true, .sample_dim = 0,
       .tolerance = fp32_error_bound(resolve(ElemType::case_dtype, dtype))},
  };
}

// Useful work: an ignored row's logits need not be read (its loss is 0 and its gradient row is 0,
// written all the same), so of the logits only the labelled rows count, 1 - kIgnoredFraction of
// them as the labels are drawn (each token ignored with that probability); the labels, the loss
// and the whole gradient count in full. FLOPs: ~8 per logit of a labelled row.
WorkModel xent_work(const Shape& s, DType dtype) {
  const auto [tokens, vocab] = CrossEntropyAxes::of(s);
  const double labelled_logits = (1 - kIgnoredFraction) * static_cast<double>(tokens) * static_cast<double>(vocab);
  double bytes = 0;
  for (const TensorSpec& t : xent_tensors(s, dtype))
    bytes += t.name == "logits" ? labelled_logits * static_cast<double>(t.element_bytes(dtype)) : bytes_of(t, dtype);
  return WorkModel{bytes, 8 * labelled_logits};
}

// Rows [begin, end): the row losses (0 for ignored rows) and the gradient rows
// (softmax(row) - onehot) * inv_n (0 for ignored rows), with the bound's magnitudes: the
// gradient's per element, the loss's per row (summed by the caller).
// labels[rows[r]] is row r's label (rows: the sampled tokens' indices, or every token).
void xent_rows(const double* logits, const double* labels, const std::int64_t* rows, std::int64_t vocab,
               double inv_n, std::int64_t begin, std::int64_t end, double* row_loss, double* row_magnitude,
               double* grad, double* grad_magnitude) {
  const double sqrt_v = std::sqrt(static_cast<double>(vocab));
  for (std::int64_t r = begin; r < end; ++r) {
    const double* x = logits + r * vocab;
    double* g = grad + r * vocab;
    double* gm = grad_magnitude + r * vocab;
    const auto label = static_cast<long long>(labels[rows[r]]);
    if (!cross_entropy_label_counts(label, vocab)) {
      row_loss[r] = 0;
      row_magnitude[r] = 0;
      std::fill(g, g + vocab, 0.0);
      std::fill(gm, gm + vocab, 0.0);
      continue;
    }
    const double max = *std::max_element(x, x + vocab);
    double sum = 0, weighted_distance = 0;
    for (std::int64_t v = 0; v < vocab; ++v) {
      const double e = std::exp(x[v] - max);
      sum += e;
      weighted_distance += e * (max - x[v]);
    }
    weighted_distance /= sum;
    const double log_sum = std::log(sum), lse = max + log_sum;
    row_loss[r] = lse - x[label];
    row_magnitude[r] = std::fabs(max) + log_sum + std::fabs(x[label]) + sqrt_v;
    const double per_term = sqrt_v + std::fabs(max) + log_sum + weighted_distance + 3;
    for (std::int64_t v = 0; v < vocab; ++v) {
      const double p = std::exp(x[v] - lse);
      g[v] = p * inv_n;
      gm[v] = p * (per_term + (max - x[v])) * inv_n;
    }
    g[label] -= inv_n;
    gm[label] += inv_n;
  }
}

template <class Labels>  // doubles (the host oracle's inputs) or int32s (copied from the device)
std::int64_t count_valid(const Labels& labels, std::int64_t vocab) {
  std::int64_t n_valid = 0;
  for (auto label : labels)
    if (cross_entropy_label_counts(static_cast<long long>(label), vocab)) ++n_valid;
  return n_valid;
}

// The loss and its bound from every token's row terms (0 for an ignored row), summed in row order
// (the same bits at any thread count): shared by the host and the device oracles.
void xent_loss(const std::vector<double>& row_loss, const std::vector<double>& row_magnitude, std::int64_t tokens,
               std::int64_t n_valid, HostTensor& loss) {
  const double inv_n = n_valid > 0 ? 1.0 / static_cast<double>(n_valid) : 0.0;
  double loss_sum = 0, magnitude_sq = 0;
  for (std::size_t r = 0; r < row_loss.size(); ++r) loss_sum += row_loss[r], magnitude_sq += row_magnitude[r] * row_magnitude[r];
  loss.values[0] = loss_sum * inv_n;
  loss.abs_sum.assign(1, n_valid > 0 ? std::sqrt(static_cast<double>(tokens)) * loss.values[0] + 2 : 0.0);
  loss.root_sum_sq.assign(1, std::sqrt(magnitude_sq) * inv_n);
}

// The rows `rows` (sample indices into the whole labels) of logits `in[0]`; in[1] holds every
// token's label. The loss is that of the given rows (the whole loss when they are every token; a
// sampled case's loss is the device oracle's).
void xent_oracle(const Shape& shape, const std::vector<std::int64_t>& rows, const std::vector<HostTensor>& in,
                 std::vector<HostTensor>& out) {
  const auto [tokens, vocab] = CrossEntropyAxes::of(shape);  // tokens: the rows given
  const double* logits = in[0].values.data();
  const std::vector<double>& labels = in[1].values;
  out[1].abs_sum.assign(out[1].values.size(), 0.0);
  double* grad = out[1].values.data();
  double* grad_magnitude = out[1].abs_sum.data();
  const std::int64_t n_valid = count_valid(labels, vocab);
  // All rows ignored: loss 0 and gradient 0 (every row is ignored), where PyTorch gives NaN.
  const double inv_n = n_valid > 0 ? 1.0 / static_cast<double>(n_valid) : 0.0;

  // Row chunks in parallel: each thread owns whole rows, so the result does not depend on the
  // thread count. Small cases stay on this thread.
  std::vector<double> row_loss(static_cast<std::size_t>(tokens)), row_magnitude(row_loss.size());
  const std::int64_t elements = tokens * vocab;
  const auto hw = static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  const std::int64_t workers = std::clamp<std::int64_t>(elements / (1 << 20), 1, std::min(hw, tokens));
  const std::int64_t per = (tokens + workers - 1) / workers;
  std::vector<std::thread> pool;
  for (std::int64_t w = 1; w < workers; ++w)
    pool.emplace_back(xent_rows, logits, labels.data(), rows.data(), vocab, inv_n, std::min(tokens, w * per),
                      std::min(tokens, (w + 1) * per), row_loss.data(), row_magnitude.data(), grad, grad_magnitude);
  xent_rows(logits, labels.data(), rows.data(), vocab, inv_n, 0, std::min(tokens, per), row_loss.data(),
            row_magnitude.data(), grad, grad_magnitude);
  for (auto& t : pool) t.join();
  xent_loss(row_loss, row_magnitude, static_cast<std::int64_t>(labels.size()), n_valid, out[0]);
}

// The loss of the whole case on the GPU (DeviceOracleArgs: every tensor as the device holds it).
void xent_device_loss(const DeviceOracleArgs& a, std::vector<HostTensor>& expected) {
  const auto [tokens, vocab] = CrossEntropyAxes::of(a.shape);
  std::vector<std::int32_t> labels(static_cast<std::size_t>(tokens));
  cuda_check(cudaMemcpyAsync(labels.data(), a.tensors[1], labels.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost,
                             a.stream),
             "copy labels (cross_entropy device oracle)");
  std::vector<double> row_loss, row_magnitude;  // the call synchronises the stream
  ref::cross_entropy_rows_fp64_gpu(a.tensors[0], a.dtype, static_cast<const std::int32_t*>(a.tensors[1]), tokens,
                                   vocab, row_loss, row_magnitude, a.stream);
  xent_loss(row_loss, row_magnitude, tokens, count_valid(labels, vocab), expected[0]);
}

KWB_REGISTER_OP(Op{
    .name = "cross_entropy",
    .description = "mean over labelled tokens of logsumexp(logits[t]) - logits[t, label[t]] (fp32), and "
                   "dlogits[t] = (softmax(logits[t]) - onehot(label[t])) / n_valid (0 for label -100)",
    .axes = {{"tokens", 8192, {}, "tokens of the batch (rows), the loss averages over the labelled ones", {}, "t"},
             {"vocab", 128256, {}, "vocabulary (classes), the softmax runs over it", {}, "v"}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = xent_tensors,
    .work = xent_work,
    .positional_oracle = xent_oracle,
    .device_unaligned_oracle = xent_device_loss,
    .sample_axis = "tokens",
    .compute_unit = "fp32",
    .default_shapes = xent_default_shapes(),
    .edge_shapes = xent_edge_shapes(),
    .invalid =
        [](const Shape& s) -> std::optional<std::string> {
          if (s.at("tokens") < 1 || s.at("vocab") < 1) return "tokens and vocab must be at least 1";
          if (s.at("vocab") > 2147483647) return "vocab must fit int32 labels";
          if (s.at("tokens") > 16777216) return "tokens above 2^24 (the valid-token count is kept in an fp32)";
          return std::nullopt;
        },
});

}  // namespace
}  // namespace kwb
