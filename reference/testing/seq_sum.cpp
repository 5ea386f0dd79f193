// The test_seq_sum contract (see seq_sum.hpp): hidden from `list` and default sweeps.
//
// Napkin math: x read once, y written once (fp32): bytes = 2 * numel * 4. Each output element
// sums up to seq products: flops = 2 * numel * seq (an upper bound under causal=1).
#include "reference/testing/seq_sum.hpp"

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"

namespace kwb {
namespace seq_sum {

Counts& counts() {
  static Counts c;
  return c;
}

}  // namespace seq_sum

namespace {

void seq_sum_oracle(const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto n = seq_sum::Axes::of(shape);
  const auto& x = in[0].values;
  auto& y = out[0].values;
  for (std::int64_t b = 0; b < n.batch; ++b)
    for (std::int64_t h = 0; h < n.heads; ++h)
      for (std::int64_t d = 0; d < n.dim; ++d) {
        double prefix = 0, total = 0;
        for (std::int64_t t = 0; t < n.seq; ++t) total += x[n.index(b, t, h, d)] * seq_sum::weight(t);
        for (std::int64_t s = 0; s < n.seq; ++s) {
          prefix += x[n.index(b, s, h, d)] * seq_sum::weight(s);
          y[n.index(b, s, h, d)] = n.causal ? prefix : total;
        }
      }
}

KWB_REGISTER_OP(Op{
    .name = seq_sum::kOp,
    .description = "TEST ONLY: weighted sum over the sequence, in bshd or bhsd layout, causal or not",
    .axes = {{"batch", 2, {}, "independent sequences"},
             {"seq", 96, {}, "positions, summed over"},
             {"heads", 3, {}, "independent heads"},
             {"dim", 40, {}, "features per head"},
             {"layout", 0, {}, "tensor layout: [batch, seq, heads, dim] or [batch, heads, seq, dim]",
              {"bshd", "bhsd"}},
             {"causal", 0, {}, "1: position s sums positions 0..s only", {"0", "1"}}},
    .dtypes = {DType::fp32},  // the kernel accumulates with fp32 atomics
    .tensors =
        [](const Shape& s, DType) {
          const auto n = seq_sum::Axes::of(s);
          // Heads are independent: the verifier may sample them, and their dim moves with the
          // layout (2 in bshd, 1 in bhsd), which exercises strided gathers on a choice axis.
          const int heads_dim = n.bhsd ? 1 : 2;
          // fp32 atomics add up to seq terms in any order: the error grows with seq.
          const Tolerance y_tol = reduction_tolerance(ElemType::fp32, n.seq);
          return std::vector<TensorSpec>{
              {.name = "x", .dims = n.tensor_dims(), .sample_dim = heads_dim,
               .init = {Distribution::Kind::normal, 0.0, 1.0}},
              {.name = "y", .dims = n.tensor_dims(), .is_output = true, .sample_dim = heads_dim,
               .tolerance = y_tol},
          };
        },
    .work =
        [](const Shape& s, DType dtype) {
          const auto n = seq_sum::Axes::of(s);
          const double numel = static_cast<double>(n.numel());
          return WorkModel{2 * numel * static_cast<double>(dtype_size(dtype)),
                           2 * numel * static_cast<double>(n.seq)};
        },
    .oracle = seq_sum_oracle,
    .sample_axis = "heads",
    .compute_unit = "fp32",
    .invalid =
        [](const Shape& s) -> std::optional<std::string> {
          for (const char* axis : {"batch", "seq", "heads", "dim"})
            if (s.at(axis) < 1) return std::string(axis) + " must be at least 1";
          return std::nullopt;
        },
    .test_only = true,
});

}  // namespace
}  // namespace kwb
