// attention_bwd's derived inputs (reference/attention_bwd_inputs_gpu.hpp): the O and lse the
// device computes from a case's Q, K and V are attention_fwd's, by its fp64 host oracle on the same
// values, within the derivation's fp32 arithmetic and O's rounding to the dtype, under every mask,
// the soft-cap and grouped heads; and a case through the case runner, whose O and lse only the
// derivation writes (the harness poisons them first), verifies and passes in every variant.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/attention.hpp"
#include "reference/attention_bwd_inputs_gpu.hpp"
#include "tests/gpu/derived_attention_inputs.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/in_process_case.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace {

void expect_forward_of_inputs(const Shape& s, DType dtype, std::uint64_t seed) {
  SCOPED_TRACE(testing::Message() << s.to_assignments() << " " << to_string(dtype));
  const Op& op = registered_op("attention_bwd");
  const auto specs = op.tensors(s, dtype);
  auto inputs = host_inputs(specs, seed);  // q, k, v, o, lse, do
  const test::DeviceTensors t = test::upload_inputs(specs, dtype, inputs, 3);  // q, k, v
  const std::vector<void*>& pointers = t.pointers;
  ref::attention_bwd_derive_inputs(
      LaunchArgs{.shape = s, .dtype = dtype, .tensors = pointers, .workspace = nullptr, .stream = nullptr, .specs = &specs});
  cuda_check(cudaDeviceSynchronize(), "derive");
  const HostTensor o = test::read_back(specs[3], dtype, pointers[3]);
  const HostTensor lse = test::read_back(specs[4], dtype, pointers[4]);
  const auto want = run_oracle(registered_op("attention_fwd"), s, {inputs[0], inputs[1], inputs[2]});  // o, lse
  test::expect_derived_forward(o, lse, want, dtype, AttentionAxes::of(s).max_keys());
}

TEST(AttentionBwdInputs, TheDerivedOAndLseAreTheForwardsOfTheCasesQKV) {
  KWB_REQUIRE_GPU();
  for (DType dtype : {DType::bf16, DType::fp16}) {
    expect_forward_of_inputs(attention_shape(1, 1, 1, 1, 64, "0"), dtype, 1);
    expect_forward_of_inputs(attention_shape(2, 67, 4, 2, 128, "1"), dtype, 2);
    expect_forward_of_inputs(attention_shape(1, 129, 4, 1, 64, "1", 17), dtype, 3);
    expect_forward_of_inputs(attention_shape(1, 100, 2, 2, 128, "0", 9, "30"), dtype, 4);
  }
}

// Through the case runner (inputs drawn, O and lse derived, the oracle on them): every variant at a
// small and a sampled shape.
TEST(AttentionBwdInputs, CasesWithDerivedInputsVerifyInEveryVariant) {
  KWB_REQUIRE_GPU();
  for (const Shape& s : {attention_shape(2, 130, 4, 2, 64, "1", 0, "50"), attention_shape(1, 2048, 8, 2, 128, "1")})
    for (const Variant* v : Registry::instance().variants("attention_bwd", /*include_test_only=*/false))
      for (DType dtype : {DType::bf16, DType::fp16}) {
        SCOPED_TRACE(s.to_assignments() + " " + v->name + " " + std::string(to_string(dtype)));
        const CaseRecord r = test::run_in_process("attention_bwd", v->name, dtype, s, std::string(kVerifyOnlyPreset), 7);
        ASSERT_EQ(r.disposition, Disposition::passed) << r.reason;
      }
}

}  // namespace
}  // namespace kwb
