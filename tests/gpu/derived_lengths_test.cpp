// The derived lengths of paged_attention_decode (context_lens) and attention_varlen_fwd and _bwd
// (cu_seqlens), and block_sparse_attention_fwd's block mask, written on the device by their ops'
// derive_inputs, are exactly what the host's formulas give, the formulas the work models count bytes and FLOPs by: a mismatch would verify
// (the oracle reads the tensor) while every rate and % of roof silently counted other work.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/registry.hpp"
#include "reference/attention_varlen.hpp"
#include "reference/attention_varlen_bwd.hpp"
#include "reference/block_sparse_attention.hpp"
#include "reference/paged_attention_decode.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace {

// Runs the op's derive_inputs over device buffers for its tensors (contents left undrawn: the
// derivations read only the shape) and returns input `index`, of Element (int32, or uint8 for bool).
template <class Element = std::int32_t>
std::vector<Element> derived(const char* op_name, const Shape& s, std::size_t index) {
  const Op& op = registered_op(op_name);
  const auto specs = op.tensors(s, DType::bf16);
  std::vector<void*> pointers;
  for (const auto& spec : specs) {
    void* p = nullptr;
    cuda_check(cudaMalloc(&p, static_cast<std::size_t>(spec.numel()) * spec.element_bytes(DType::bf16) + 1), "cudaMalloc");
    pointers.push_back(p);
  }
  op.derive_inputs(LaunchArgs{.shape = s, .dtype = DType::bf16, .tensors = pointers, .workspace = nullptr,
                              .stream = nullptr, .specs = &specs});
  cuda_check(cudaDeviceSynchronize(), "derive");
  std::vector<Element> out(static_cast<std::size_t>(specs[index].numel()));
  cuda_check(cudaMemcpy(out.data(), pointers[index], out.size() * sizeof(Element), cudaMemcpyDeviceToHost), "copy back");
  for (void* p : pointers) cudaFree(p);
  return out;
}

TEST(DerivedLengths, PagedContextLengthsAreTheHostFormulas) {
  KWB_REQUIRE_GPU();
  for (const Shape& s : {paged_decode::paged_decode_shape(130, 1, 8192, 4, 1, 64, 16, "ragged"),
                         paged_decode::paged_decode_shape(9, 5, 7, 4, 1, 64, 16, "ragged"),
                         paged_decode::paged_decode_shape(3, 1, 4099, 4, 1, 64, 32, "equal")}) {
    const auto a = paged_decode::PagedDecodeAxes::of(s);
    const auto lengths = derived(paged_decode::kOp, s, 4);
    ASSERT_EQ(static_cast<std::int64_t>(lengths.size()), a.batch);
    for (std::int64_t b = 0; b < a.batch; ++b) EXPECT_EQ(lengths[static_cast<std::size_t>(b)], a.length(b)) << s.to_compact() << " b" << b;
  }
}

TEST(DerivedLengths, VarlenOffsetsAreTheRunningSumOfTheHostFormulas) {
  KWB_REQUIRE_GPU();
  // The forward's offsets, and the backward's (which derives O and lse after them).
  for (const char* op : {varlen::kOp, varlen_bwd::kOp})
  for (const char* kind : {"ragged", "equal", "with_empty"}) {
    SCOPED_TRACE(op);
    Shape s = attention_shape(11, 300, 2, 1, 64, "1");
    s.axes.emplace_back("lengths", kind);
    const auto v = varlen::VarlenAxes::of(s);
    const auto offsets = derived(op, s, 3);
    ASSERT_EQ(offsets.size(), 12u);
    std::int64_t at = 0;
    EXPECT_EQ(offsets[0], 0);
    for (std::int64_t b = 0; b < 11; ++b) {
      at += v.length(b);
      EXPECT_EQ(offsets[static_cast<std::size_t>(b + 1)], at) << kind << " b" << b;
    }
    EXPECT_EQ(at, v.total());
  }
}

TEST(DerivedLengths, BlockSparseMaskIsTheHostFormula) {
  KWB_REQUIRE_GPU();
  for (const char* causal : {"0", "1"}) {
    const Shape s{{{"batch", 3}, {"seq", 1000}, {"heads", 5}, {"kv_heads", 1}, {"head_dim", 64}, {"causal", causal},
                   {"softcap", "0"}, {"block", 64}, {"density", 37}}};
    const auto a = block_sparse::BlockSparseAxes::of(s);
    const std::int64_t n = a.blocks();
    const auto mask = derived<std::uint8_t>(block_sparse::kOp, s, 3);
    ASSERT_EQ(static_cast<std::int64_t>(mask.size()), 3 * 5 * n * n);
    std::int64_t kept = 0;
    for (std::int64_t b = 0; b < 3; ++b)
      for (std::int64_t h = 0; h < 5; ++h)
        for (std::int64_t qb = 0; qb < n; ++qb)
          for (std::int64_t kb = 0; kb < n; ++kb) {
            const std::uint8_t got = mask[static_cast<std::size_t>(((b * 5 + h) * n + qb) * n + kb)];
            ASSERT_EQ(got, a.kept(b, h, qb, kb) ? 1 : 0) << causal << " b" << b << " h" << h << " " << qb << "," << kb;
            kept += got;
          }
    EXPECT_EQ(kept, a.kept_blocks());
  }
}

}  // namespace
}  // namespace kwb
