// newton_schulz baseline_eager_cublaslt: Muon's zeropower_via_newtonschulz5 as PyTorch eager runs
// it, one launch per framework op (G already in the dtype, so Muon's .bfloat16() is a no-op):
//
//   X = X / (X.norm() + 1e-7)       # 1-2 norm (torch: one reduction; here partials + final, both
//                                   #     deterministic; the norm is a 0-d tensor of the dtype),
//                                   # 3 add eps (0-d, in the dtype), 4 div
//   if m > n: X = X.mT              # a view: step 1's GEMMs and a*X read X's storage in place
//   for _ in range(5):
//       A = X @ X.mT                # 1 GEMM (2 r^2 c)
//       B = b * A + c * A @ A       # 2 mul, 3 GEMM (2 r^3), 4 mul, 5 add
//       X = a * X + B @ X           # 6 mul, 7 GEMM (2 r^2 c), 8 add
//   if m > n: X = X.mT              # the output is contiguous [m, n]: 1 transpose copy
//
// 4 + 5 * 8 = 44 launches (45 when m > n). GEMMs through cuBLASLt in the dtype with fp32
// accumulation, fp32 in full fp32 (torch's default: no tf32), planned in prepare(). Each
// elementwise op is one trip through memory: per step ~6 r^2 + 6 r c elements moved besides the
// GEMMs; at 4096^2 bf16 ~400 MB, ~130 us a step against ~0.5 ms of GEMMs at ~790 TFLOP/s: the
// fused variants' margin. Expected at 4096^2 bf16: ~3.3 ms (GEMMs ~2.7 ms at ~750 TFLOP/s).
//
// Workspace (what the caching allocator would hold at the peak): cuBLASLt's 32 MiB, the norm's
// partials and two 0-d tensors, A, b*A, A@A, c*(A@A) (r^2 each; B reuses A@A's block), and four
// r x c buffers (X twice, ping-pong; a*X; B@X).
#include <cstdint>
#include <memory>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/eager_ops.cuh"
#include "kernels/newton_schulz/ns_common.cuh"
#include "reference/newton_schulz.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<norm_plus_eps>, ...).
namespace step {
struct norm_plus_eps;
struct divide_by_norm;
struct b_times_a;
struct c_times_a_squared;
struct ba_plus_caa;
struct a_times_x;
struct ax_view_plus_bx;
struct ax_plus_bx;
struct transpose_to_out;
}  // namespace step

