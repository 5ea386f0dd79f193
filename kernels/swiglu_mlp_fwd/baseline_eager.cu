// swiglu_mlp_fwd baseline_eager_3_gemms: the SwiGLU MLP as eager PyTorch runs it, one launch per
// framework op (weights in nn.Linear's layout, no biases):
//
//   g = F.linear(x, Wg)        # 1  cuBLASLt GEMM, [m, f] in the dtype
//   s = F.silu(g)              # 2  elementwise (fp32 math inside, output in the dtype)
//   u = F.linear(x, Wu)        # 3  cuBLASLt GEMM, into g's block (freed by then: the caching
//                              #    allocator hands it back for the same size)
//   h = s * u                  # 4  elementwise
//   y = F.linear(h, Wd)        # 5  cuBLASLt GEMM, [m, d]
//
// 5 launches: 3 GEMMs (fp32 cases in full fp32: allow_tf32 off, PyTorch's default) and 2
// elementwise passes. Workspace: cuBLASLt's 32 MiB and three [m, f] buffers (g then u, s, h): the
// peak the eager chain holds. g, u, s and h are each rounded to the dtype (the op's tolerance
// counts these roundings).
//
// Napkin math (bf16, 8192 x 4096 x 14336): GEMMs 2.89 TFLOP, ~3.7 ms at 790 TFLOP/s; the two
// elementwise passes move 5 x 235 MB (~0.4 ms at 3000 GB/s), and the GEMMs write and read g, u
// and h (another ~0.7 GB): ~4.3 ms.
#include <cstdint>
#include <memory>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/cublaslt_matmul.cuh"
#include "kernels/common/eager_ops.cuh"
#include "kernels/swiglu_mlp_fwd/swiglu_mlp_args.cuh"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<silu_gate>, ...).
namespace step {
struct silu_gate;
struct silu_gate_times_up;
}  // namespace step

namespace {

struct Plans {
  std::unique_ptr<LtMatmul> gate_up;  // [m, f] = x Wg^T and x Wu^T: one plan, two launches
  std::unique_ptr<LtMatmul> down;     // [m, d] = h Wd^T
};

// Workspace: cuBLASLt's, then the [m, f] buffers A (g, then u), S (silu(g)) and H (h).
struct Layout {
  std::size_t a, s, h, total;
};
Layout layout(const SwigluMlpAxes& axes, DType dtype) {
  const std::size_t mf = static_cast<std::size_t>(axes.m) * static_cast<std::size_t>(axes.f);
  const std::size_t buf = align_up(mf * dtype_size(dtype));
  Layout l{};
  l.a = kLtWorkspaceBytes;
  l.s = l.a + buf;
  l.h = l.s + buf;
  l.total = l.h + buf;
  return l;
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  const SwigluMlpArgs<T> p = swiglu_mlp_args<T>(a);
  const Plans& plans = a.state_as<Plans>();
  const Layout l = layout(SwigluMlpAxes::of(a.shape), a.dtype);
  char* ws = static_cast<char*>(a.workspace);
  T* gu = reinterpret_cast<T*>(ws + l.a);
  T* s = reinterpret_cast<T*>(ws + l.s);
  T* h = reinterpret_cast<T*>(ws + l.h);
  const std::int64_t mf = p.m * p.f;
  plans.gate_up->run(p.wg, p.x, gu, a.workspace, a.stream);
  eager_map<step::silu_gate>(mf, a.stream, [=] __device__(std::int64_t i) {
    const float g = to_float(gu[i]);
    s[i] = from_float<T>(g / (1.0f + expf(-g)));
  });
  plans.gate_up->run(p.wu, p.x, gu, a.workspace, a.stream);
  eager_map<step::silu_gate_times_up>(mf, a.stream, [=] __device__(std::int64_t i) { h[i] = from_float<T>(to_float(s[i]) * to_float(gu[i])); });
  plans.down->run(p.wd, h, p.y, a.workspace, a.stream);
}

std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const auto [m, d, f] = SwigluMlpAxes::of(a.shape);
  auto plans = std::make_shared<Plans>();
  plans->gate_up = std::make_unique<LtMatmul>(linear_spec(m, f, d, a.dtype, false));
  plans->down = std::make_unique<LtMatmul>(linear_spec(m, d, f, a.dtype, false));
  return plans;
}

KWB_REGISTER_VARIANT(Variant{
    .op = "swiglu_mlp_fwd",
    .name = "baseline_eager_3_gemms",
    .role = Role::baseline,
    .description = "op by op as eager PyTorch: gate GEMM, silu, up GEMM, mul, down GEMM (cuBLASLt, fp32: no "
                   "tf32): 5 launches",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = {},
    .workspace_bytes = [](const Shape& s, DType dtype) { return layout(SwigluMlpAxes::of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .math = "fp32: fp32",
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
