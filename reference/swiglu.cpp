// swiglu_fwd and swiglu_bwd: the gated activation of a SwiGLU MLP, out = silu(gate) * up, and
// its gradients. gate and up are the two halves of the up-projection, [tokens, intermediate].
//
// Napkin math: purely elementwise, no reduction and no reuse, so each element of every tensor
// crosses DRAM exactly once and the roof is the copy bandwidth.
//   forward:  bytes = 3 * rows * cols * sizeof(dtype)   (read gate, up; write out)
//   backward: bytes = 5 * rows * cols * sizeof(dtype)   (read gate, up, dout; write dgate, dup)
// FLOPs per element, counting exp and the reciprocal as one each:
//   forward 5  (exp, 1 + e, reciprocal = sigmoid; gate * sig; * up)
//   backward 11 (sigmoid 3; silu 1; dup 1; dout * up, 1 - sig, gate * (.), 1 + (.), sig * (.), * (.) = 6)
// About 1 FLOP per byte in bf16: deep in memory-bound land.
//
// Inputs: gate ~ N(0, 2) so that both saturated tails of the sigmoid and the zero of
// d silu / d gate (gate ~ -1.28) are exercised; up and dout ~ N(0, 1).
#include "reference/swiglu.hpp"

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

Shape swiglu_shape(std::int64_t rows, std::int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; }

// Intermediate sizes of LLaMA-class MLPs: 5632 (1.1B), 11008 (7B), 14336 (8B), 7168 (the
// peer's shape), 8192; 7170 and 4099 are not multiples of any vector width. The largest
// tensor (65536 x 5632 fp32) is 1.4 GiB.
std::vector<Shape> swiglu_default_shapes() {
  return {
      swiglu_shape(4096, 5632),   swiglu_shape(4096, 11008),  swiglu_shape(16384, 7168),
      swiglu_shape(16384, 7170),  swiglu_shape(16384, 8192),  swiglu_shape(16384, 14336),
      swiglu_shape(32768, 11008), swiglu_shape(65536, 5632),  swiglu_shape(8191, 4099),
  };
}

// The kernels see a flat array of rows * cols elements: a 16-byte body, a remainder pass and a
// scalar tail. Totals below one vector (1, 3x5), odd totals, and 1031 x 4099 (4.2M elements:
// on an H100 one to three whole grid-stride steps of a one-wave grid, then a remainder step).
std::vector<Shape> swiglu_edge_shapes() {
  return {
      swiglu_shape(1, 1),     swiglu_shape(3, 5),      swiglu_shape(1, 8),      swiglu_shape(7, 33),
      swiglu_shape(33, 1000), swiglu_shape(300, 4100), swiglu_shape(17, 7170),  swiglu_shape(1, 16384),
      swiglu_shape(1031, 4099),
  };
}

std::vector<AxisSpec> swiglu_axes() {
  return {{"rows", 16384, {}, "independent rows (tokens)"},
          {"cols", 7168, {}, "intermediate size of the MLP"}};
}

std::optional<std::string> swiglu_invalid(const Shape& s) {
  if (s.at("rows") < 1 || s.at("cols") < 1) return "rows and cols must be at least 1";
  return std::nullopt;
}

TensorSpec row_tensor(const char* name, std::int64_t rows, std::int64_t cols, Distribution init) {
  return {.name = name, .dims = {rows, cols}, .sample_dim = 0, .init = init};
}

// Error bounds (fp32_error_bound) from the magnitudes swiglu_magnitudes() gives: fp32 arithmetic
// of exact inputs (A), then the store. The eager baselines also store an intermediate in the
// case dtype before the last product (R): a single rounding, not a sum of random ones, so its
// scale is 2 u_out (the same half share as the store's 2 u_out), not kStorageBoundSafety's.
Tolerance swiglu_tolerance(DType dtype) {
  const ElemType out = elem_type_of(dtype);
  Tolerance t = fp32_error_bound(out);
  if (out != ElemType::fp32) t.root_sum_sq_scale = 2 * unit_roundoff(out);
  return t;
}
TensorSpec row_output(const char* name, std::int64_t rows, std::int64_t cols, DType dtype) {
  return {.name = name, .dims = {rows, cols}, .is_output = true, .sample_dim = 0, .tolerance = swiglu_tolerance(dtype)};
}

