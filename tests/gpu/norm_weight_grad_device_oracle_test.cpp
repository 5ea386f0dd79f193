// The device oracles of rmsnorm_bwd, layernorm_bwd and qk_norm_bwd (their row-summed weight and
// bias gradients in fp64 on the GPU, reference/norm_weight_grad_fp64_gpu.hpp) against the host
// oracles, the ground truth, at small shapes in every dtype; and a large case of each through the
// case runner: dx rows sampled and the weight gradients from the device, verified and passed.
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
#include "harness/record/stats.hpp"
#include "harness/worker/verify/sampling.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/in_process_case.hpp"
#include "tests/support/oracle_gpu.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace {

struct DeviceBytes {
  void* ptr = nullptr;
  explicit DeviceBytes(const std::vector<unsigned char>& bytes) {
    cuda_check(cudaMalloc(&ptr, std::max<std::size_t>(bytes.size(), 1)), "cudaMalloc");
    if (!bytes.empty())
      cuda_check(cudaMemcpy(ptr, bytes.data(), bytes.size(), cudaMemcpyHostToDevice),
                 "copy to device");
  }
  ~DeviceBytes() { cudaFree(ptr); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
};

// The unaligned outputs of `op` at `shape` from its device oracle and from its host oracle, on the
// same inputs as the device holds them (drawn, rounded to `dtype`): equal within 1e-12 of the
// terms' magnitudes where the host keeps them, of the values' own size elsewhere.
void expect_device_equals_host(const std::string& name, const Shape& shape, DType dtype,
                               std::uint64_t seed) {
  SCOPED_TRACE(testing::Message() << name << " " << shape.to_assignments() << " "
                                  << to_string(dtype));
  const Op& op = registered_op(name);
  const auto specs = op.tensors(shape, dtype);
  std::vector<HostTensor> inputs = host_inputs(specs, seed);
  std::vector<std::unique_ptr<DeviceBytes>> device_tensors;
  std::vector<const void*> pointers;
  std::size_t input = 0;
  for (const TensorSpec& t : specs) {
    const ElemType type = t.elem_type(dtype);
    std::vector<unsigned char> bytes(static_cast<std::size_t>(t.numel()) * elem_size(type));
    if (!t.is_output) {
      HostTensor& h = inputs[input++];
      encode_elements(h.values.data(), type, t.numel(), bytes.data());
      decode_elements(bytes.data(), type, t.numel(), h.values.data());  // what the device holds
    }
    device_tensors.push_back(std::make_unique<DeviceBytes>(bytes));
    pointers.push_back(device_tensors.back()->ptr);
  }
  const auto host = run_oracle(op, shape, inputs);
  std::vector<HostTensor> device = empty_outputs(specs);
  op.device_unaligned_oracle({shape, dtype, specs, pointers, nullptr}, device);

  std::size_t out = 0, checked = 0;
  for (const TensorSpec& t : specs) {
    if (!t.is_output) continue;
    const HostTensor& h = host[out];
    const HostTensor& d = device[out++];
    if (t.sample_dim >= 0) {
      EXPECT_TRUE(
          std::all_of(d.values.begin(), d.values.end(), [](double v) { return std::isnan(v); }))
          << t.name << ": the device oracle fills the row-summed outputs alone";
      continue;
    }
    ++checked;
    ASSERT_EQ(d.values.size(), h.values.size()) << t.name;
    for (std::size_t i = 0; i < h.values.size(); ++i) {
      const double scale = std::max(1.0, h.abs_sum.empty() ? std::abs(h.values[i]) : h.abs_sum[i]);
      EXPECT_LE(std::abs(d.values[i] - h.values[i]), 1e-12 * scale) << t.name << "[" << i << "]";
    }
    ASSERT_EQ(d.abs_sum.size(), h.abs_sum.size()) << t.name;
    for (std::size_t i = 0; i < h.abs_sum.size(); ++i)
      EXPECT_LE(std::abs(d.abs_sum[i] - h.abs_sum[i]), 1e-12 * std::max(1.0, h.abs_sum[i]))
          << t.name << " A";
    ASSERT_EQ(d.root_sum_sq.size(), h.root_sum_sq.size()) << t.name;
    for (std::size_t i = 0; i < h.root_sum_sq.size(); ++i)
      EXPECT_LE(std::abs(d.root_sum_sq[i] - h.root_sum_sq[i]),
                1e-12 * std::max(1.0, h.root_sum_sq[i]))
          << t.name << " R";
  }
  EXPECT_GT(checked, 0u);
}

Shape rows_cols(std::int64_t rows, std::int64_t cols) {
  return Shape{{{"rows", rows}, {"cols", cols}}};
}
Shape qk(std::int64_t tokens, std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim) {
  return Shape{
      {{"tokens", tokens}, {"heads", heads}, {"kv_heads", kv_heads}, {"head_dim", head_dim}}};
}

TEST(NormWeightGradDeviceOracle, WeightGradientsAndTheirBoundsEqualTheHostOraclesInEveryDtype) {
  KWB_REQUIRE_GPU();
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
    // One row, one column; a prime count of rows over several chunks of the column sums; wide rows.
    for (const Shape& s : {rows_cols(1, 1), rows_cols(2053, 33), rows_cols(64, 4100)}) {
      expect_device_equals_host("rmsnorm_bwd", s, dtype, 3);
      expect_device_equals_host("layernorm_bwd", s, dtype, 4);
    }
    expect_device_equals_host("qk_norm_bwd", qk(7, 3, 1, 33), dtype, 5);
    expect_device_equals_host("qk_norm_bwd", qk(300, 8, 2, 128), dtype,
                              6);  // 2400 head vectors: 3 chunks
  }
}

// A large case of each op: its dx rows sampled and its weight gradients from the device, every
// variant's answer verified against them and passed.
TEST(NormWeightGradDeviceOracle, LargeCasesSampleTheirRowsAndPass) {
  KWB_REQUIRE_GPU();
  const test::ScopedOracleGpuSwitch oracle_switch("1");
  const test::ScopedOracleGpuDevice device(0);
  struct Case {
    const char* op;
    Shape shape;
  };
  for (const Case& c :
       {Case{"rmsnorm_bwd", rows_cols(16384, 4096)}, Case{"layernorm_bwd", rows_cols(16384, 4096)},
        Case{"qk_norm_bwd", qk(16384, 32, 8, 128)}}) {
    for (const Variant* v : Registry::instance().variants(c.op, /*include_test_only=*/false)) {
      SCOPED_TRACE(std::string(c.op) + " " + v->name);
      const CaseRecord r = test::run_in_process(c.op, v->name, DType::bf16, c.shape,
                                                std::string(kVerifyOnlyPreset), 13);
      if (r.disposition == Disposition::skipped) continue;  // a variant that refuses the shape
      ASSERT_EQ(r.disposition, Disposition::passed) << r.reason;
      EXPECT_LT(r.verify->rows_checked, r.verify->rows_total);
      EXPECT_NE(r.verify->sampling.find("from the fp64 device oracle"), std::string::npos)
          << r.verify->sampling;
    }
  }
}

}  // namespace
}  // namespace kwb
