// linear_bias_relu fused_v2_smem_tiled: v1 + shared-memory tiling and register blocking, still on
// the CUDA cores in fp32 (any dtype; fp32 in full fp32).
//
// What changes: a block computes a BM x BN tile of y; per K step of BK it stages x's (BM, BK) and
// W's (BN, BK) tiles in shared memory, converted to fp32 and transposed to (BK, BM) and (BK, BN)
// so that a thread's TM rows and TN columns are contiguous; each thread then keeps a TM x TN
// block of accumulators in registers and does TM * TN FMAs per TM + TN shared loads (8 x 8:
// 64 FMAs per 16 loads, against v1's 1 per 2 global loads). Each element of x is read from
// global memory n / BN times instead of n times. Bias + ReLU in the epilogue, one rounding.
//
// Napkin math (bf16, 8192^3, tile 1 = 128x128x8, 8x8 per thread): 1.1 TFLOP on the fp32 FMA
// units (~50 TFLOP/s on an H100, ~60-70% reachable by such a kernel): ~30-35 ms. Global traffic
// x: n/BN = 64 passes of 128 MB, W: 64 passes: mostly L2 hits. The CUDA-core rung of the ladder.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/linear_bias_relu/bias_relu.cuh"

namespace kwb {
namespace {

template <class T, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN)) tiled_kernel(LinearArgs<T> l) {
  constexpr int kThreads = (BM / TM) * (BN / TN);
  static_assert(BM * BK % kThreads == 0 && BN * BK % kThreads == 0, "whole loads per thread");
  __shared__ __align__(16) float xs[BK][BM + 4];  // (BK, BM): x tile transposed, padded
  __shared__ __align__(16) float ws[BK][BN + 4];  // (BK, BN): W tile transposed, padded

  const std::int64_t tiles_n = (l.n + BN - 1) / BN;
  const std::int64_t row0 = blockIdx.x / tiles_n * BM, col0 = blockIdx.x % tiles_n * BN;
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);  // thread's outputs: rows ty*TM.., cols tx*TN..

  float acc[TM][TN] = {};
  for (std::int64_t k0 = 0; k0 < l.k; k0 += BK) {
    // Consecutive threads read consecutive k of one row (BK-long runs); zeros past m, n and k.
#pragma unroll
    for (int i = 0; i < BM * BK / kThreads; ++i) {
      const int e = tid + i * kThreads, r = e / BK, c = e % BK;
      const std::int64_t row = row0 + r, kk = k0 + c;
      xs[c][r] = row < l.m && kk < l.k ? to_float(l.x[row * l.k + kk]) : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < BN * BK / kThreads; ++i) {
      const int e = tid + i * kThreads, r = e / BK, c = e % BK;
      const std::int64_t col = col0 + r, kk = k0 + c;
      ws[c][r] = col < l.n && kk < l.k ? to_float(l.w[col * l.k + kk]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float xr[TM], wr[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) xr[i] = xs[kk][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) wr[j] = ws[kk][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(xr[i], wr[j], acc[i][j]);
    }
    __syncthreads();  // the next K step overwrites the tiles
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const std::int64_t row = row0 + ty * TM + i;
    if (row >= l.m) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const std::int64_t col = col0 + tx * TN + j;
      if (col < l.n) l.y[row * l.n + col] = bias_relu(acc[i][j], l.b[col]);
    }
  }
}

template <class T, int BM, int BN, int BK, int TM, int TN>
void launch_tile(const LinearArgs<T>& l, cudaStream_t stream) {
  const std::int64_t blocks = ((l.m + BM - 1) / BM) * ((l.n + BN - 1) / BN);
  if (blocks > 0x7fffffff) throw std::invalid_argument("fused_v2_smem_tiled: too many tiles for one grid");
  tiled_kernel<T, BM, BN, BK, TM, TN><<<static_cast<unsigned>(blocks), (BM / TM) * (BN / TN), 0, stream>>>(l);
}

constexpr const char* kTileHelp =
    "block tile: 1 = 128x128x8, 8x8 outputs per thread; 2 = 64x64x8, 4x4 per thread; 3 = 128x64x16, 8x4 per "
    "thread (256 threads each)";

template <class T>
void launch(const LaunchArgs& a) {
  const LinearArgs<T> l = linear_args<T>(a);
  switch (a.tunable("tile")) {
    case 1: return launch_tile<T, 128, 128, 8, 8, 8>(l, a.stream);
    case 2: return launch_tile<T, 64, 64, 8, 4, 4>(l, a.stream);
    case 3: return launch_tile<T, 128, 64, 16, 8, 4>(l, a.stream);
  }
  throw std::invalid_argument(std::string("fused_v2_smem_tiled: unknown tile (") + kTileHelp + ")");
}

KWB_REGISTER_VARIANT(Variant{
    .op = "linear_bias_relu",
    .name = "fused_v2_smem_tiled",
    .role = Role::fused,
    .description = "v2: x and W tiles staged in shared memory (fp32), a TM x TN register block per thread, "
                   "bias + ReLU epilogue; CUDA cores",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = {},
    .math = "fp32",
    .tunables = {{"tile", {1, 2, 3}, kTileHelp}},
});

}  // namespace
}  // namespace kwb
