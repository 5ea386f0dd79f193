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
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/in_process_case.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace {

using varlen::varlen_shape;

struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { cuda_check(cudaMalloc(&ptr, std::max<std::size_t>(bytes, 1)), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// A tensor of `spec` copied back from the device, decoded to fp64.
HostTensor read_back(const TensorSpec& spec, DType dtype, const void* device) {
  const ElemType type = spec.elem_type(dtype);
  std::vector<unsigned char> raw(static_cast<std::size_t>(spec.numel()) * elem_size(type));
  cuda_check(cudaMemcpy(raw.data(), device, raw.size(), cudaMemcpyDeviceToHost), "copy back");
  HostTensor h{spec.name, spec.dims, std::vector<double>(static_cast<std::size_t>(spec.numel()))};
  decode_elements(raw.data(), type, spec.numel(), h.values.data());
  return h;
}

void expect_forward_of_inputs(const Shape& s, DType dtype, std::uint64_t seed) {
  SCOPED_TRACE(testing::Message() << s.to_assignments() << " " << to_string(dtype));
  const Op& op = registered_op(varlen_bwd::kOp);
  const auto specs = op.tensors(s, dtype);  // q, k, v, cu_seqlens, o, lse, do, dq, dk, dv
  auto inputs = host_inputs(specs, seed);
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
  op.derive_inputs(
      LaunchArgs{.shape = s, .dtype = dtype, .tensors = pointers, .workspace = nullptr, .stream = nullptr, .specs = &specs});
  cuda_check(cudaDeviceSynchronize(), "derive");
  const HostTensor offsets = read_back(specs[3], dtype, pointers[3]);
  const HostTensor o = read_back(specs[4], dtype, pointers[4]);
  const HostTensor lse = read_back(specs[5], dtype, pointers[5]);
  // attention_varlen_fwd's oracle on the same q, k, v and the derived offsets: o, lse [h, total].
  const auto want = run_oracle(registered_op(varlen::kOp), s, {inputs[0], inputs[1], inputs[2], offsets});
  // O: its rounding to the dtype (1.25 u of it) and fp32's errors over the keys' sums (|v| < 6).
  const double u = unit_roundoff(elem_type_of(dtype));
  const double keys = static_cast<double>(varlen::VarlenAxes::of(s).attention.max_keys());
  for (std::size_t e = 0; e < want[0].values.size(); ++e)
    ASSERT_NEAR(o.values[e], want[0].values[e], 1.25 * u * std::abs(want[0].values[e]) + 6 * keys * 1e-6)
        << "o[" << e << "]";
  for (std::size_t e = 0; e < want[1].values.size(); ++e)
    ASSERT_NEAR(lse.values[e], want[1].values[e], 1e-5 * (1 + std::abs(want[1].values[e]))) << "lse[" << e << "]";
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
