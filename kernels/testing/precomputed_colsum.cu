// test_result_precomputed_in_prepare (TEST ONLY): a correct test_colsum whose result is worked out
// in prepare(), outside timing; every launch only copies the (rows + cols) fp32 sums into the
// outputs. Its output verifies, on the first launch and on every timed one (the copy rewrites
// all of it), but its timed launches move (rows + cols) * 8 bytes where the work model counts
// the whole of x: at rows = cols = 8192 fp32 (x 256 MiB) a ~3 us copy reads as ~90 TB/s, far
// above any DRAM roof. The roof rule must fail it with a reason that names the roof; a work
// model and a timer can only be trusted together if it does.
//
//   prepare  rowsum[r] = sum_c x[r, c], colsum[c] = sum_r x[r, c] into buffers of its own
//            (fp64 accumulation: the sums are as exact as the oracle's)
//   launch   outputs <- those buffers (one small copy kernel)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/typed_launch.cuh"
#include "reference/rows_cols_op.hpp"
#include "reference/testing/test_ops.hpp"

namespace kwb {
namespace {

// The sums, kept on the device for the case: [rows] then [cols] fp32.
struct Precomputed {
  float* sums = nullptr;
  std::int64_t rows = 0, cols = 0;
  Precomputed(std::int64_t r, std::int64_t c) : rows(r), cols(c) {
    cuda_check(cudaMalloc(&sums, static_cast<std::size_t>(r + c) * sizeof(float)), "cudaMalloc precomputed sums");
  }
  ~Precomputed() { cudaFree(sums); }
  Precomputed(const Precomputed&) = delete;
  Precomputed& operator=(const Precomputed&) = delete;
};

// One thread per row: a plain loop, untimed (prepare), exact enough in fp64.
template <class T>
__global__ void precompute_rowsums(const T* x, float* rowsum, std::int64_t rows, std::int64_t cols) {
  const std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (r >= rows) return;
  double acc = 0;
  for (std::int64_t c = 0; c < cols; ++c) acc += static_cast<double>(to_float(x[r * cols + c]));
  rowsum[r] = static_cast<float>(acc);
}

// One thread per column (coalesced along a row).
template <class T>
__global__ void precompute_colsums(const T* x, float* colsum, std::int64_t rows, std::int64_t cols) {
  const std::int64_t c = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (c >= cols) return;
  double acc = 0;
  for (std::int64_t r = 0; r < rows; ++r) acc += static_cast<double>(to_float(x[r * cols + c]));
  colsum[c] = static_cast<float>(acc);
}

// What the timed launches do: copy the ready sums.
__global__ void copy_sums(const float* sums, float* rowsum, float* colsum, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < rows + cols;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    if (i < rows) rowsum[i] = sums[i];
    else colsum[i - rows] = sums[i];
  }
}

unsigned blocks_for(std::int64_t n, int per_block) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>((n + per_block - 1) / per_block, 65535)));
}

template <class T>
std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const auto [rows, cols] = RowsCols::of(a.shape);
  auto p = std::make_shared<Precomputed>(rows, cols);
  const T* x = a.tensor<const T>("x");
  precompute_rowsums<T><<<blocks_for(rows, 256), 256, 0, a.stream>>>(x, p->sums, rows, cols);
  precompute_colsums<T><<<blocks_for(cols, 256), 256, 0, a.stream>>>(x, p->sums + rows, rows, cols);
  cuda_check(cudaGetLastError(), "precompute the sums");
  cuda_check(cudaStreamSynchronize(a.stream), "precompute the sums");
  return p;
}

void launch(const LaunchArgs& a) {
  const Precomputed& p = a.state_as<Precomputed>();
  copy_sums<<<blocks_for(p.rows + p.cols, 256), 256, 0, a.stream>>>(p.sums, a.tensor<float>("rowsum"),
                                                                   a.tensor<float>("colsum"), p.rows, p.cols);
}

KWB_REGISTER_VARIANT(Variant{
    .op = testing_ops::kColsum,
    .name = "test_result_precomputed_in_prepare",
    .role = Role::fused,
    .description = "TEST ONLY: sums worked out in prepare(), launches copy them: verifies, and must fail the roof "
                   "rule (at rows=cols=8192 it reads tens of TB/s)",
    .launch = launch,
    .test_only = true,
    .prepare =
        [](const LaunchArgs& a) {
          std::shared_ptr<void> state;
          dispatch_dtype(a.dtype, [&](auto tag) { state = prepare<decltype(tag)>(a); });
          return state;
        },
});

}  // namespace
}  // namespace kwb
