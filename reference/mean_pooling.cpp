// mean_pooling_fwd and mean_pooling_bwd (formulas in mean_pooling.hpp).
//
// Napkin math: memory-bound, one add per kept element. The forward need not read a token the mask
// drops (a row of `hidden` elements), so its work model counts x at the mask's kept fraction (3/4,
// the generator's rate; at the default shapes the realised fraction is within ~1% of it), plus
// the mask and y; the backward writes every element of dx (zeros at dropped tokens) and reads dy
// and the mask, which are small. Intensity ~0.5 FLOP/byte in bf16: deep in memory-bound land.
//
// Inputs: x and dy ~ N(0, 1); mask ~ Bernoulli(3/4) as bools, so that short sequences are
// sometimes empty (seq 1: one in four) and the edge shapes meet a batch with empty sequences.
#include "reference/mean_pooling.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/catalogue/parallel_chunks.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"

namespace kwb {
namespace {

// 1 / max(n_b, 1) for each sequence, n_b its kept tokens.
std::vector<double> inverse_counts(const PoolingAxes& a, const double* mask) {
  std::vector<double> inv(static_cast<std::size_t>(a.batch));
  for (std::int64_t b = 0; b < a.batch; ++b) {
    double n = 0;
    for (std::int64_t s = 0; s < a.seq; ++s) n += mask[b * a.seq + s];
    inv[static_cast<std::size_t>(b)] = 1.0 / std::max(n, 1.0);
  }
  return inv;
}

}  // namespace

// Over the host's cores in blocks of columns of one sequence; within a block the tokens are read
// in order, a row segment at a time (the first version summed one column at a time down the
// tokens, a stride of `hidden` doubles per read: 9.2 s at 4 x 32768 x 4096 on an H100 machine).
// Each column still sums its tokens in ascending order, so the answer does not depend on the
// block size or the thread count.
void mean_pool_forward(const PoolingAxes& a, const double* x, const double* mask, double* y, double* y_abs_sum) {
  const auto [batch, seq, hidden] = a;
  constexpr std::int64_t kColumns = 256;
  const std::int64_t column_blocks = (hidden + kColumns - 1) / kColumns;
  const std::vector<double> inv = inverse_counts(a, mask);
  parallel_chunks(
      batch * column_blocks,
      [&](std::int64_t, std::int64_t begin, std::int64_t end) {
        for (std::int64_t block = begin; block < end; ++block) {
          const std::int64_t b = block / column_blocks, c0 = (block % column_blocks) * kColumns;
          const std::int64_t width = std::min(kColumns, hidden - c0);
          double sum[kColumns] = {}, abs_sum[kColumns] = {};
          for (std::int64_t s = 0; s < seq; ++s) {
            if (mask[b * seq + s] == 0) continue;
            const double* row = x + (b * seq + s) * hidden + c0;
            for (std::int64_t c = 0; c < width; ++c) {
              sum[c] += row[c];
              abs_sum[c] += std::fabs(row[c]);
            }
          }
          for (std::int64_t c = 0; c < width; ++c) {
            y[b * hidden + c0 + c] = sum[c] * inv[b];
            if (y_abs_sum) y_abs_sum[b * hidden + c0 + c] = abs_sum[c] * inv[b];
          }
        }
      },
      1);
}

void mean_pool_backward(const PoolingAxes& a, const double* dy, const double* mask, double* dx) {
  std::vector<std::int64_t> every(static_cast<std::size_t>(a.seq));
  for (std::int64_t t = 0; t < a.seq; ++t) every[static_cast<std::size_t>(t)] = t;
  mean_pool_backward_at(a, dy, mask, every, dx);
}

void mean_pool_backward_at(const PoolingAxes& a, const double* dy, const double* mask,
                           const std::vector<std::int64_t>& positions, double* dx) {
  const auto [batch, seq, hidden] = a;
  const std::vector<double> inv = inverse_counts(a, mask);
  const auto n = static_cast<std::int64_t>(positions.size());
  // Token rows over the host's cores: each element is written once, from dy and the mask alone.
  parallel_chunks(
      batch * n,
      [&](std::int64_t, std::int64_t begin, std::int64_t end) {
        for (std::int64_t row = begin; row < end; ++row) {
          const std::int64_t b = row / n, t = positions[static_cast<std::size_t>(row % n)];
          const bool kept = mask[b * seq + t] != 0;
          for (std::int64_t c = 0; c < hidden; ++c) dx[row * hidden + c] = kept ? dy[b * hidden + c] * inv[b] : 0.0;
        }
      },
      std::max<std::int64_t>(1, kHostChunkElements / std::max<std::int64_t>(hidden, 1)));
}

namespace {

Shape pooling_shape(std::int64_t batch, std::int64_t seq, std::int64_t hidden) {
  return Shape{{{"batch", batch}, {"seq", seq}, {"hidden", hidden}}};
}

std::vector<AxisSpec> pooling_axes() {
  return {{"batch", 32, {}, "sequences (each pools to one vector)", {}, "b"},
          {"seq", 512, {}, "tokens per sequence, padded; the mask keeps about 3 in 4", {}, "s"},
          {"hidden", 1024, {}, "hidden size, pooled elementwise", {}, "d"}};
}

// Sentence-embedding batches (BERT-base/large widths at 128-512 tokens) and LLM-sized ones (4096
// wide, 4K to 32K tokens: 0.5-1 GiB of x in bf16), and one with odd sizes (a hidden size that is no
// multiple of any vector width).
std::vector<Shape> pooling_default_shapes() {
  return {pooling_shape(128, 128, 1024), pooling_shape(64, 512, 768),   pooling_shape(32, 512, 1024),
          pooling_shape(16, 4096, 4096), pooling_shape(8, 8192, 4096),  pooling_shape(4, 32768, 4096),
          pooling_shape(7, 1000, 4099)};
}

// seq 1 (sequences that are empty, one in four), a hidden size of 1 and under a vector, odd sizes,
// one past a vector multiple, a long row beside a short batch, and many short sequences.
std::vector<Shape> pooling_edge_shapes() {
  return {pooling_shape(1, 1, 1),      pooling_shape(8, 1, 5),    pooling_shape(2, 7, 33),
          pooling_shape(1, 300, 4100), pooling_shape(5, 129, 8),  pooling_shape(17, 2, 1000),
          pooling_shape(1, 1, 16384),  pooling_shape(64, 3, 7),   pooling_shape(2, 1025, 520),
          pooling_shape(9, 5, 4097)};
}

std::optional<std::string> pooling_invalid(const Shape& s) {
  const auto [batch, seq, hidden] = PoolingAxes::of(s);
  if (batch < 1 || seq < 1 || hidden < 1) return "batch, seq and hidden must be at least 1";
  return std::nullopt;
}

// sample_dim 0 (the forward samples whole sequences) or -1 (the backward samples positions of the
// sequence, and each one's count needs the whole mask row).
TensorSpec mask_tensor(std::int64_t batch, std::int64_t seq, int sample_dim) {
  return {.name = "mask", .dims = {batch, seq}, .sample_dim = sample_dim,
          .init = Distribution::mask(kPoolingKeptFraction), .elem = ElemType::boolean};
}

// Roundings to the dtype, doubled as the other bounds double an output's own: the forward
// baseline's three (the sum, the count, which bf16 holds exactly only up to 256, and the
// quotient), the backward baseline's two (the count, dy / count), the fused kernels' one; the fp32
// sum over the kept tokens by its accumulation bound (A: sum |x| / n, from the oracle); fp16's
// subnormal spacing under 2^-14, where a rounding is absolute (y and dx of long sequences reach
// it: dy / 24576).
Tolerance forward_tolerance(std::int64_t seq, DType dtype) {
  const ElemType out = elem_type_of(dtype);
  Tolerance t = dot_product_bound(out, seq);
  t.rtol = 6 * unit_roundoff(out);
  t.atol = 2 * subnormal_floor(out);
  return t;
}

Tolerance backward_tolerance(DType dtype) {
  const ElemType out = elem_type_of(dtype);
  return {.atol = 2 * subnormal_floor(out), .rtol = 4 * unit_roundoff(out) + 4 * unit_roundoff(ElemType::fp32)};
}

std::vector<TensorSpec> forward_tensors(const Shape& s, DType dtype) {
  const auto [batch, seq, hidden] = PoolingAxes::of(s);
  return {{.name = "x", .dims = {batch, seq, hidden}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
          mask_tensor(batch, seq, 0),
          {.name = "y", .dims = {batch, hidden}, .is_output = true, .sample_dim = 0,
           .tolerance = forward_tolerance(seq, dtype)}};
}

// Sampled along the sequence: a batch of 4 long sequences has too few rows to sample by batch, and
// was verified in full (half a billion elements compared on the host per case). dy and the mask
// are read whole (they are small); dx's sampled positions come from the positional oracle.
std::vector<TensorSpec> backward_tensors(const Shape& s, DType dtype) {
  const auto [batch, seq, hidden] = PoolingAxes::of(s);
  return {{.name = "dy", .dims = {batch, hidden}, .init = Distribution::normal(0.0, 1.0)},
          mask_tensor(batch, seq, -1),
          {.name = "dx", .dims = {batch, seq, hidden}, .is_output = true, .sample_dim = 1,
           .tolerance = backward_tolerance(dtype)}};
}

double elements(const Shape& s) {
  const auto [batch, seq, hidden] = PoolingAxes::of(s);
  return static_cast<double>(batch) * static_cast<double>(seq) * static_cast<double>(hidden);
}

WorkModel forward_work(const Shape& s, DType dtype) {
  const auto specs = forward_tensors(s, dtype);
  const double bytes = kPoolingKeptFraction * bytes_of(specs[0], dtype) + bytes_of(specs[1], dtype) +
                       bytes_of(specs[2], dtype);
  const auto [batch, seq, hidden] = PoolingAxes::of(s);
  return WorkModel{bytes, kPoolingKeptFraction * elements(s) + static_cast<double>(batch * hidden)};
}

void forward_oracle(const Shape& s, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  HostTensor& y = out[0];
  y.abs_sum.resize(y.values.size());
  mean_pool_forward(PoolingAxes::of(s), in[0].values.data(), in[1].values.data(), y.values.data(), y.abs_sum.data());
}

// `positions`: the sequence positions dx holds (the shape's seq is their count); the mask holds
// the whole sequence.
void backward_oracle(const Shape& s, const std::vector<std::int64_t>& positions, const std::vector<HostTensor>& in,
                     std::vector<HostTensor>& out) {
  PoolingAxes whole = PoolingAxes::of(s);
  whole.seq = in[1].dims.at(1);
  mean_pool_backward_at(whole, in[0].values.data(), in[1].values.data(), positions, out[0].values.data());
}

KWB_REGISTER_OP(Op{
    .name = "mean_pooling_fwd",
    .description = "masked mean over the sequence: y[b] = sum_s mask[b,s] x[b,s] / max(n_b, 1)",
    .axes = pooling_axes(),
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = forward_tensors,
    .work = forward_work,
    .oracle = forward_oracle,
    .sample_axis = "batch",
    .compute_unit = "fp32",
    .default_shapes = pooling_default_shapes(),
    .edge_shapes = pooling_edge_shapes(),
    .invalid = pooling_invalid,
});

KWB_REGISTER_OP(Op{
    .name = "mean_pooling_bwd",
    .description = "gradient of the masked mean: dx[b,s] = mask[b,s] dy[b] / max(n_b, 1)",
    .axes = pooling_axes(),
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = backward_tensors,
    .work = [](const Shape& s, DType dtype) { return WorkModel{tensor_bytes(backward_tensors(s, dtype), dtype), elements(s)}; },
    .positional_oracle = backward_oracle,
    .sample_axis = "seq",
    .compute_unit = "fp32",
    .default_shapes = pooling_default_shapes(),
    .edge_shapes = pooling_edge_shapes(),
    .invalid = pooling_invalid,
});

}  // namespace
}  // namespace kwb
