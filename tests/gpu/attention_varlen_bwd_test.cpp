// attention_varlen_bwd on the GPU: its derived O and lse (reference/attention_bwd_inputs_gpu.hpp,
// packed) are attention_varlen_fwd's, by its fp64 host oracle on the same Q, K and V, within the
// derivation's fp32 arithmetic and O's rounding, with empty sequences, single tokens, windows,
// soft-caps and grouped heads; and cases through the case runner (inputs drawn, cu_seqlens, O and
// lse derived, the packed oracle on them) verify in every variant at shapes past the edge list's:
// several key tiles per sequence, lengths that are no multiple of a tile, GQA groups of 4.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/attention_varlen_bwd.hpp"
#include "tests/gpu/derived_attention_inputs.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/in_process_case.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace {

using varlen::varlen_shape;

void expect_forward_of_inputs(const Shape& s, DType dtype, std::uint64_t seed) {
  SCOPED_TRACE(testing::Message() << s.to_assignments() << " " << to_string(dtype));
  const Op& op = registered_op(varlen_bwd::kOp);
  const auto specs = op.tensors(s, dtype);  // q, k, v, cu_seqlens, o, lse, do, dq, dk, dv
  auto inputs = host_inputs(specs, seed);
  const test::DeviceTensors t = test::upload_inputs(specs, dtype, inputs, 3);  // q, k, v
  const std::vector<void*>& pointers = t.pointers;
  op.derive_inputs(
      LaunchArgs{.shape = s, .dtype = dtype, .tensors = pointers, .workspace = nullptr, .stream = nullptr, .specs = &specs});
  cuda_check(cudaDeviceSynchronize(), "derive");
  const HostTensor offsets = test::read_back(specs[3], dtype, pointers[3]);
  const HostTensor o = test::read_back(specs[4], dtype, pointers[4]);
  const HostTensor lse = test::read_back(specs[5], dtype, pointers[5]);
  // attention_varlen_fwd's oracle on the same q, k, v and the derived offsets: o, lse [h, total].
  const auto want = run_oracle(registered_op(varlen::kOp), s, {inputs[0], inputs[1], inputs[2], offsets});
  test::expect_derived_forward(o, lse, want, dtype, varlen::VarlenAxes::of(s).attention.max_keys());
}

TEST(AttentionVarlenBwdInputs, TheDerivedOAndLseAreTheForwardsOfEachPackedSequence) {
  KWB_REQUIRE_GPU();
  for (DType dtype : {DType::bf16, DType::fp16}) {
    expect_forward_of_inputs(varlen_shape(1, 1, 1, 1, 64, "0", "equal"), dtype, 1);
    expect_forward_of_inputs(varlen_shape(5, 67, 4, 2, 128, "1", "with_empty"), dtype, 2);
    expect_forward_of_inputs(varlen_shape(4, 129, 4, 1, 64, "1", "ragged", 17), dtype, 3);
    expect_forward_of_inputs(varlen_shape(7, 100, 2, 2, 128, "0", "with_empty", 9, "30"), dtype, 4);
  }
}

TEST(AttentionVarlenBwd, CasesWithDerivedInputsVerifyInEveryVariant) {
  KWB_REQUIRE_GPU();
  for (const Shape& s : {varlen_shape(5, 300, 8, 2, 64, "1", "with_empty", 0, "50"),
                         varlen_shape(4, 517, 8, 2, 128, "1", "ragged"),
                         varlen_shape(3, 200, 4, 1, 128, "0", "ragged", 70)})
    for (const Variant* v : Registry::instance().variants(varlen_bwd::kOp, /*include_test_only=*/false))
      for (DType dtype : {DType::bf16, DType::fp16}) {
        SCOPED_TRACE(s.to_assignments() + " " + v->name + " " + std::string(to_string(dtype)));
        const CaseRecord r = test::run_in_process(varlen_bwd::kOp, v->name, dtype, s, std::string(kVerifyOnlyPreset), 7);
        ASSERT_EQ(r.disposition, Disposition::passed) << r.reason;
      }
}

}  // namespace
}  // namespace kwb
