// cross_entropy's device oracle (its loss from every row's fp64 terms on the GPU) against the host
// oracle, the ground truth, at small shapes in every dtype; and a large case through the case
// runner: sampled gradient rows and the device's loss where a device may serve the oracles, every
// row on the host where none may.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/record/stats.hpp"
#include "harness/worker/verify/sampling.hpp"
#include "reference/cross_entropy.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/in_process_case.hpp"
#include "tests/support/oracle_gpu.hpp"

namespace kwb {
namespace {

const Op& xent() { return *Registry::instance().find_op("cross_entropy"); }

struct DeviceCopy {
  void* ptr = nullptr;
  explicit DeviceCopy(const std::vector<unsigned char>& bytes) {
    cuda_check(cudaMalloc(&ptr, bytes.size()), "cudaMalloc");
    cuda_check(cudaMemcpy(ptr, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "copy to device");
  }
  ~DeviceCopy() { cudaFree(ptr); }
};

// The loss tensor and its bound's magnitudes, from the host oracle and from the device oracle,
// on the same values: logits drawn N(shift, spread) and rounded to `dtype`, labels in [0, vocab)
// with every `ignore_every`-th token labelled -100 (0: none ignored; 1: every token).
void expect_same_loss(DType dtype, std::int64_t tokens, std::int64_t vocab, int ignore_every, double shift,
                      double spread, std::uint64_t seed) {
  SCOPED_TRACE(testing::Message() << to_string(dtype) << " " << tokens << "x" << vocab << " ignore_every "
                                  << ignore_every << " shift " << shift);
  const Shape shape{{{"tokens", tokens}, {"vocab", vocab}}};
  auto values = test::random_values(static_cast<std::size_t>(tokens * vocab), seed);
  for (auto& v : values) v = shift + spread * v;
  std::vector<unsigned char> logit_bytes(values.size() * dtype_size(dtype));
  encode_dtype(values.data(), dtype, tokens * vocab, logit_bytes.data());
  HostTensor logits{"logits", {tokens, vocab}, std::vector<double>(values.size())};
  decode_dtype(logit_bytes.data(), dtype, tokens * vocab, logits.values.data());  // what the device holds
  std::vector<std::int32_t> labels(static_cast<std::size_t>(tokens));
  HostTensor label_values{"labels", {tokens}, {}};
  for (std::int64_t t = 0; t < tokens; ++t) {
    const bool ignored = ignore_every > 0 && t % ignore_every == 0;
    labels[t] = ignored ? kCrossEntropyIgnoreIndex : static_cast<std::int32_t>((t * 7919 + seed) % vocab);
    label_values.values.push_back(labels[t]);
  }
  std::vector<unsigned char> label_bytes(labels.size() * sizeof(std::int32_t));
  std::memcpy(label_bytes.data(), labels.data(), label_bytes.size());

  const auto specs = xent().tensors(shape, dtype);
  std::vector<HostTensor> host;
  for (const auto& t : specs)
    if (t.is_output) host.push_back({t.name, t.dims, std::vector<double>(t.numel(), std::nan(""))});
  std::vector<HostTensor> device = host;
  run_full_oracle(xent(), shape, {logits, label_values}, host);

  DeviceCopy d_logits(logit_bytes), d_labels(label_bytes);
  std::vector<unsigned char> no_bytes(8);
  DeviceCopy d_loss(no_bytes), d_grad(no_bytes);  // outputs: the oracle does not read them
  const std::vector<const void*> tensors{d_logits.ptr, d_labels.ptr, d_loss.ptr, d_grad.ptr};
  cudaStream_t stream = nullptr;
  xent().device_unaligned_oracle({shape, dtype, specs, tensors, stream}, device);

  const auto near = [](double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(1.0, std::abs(b)); };
  EXPECT_TRUE(near(device[0].values[0], host[0].values[0])) << device[0].values[0] << " vs " << host[0].values[0];
  ASSERT_EQ(device[0].abs_sum.size(), 1u);
  ASSERT_EQ(device[0].root_sum_sq.size(), 1u);
  EXPECT_TRUE(near(device[0].abs_sum[0], host[0].abs_sum[0])) << device[0].abs_sum[0] << " vs " << host[0].abs_sum[0];
  EXPECT_TRUE(near(device[0].root_sum_sq[0], host[0].root_sum_sq[0]))
      << device[0].root_sum_sq[0] << " vs " << host[0].root_sum_sq[0];
  EXPECT_TRUE(std::isnan(device[1].values[0])) << "the device oracle fills the loss alone";
}

TEST(CrossEntropyDeviceOracle, LossAndItsBoundEqualTheHostOraclesInEveryDtype) {
  KWB_REQUIRE_GPU();
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
    expect_same_loss(dtype, 37, 4100, 5, 0.0, 2.0, 1);     // odd vocab, some ignored rows
    expect_same_loss(dtype, 3, 1, 0, 0.0, 2.0, 2);         // one class: every loss is 0
    expect_same_loss(dtype, 129, 257, 0, 0.0, 8.0, 3);     // wide logits: a dominant label or none
    expect_same_loss(dtype, 8, 33, 1, 0.0, 2.0, 4);        // every token ignored: loss 0, bound 0
    expect_same_loss(dtype, 16, 50257, 3, 40.0, 1.0, 5);   // large shared offset: max subtraction matters
  }
}

// A large case: the gradient rows sampled and the loss from the device where the thread may use
// it; verified in full on the host where it may not (KWB_ORACLE_GPU=0). Both pass, and the record
// says which.
TEST(CrossEntropyDeviceOracle, ALargeCaseSamplesItsGradientRowsOnlyWhereTheDeviceMayServeTheOracle) {
  KWB_REQUIRE_GPU();
  const auto run_large = [](const char* oracle_gpu) {
    test::ScopedOracleGpuSwitch oracle_switch(oracle_gpu);
    test::ScopedOracleGpuDevice device(0);
    return test::run_in_process("cross_entropy", "fused_v1_cluster_row_in_registers", DType::bf16,
                                Shape{{{"tokens", 8192}, {"vocab", 32000}}}, std::string(kVerifyOnlyPreset), 11);
  };
  const CaseRecord sampled = run_large("1");
  ASSERT_EQ(sampled.disposition, Disposition::passed) << sampled.reason;
  EXPECT_LT(sampled.verify->rows_checked, sampled.verify->rows_total);
  EXPECT_NE(sampled.verify->sampling.find("'loss' (not aligned with tokens) from the fp64 device oracle"),
            std::string::npos)
      << sampled.verify->sampling;
  const CaseRecord full = run_large("0");
  ASSERT_EQ(full.disposition, Disposition::passed) << full.reason;
  EXPECT_EQ(full.verify->rows_checked, full.verify->rows_total);
  EXPECT_NE(full.verify->sampling.find("full: output 'loss' is not aligned"), std::string::npos)
      << full.verify->sampling;
}

}  // namespace
}  // namespace kwb
