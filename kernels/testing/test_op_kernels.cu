// Correct, simple kernels for the hidden test-only ops (reference/testing/): they exist to
// exercise the harness contracts (fixed element types, integer inputs, non-row layouts), not
// to be fast.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/block_reduce.cuh"
#include "reference/rows_cols_op.hpp"
#include "reference/testing/test_ops.hpp"

namespace kwb {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t n, int per_block) {
  return static_cast<unsigned>(std::min<std::int64_t>((n + per_block - 1) / per_block, 65535));
}

// ---- test_colsum: a warp per row for rowsum, a thread per column for colsum -----------------

template <class T>
__global__ void rowsum_kernel(const T* x, float* rowsum, std::int64_t rows, std::int64_t cols) {
  const int lane = threadIdx.x & 31;
  for (std::int64_t r = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / 32; r < rows;
       r += std::int64_t{gridDim.x} * blockDim.x / 32) {
    float acc = 0;
    for (std::int64_t c = lane; c < cols; c += 32) acc += to_float(x[r * cols + c]);
    acc = warp_sum(acc);
    if (lane == 0) rowsum[r] = acc;
  }
}

template <class T>
__global__ void colsum_kernel(const T* x, float* colsum, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t c = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; c < cols;
       c += std::int64_t{gridDim.x} * blockDim.x) {
    float acc = 0;
    for (std::int64_t r = 0; r < rows; ++r) acc += to_float(x[r * cols + c]);
    colsum[c] = acc;
  }
}

template <class T>
void launch_colsum(const LaunchArgs& a) {
  const auto [rows, cols] = RowsCols::of(a.shape);
  const T* x = a.tensor<const T>("x");
  rowsum_kernel<T><<<blocks_for(rows * 32, kThreads), kThreads, 0, a.stream>>>(x, a.tensor<float>("rowsum"), rows,
                                                                                 cols);
  colsum_kernel<T><<<blocks_for(cols, kThreads), kThreads, 0, a.stream>>>(x, a.tensor<float>("colsum"), rows, cols);
}

KWB_REGISTER_VARIANT(Variant{
    .op = testing_ops::kColsum,
    .name = "test_simple",
    .role = Role::fused,
    .description = "TEST ONLY: warp-per-row row sums, thread-per-column column sums, fp32 accumulation",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_colsum<T>(a); }),
    .test_only = true,
});

// ---- test_derived_copy: y = 2 x derived (all of it, or the first half), z = y -----------------

template <class T>
__global__ void double_kernel(const T* x, T* y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += std::int64_t{gridDim.x} * blockDim.x)
    y[i] = from_float<T>(2.0f * to_float(x[i]));
}

template <class T>
__global__ void copy_kernel(const T* y, T* z, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += std::int64_t{gridDim.x} * blockDim.x)
    z[i] = y[i];
}

KWB_REGISTER_VARIANT(Variant{
    .op = testing_ops::kDerivedCopy,
    .name = "test_simple",
    .role = Role::fused,
    .description = "TEST ONLY: z = y, a thread per element",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) {
      const std::int64_t n = a.shape.at("n");
      copy_kernel<T><<<blocks_for(n, kThreads), kThreads, 0, a.stream>>>(a.tensor<const T>("y"), a.tensor<T>("z"), n);
    }),
    .test_only = true,
});

// ---- test_label_nll: a warp per row ---------------------------------------------------------

template <class T>
__global__ void label_nll_kernel(const T* logits, const std::int32_t* labels, float* loss,
                                 std::int64_t rows, std::int64_t vocab) {
  const int lane = threadIdx.x & 31;
  for (std::int64_t r = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / 32; r < rows;
       r += std::int64_t{gridDim.x} * blockDim.x / 32) {
    const std::int32_t label = labels[r];
    if (label == testing_ops::kIgnoreIndex) {
      if (lane == 0) loss[r] = 0.0f;
      continue;
    }
    const T* row = logits + r * vocab;
    float max = -INFINITY;
    for (std::int64_t v = lane; v < vocab; v += 32) max = fmaxf(max, to_float(row[v]));
    for (int offset = 16; offset > 0; offset >>= 1) max = fmaxf(max, __shfl_xor_sync(0xffffffffu, max, offset));
    float sum = 0;
    for (std::int64_t v = lane; v < vocab; v += 32) sum += expf(to_float(row[v]) - max);
    sum = warp_sum(sum);
    if (lane == 0) loss[r] = max + logf(sum) - to_float(row[label]);
  }
}

template <class T>
void launch_label_nll(const LaunchArgs& a) {
  const auto [rows, vocab] = testing_ops::LabelNllAxes::of(a.shape);
  label_nll_kernel<T><<<blocks_for(rows * 32, kThreads), kThreads, 0, a.stream>>>(
      a.tensor<const T>("logits"), a.tensor<const std::int32_t>("labels"), a.tensor<float>("loss"), rows, vocab);
}

KWB_REGISTER_VARIANT(Variant{
    .op = testing_ops::kLabelNll,
    .name = "test_simple",
    .role = Role::fused,
    .description = "TEST ONLY: warp-per-row max, sum of exp and log in fp32",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_label_nll<T>(a); }),
    .test_only = true,
});

// ---- test_bhsd_scale: a thread per element ---------------------------------------------------

template <class T>
__global__ void bhsd_scale_kernel(const T* x, const float* scale, const std::int64_t* pos,
                                  const bool* keep, T* y, std::int64_t heads, std::int64_t seq,
                                  std::int64_t dim, std::int64_t total) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < total;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t row = i / dim;  // (b * heads + h) * seq + s
    const std::int64_t s = row % seq;
    const std::int64_t b = row / seq / heads;
    const std::int64_t bs = b * seq + s;
    const float value = keep[bs] ? to_float(x[i]) * scale[row] +
                                       static_cast<float>(pos[bs]) * static_cast<float>(testing_ops::kPositionScale)
                                 : 0.0f;
    y[i] = from_float<T>(value);
  }
}

template <class T>
void launch_bhsd_scale(const LaunchArgs& a) {
  const auto axes = testing_ops::BhsdScaleAxes::of(a.shape);
  const std::int64_t total = axes.numel();
  bhsd_scale_kernel<T><<<blocks_for(total, kThreads), kThreads, 0, a.stream>>>(
      a.tensor<const T>("x"), a.tensor<const float>("scale"), a.tensor<const std::int64_t>("pos"),
      a.tensor<const bool>("keep"), a.tensor<T>("y"), axes.heads, axes.seq, axes.dim, total);
}

KWB_REGISTER_VARIANT(Variant{
    .op = testing_ops::kBhsdScale,
    .name = "test_simple",
    .role = Role::fused,
    .description = "TEST ONLY: one thread per element, fp32 arithmetic, one rounding",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_bhsd_scale<T>(a); }),
    .test_only = true,
});

}  // namespace
namespace testing_ops {

void derived_copy_derive(const LaunchArgs& a) {
  const std::int64_t n = a.shape.at("n"), written = a.shape.choice("written") == "all" ? n : n / 2;
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    double_kernel<T><<<blocks_for(written, kThreads), kThreads, 0, a.stream>>>(a.tensor<const T>("x"),
                                                                              a.tensor<T>("y"), written);
  });
}

}  // namespace testing_ops
}  // namespace kwb