std::vector<TensorSpec> swiglu_fwd_tensors(const Shape& s, DType dtype) {
  const auto [rows, cols] = RowsCols::of(s);
  return {
      row_tensor("gate", rows, cols, Distribution::normal(0.0, 2.0)),
      row_tensor("up", rows, cols, Distribution::normal(0.0, 1.0)),
      row_output("out", rows, cols, dtype),
  };
}

std::vector<TensorSpec> swiglu_bwd_tensors(const Shape& s, DType dtype) {
  const auto [rows, cols] = RowsCols::of(s);
  return {
      row_tensor("gate", rows, cols, Distribution::normal(0.0, 2.0)),
      row_tensor("up", rows, cols, Distribution::normal(0.0, 1.0)),
      row_tensor("dout", rows, cols, Distribution::normal(0.0, 1.0)),
      row_output("dgate", rows, cols, dtype),
      row_output("dup", rows, cols, dtype),
  };
}

void swiglu_fwd_oracle(const Shape&, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto& gate = in[0].values;
  const auto& up = in[1].values;
  auto& y = out[0].values;
  out[0].abs_sum.resize(y.size());
  out[0].root_sum_sq.resize(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    y[i] = swiglu_forward(gate[i], up[i]);
    const SwigluMagnitudes m = swiglu_magnitudes(gate[i], up[i], 1.0);
    out[0].abs_sum[i] = m.out;
    out[0].root_sum_sq[i] = m.out_stored;
  }
}

void swiglu_bwd_oracle(const Shape&, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto& gate = in[0].values;
  const auto& up = in[1].values;
  const auto& dout = in[2].values;
  auto& dgate = out[0].values;
  auto& dup = out[1].values;
  for (HostTensor& o : out) {
    o.abs_sum.resize(o.values.size());
    o.root_sum_sq.resize(o.values.size());
  }
  for (std::size_t i = 0; i < dgate.size(); ++i) {
    const SwigluGrads g = swiglu_backward(gate[i], up[i], dout[i]);
    dgate[i] = g.dgate;
    dup[i] = g.dup;
    const SwigluMagnitudes m = swiglu_magnitudes(gate[i], up[i], dout[i]);
    out[0].abs_sum[i] = m.dgate;
    out[0].root_sum_sq[i] = m.dgate_stored;
    out[1].abs_sum[i] = m.dup;
    out[1].root_sum_sq[i] = m.dup_stored;
  }
}

double elements(const Shape& s) { return static_cast<double>(s.at("rows")) * static_cast<double>(s.at("cols")); }

KWB_REGISTER_OP(Op{
    .name = "swiglu_fwd",
    .description = "SwiGLU forward: out = silu(gate) * up = gate * sigmoid(gate) * up, elementwise",
    .axes = swiglu_axes(),
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = swiglu_fwd_tensors,
    .work = [](const Shape& s, DType dtype) {
      return WorkModel{tensor_bytes(swiglu_fwd_tensors(s, dtype), dtype), 5 * elements(s)};
    },
    .oracle = swiglu_fwd_oracle,
    .sample_axis = "rows",
    .compute_unit = "fp32",
    .default_shapes = swiglu_default_shapes(),
    .edge_shapes = swiglu_edge_shapes(),
    .invalid = swiglu_invalid,
});

KWB_REGISTER_OP(Op{
    .name = "swiglu_bwd",
    .description = "SwiGLU backward: sig = sigmoid(gate); dgate = dout * up * sig * (1 + gate * (1 - sig)), "
                   "dup = dout * gate * sig, elementwise",
    .axes = swiglu_axes(),
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = swiglu_bwd_tensors,
    .work = [](const Shape& s, DType dtype) {
      return WorkModel{tensor_bytes(swiglu_bwd_tensors(s, dtype), dtype), 11 * elements(s)};
    },
    .oracle = swiglu_bwd_oracle,
    .sample_axis = "rows",
    .compute_unit = "fp32",
    .default_shapes = swiglu_default_shapes(),
    .edge_shapes = swiglu_edge_shapes(),
    .invalid = swiglu_invalid,
});

}  // namespace
}  // namespace kwb
