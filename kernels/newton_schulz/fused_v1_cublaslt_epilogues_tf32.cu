// newton_schulz fused_v1_cublaslt_epilogues_tf32: the scalar updates folded into the GEMMs'
// alpha/beta epilogues, the normalisation in two small kernels, and no transposes.
//
//   sum of squares of G -> 1024 fp32 partials        # 1 (deterministic, no atomics)
//   X0 = G * (1 / (sqrt(sum) + 1e-7))                 # 2 (each block re-sums the partials)
//   5 times:
//     A = X X^T            (tall: X^T X)               # GEMM
//     B = c (A A) + b A    alpha = c, beta = b, C = A  # GEMM with the b*A, c*AA and add folded in
//     X' = B X + a X       (tall: X B^T + a X)         # GEMM, beta = a, C = X, D the other X buffer
//
// 17 launches instead of 44, and none of the baseline's 5 elementwise passes a step (~6 r^2 +
// 6 r c elements moved; at 4096^2 bf16 ~400 MB, ~130 us of ~650 us a step). The tall case
// (m > n) works in X's own [m, n] layout, A = X^T X and X' = X B^T + a X being Muon's step on
// X^T transposed term by term (the same products): no transpose copies. fp32 runs on the tensor
// cores in tf32 (the op's fp32 contract); bf16 and fp16 in the dtype with fp32 accumulation.
// Rounding: B and X' are rounded once each in the epilogue instead of three times: the simulated
// error is half the eager chain's (reference/newton_schulz.cpp).
//
// Napkin math at 4096^2 bf16: 2.06e12 FLOP, ~2.7 ms at ~750 TFLOP/s (cuBLASLt's 4096^3 rate);
// the normalisation ~25 us (G read twice, X0 written). Should beat the baseline by ~15-20%
// (its ~0.65 ms of elementwise traffic); fp32 (tf32) ~6 ms at ~350 TFLOP/s against the
// baseline's full-fp32 ~40 ms.
//
// Workspace: cuBLASLt's 32 MiB, the partials, A and B (r^2 each) and one X buffer (m n): the
// steps ping-pong between it and the output, X0 starting in the buffer so that step 5 lands in
// the output.
#include <cstdint>
#include <memory>
#include <type_traits>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/newton_schulz/ns_common.cuh"
#include "reference/newton_schulz.hpp"

namespace kwb {
namespace {

using ns::Dims;

struct Plans {
  std::unique_ptr<LtMatmul> gram, poly, update;
};

std::shared_ptr<void> prepare(const LaunchArgs& args) {
  const Dims d = ns::dims_of(args.shape);
  const bool tf32 = args.dtype == DType::fp32;
  auto p = std::make_shared<Plans>();
  p->gram = std::make_unique<LtMatmul>(d.tall ? ns::gram_view(d, args.dtype, tf32) : ns::gram_contig(d, args.dtype, tf32));
  p->poly = std::make_unique<LtMatmul>(ns::square(d, args.dtype, tf32));
  p->update = std::make_unique<LtMatmul>(d.tall ? ns::update_tall_in_place_layout(d, args.dtype, tf32)
                                                : ns::update_contig(d, args.dtype, tf32));
  return p;
}

template <class T>
void launch(const LaunchArgs& args) {
  const Dims d = ns::dims_of(args.shape);
  const ns::FusedLayout l = ns::fused_layout(d, args.dtype);
  char* ws = static_cast<char*>(args.workspace);
  const T* g = args.tensor<const T>("G");
  T* out = args.tensor<T>("X");
  float* partials = reinterpret_cast<float*>(ws + l.partials);
  T* a = reinterpret_cast<T*>(ws + l.a);
  T* b = reinterpret_cast<T*>(ws + l.b);
  T* xbuf = reinterpret_cast<T*>(ws + l.x);
  const Plans& p = args.state_as<Plans>();
  const std::int64_t mn = d.m * d.n;

  ns::launch_sum_squares(g, mn, partials, args.stream);
  ns::launch_scale_by_inverse_norm(g, partials, mn, xbuf, args.stream);

  // Five steps alternate xbuf -> out -> xbuf -> out -> xbuf -> out.
  static_assert(kNsSteps % 2 == 1, "the ping-pong below ends in the output for an odd step count");
  T* x[2] = {xbuf, out};
  for (int step = 0; step < kNsSteps; ++step) {
    const T* cur = x[step % 2];
    T* next = x[(step + 1) % 2];
    p.gram->run(cur, cur, a, args.workspace, args.stream);                       // A = X X^T
    p.poly->run(a, a, b, args.workspace, args.stream, static_cast<float>(kNsC),  // B = c A A + b A
                static_cast<float>(kNsB), a);
    // X' = B X + a X; operand A is X's view in the wide case, B's in the tall one.
    if (d.tall)
      p.update->run(b, cur, next, args.workspace, args.stream, 1.0f, static_cast<float>(kNsA), cur);
    else
      p.update->run(cur, b, next, args.workspace, args.stream, 1.0f, static_cast<float>(kNsA), cur);
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "newton_schulz",
    .name = "fused_v1_cublaslt_epilogues_tf32",
    .role = Role::fused,
    .description = "b A + c A A and a X + B X folded into cuBLASLt alpha/beta epilogues (3 GEMMs a step, no "
                   "elementwise launches, no transposes), fp32 in tf32",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = {},
    .workspace_bytes = [](const Shape& s, DType dtype) { return ns::fused_layout(ns::dims_of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
