// linear_cross_entropy fused_v1_token_chunks_<C>_f32_logits_tf32: the tokens in chunks of C
// (4096 or 1024, one variant each), so that only one chunk's logits ever exist; four launches a
// chunk:
//
//   z_c   = h_c @ W^T             cuBLASLt, [C, V] fp32 out (tf32 operands in fp32 cases)
//   loss_c, dl_c                  one CTA per token: max / logsumexp online, loss = lse - z[label],
//                                 then dl = softmax - onehot written in the dtype (over z in fp32)
//   dh_c  = dl_c @ W              cuBLASLt, [C, D] in the dtype, straight into dh
//   dW   += dl_c^T @ h_c          cuBLASLt, beta 0 for the first chunk (no zeroing launch), 1 after
//
// then, in fp16/bf16 with more than one chunk, one cast of the dW accumulator. dW is summed over
// the chunks in an fp32 [V, D] workspace rather than in the dtype: adding N/C partial products
// each rounded to bf16 (2^-8) would lose the precision of a single fp32-accumulated GEMM; chunking
// dW over the vocab instead would need the whole dl (the memory this variant exists to save) or
// the logits twice. In fp32 cases dW accumulates in the output itself and dl overwrites z in
// place; with a single chunk the dW GEMM writes the dtype output directly.
//
// Why it should be fast: the GEMMs stay large (C = 4096 rows: 4096 x 128256 x 4096 each, well
// past cuBLASLt's saturation), the softmax touches 4 + 4 + 2 bytes per logit instead of the
// eager chain's ~45, and there is nothing else. Napkin math, bf16 8192 x 4096 x 128256, C 4096:
// GEMMs 25.8 TFLOP ~35 ms; z written in fp32 (+2.1 GB), the row kernel 10.5 GB, dW's fp32
// read-modify-write 4.2 GB per chunk, the final cast 3.2 GB: ~25 GB, ~8 ms; ~43 ms against the
// baseline's ~50 ms. fp32 cases on tf32 tensor cores (~360 TFLOP/s): ~75 ms.
//
// Workspace (reported beside time; the point of the variant): cuBLASLt's 32 MB, z [C, V] fp32,
// and in fp16/bf16 dl [C, V] in the dtype plus, past one chunk, the fp32 dW accumulator [V, D]
// (2.1 GB at Llama 3's V x D: fewer than ~2048 tokens at D 4096 fit in one chunk and do not
// pay it; a memory-lean v2 would sum dW in the dtype as Liger does, at N/C roundings):
// bf16 8192 x 4096 x 128256: 2.1 + 1.05 + 2.1 GB = 5.3 GB against the baseline's 14.7 GB.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/align_up.hpp"
#include "kernels/common/cublaslt_matmul.cuh"
#include "kernels/common/eager_ops.cuh"
#include "kernels/linear_cross_entropy/lce_rows.cuh"
#include "reference/linear_cross_entropy.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<cast_dweight_to_dtype>, ...).
namespace step {
struct cast_dweight_to_dtype;
}  // namespace step

