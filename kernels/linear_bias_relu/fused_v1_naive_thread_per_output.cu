// linear_bias_relu fused_v1_naive_thread_per_output: the seed's kernel, the first rung of the
// ladder. One thread per output y[i, j]: a K-long dot product of row i of x with row j of W in
// fp32 (any dtype; fp32 in full fp32 on the CUDA cores), then + b[j] and ReLU, one rounding.
//
// Why it is slow: no reuse through shared memory. Each output reads 2k values; neighbouring
// threads (j, j + 1) read W rows k elements apart (uncoalesced, one 32-byte sector per element
// per thread), the x row is shared by the 16 threads of a block row through L1. Every FMA needs
// two loads: bound by the L1/L2 load path at a few TFLOP/s at best, against 790 on the tensor
// cores.
// Napkin math (bf16, 8192^3): 1.1 TFLOP at ~1-3 TFLOP/s: ~0.4-1 s per launch. The ladder's floor.
#include <cstdint>

#include "kernels/linear_bias_relu/bias_relu.cuh"

namespace kwb {
namespace {

constexpr int kTile = 16;  // 16 x 16 threads per block, one output each

template <class T>
__global__ void __launch_bounds__(kTile * kTile) naive_kernel(LinearArgs<T> l) {
  const std::int64_t col = blockIdx.x * std::int64_t{kTile} + threadIdx.x;
  if (col >= l.n) return;
  // Grid-stride over rows: m may exceed the 65535 * 16 rows one grid dimension reaches.
  for (std::int64_t row = blockIdx.y * std::int64_t{kTile} + threadIdx.y; row < l.m;
       row += std::int64_t{gridDim.y} * kTile) {
    const T* xr = l.x + row * l.k;
    const T* wr = l.w + col * l.k;
    float acc = 0;
    for (std::int64_t p = 0; p < l.k; ++p) acc = fmaf(to_float(xr[p]), to_float(wr[p]), acc);
    l.y[row * l.n + col] = bias_relu(acc, l.b[col]);
  }
}

template <class T>
void launch(const LaunchArgs& a) {
  const LinearArgs<T> l = linear_args<T>(a);
  const std::int64_t row_blocks = (l.m + kTile - 1) / kTile, col_blocks = (l.n + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(col_blocks), static_cast<unsigned>(row_blocks < 65535 ? row_blocks : 65535));
  naive_kernel<T><<<grid, dim3(kTile, kTile), 0, a.stream>>>(l);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "linear_bias_relu",
    .name = "fused_v1_naive_thread_per_output",
    .role = Role::fused,
    .description = "v1 (seed): one thread per output, a K-long fp32 dot product from global memory, bias + ReLU",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = {},
    .math = "fp32",
});

}  // namespace
}  // namespace kwb