namespace {

using ns::Dims;

struct Layout {
  std::size_t partials, norm, denom, a, ba, aa, caa, x[2], ax, bx, total;
};
Layout layout(const Dims& d, DType dtype) {
  const std::size_t e = dtype_size(dtype), rr = d.r * d.r * e, rc = d.r * d.c * e;
  ns::Carver w;
  Layout l{};
  w.take(kLtWorkspaceBytes);
  l.partials = w.take(ns::kNormParts * sizeof(float));
  l.norm = w.take(e);
  l.denom = w.take(e);
  l.a = w.take(rr);
  l.ba = w.take(rr);
  l.aa = w.take(rr);
  l.caa = w.take(rr);
  l.x[0] = w.take(rc);
  l.x[1] = w.take(rc);
  l.ax = w.take(rc);
  l.bx = w.take(rc);
  l.total = w.used;
  return l;
}

struct Plans {
  std::unique_ptr<LtMatmul> gram, gram_view, square, update, update_view;
};

std::shared_ptr<void> prepare(const LaunchArgs& args) {
  const Dims d = ns::dims_of(args.shape);
  auto p = std::make_shared<Plans>();
  p->gram = std::make_unique<LtMatmul>(ns::gram_contig(d, args.dtype, false));
  p->square = std::make_unique<LtMatmul>(ns::square(d, args.dtype, false));
  p->update = std::make_unique<LtMatmul>(ns::update_contig(d, args.dtype, false));
  if (d.tall) {
    p->gram_view = std::make_unique<LtMatmul>(ns::gram_view(d, args.dtype, false));
    p->update_view = std::make_unique<LtMatmul>(ns::update_view(d, args.dtype, false));
  }
  return p;
}

// The final of the norm: one warp sums the partials and stores the norm in the dtype.
template <class T>
__global__ void norm_from_partials(const float* partials, T* norm) {
  const float total = ns::sum_partials_in_warp(partials);
  if (threadIdx.x == 0) *norm = from_float<T>(sqrtf(total));
}

template <class T>
void launch_typed(const LaunchArgs& args) {
  const Dims d = ns::dims_of(args.shape);
  const Layout l = layout(d, args.dtype);
  char* ws = static_cast<char*>(args.workspace);
  auto buf = [&](std::size_t at) { return reinterpret_cast<T*>(ws + at); };
  const T* g = args.tensor<const T>("G");
  T* out = args.tensor<T>("X");
  cudaStream_t st = args.stream;
  const Plans& p = args.state_as<Plans>();
  const std::int64_t mn = d.m * d.n, rr = d.r * d.r, rc = d.r * d.c, r = d.r, c = d.c;
  const float ca = static_cast<float>(kNsA), cb = static_cast<float>(kNsB), cc = static_cast<float>(kNsC);

  // X = X / (X.norm() + 1e-7), in X's own [m, n] layout.
  float* partials = reinterpret_cast<float*>(ws + l.partials);
  T* norm = buf(l.norm);
  T* denom = buf(l.denom);
  ns::launch_sum_squares(g, mn, partials, st);
  norm_from_partials<<<1, 32, 0, st>>>(partials, norm);
  const float eps = static_cast<float>(kNsEps);
  eager_map<step::norm_plus_eps>(1, st, [=] __device__(std::int64_t) { *denom = from_float<T>(to_float(*norm) + eps); });
  T* x0 = buf(l.x[0]);
  eager_map<step::divide_by_norm>(mn, st, [=] __device__(std::int64_t i) { x0[i] = from_float<T>(to_float(g[i]) / to_float(*denom)); });

  T* a = buf(l.a);
  T* ba = buf(l.ba);
  T* aa = buf(l.aa);
  T* caa = buf(l.caa);
  T* ax = buf(l.ax);
  T* bx = buf(l.bx);
  T* bmat = aa;  // B = b*A + c*(A@A) takes A@A's block, freed by then
  void* lt_ws = args.workspace;
  for (int it = 0; it < kNsSteps; ++it) {  // `it`, not `step`: step:: names the eager steps
    const T* x = buf(l.x[it % 2]);
    // Step 1 of the tall case reads X^T as a view of X's [c, r] storage; later steps are contiguous.
    const bool view = d.tall && it == 0;
    T* next = (it == kNsSteps - 1 && !d.tall) ? out : buf(l.x[(it + 1) % 2]);

    (view ? *p.gram_view : *p.gram).run(x, x, a, lt_ws, st);                            // A = X @ X.mT
    eager_map<step::b_times_a>(rr, st, [=] __device__(std::int64_t i) { ba[i] = from_float<T>(cb * to_float(a[i])); });
    p.square->run(a, a, aa, lt_ws, st);                                                   // A @ A
    eager_map<step::c_times_a_squared>(rr, st, [=] __device__(std::int64_t i) { caa[i] = from_float<T>(cc * to_float(aa[i])); });
    eager_map<step::ba_plus_caa>(rr, st, [=] __device__(std::int64_t i) { bmat[i] = from_float<T>(to_float(ba[i]) + to_float(caa[i])); });
    // a * X keeps X's strides (the view's storage order); B @ X is contiguous r x c.
    eager_map<step::a_times_x>(rc, st, [=] __device__(std::int64_t i) { ax[i] = from_float<T>(ca * to_float(x[i])); });
    (view ? *p.update_view : *p.update).run(x, bmat, bx, lt_ws, st);                     // B @ X
    if (view)  // element (i, j) of the view a*X sits at j * r + i
      eager_map<step::ax_view_plus_bx>(rc, st, [=] __device__(std::int64_t e) {
        const std::int64_t i = e / c, j = e % c;
        next[e] = from_float<T>(to_float(ax[j * r + i]) + to_float(bx[e]));
      });
    else
      eager_map<step::ax_plus_bx>(rc, st, [=] __device__(std::int64_t e) { next[e] = from_float<T>(to_float(ax[e]) + to_float(bx[e])); });
  }
  if (d.tall) {  // out [m, n] = Y^T with Y contiguous r x c (r = n, c = m)
    const T* y = buf(l.x[kNsSteps % 2]);
    const std::int64_t n = d.n;
    eager_map<step::transpose_to_out>(mn, st, [=] __device__(std::int64_t e) { out[e] = y[(e % n) * c + e / n]; });
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "newton_schulz",
    .name = "baseline_eager_cublaslt",
    .role = Role::baseline,
    .description = "as PyTorch eager runs Muon's code: norm, add, div, then per step 3 cuBLASLt GEMMs and 5 "
                   "elementwise launches (44 launches; fp32 GEMMs in full fp32)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = {},
    .workspace_bytes = [](const Shape& s, DType dtype) { return layout(ns::dims_of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .math = "fp32: fp32",
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
