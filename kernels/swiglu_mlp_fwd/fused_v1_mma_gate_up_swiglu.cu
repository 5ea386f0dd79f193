// swiglu_mlp_fwd fused_v1_mma_gate_up_swiglu_cp_async (bf16, fp16) and
// fused_v1_mma_gate_up_swiglu_tf32_cp_async (fp32 in tf32): the gate and up projections and the
// SwiGLU in ONE mma.sync GEMM whose epilogue writes h = silu(x Wg^T) * (x Wu^T) directly, then
// the down projection through cuBLASLt.
//
// What changes from the baseline: prepare() interleaves the rows of Wg and Wu into one packed
// weight Wp [2f, d] (row 2j = Wg[j], row 2j + 1 = Wu[j]), so the GEMM x Wp^T [m, 2f] holds gate j
// and up j in adjacent columns 2j, 2j + 1: exactly the accumulator pair the mma fragment gives one
// thread (kernels/common/mma_gemm.cuh). The epilogue computes silu(g) * u in fp32 from the
// accumulators and rounds h once. g and u never reach memory: the baseline's 2 elementwise
// passes and its g/u/s round trips (~1 GB at the 8B shape) disappear, and the two skinny GEMMs
// become one twice as wide. The down GEMM (h [m, f] x Wd^T) stays with cuBLASLt.
// Workspace (declared): cuBLASLt's 32 MiB, Wp (2 f d elements, packed once per case in prepare(),
// outside timing, as weights are packed at load time) and h [m, f].
//
// Napkin math (bf16, 8192 x 4096 x 14336): gate/up 1.92 TFLOP at ~500 TFLOP/s (mma.sync v3
// class) ~3.8 ms, down 0.96 TFLOP at ~700 (cuBLASLt) ~1.4 ms: ~5.2 ms, against the baseline's
// ~4.3 ms of cuBLAS: this first fused version wins only where the mainloop matches cuBLAS (a
// wgmma mainloop is the next step); at small m it saves the elementwise passes and launches.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/cublaslt_matmul.cuh"
#include "kernels/common/eager_ops.cuh"
#include "kernels/common/mma_gemm.cuh"
#include "kernels/swiglu_mlp_fwd/swiglu_mlp_args.cuh"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<interleave_gate_up_weights>, ...).
namespace step {
struct interleave_gate_up_weights;
}  // namespace step

namespace {

// The mainloop's epilogue: columns (2j, 2j + 1) of x Wp^T are (gate j, up j) of h's column j.
template <class T>
struct SwigluEpilogue {
  T* h;
  std::int64_t f;
  __device__ __forceinline__ void operator()(std::int64_t row, std::int64_t col, float g, float u) const {
    h[row * f + col / 2] = from_float<T>(g / (1.0f + expf(-g)) * u);  // col is even and col + 1 < 2f
  }
};

// Workspace: cuBLASLt's, then Wp [2f, d], then h [m, f].
struct Layout {
  std::size_t wp, h, total;
};
Layout layout(const SwigluMlpAxes& axes, DType dtype) {
  const std::size_t m = static_cast<std::size_t>(axes.m), d = static_cast<std::size_t>(axes.d),
                    f = static_cast<std::size_t>(axes.f), e = dtype_size(dtype);
  Layout l{};
  l.wp = kLtWorkspaceBytes;
  l.h = l.wp + align_up(2 * f * d * e);
  l.total = l.h + align_up(m * f * e);
  return l;
}

template <class T>
void launch(const LaunchArgs& a) {
  const SwigluMlpArgs<T> p = swiglu_mlp_args<T>(a);
  const Layout l = layout(SwigluMlpAxes::of(a.shape), a.dtype);
  char* ws = static_cast<char*>(a.workspace);
  const T* wp = reinterpret_cast<const T*>(ws + l.wp);
  T* h = reinterpret_cast<T*>(ws + l.h);
  launch_mma_gemm_tuned<T>(a.tunable("tile"), a.tunable("stages"), p.x, wp, p.m, 2 * p.f, p.d,
                           SwigluEpilogue<T>{h, p.f}, a.stream);
  a.state_as<LtMatmul>().run(p.wd, h, p.y, a.workspace, a.stream);
}

// Wp[2j + s][c] = (s ? Wu : Wg)[j][c]: one elementwise pass, once per case.
template <class T>
void pack_typed(const LaunchArgs& a) {
  const SwigluMlpArgs<T> p = swiglu_mlp_args<T>(a);
  T* wp = reinterpret_cast<T*>(static_cast<char*>(a.workspace) + layout(SwigluMlpAxes::of(a.shape), a.dtype).wp);
  const T* wg = p.wg;
  const T* wu = p.wu;
  const std::int64_t d = p.d;
  eager_map<step::interleave_gate_up_weights>(2 * p.f * d, a.stream, [=] __device__(std::int64_t i) {
    const std::int64_t r = i / d, c = i % d;
    wp[i] = ((r & 1) ? wu : wg)[(r >> 1) * d + c];
  });
}

// Packs Wp and plans the down GEMM; defined after the registrations so that, as before them, the
// launch kernels come first in the PTX (the compiler emits kernels in the order they are needed).
std::shared_ptr<void> prepare(const LaunchArgs& a);

std::vector<Tunable> tunables() {
  return {{"tile", {1, 2, 3}, kMmaTileHelp},
          {"stages", {3, 4}, "K tiles in the gate/up GEMM's cp.async ring (stages - 1 in flight); 4 falls back "
                             "to 3 where the ring would exceed 227 KB"}};
}

KWB_REGISTER_VARIANT(Variant{
    .op = "swiglu_mlp_fwd",
    .name = "fused_v1_mma_gate_up_swiglu_cp_async",
    .role = Role::fused,
    .description = "v1: gate and up in one mma.sync GEMM over interleaved Wg/Wu rows, SwiGLU in its epilogue "
                   "(h written once), down GEMM by cuBLASLt: 2 launches (bf16, fp16)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = [](const Shape&, DType dtype) -> std::optional<std::string> {
      if (dtype == DType::fp32)
        return "fp32 runs on the tensor cores in tf32: see fused_v1_mma_gate_up_swiglu_tf32_cp_async";
      return std::nullopt;
    },
    .workspace_bytes = [](const Shape& s, DType dtype) { return layout(SwigluMlpAxes::of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .tunables = tunables(),
    .prepare = prepare,
});

KWB_REGISTER_VARIANT(Variant{
    .op = "swiglu_mlp_fwd",
    .name = "fused_v1_mma_gate_up_swiglu_tf32_cp_async",
    .role = Role::fused,
    .description = "v1 for fp32: gate/up mma.sync m16n8k8 tf32 GEMM with the SwiGLU epilogue, down GEMM by "
                   "cuBLASLt in tf32: 2 launches",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = [](const Shape&, DType dtype) -> std::optional<std::string> {
      if (dtype != DType::fp32)
        return "the tf32 variant runs fp32 cases only: see fused_v1_mma_gate_up_swiglu_cp_async";
      return std::nullopt;
    },
    .workspace_bytes = [](const Shape& s, DType dtype) { return layout(SwigluMlpAxes::of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .tunables = tunables(),
    .prepare = prepare,
});

std::shared_ptr<void> prepare(const LaunchArgs& a) {
  by_dtype([]<class T>(const LaunchArgs& args) { pack_typed<T>(args); })(a);
  const auto [m, d, f] = SwigluMlpAxes::of(a.shape);
  return std::make_shared<LtMatmul>(linear_spec(m, d, f, a.dtype, true));
}

}  // namespace
}  // namespace kwb
