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
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/in_process_case.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace {

struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { cuda_check(cudaMalloc(&ptr, std::max<std::size_t>(bytes, 1)), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

void expect_forward_of_inputs(const Shape& s, DType dtype, std::uint64_t seed) {
  SCOPED_TRACE(testing::Message() << s.to_assignments() << " " << to_string(dtype));
  const Op& op = registered_op("attention_bwd");
  const auto specs = op.tensors(s, dtype);
  auto inputs = host_inputs(specs, seed);  // q, k, v, o, lse, do
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  std::vector<void*> pointers;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const ElemType type = specs[i].elem_type(dtype);
    const std::size_t bytes = static_cast<std::size_t>(specs[i].numel()) * elem_size(type);
    buffers.push_back(std::make_unique<DeviceBuffer>(bytes));
    pointers.push_back(buffers.back()->ptr);
    if (i < 3) {  // q, k, v as the device holds them
      std::vector<unsigned char> raw(bytes);
      encode_elements(inputs[i].values.data(), type, specs[i].numel(), raw.data());
      decode_elements(raw.data(), type, specs[i].numel(), inputs[i].values.data());
      cuda_check(cudaMemcpy(pointers[i], raw.data(), bytes, cudaMemcpyHostToDevice), "copy input");
    }
  }
  ref::attention_bwd_derive_inputs(
      LaunchArgs{.shape = s, .dtype = dtype, .tensors = pointers, .workspace = nullptr, .stream = nullptr, .specs = &specs});
  cuda_check(cudaDeviceSynchronize(), "derive");
  std::vector<HostTensor> derived;
  for (std::size_t i : {std::size_t{3}, std::size_t{4}}) {
    const ElemType type = specs[i].elem_type(dtype);
    std::vector<unsigned char> raw(static_cast<std::size_t>(specs[i].numel()) * elem_size(type));
    cuda_check(cudaMemcpy(raw.data(), pointers[i], raw.size(), cudaMemcpyDeviceToHost), "copy back");
    HostTensor h{specs[i].name, specs[i].dims, std::vector<double>(static_cast<std::size_t>(specs[i].numel()))};
    decode_elements(raw.data(), type, specs[i].numel(), h.values.data());
    derived.push_back(std::move(h));
  }
  const auto want = run_oracle(registered_op("attention_fwd"), s, {inputs[0], inputs[1], inputs[2]});  // o, lse
  // O: its rounding to the dtype (1.25 u of it) and fp32's errors over the keys' sums (|v| < 6).
  const double u = unit_roundoff(elem_type_of(dtype));
  const double keys = static_cast<double>(AttentionAxes::of(s).max_keys());
  for (std::size_t e = 0; e < want[0].values.size(); ++e)
    ASSERT_NEAR(derived[0].values[e], want[0].values[e], 1.25 * u * std::abs(want[0].values[e]) + 6 * keys * 1e-6)
        << "o[" << e << "]";
  for (std::size_t e = 0; e < want[1].values.size(); ++e)
    ASSERT_NEAR(derived[1].values[e], want[1].values[e], 1e-5 * (1 + std::abs(want[1].values[e]))) << "lse[" << e << "]";
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
