// test_bhsd_scale (TEST ONLY): an attention-shaped layout sampled on a dim that is not outermost.
//
//   y[b, h, s, d] = keep[b, s] ? x[b, h, s, d] * scale[b, h, s] + pos[b, s] / 1024 : 0
//
// x, y: [batch, heads, seq, dim] (case dtype); scale: [batch, heads, seq] fp32; pos: [batch,
// seq] int64 position ids (0..seq-1 per sequence from a random start); keep: [batch, seq] bool.
// The sample axis is seq: dim 2 of x, y and scale, dim 1 of pos and keep, so the verifier
// gathers strided slabs and the oracle sees a shape whose seq is the number sampled.
#include "harness/catalogue/registry.hpp"
#include "reference/testing/test_ops.hpp"

namespace kwb {
namespace {

std::vector<TensorSpec> bhsd_tensors(const Shape& s, DType) {
  const auto [b, h, n, d] = testing_ops::BhsdScaleAxes::of(s);
  return {
      {.name = "x", .dims = {b, h, n, d}, .sample_dim = 2, .init = Distribution::normal(0.0, 1.0)},
      {.name = "scale", .dims = {b, h, n}, .sample_dim = 2, .init = Distribution::uniform(0.5, 1.5),
       .elem = ElemType::fp32},
      {.name = "pos", .dims = {b, n}, .sample_dim = 1, .init = Distribution::position_ids(n, n),
       .elem = ElemType::int64},
      {.name = "keep", .dims = {b, n}, .sample_dim = 1, .init = Distribution::mask(0.9),
       .elem = ElemType::boolean},
      {.name = "y", .dims = {b, h, n, d}, .is_output = true, .sample_dim = 2},
  };
}

void bhsd_oracle(const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto [B, H, S, D] = testing_ops::BhsdScaleAxes::of(shape);
  const auto& x = in[0].values;
  const auto& scale = in[1].values;
  const auto& pos = in[2].values;
  const auto& keep = in[3].values;
  auto& y = out[0].values;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t s = 0; s < S; ++s) {
        const std::int64_t row = (b * H + h) * S + s;
        const bool kept = keep[b * S + s] != 0;
        for (std::int64_t d = 0; d < D; ++d)
          y[row * D + d] = kept ? x[row * D + d] * scale[row] + pos[b * S + s] * testing_ops::kPositionScale : 0.0;
      }
}

KWB_REGISTER_OP(Op{
    .name = testing_ops::kBhsdScale,
    .description = "TEST ONLY: y = keep ? x * scale + pos/1024 : 0 on [batch, heads, seq, dim], sampled on seq",
    .axes = {{"batch", 2, {}, "batch"}, {"heads", 4, {}, "heads"}, {"seq", 256, {}, "sequence (sampled)"},
             {"dim", 64, {}, "head dim"}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = bhsd_tensors,
    .work =
        [](const Shape& s, DType dtype) {
          return WorkModel{tensor_bytes(bhsd_tensors(s, dtype), dtype),
                           2.0 * static_cast<double>(testing_ops::BhsdScaleAxes::of(s).numel())};
        },
    .oracle = bhsd_oracle,
    .sample_axis = "seq",
    .invalid =
        [](const Shape& s) -> std::optional<std::string> {
          for (const char* axis : {"batch", "heads", "seq", "dim"})
            if (s.at(axis) < 1) return std::string(axis) + " must be at least 1";
          return std::nullopt;
        },
    .test_only = true,
});

}  // namespace
}  // namespace kwb
