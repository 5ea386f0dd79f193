// block_sparse_attention_fwd baseline_eager_cublaslt: what an eager framework runs for a block mask
// it cannot skip, as attention_fwd's baseline does (materialised scores, eager_attention.cuh): the
// copies to bhsd, cuBLASLt S = Q K^T over every (query, key) pair, one masked softmax that also
// reads the block mask (a key counts only where its block is kept; a row that keeps none gets P 0
// and lse -inf, where torch's softmax over only -inf would give NaN), cuBLASLt P V over every pair,
// and the copy back. The dropped blocks cost it the full dense GEMMs: its time does not fall with
// the density, which is what the fused variants' skipping is measured against.
//
// Workspace: attention_fwd's baseline's (cuBLASLt's 32 MiB, bhsd Q, K, V, O, and S and P of
// b * h * s^2 each); cases needing more than 60 GiB are refused.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/eager_attention.cuh"
#include "kernels/block_sparse_attention_fwd/block_sparse_params.cuh"
#include "reference/block_sparse_attention.hpp"

namespace kwb {
namespace {

using block_sparse::BlockSparseAxes;

template <class T>
void launch(const LaunchArgs& a) {
  eager_attention::self_attention<T>(a, BlockSparseAxes::of(a.shape).attention, block_sparse::params_of(a));
}

KWB_REGISTER_VARIANT(Variant{
    .op = block_sparse::kOp,
    .name = "baseline_eager_cublaslt",
    .role = Role::baseline,
    .description = "materialised scores as attention_fwd's eager baseline, the block mask applied in its masked "
                   "softmax: every block's GEMMs computed, the dropped ones then masked",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = [](const Shape& shape, DType dtype) {
      return eager_attention::refuse_large(eager_attention::buffers(BlockSparseAxes::of(shape).attention, dtype));
    },
    .workspace_bytes = [](const Shape& shape, DType dtype) {
      return eager_attention::buffers(BlockSparseAxes::of(shape).attention, dtype).total;
    },
    .uses = {"cuBLASLt"},
    .prepare = [](const LaunchArgs& a) {
      return eager_attention::prepare_plans(BlockSparseAxes::of(a.shape).attention, a.dtype);
    },
});

}  // namespace
}  // namespace kwb
