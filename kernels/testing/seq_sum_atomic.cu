// test_seq_sum's one variant: each thread scatters one input element into every output position
// that sums it, with fp32 atomics. It exercises the variant lifecycle on purpose:
//   prepare  tabulates w[t] on the device once per case (the launch has no other source of w);
//   reset    zeroes y before every launch: the kernel adds into y, so without it the second
//            sample would hold twice the answer;
//   block    a tunable (threads per block), part of the case identity.
#include <cuda_runtime_api.h>

#include <memory>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/registry.hpp"
#include "reference/testing/seq_sum.hpp"

namespace kwb {
namespace {

struct WeightTable {
  float* device = nullptr;
  explicit WeightTable(std::int64_t seq) { cuda_check(cudaMalloc(&device, seq * sizeof(float)), "cudaMalloc"); }
  ~WeightTable() { cudaFree(device); }
};

__global__ void fill_weights(float* w, std::int64_t seq) {
  const std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (t < seq) w[t] = 1.0f / (1.0f + static_cast<float>(t));
}

__global__ void scatter_weighted(const float* x, float* y, const float* w, std::int64_t batch,
                                 std::int64_t seq, std::int64_t heads, std::int64_t dim, bool bhsd,
                                 bool causal) {
  const std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (i >= batch * seq * heads * dim) return;
  const std::int64_t d = i % dim;
  std::int64_t t, h, b;
  if (bhsd) {
    t = (i / dim) % seq;
    h = (i / (dim * seq)) % heads;
    b = i / (dim * seq * heads);
  } else {
    h = (i / dim) % heads;
    t = (i / (dim * heads)) % seq;
    b = i / (dim * heads * seq);
  }
  const float v = x[i] * w[t];
  for (std::int64_t s = causal ? t : 0; s < seq; ++s) {
    const std::int64_t o = bhsd ? ((b * heads + h) * seq + s) * dim + d : ((b * seq + s) * heads + h) * dim + d;
    atomicAdd(y + o, v);
  }
}

std::size_t output_bytes(const seq_sum::Axes& axes) { return static_cast<std::size_t>(axes.numel()) * sizeof(float); }

KWB_REGISTER_VARIANT(Variant{
    .op = seq_sum::kOp,
    .name = seq_sum::kVariant,
    .role = Role::fused,
    .description = "TEST ONLY: atomic scatter; proves prepare (weight table), reset (zeroed y) and a tunable",
    .launch =
        [](const LaunchArgs& a) {
          ++seq_sum::counts().launches;
          // fp32 only (the op's one dtype): no dtype dispatch.
          const auto axes = seq_sum::Axes::of(a.shape);
          const std::int64_t n = axes.numel();
          const auto block = static_cast<unsigned>(a.tunable("block"));
          const auto grid = static_cast<unsigned>((n + block - 1) / block);
          scatter_weighted<<<grid, block, 0, a.stream>>>(a.tensor<const float>("x"), a.tensor<float>("y"),
                                                         a.state_as<WeightTable>().device, axes.batch, axes.seq,
                                                         axes.heads, axes.dim, axes.bhsd, axes.causal);
        },
    .test_only = true,
    .varies_run_to_run = true,
    .tunables = {{"block", {128, 256, 512}, "threads per block"}},
    .prepare =
        [](const LaunchArgs& a) -> std::shared_ptr<void> {
          ++seq_sum::counts().prepares;
          const std::int64_t seq = seq_sum::Axes::of(a.shape).seq;
          auto table = std::make_shared<WeightTable>(seq);
          fill_weights<<<static_cast<unsigned>((seq + 255) / 256), 256, 0, a.stream>>>(table->device, seq);
          return table;
        },
    .reset =
        [](const LaunchArgs& a) {
          ++seq_sum::counts().resets;
          cuda_check(cudaMemsetAsync(a.tensor<float>("y"), 0, output_bytes(seq_sum::Axes::of(a.shape)), a.stream),
                     "zero y");
        },
});

}  // namespace
}  // namespace kwb