namespace {


std::int64_t chunk_rows(const LceAxes& axes, std::int64_t chunk_tokens) {
  return std::min(axes.tokens, chunk_tokens);
}

// fp16/bf16 with more than one chunk: dW is summed in an fp32 accumulator. With one chunk the
// single dW GEMM writes the dtype itself (fp32 accumulate inside), as the baseline's.
bool accumulates(const LceAxes& axes, DType dtype, std::int64_t chunk_tokens) {
  return dtype != DType::fp32 && axes.tokens > chunk_tokens;
}

// Byte offsets in the workspace: cuBLASLt's, z, dl (fp16/bf16), the dW accumulator (fp16/bf16).
struct Layout {
  std::size_t z, dl, acc, total;
};
Layout layout(const LceAxes& axes, DType dtype, std::int64_t chunk_tokens) {
  const auto c = static_cast<std::size_t>(chunk_rows(axes, chunk_tokens));
  const auto v = static_cast<std::size_t>(axes.vocab), d = static_cast<std::size_t>(axes.hidden);
  const bool cast = dtype != DType::fp32;
  Layout l{};
  l.z = kLtWorkspaceBytes;
  l.dl = l.z + align_up(c * v * 4);
  l.acc = l.dl + (cast ? align_up(c * v * elem_size(elem_type_of(dtype))) : 0);
  l.total = l.acc + (accumulates(axes, dtype, chunk_tokens) ? align_up(v * d * 4) : 0);
  return l;
}

// The three GEMMs of a chunk of `rows` tokens (column-major views, see cublaslt_matmul.cuh).
struct ChunkPlans {
  std::unique_ptr<LtMatmul> logits, dh, dw;
};
struct Plans {
  std::int64_t chunk = 0;
  ChunkPlans full, tail;  // tail: the last chunk when C does not divide N
};

ChunkPlans plan_chunk(std::int64_t rows, std::int64_t d, std::int64_t v, DType dtype, bool accumulate) {
  const ElemType t = elem_type_of(dtype);
  auto spec = [t](bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                  std::int64_t ldb, std::int64_t ldd, ElemType out) {
    LtMatmulSpec s = lt_f32_spec(ta, tb, m, n, k, lda, ldb, ldd);
    s.ab_type = t;
    s.cd_type = out;
    s.tf32 = true;  // only read for fp32 operands
    return s;
  };
  ChunkPlans p;
  // z^T (V x C) = W (stored D x V, transposed) h_c^T (D x C), fp32 out.
  p.logits = std::make_unique<LtMatmul>(spec(true, false, v, rows, d, d, d, v, ElemType::fp32));
  // dh_c^T (D x C) = W^T (D x V) dl_c^T (V x C), in the dtype.
  p.dh = std::make_unique<LtMatmul>(spec(false, false, d, rows, v, d, v, d, t));
  // dW^T (D x V) += h_c^T (D x C) (dl_c^T stored V x C, transposed): the fp32 accumulator, or
  // the output itself (fp32 cases, or a single chunk).
  p.dw = std::make_unique<LtMatmul>(spec(false, true, d, v, rows, d, v, d, accumulate ? ElemType::fp32 : t));
  return p;
}

std::shared_ptr<void> prepare(const LaunchArgs& a, std::int64_t chunk_tokens) {
  const auto axes = LceAxes::of(a.shape);
  const auto [n, d, v] = axes;
  auto p = std::make_shared<Plans>();
  p->chunk = chunk_rows(axes, chunk_tokens);
  const bool acc = accumulates(axes, a.dtype, chunk_tokens);
  p->full = plan_chunk(p->chunk, d, v, a.dtype, acc);
  if (n % p->chunk != 0) p->tail = plan_chunk(n % p->chunk, d, v, a.dtype, acc);
  return p;
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  constexpr bool cast = !std::is_same_v<T, float>;
  const auto axes = LceAxes::of(a.shape);
  const std::int64_t n = axes.tokens, d = axes.hidden, v = axes.vocab;
  const auto [h, w, labels, loss, dh, dw] = LceTensors<T>::of(a);
  const Plans& p = a.state_as<Plans>();
  const Layout l = layout(axes, a.dtype, p.chunk);
  char* ws = static_cast<char*>(a.workspace);
  float* z = reinterpret_cast<float*>(ws + l.z);
  T* dl = cast ? reinterpret_cast<T*>(ws + l.dl) : reinterpret_cast<T*>(z);  // fp32: in place
  const bool accumulate = accumulates(axes, a.dtype, p.chunk);
  float* acc = reinterpret_cast<float*>(ws + l.acc);
  void* dw_sum = accumulate ? static_cast<void*>(acc) : static_cast<void*>(dw);
  const int threads = static_cast<int>(std::clamp<std::int64_t>((v + 31) / 32 * 32, 32, kLceRowThreads));

  for (std::int64_t n0 = 0; n0 < n; n0 += p.chunk) {
    const std::int64_t rows = std::min(p.chunk, n - n0);
    const ChunkPlans& plan = rows == p.chunk ? p.full : p.tail;
    plan.logits->run(w, h + n0 * d, z, a.workspace, a.stream);
    lce_chunk_rows_kernel<T><<<static_cast<unsigned>(rows), threads, 0, a.stream>>>(z, v, dl, v, labels + n0,
                                                                                   loss + n0, v);
    plan.dh->run(w, dl, dh + n0 * d, a.workspace, a.stream);
    plan.dw->run(h + n0 * d, dl, dw_sum, a.workspace, a.stream, 1.0f, n0 == 0 ? 0.0f : 1.0f);
  }
  if (accumulate) eager_map<step::cast_dweight_to_dtype>(v * d, a.stream, [=] __device__(std::int64_t i) { dw[i] = from_float<T>(acc[i]); });
}

// One variant per chunk size rather than a tunable: Variant::workspace_bytes sees the shape and
// dtype but not the tunables, and the workspace is what these variants are about, so each one
// declares its own exactly. 4096: the GEMMs at full speed; 1024: a quarter of the logits buffer.
Variant chunked(std::int64_t chunk_tokens) {
  const std::string c = std::to_string(chunk_tokens);
  return Variant{
      .op = "linear_cross_entropy",
      .name = "fused_v1_token_chunks_" + c + "_f32_logits_tf32",
      .role = Role::fused,
      .description = "chunks of " + c + " tokens: cuBLASLt logits chunk in fp32, one row kernel for loss and dl, "
                     "cuBLASLt dh and dW += (fp32 accumulator); fp32 cases in tf32",
      .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
      .refuse = {},
      .workspace_bytes = [chunk_tokens](const Shape& s, DType dtype) {
        return layout(LceAxes::of(s), dtype, chunk_tokens).total;
      },
      .uses = {"cuBLASLt"},
      .prepare = [chunk_tokens](const LaunchArgs& a) { return prepare(a, chunk_tokens); },
  };
}

KWB_REGISTER_VARIANT(chunked(4096));
KWB_REGISTER_VARIANT(chunked(1024));

}  // namespace
}  // namespace kwb
