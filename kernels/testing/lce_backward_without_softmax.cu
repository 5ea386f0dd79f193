// Test-only linear_cross_entropy variant with a planted defect: the backward feeds -onehot(label)
// instead of softmax - onehot into both GEMMs (dh = -W[label], dW = -sum of the h rows labelled
// v), skipping the softmax's share of the gradient. Everything else is a real variant's: the
// logits by cuBLASLt in fp32 (tf32 operands in fp32 cases), the real row kernel for the loss
// (kernels/linear_cross_entropy/lce_rows.cuh; the forward is right), dh and dW by cuBLASLt from
// dl in the dtype. One chunk of all N tokens (no dW accumulator).
//
// What verification must say (the op's default shapes, every dtype): dW fails (its unlabelled
// rows, sum_n p h ~ sqrt(N) 1.65 / V, sit far beyond their bound ~10 u R with R ~ that size),
// and dh fails where W[label] is near 0. Hidden from `list` and default sweeps
// (`--include-test-variants`).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/align_up.hpp"
#include "kernels/common/cublaslt_matmul.cuh"
#include "kernels/common/eager_ops.cuh"
#include "kernels/common/vector_pack.cuh"
#include "kernels/linear_cross_entropy/lce_rows.cuh"
#include "reference/linear_cross_entropy.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<minus_onehot_labels>, ...).
namespace step {
struct minus_onehot_labels;
}  // namespace step

namespace {


// Workspace: cuBLASLt's, z [N, V] fp32, dl [N, V] in the dtype.
struct Layout {
  std::size_t z, dl, total;
};
Layout layout(const LceAxes& axes, DType dtype) {
  const std::size_t nv = static_cast<std::size_t>(axes.tokens) * static_cast<std::size_t>(axes.vocab);
  Layout l{};
  l.z = kLtWorkspaceBytes;
  l.dl = l.z + align_up(nv * 4);
  l.total = l.dl + align_up(nv * dtype_size(dtype));
  return l;
}

struct Plans {
  std::unique_ptr<LtMatmul> logits, dh, dw;
};

// The same three GEMMs as fused_v1 with one chunk (column-major views, see cublaslt_matmul.cuh).
std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const auto [n, d, v] = LceAxes::of(a.shape);
  const ElemType t = elem_type_of(a.dtype);
  auto spec = [t](bool ta, bool tb, std::int64_t m, std::int64_t nn, std::int64_t k, std::int64_t lda,
                  std::int64_t ldb, std::int64_t ldd, ElemType out) {
    LtMatmulSpec s = lt_f32_spec(ta, tb, m, nn, k, lda, ldb, ldd);
    s.ab_type = t;
    s.cd_type = out;
    s.tf32 = true;  // only read for fp32 operands
    return s;
  };
  auto p = std::make_shared<Plans>();
  p->logits = std::make_unique<LtMatmul>(spec(true, false, v, n, d, d, d, v, ElemType::fp32));
  p->dh = std::make_unique<LtMatmul>(spec(false, false, d, n, v, d, v, d, t));
  p->dw = std::make_unique<LtMatmul>(spec(false, true, d, v, n, d, v, d, t));
  return p;
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto axes = LceAxes::of(a.shape);
  const std::int64_t n = axes.tokens, v = axes.vocab;
  const auto [h, w, labels, loss, dh, dw] = LceTensors<T>::of(a);
  const Plans& p = a.state_as<Plans>();
  const Layout l = layout(axes, a.dtype);
  char* ws = static_cast<char*>(a.workspace);
  float* z = reinterpret_cast<float*>(ws + l.z);
  T* dl = reinterpret_cast<T*>(ws + l.dl);
  const int threads = static_cast<int>(std::min<std::int64_t>((v + 31) / 32 * 32, kLceRowThreads));

  p.logits->run(w, h, z, a.workspace, a.stream);
  lce_chunk_rows_kernel<T><<<static_cast<unsigned>(n), threads, 0, a.stream>>>(z, v, dl, v, labels, loss, v);
  // The defect: dl := -onehot(label), the softmax term dropped (ignored tokens keep a zero row).
  eager_map<step::minus_onehot_labels>(n * v, a.stream, [=] __device__(std::int64_t i) {
    const std::int64_t row = i / v, col = i % v;
    dl[i] = from_float<T>(col == labels[row] ? -1.0f : 0.0f);
  });
  p.dh->run(w, dl, dh, a.workspace, a.stream);
  p.dw->run(h, dl, dw, a.workspace, a.stream);
}

constexpr double kMaxWorkspaceBytes = 60.0 * (1ull << 30);

KWB_REGISTER_VARIANT(Variant{
    .op = "linear_cross_entropy",
    .name = "test_lce_backward_without_softmax",
    .role = Role::fused,
    .description = "TEST ONLY: the backward GEMMs take -onehot instead of softmax - onehot; verification must "
                   "fail dh and dW",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = [](const Shape& s, DType dtype) -> std::optional<std::string> {
      const auto axes = LceAxes::of(s);
      if (static_cast<double>(layout(axes, dtype).total) > kMaxWorkspaceBytes)
        return "the [N, V] logits and dl of one chunk need more than 60 GiB";
      return refuse_rows_beyond_grid(axes.tokens);
    },
    .workspace_bytes = [](const Shape& s, DType dtype) { return layout(LceAxes::of(s), dtype).total; },
    .test_only = true,
    .uses = {"cuBLASLt"},
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
